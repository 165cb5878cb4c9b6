#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/connectors/mysql_binlog.hpp"
#include "sluice/connectors/mysql_url.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// The changes of MySQL/MariaDB tables, as Flink CDC's mysql-cdc source
/// gives them: first a snapshot of their rows (+I), read in one consistent
/// transaction in primary-key chunks, then every committed change from the
/// binlog position the snapshot was taken at (+I, -U/+U, -D), so that the
/// two meet with no gap and no duplicate. Several tables (shards of one
/// table, say) must have the same columns and key; their changes make one
/// stream. Its checkpointed state is where it is: the snapshot's binlog
/// position, the table and the last key it emitted, or the binlog position
/// after the last transaction it emitted. A restore resumes there; a
/// restore in the middle of the snapshot reads the rest in a new snapshot
/// and the binlog still from the first one, so the changes in between come
/// again and the tables end the same. It runs with parallelism 1.
struct MySqlCdcOptions {
  MySqlUrl url;
  std::vector<std::string> tables;
  /// The id it reads the binlog under, unique among the server's replicas;
  /// 0 picks one from the job's and the operator's names.
  uint32_t server_id = 0;
  enum class Startup {
    kInitial,   ///< snapshot, then the binlog
    kSnapshot,  ///< the snapshot alone: the source ends after it
    kLatest,    ///< the binlog from where it ends now, no snapshot
    kPosition,  ///< the binlog from `position`, no snapshot
  };
  Startup startup = Startup::kInitial;
  BinlogPosition position;
  /// Rows per snapshot query.
  size_t chunk_rows = 1000;
  /// Records per second; 0 = as fast as possible.
  double rate = 0;

  /// Reads the `source.*` keys of mysql_cdc_option_specs().
  static MySqlCdcOptions from(const Config& config);
};

std::vector<OptionSpec> mysql_cdc_option_specs();

/// The source, as a graph node, for `tables` (capture_table() of each of
/// options.tables), whose columns are its output's. Throws ConfigError for
/// tables without a primary key or of different columns.
SourceDef mysql_cdc_source(const MySqlCdcOptions& options, std::vector<CapturedTable> tables);
/// capture_table() of each of `options.tables`.
std::vector<CapturedTable> capture_tables(const MySqlCdcOptions& options);

}  // namespace sluice
