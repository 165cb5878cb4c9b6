#include "sluice/benchmarks/file_bench.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "sluice/connectors/basic/sinks.hpp"
#include "sluice/connectors/file/changelog_file.hpp"
#include "sluice/engine/common/error.hpp"
#include "sluice/engine/runtime/executor.hpp"

namespace sluice {
namespace {

constexpr const char* kSchema =
    "id BIGINT, amount DECIMAL(12,2), status STRING, note STRING, v BIGINT, PRIMARY KEY (id)";

// A changelog of `lines` changes to 10,000 keys: an insert per key first,
// then updates (-U and +U) and a delete now and then, as CSV and as
// Debezium JSON, in a directory removed with it.
class ChangelogFiles {
 public:
  explicit ChangelogFiles(uint64_t lines) {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-file-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw Error("cannot make a directory " + pattern);
    dir_ = pattern;
    std::ofstream csv(csv_path()), json(json_path());
    csv << "op,id,amount,status,note,v\n";
    constexpr uint64_t kDistinctKeys = 10'000;
    for (uint64_t i = 0; i < lines; ++i) {
      const uint64_t id = i % kDistinctKeys;
      const char* op = i < kDistinctKeys ? "+I" : i % 97 == 0 ? "-D" : i % 2 == 0 ? "-U" : "+U";
      const std::string amount = std::to_string(i % 100'000) + "." + std::to_string(10 + i % 90);
      const std::string status = i % 3 == 0 ? "shipped" : "paid";
      const std::string note = "order note " + std::to_string(i);
      csv << op << ',' << id << ',' << amount << ',' << status << ",\"" << note << "\"," << i
          << '\n';
      const std::string image = "{\"id\":" + std::to_string(id) + ",\"amount\":" + amount +
                                ",\"status\":\"" + status + "\",\"note\":\"" + note +
                                "\",\"v\":" + std::to_string(i) + "}";
      const std::string json_op = i < kDistinctKeys ? "c" : i % 97 == 0 ? "d" : "u";
      json << "{\"op\":\"" << json_op << "\",\"before\":" << (json_op == "c" ? "null" : image)
           << ",\"after\":" << (json_op == "d" ? "null" : image)
           << ",\"source\":{\"db\":\"shop\",\"table\":\"orders\"},\"ts_ms\":" << i << "}\n";
    }
    if (!csv || !json) throw Error("cannot write the benchmark's files in " + dir_.string());
  }
  ~ChangelogFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ChangelogFiles(const ChangelogFiles&) = delete;
  ChangelogFiles& operator=(const ChangelogFiles&) = delete;

  std::string csv_path() const { return (dir_ / "changes.csv").string(); }
  std::string json_path() const { return (dir_ / "changes.json").string(); }

 private:
  std::filesystem::path dir_;
};

// The least a CSV reader does: every line read, its fields found.
BenchSample split_lines(const std::string& path, uint64_t lines) {
  const auto start = std::chrono::steady_clock::now();
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error("cannot read " + path);
  char* line = nullptr;
  size_t capacity = 0;
  uint64_t read = 0, fields = 0;
  ssize_t n;
  while ((n = getline(&line, &capacity, file)) > 0) {
    ++read;
    for (ssize_t i = 0; i < n; ++i) fields += line[i] == ',';
  }
  std::free(line);
  std::fclose(file);
  if (read != lines + 1 || fields == 0) throw std::logic_error("the loop read another file");
  return {lines, seconds_since(start)};
}

BenchSample read_into_blackhole(const std::string& path, ChangelogFileOptions::Format format,
                                uint64_t lines) {
  ChangelogFileOptions options;
  options.path = path;
  options.format = format;
  options.schema = Schema::parse(kSchema);
  JobGraph graph("changelog-file");
  graph.source("file", changelog_file_source(options)).sink("blackhole", blackhole_sink());
  const JobResult result = Executor(RuntimeOptions::without_checkpoints()).run(graph);
  if (!result.finished()) throw std::runtime_error("the file job failed: " + result.error);
  return {lines, std::chrono::duration<double>(result.duration).count(), {}};
}

}  // namespace

Benchmark changelog_file_benchmark() {
  return {
      .name = "changelog-file",
      .description =
          "the changelog-file source into a blackhole sink, records/s of a file of "
          "changes to five columns (BIGINT, DECIMAL, two STRINGs, BIGINT)",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t lines = settings.quick ? 100'000 : 1'000'000;
            auto files = std::make_shared<ChangelogFiles>(lines);
            using Format = ChangelogFileOptions::Format;
            return std::vector<BenchScenario>{
                {"baseline: getline and find the commas", true,
                 [=] { return split_lines(files->csv_path(), lines); }},
                {"csv", false,
                 [=] { return read_into_blackhole(files->csv_path(), Format::kCsv, lines); }},
                {"debezium-json", false,
                 [=] {
                   return read_into_blackhole(files->json_path(), Format::kDebeziumJson, lines);
                 }},
            };
          },
  };
}

}  // namespace sluice
