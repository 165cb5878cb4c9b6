#pragma once

#include <string>
#include <vector>

#include "sluice/connectors/mysql/cdc/binlog.hpp"
#include "sluice/connectors/mysql/cdc/source.hpp"

/// The mysql-cdc source over tables read beforehand, for jobs that look at
/// them first (which columns to keep, where each goes).
namespace sluice {

/// capture_table() of each of `options.tables`, or of the tables
/// `options.patterns` match, `keep` the columns the job keeps (empty: all).
/// Throws ConfigError when the patterns match no table.
std::vector<CapturedTable> capture_tables(const MySqlCdcOptions& options,
                                          const std::vector<std::string>& keep = {});
/// mysql_cdc_source(options) for `tables` already read (capture_tables()).
SourceDef mysql_cdc_source(const MySqlCdcOptions& options, std::vector<CapturedTable> tables);

}  // namespace sluice
