#pragma once

#include <string>

#include "sluice/connectors/datagen/datagen.hpp"
#include "sluice/connectors/mysql/url.hpp"
#include "sluice/engine/graph/options.hpp"
#include "sluice/engine/runtime/executor.hpp"

/// The order stream of the orders jobs and what they check at the end.
namespace sluice::orders {

/// id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING,
/// updated_at TIMESTAMP, PRIMARY KEY (id).
const Schema& schema();

/// The changelog: inserts, updates and deletes over source.keys orders, a
/// few hot ones updated many times (the `source.*` keys, with these defaults).
DatagenOptions changelog(const Config& config);
std::map<std::string, std::string> default_options();

/// Creates `table` if it does not exist. Unless the job resumes, empties it,
/// after rolling back what an earlier run of `job` left prepared (it would
/// hold locks on the table).
void prepare_table(const MySqlUrl& url, const std::string& table, const std::string& job,
                   bool resuming);

/// Compares `table` with what the changelog leaves: prints the result and
/// returns whether they match.
bool check_table(const MySqlUrl& url, const std::string& table, const DatagenOptions& changelog,
                 int source_parallelism);

}  // namespace sluice::orders
