// A changelog file (CSV or Debezium JSON) into a MySQL table. The table's
// columns, read from information_schema, are the file's schema, so only
// source.path, sink.url and sink.table need saying.
#include "sluice/jobs/changelog_to_mysql_job.hpp"

#include <cstdio>

#include "sluice/connectors/file/changelog_file.hpp"
#include "sluice/connectors/mysql/connection.hpp"
#include "sluice/connectors/mysql/sink/sink.hpp"
#include "sluice/engine/common/text.hpp"
#include "sluice/engine/graph/node_def.hpp"

namespace sluice {
namespace {

void build(const Config& config, JobGraph& graph) {
  MySqlSinkOptions sink = MySqlSinkOptions::from(config);
  Schema schema = MySqlConnection(sink.url).describe_table(sink.table).schema();
  if (!sink.key.empty()) schema = Schema(schema.columns(), sink.key);
  graph.source("changelog", changelog_file_source(ChangelogFileOptions::from(config, schema)))
      .sink("mysql", mysql_sink(sink));
}

bool report(const Config&, const JobResult& result) {
  print_mysql_layers(result, "changelog", "mysql");
  return true;
}

}  // namespace

void print_mysql_layers(const JobResult& result, const std::string& source,
                        const std::string& sink) {
  const JobMetrics& m = result.metrics;
  const auto count = [&](const std::string& name) {
    return static_cast<unsigned long long>(m.counter(sink + "." + name));
  };
  uint64_t flushes = 0;
  for (const char* trigger : {"max-rows", "signal", "barrier", "close"}) {
    flushes += m.counter(sink + ".flushes." + trigger);
  }
  std::fprintf(stderr, "\nrow by row or batch by batch?\n");
  std::fprintf(stderr, "  %-34s %12llu\n", "records read by the source",
               static_cast<unsigned long long>(m.records_out(source)));
  std::fprintf(stderr, "  %-34s %12llu\n", "records into the sink",
               static_cast<unsigned long long>(m.records_in(sink)));
  std::fprintf(stderr, "  %-34s %12llu  (max-rows %llu, signal %llu, barrier %llu, close %llu)\n",
               "flushes", static_cast<unsigned long long>(flushes), count("flushes.max-rows"),
               count("flushes.signal"), count("flushes.barrier"), count("flushes.close"));
  std::fprintf(stderr, "  %-34s %12llu  (%s, %s)\n", "distinct keys flushed", count("keys"),
               count_of(count("upserts"), "upsert").c_str(),
               count_of(count("deletes"), "delete").c_str());
  if (flushes > 0) {
    std::fprintf(stderr, "  %-34s %12.0f input records -> %.0f distinct keys -> %.1f statements\n",
                 "per flush, on average", static_cast<double>(m.records_in(sink)) / flushes,
                 static_cast<double>(count("keys")) / flushes,
                 static_cast<double>(count("statements")) / flushes);
  }
  std::fprintf(stderr, "  %-34s %12llu\n", "statements executed", count("statements"));
  std::fprintf(stderr, "  %-34s %12llu\n", "transactions committed", count("transactions"));
  // A statement's rows as the server counts them (an upsert that updates
  // counts two); a row event's as one.
  std::fprintf(stderr, "  %-34s %12llu\n", "rows affected", count("rows-affected"));
  if (count("row-events") > 0) {
    std::fprintf(stderr, "  %-34s %12llu\n", "changes written as row events", count("row-events"));
  }
  if (count("row-events.fallbacks") > 0) {
    std::fprintf(stderr, "  %-34s %12llu\n", "row-event chunks redone as statements",
                 count("row-events.fallbacks"));
  }
  if (count("retries") > 0)
    std::fprintf(stderr, "  %-34s %12llu\n", "flushes retried", count("retries"));
  if (count("dead-letters") > 0) {
    std::fprintf(stderr, "  %-34s %12llu\n", "changes refused, dead letters",
                 count("dead-letters"));
  }
  if (count("schema-changes-refused") > 0) {
    std::fprintf(stderr, "  %-34s %12llu\n", "schema changes refused",
                 count("schema-changes-refused"));
  }
  if (count("xa.prepared") + count("xa.recovered") + count("xa.rolled-back") > 0) {
    std::fprintf(stderr,
                 "  %-34s %12llu prepared, %llu committed, %llu recovered, %llu rolled back\n",
                 "XA transactions", count("xa.prepared"), count("xa.committed"),
                 count("xa.recovered"), count("xa.rolled-back"));
  }
}

JobDefinition changelog_to_mysql_job() {
  std::vector<OptionSpec> options = changelog_file_option_specs();
  const auto sink = mysql_sink_option_specs();
  options.insert(options.end(), sink.begin(), sink.end());
  return {.name = "changelog-to-mysql",
          .summary = "a changelog file (CSV or Debezium JSON) upserted into a MySQL table",
          .options = options,
          .build = build,
          .report = report};
}

}  // namespace sluice
