#pragma once

#include <map>
#include <string>
#include <vector>

#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/engine/data/schema.hpp"
#include "sluice/engine/graph/options.hpp"

/// Pieces of `sluice describe JOB --as flink-sql`: the Flink SQL a user
/// moving to a cluster would write for the same job.
namespace sluice::flink_sql {

/// SET statements for parallelism, checkpoints and the flush interval.
std::string settings(const Config& config);
/// CREATE TABLE `name` with `schema` and WITH (`options`), after `comment`.
std::string create_table(const std::string& name, const Schema& schema,
                         const std::vector<std::pair<std::string, std::string>>& options,
                         const std::string& comment = "");
/// A datagen table like Sluice's datagen source with `gen`.
std::string datagen_table(const std::string& name, const DatagenOptions& gen);
/// A changelog-file source as a filesystem table.
std::string file_table(const std::string& name, const Schema& schema, const Config& config);
/// A Flink CDC mysql-cdc table for the `source.*` keys of the mysql-cdc
/// source (the password is left out); of table `table` of `database`
/// rather than source.table of source.url's database where they are set.
std::string mysql_cdc_table(const std::string& name, const Schema& schema, const Config& config,
                            const std::string& database = "", const std::string& table = "");
/// A JDBC sink table for the `sink.*` keys (the password is left out); of
/// table `table` rather than sink.table where it is set.
std::string jdbc_table(const std::string& name, const Schema& schema, const Config& config,
                       const std::string& table = "");
/// "INSERT INTO `sink` SELECT <columns> FROM `source`;", and `constant`
/// (a string) as column `constant_column` last, where that is set.
std::string insert(const std::string& sink, const std::string& source, const Schema& schema,
                   const std::string& constant_column = "", const std::string& constant = "");
/// INSERTs run as one job: EXECUTE STATEMENT SET BEGIN … END;.
std::string statement_set(const std::vector<std::string>& inserts);

}  // namespace sluice::flink_sql
