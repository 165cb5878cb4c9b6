#pragma once

#include <cstdint>
#include <vector>

#include "sluice/engine/data/schema.hpp"
#include "sluice/engine/graph/job_graph.hpp"
#include "sluice/engine/graph/options.hpp"

namespace sluice {

/// What the datagen source generates: a consistent changelog over a key
/// space. An insert picks a key that is absent, an update or delete one that
/// is present, so replaying the changes yields a well-defined table.
struct DatagenOptions {
  /// The rows' columns. The key is the primary key's first column, else the
  /// first column; it must be BIGINT. Default: id BIGINT, value BIGINT.
  Schema schema{{{"id", DataType::bigint()}, {"value", DataType::bigint()}}, {"id"}};
  /// Changes to generate over all subtasks; 0 = without end. Default: 1000000.
  uint64_t rows = 1'000'000;
  /// Keys to draw from; 0 = a new key for every insert (insert-only mixes).
  /// Default: 0.
  uint64_t keys = 0;
  /// Relative weights of inserts, updates and deletes. An update emits -U
  /// with the old image, then +U. Default: inserts only.
  uint32_t insert_weight = 100;
  uint32_t update_weight = 0;
  uint32_t delete_weight = 0;
  /// How updates and deletes pick among present keys. Default: uniform.
  enum class Skew { kUniform, kZipf, kHot } skew = Skew::kUniform;
  /// Seeds the generator; equal seeds give equal changelogs. Default: 1.
  uint64_t seed = 1;
  /// Changes per second over all subtasks; 0 = as fast as possible. Default: 0.
  double rate = 0;

  /// Reads the `source.*` keys of datagen_option_specs(); throws ConfigError
  /// naming the key when the combination cannot be generated.
  static DatagenOptions from(const Config& config, Schema schema);
  /// The row kinds the mix produces.
  ChangelogMode changelog_mode() const;
};

/// The `source.*` keys datagen reads.
std::vector<OptionSpec> datagen_option_specs();

/// Generates one subtask's share of the changelog, without the engine, so
/// that baselines can produce exactly the rows the source produces.
class ChangeGenerator {
 public:
  ChangeGenerator(const DatagenOptions& options, int subtask, int parallelism);

  /// One row of a change: which key, and which version of its values.
  struct Change {
    RowKind kind = RowKind::kInsert;
    uint64_t local_key = 0;
    uint32_t version = 0;
  };
  /// Generates the next change (one row, or -U and +U for an update) and
  /// returns how many rows it has; 0 when this subtask is done. The rows'
  /// values follow from each Change.
  int next_changes(Change* __restrict out);
  /// Up to `max_changes` changes into `out` (room for twice as many rows);
  /// sets `changes` to how many and returns how many rows they have. Fewer
  /// than `max_changes` when this subtask is done.
  uint32_t next_changes(Change* out, uint32_t max_changes, uint32_t& changes);
  /// The same, as Rows in `out`.
  int next(Row out[2]);
  /// Appends the rows of `changes[0..n)` to `out`'s columns.
  void append(const Change* changes, uint32_t n, Batch& out) const;

  /// The rows the table holds after the changes generated so far, by key.
  std::vector<Row> current_rows() const;

 private:
  enum class Op { kInsert, kUpdate, kDelete };
  Op pick_op();
  uint64_t pick_present();
  Row make_row(const Change& change) const;
  /// What a non-key field's value is made from.
  uint64_t field_hash(const Change& change, size_t column) const;
  uint64_t key_of(uint64_t local_key) const;
  bool is_present(uint64_t local_key) const;
  void set_present(uint64_t local_key, bool present);
  uint64_t random();

  const DatagenOptions options_;
  const int subtask_;
  const int parallelism_;
  const size_t key_column_;
  uint64_t remaining_;
  uint64_t state_;
  uint64_t local_keys_;  // 0: unbounded, every insert a new key
  uint64_t next_new_key_ = 0;
  std::vector<uint32_t> version_;  // per local key; 0 = never written
  std::vector<int64_t> slot_;      // per local key: its position in present_ or absent_
  std::vector<uint64_t> present_;
  std::vector<uint64_t> absent_;
  std::vector<double> zipf_cdf_;
};

/// The datagen source, as a graph node.
SourceDef datagen_source(const DatagenOptions& options);

}  // namespace sluice
