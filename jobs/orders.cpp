#include "sluice/jobs/orders.hpp"

#include <cstdio>

#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/xa.hpp"
#include "sluice/engine/common/text.hpp"

namespace sluice::orders {
namespace {

// The row as "1|2|3.50|paid|…", to compare rows from both sides.
std::string row_text(const std::vector<Value>& values) {
  std::string text;
  for (const Value& v : values) {
    if (!text.empty()) text += '|';
    v.append_to(text);
  }
  return text;
}

}  // namespace

const Schema& schema() {
  static const Schema orders = Schema::parse(
      "id BIGINT, customer BIGINT, amount DECIMAL(10,2), status STRING, updated_at TIMESTAMP, "
      "PRIMARY KEY (id)");
  return orders;
}

std::map<std::string, std::string> default_options() {
  return {{"source.rows", "200000"},
          {"source.keys", "10000"},
          {"source.mix", "I:45,U:45,D:10"},
          {"source.skew", "hot"}};
}

DatagenOptions changelog(const Config& config) { return DatagenOptions::from(config, schema()); }

void prepare_table(const MySqlUrl& url, const std::string& table, const std::string& job,
                   bool resuming) {
  MySqlConnection connection(url);
  connection.execute("CREATE TABLE IF NOT EXISTS " + quote_identifier(table) +
                     " (id BIGINT PRIMARY KEY, customer BIGINT, amount DECIMAL(10,2), "
                     "status VARCHAR(20), updated_at DATETIME(6))");
  if (resuming) return;
  for (const Xid& xid : xa_recover(connection)) {
    if (XidScheme::of_job(xid, job)) connection.execute("XA ROLLBACK " + xid.sql());
  }
  connection.execute("TRUNCATE TABLE " + quote_identifier(table));
}

bool check_table(const MySqlUrl& url, const std::string& table, const DatagenOptions& changelog,
                 int source_parallelism) {
  std::map<int64_t, std::string> expected;
  for (int s = 0; s < source_parallelism; ++s) {
    ChangeGenerator generator(changelog, s, source_parallelism);
    Row out[2];
    while (generator.next(out) > 0) {
    }
    for (const Row& row : generator.current_rows()) {
      expected[row.fields[0].as_bigint()] = row_text(row.fields);
    }
  }
  MySqlConnection connection(url);
  size_t missing = 0, different = 0, extra = 0, rows = 0;
  for (const auto& row : connection.query("SELECT * FROM " + quote_identifier(table))) {
    ++rows;
    std::vector<Value> values;
    for (size_t c = 0; c < row.size(); ++c) {
      values.push_back(row[c] ? parse_value(*row[c], schema().column(c).type) : Value());
    }
    const std::string text = row_text(values);
    const auto it = expected.find(std::stoll(*row[0]));
    if (it == expected.end()) {
      ++extra;
    } else {
      different += it->second != text;
      expected.erase(it);
    }
  }
  missing = expected.size();
  if (missing + different + extra == 0) {
    std::fprintf(stderr, "\ntable %s matches the changelog's final state: %s\n", table.c_str(),
                 count_of(rows, "row").c_str());
    return true;
  }
  std::fprintf(stderr,
               "\ntable %s does NOT match the changelog's final state: %s missing, %zu "
               "different, %zu that should not be there\n",
               table.c_str(), count_of(missing, "row").c_str(), different, extra);
  return false;
}

}  // namespace sluice::orders
