#include "sluice/connectors/datagen/datagen.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// Changes generated per poll: few enough that the task serves its mailbox
// often (a poll takes a few microseconds), enough that the batches handed
// along the chain are full. A paced source goes in smaller steps.
constexpr uint32_t kChangesPerPoll = 256;
constexpr uint32_t kPacedChangesPerPoll = 32;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

const char* const kWords[] = {"created",   "paid",     "packed",   "shipped",
                              "delivered", "returned", "cancelled"};

// 2026-01-01 00:00:00 in microseconds since the epoch.
constexpr int64_t kBaseTimeMicros = 1'767'225'600'000'000;

// Its checkpointed position is the number of changes emitted: the generator
// is deterministic, so a restored source regenerates that many and drops them.
class DatagenSource final : public Source {
 public:
  DatagenSource(const DatagenOptions& options, int subtask, int parallelism)
      : generator_(options, subtask, parallelism),
        changes_per_poll_(options.rate > 0 ? kPacedChangesPerPoll : kChangesPerPoll) {}

  void open(OperatorContext& context) override {
    position_state_.emplace(context.value_state<int64_t>("position"));
    if (const auto saved = position_state_->get()) {
      const auto position = static_cast<uint64_t>(*saved);
      ChangeGenerator::Change changes[2];
      while (emitted_ < position && generator_.next_changes(changes) > 0) ++emitted_;
    }
  }

  PollResult poll_next(Collector& out) override {
    // Generated first, then written into the batch's columns at once.
    ChangeGenerator::Change changes[2 * kChangesPerPoll];
    uint32_t generated = 0;
    const uint32_t rows = generator_.next_changes(changes, changes_per_poll_, generated);
    emitted_ += generated;
    generator_.append(changes, rows, out.batch());
    return generated < changes_per_poll_ ? PollResult::kEndOfInput : PollResult::kMoreAvailable;
  }

  void snapshot_state(int64_t) override { position_state_->set(static_cast<int64_t>(emitted_)); }

 private:
  ChangeGenerator generator_;
  const uint32_t changes_per_poll_;
  std::optional<ValueState<int64_t>> position_state_;
  uint64_t emitted_ = 0;
};

// Reads "I:60,U:30,D:10" into the three weights.
void parse_mix(const std::string& text, DatagenOptions& options) {
  options.insert_weight = options.update_weight = options.delete_weight = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string_view part(text.data() + pos, end - pos);
    uint32_t weight = 0;
    const bool shape_ok = part.size() > 2 && part[1] == ':';
    const auto [ptr, ec] = shape_ok
                               ? std::from_chars(part.data() + 2, part.data() + part.size(), weight)
                               : std::from_chars_result{part.data(), std::errc::invalid_argument};
    uint32_t* slot = !shape_ok        ? nullptr
                     : part[0] == 'I' ? &options.insert_weight
                     : part[0] == 'U' ? &options.update_weight
                     : part[0] == 'D' ? &options.delete_weight
                                      : nullptr;
    if (slot == nullptr || ec != std::errc() || ptr != part.data() + part.size()) {
      throw ConfigError("option 'source.mix' expects weights such as I:60,U:30,D:10, got '" + text +
                        "'");
    }
    *slot = weight;
    pos = end + 1;
  }
}

// What parse_mix() reads: "I:60,U:30,D:10", weights of 0 left out.
std::string mix_text(const DatagenOptions& options) {
  std::string out;
  const auto add = [&out](char kind, uint32_t weight) {
    if (weight == 0) return;
    if (!out.empty()) out += ',';
    out += kind;
    out += ':';
    out += std::to_string(weight);
  };
  add('I', options.insert_weight);
  add('U', options.update_weight);
  add('D', options.delete_weight);
  return out;
}

const OptionBinder<DatagenOptions>& binder() {
  using Skew = DatagenOptions::Skew;
  static const OptionBinder<DatagenOptions> binder =
      OptionBinder<DatagenOptions>()
          .integer({.key = "source.rows", .doc = "datagen: changes to generate; 0 = without end"},
                   &DatagenOptions::rows)
          .integer({.key = "source.keys",
                    .doc = "datagen: keys to draw from; 0 = a new key for every insert"},
                   &DatagenOptions::keys)
          .bind({.key = "source.mix",
                 .doc = "datagen: weights of inserts, updates and deletes, e.g. I:60,U:30,D:10"},
                mix_text,
                [](const Config& config, DatagenOptions& options) {
                  parse_mix(config.get_string("source.mix"), options);
                })
          .choice({.key = "source.skew",
                   .doc = "datagen: how updates and deletes pick keys (hot: 1% of keys get half)"},
                  &DatagenOptions::skew,
                  {{"uniform", Skew::kUniform}, {"zipf", Skew::kZipf}, {"hot", Skew::kHot}})
          .integer({.key = "source.seed",
                    .doc = "datagen: random seed; equal seeds give equal changelogs"},
                   &DatagenOptions::seed)
          .integer(source_rate_spec(), &DatagenOptions::rate);
  return binder;
}

}  // namespace

std::vector<OptionSpec> datagen_option_specs() { return binder().specs(); }

DatagenOptions DatagenOptions::from(const Config& config, Schema schema) {
  DatagenOptions options;
  options.schema = std::move(schema);
  binder().read(config, options);

  const bool changes_keys = options.update_weight > 0 || options.delete_weight > 0;
  if (options.insert_weight + options.update_weight + options.delete_weight == 0) {
    throw ConfigError("option 'source.mix' needs a weight above 0");
  }
  if (changes_keys && options.insert_weight == 0) {
    throw ConfigError("option 'source.mix' needs inserts (I) to have keys to update or delete");
  }
  if (changes_keys && options.keys == 0) {
    throw ConfigError(
        "option 'source.keys' must be above 0 when source.mix has updates or deletes");
  }
  if (!changes_keys && options.keys > 0 && (options.rows == 0 || options.rows > options.keys)) {
    throw ConfigError("option 'source.keys' (" + std::to_string(options.keys) +
                      ") is too small for " +
                      (options.rows == 0 ? "endless" : std::to_string(options.rows)) +
                      " inserts; use 0 for a new key per insert");
  }
  return options;
}

ChangelogMode DatagenOptions::changelog_mode() const {
  ChangelogMode mode;
  if (insert_weight > 0) mode = mode.with(RowKind::kInsert);
  if (update_weight > 0) mode = mode.with(RowKind::kUpdateBefore).with(RowKind::kUpdateAfter);
  if (delete_weight > 0) mode = mode.with(RowKind::kDelete);
  return mode;
}

ChangeGenerator::ChangeGenerator(const DatagenOptions& options, int subtask, int parallelism)
    : options_(options),
      subtask_(subtask),
      parallelism_(parallelism),
      key_column_(options.schema.has_primary_key() ? options.schema.primary_key()[0] : 0),
      state_(splitmix64(options.seed * 1'000'003 + static_cast<uint64_t>(subtask))) {
  if (options.schema.size() == 0 || options.schema.column(key_column_).type.id != TypeId::kBigint) {
    throw ConfigError("datagen needs a BIGINT key column; the schema is " +
                      options.schema.to_string());
  }
  const auto p = static_cast<uint64_t>(parallelism);
  const auto s = static_cast<uint64_t>(subtask);
  remaining_ = options.rows == 0 ? UINT64_MAX : options.rows / p + (s < options.rows % p ? 1 : 0);
  local_keys_ = options.keys == 0 ? 0 : options.keys / p + (s < options.keys % p ? 1 : 0);
  version_.assign(local_keys_, 0);
  slot_.resize(local_keys_);
  for (uint64_t k = 0; k < local_keys_; ++k) {
    slot_[k] = static_cast<int64_t>(absent_.size());
    absent_.push_back(k);
  }
  if (options.skew == DatagenOptions::Skew::kZipf && local_keys_ > 0) {
    // Zipf with exponent 1: key rank r is drawn with weight 1/(r+1).
    zipf_cdf_.resize(local_keys_);
    double total = 0;
    for (uint64_t r = 0; r < local_keys_; ++r)
      zipf_cdf_[r] = total += 1.0 / static_cast<double>(r + 1);
    for (double& c : zipf_cdf_) c /= total;
  }
}

uint64_t ChangeGenerator::random() { return splitmix64(state_++); }

uint64_t ChangeGenerator::key_of(uint64_t local_key) const {
  return local_key * static_cast<uint64_t>(parallelism_) + static_cast<uint64_t>(subtask_);
}

ChangeGenerator::Op ChangeGenerator::pick_op() {
  const uint64_t total = options_.insert_weight + options_.update_weight + options_.delete_weight;
  // An insert-only mix draws too, so that the draws after it stay the same.
  const uint64_t draw = random();
  const uint64_t r = total == options_.insert_weight ? 0 : draw % total;
  Op op = r < options_.insert_weight                            ? Op::kInsert
          : r < options_.insert_weight + options_.update_weight ? Op::kUpdate
                                                                : Op::kDelete;
  // Keep the changelog consistent: no insert of a present key, no update or
  // delete of an absent one.
  if (op == Op::kInsert && local_keys_ > 0 && absent_.empty()) {
    op = options_.update_weight > 0 ? Op::kUpdate : Op::kDelete;
  } else if (op != Op::kInsert && present_.empty()) {
    op = Op::kInsert;
  }
  return op;
}

uint64_t ChangeGenerator::pick_present() {
  switch (options_.skew) {
    case DatagenOptions::Skew::kUniform:
      break;
    case DatagenOptions::Skew::kZipf: {
      const double u = static_cast<double>(random() >> 11) * 0x1.0p-53;
      const auto rank = static_cast<uint64_t>(
          std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
      if (rank < local_keys_ && is_present(rank)) return rank;
      break;
    }
    case DatagenOptions::Skew::kHot: {
      // Half of the picks go to the hottest 1% of the keys.
      const uint64_t hot = std::max<uint64_t>(1, local_keys_ / 100);
      if (random() % 2 == 0) {
        const uint64_t k = random() % hot;
        if (is_present(k)) return k;
      }
      break;
    }
  }
  return present_[random() % present_.size()];
}

bool ChangeGenerator::is_present(uint64_t k) const {
  const auto at = static_cast<size_t>(slot_[k]);
  return at < present_.size() && present_[at] == k;
}

void ChangeGenerator::set_present(uint64_t k, bool present) {
  auto& from = present ? absent_ : present_;
  auto& to = present ? present_ : absent_;
  const auto at = static_cast<size_t>(slot_[k]);
  from[at] = from.back();
  slot_[from[at]] = static_cast<int64_t>(at);
  from.pop_back();
  slot_[k] = static_cast<int64_t>(to.size());
  to.push_back(k);
}

uint64_t ChangeGenerator::field_hash(const Change& change, size_t column) const {
  return splitmix64(options_.seed ^ (key_of(change.local_key) * 0x9e3779b97f4a7c15ULL) ^
                    (uint64_t{change.version} << 40) ^ (column << 56));
}

// The value of a non-key field of type `T`, from its hash and its row's version.
template <typename T>
T field_value(const DataType& type, uint64_t h, uint32_t version) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(h % 1000);
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(h % 1'000'000) / 100.0;
  } else if constexpr (std::is_same_v<T, Decimal>) {
    // Up to 999999 units of the last digit, within the type's precision.
    const int digits = std::min<int>(type.precision, 6);
    const auto bound = static_cast<uint64_t>(std::pow(10, digits));
    return Decimal(static_cast<__int128>(h % bound), type.scale);
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return kWords[h % std::size(kWords)];
  } else if constexpr (std::is_same_v<T, bool>) {
    return h % 2 == 0;
  } else if constexpr (std::is_same_v<T, Date>) {
    return Date{static_cast<int32_t>(kBaseTimeMicros / 86'400'000'000LL + version + h % 365)};
  } else if constexpr (std::is_same_v<T, Time>) {
    return Time{static_cast<int64_t>(h % 86'400) * 1'000'000};
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return Bytes{std::string(kWords[h % std::size(kWords)])};
  } else {
    return Timestamp{kBaseTimeMicros + static_cast<int64_t>(version) * 1'000'000 +
                     static_cast<int64_t>(h % 1000) * 1000};
  }
}

// Calls `f(T{})` with the C++ type of a `type` field (STRING: std::string_view).
template <typename F>
void with_field_type(TypeId type, F&& f) {
  switch (type) {
    case TypeId::kBigint:
      return f(int64_t{});
    case TypeId::kDouble:
      return f(double{});
    case TypeId::kDecimal:
      return f(Decimal{});
    case TypeId::kString:
      return f(std::string_view{});
    case TypeId::kBoolean:
      return f(bool{});
    case TypeId::kTimestamp:
      return f(Timestamp{});
    case TypeId::kDate:
      return f(Date{});
    case TypeId::kTime:
      return f(Time{});
    case TypeId::kBytes:
      return f(Bytes{});
  }
}

int ChangeGenerator::next_changes(Change* __restrict out) {
  if (remaining_ == 0) return 0;
  --remaining_;
  switch (pick_op()) {
    case Op::kInsert: {
      if (local_keys_ == 0) {
        out[0] = {RowKind::kInsert, next_new_key_++, 1};
        return 1;
      }
      const uint64_t k = absent_[random() % absent_.size()];
      set_present(k, true);
      out[0] = {RowKind::kInsert, k, ++version_[k]};
      return 1;
    }
    case Op::kUpdate: {
      const uint64_t k = pick_present();
      out[0] = {RowKind::kUpdateBefore, k, version_[k]};
      out[1] = {RowKind::kUpdateAfter, k, ++version_[k]};
      return 2;
    }
    case Op::kDelete: {
      const uint64_t k = pick_present();
      set_present(k, false);
      out[0] = {RowKind::kDelete, k, version_[k]};
      return 1;
    }
  }
  return 0;
}

uint32_t ChangeGenerator::next_changes(Change* out, uint32_t max_changes, uint32_t& changes) {
  const bool inserts_only = options_.update_weight == 0 && options_.delete_weight == 0;
  if (inserts_only && local_keys_ == 0) {
    // Every change a new key: nothing to pick, and no member to update per
    // change. Each would draw once (see pick_op()): the state moves on as much.
    changes = static_cast<uint32_t>(std::min<uint64_t>(max_changes, remaining_));
    for (uint32_t i = 0; i < changes; ++i) out[i] = {RowKind::kInsert, next_new_key_ + i, 1};
    next_new_key_ += changes;
    remaining_ -= changes;
    state_ += changes;
    return changes;
  }
  uint32_t rows = 0;
  int n = 0;
  for (changes = 0; changes < max_changes && (n = next_changes(out + rows)) > 0; ++changes) {
    rows += static_cast<uint32_t>(n);
  }
  return rows;
}

int ChangeGenerator::next(Row out[2]) {
  Change changes[2];
  const int n = next_changes(changes);
  for (int i = 0; i < n; ++i) out[i] = make_row(changes[i]);
  return n;
}

void ChangeGenerator::append(const Change* changes, uint32_t n, Batch& out) const {
  // Column by column: each a plain loop over the rows.
  const uint32_t first = out.add_rows(n);
  for (uint32_t i = 0; i < n; ++i) out.set_kind(first + i, changes[i].kind);
  const Schema& schema = options_.schema;
  for (size_t c = 0; c < schema.size(); ++c) {
    ColumnVector& column = out.column(c);
    if (c == key_column_) {
      int64_t* keys = column.values<int64_t>().data() + first;
      for (uint32_t i = 0; i < n; ++i) keys[i] = static_cast<int64_t>(key_of(changes[i].local_key));
      continue;
    }
    const DataType& type = schema.column(c).type;
    with_field_type(type.id, [&](auto tag) {
      using T = decltype(tag);
      for (uint32_t i = 0; i < n; ++i) {
        const T value = field_value<T>(type, field_hash(changes[i], c), changes[i].version);
        if constexpr (std::is_same_v<T, std::string_view>) {
          column.set_string(first + i, value);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          column.set_string(first + i, value.data);
        } else if constexpr (std::is_same_v<T, bool>) {
          column.values<BoolSlot>()[first + i].value = value;
        } else {
          column.values<T>()[first + i] = value;
        }
      }
    });
  }
}

Row ChangeGenerator::make_row(const Change& change) const {
  const Schema& schema = options_.schema;
  Row row;
  row.kind = change.kind;
  row.fields.reserve(schema.size());
  for (size_t c = 0; c < schema.size(); ++c) {
    if (c == key_column_) {
      row.fields.emplace_back(static_cast<int64_t>(key_of(change.local_key)));
      continue;
    }
    const DataType& type = schema.column(c).type;
    with_field_type(type.id, [&](auto tag) {
      using T = decltype(tag);
      const T value = field_value<T>(type, field_hash(change, c), change.version);
      row.fields.push_back(Value::of(value));
    });
  }
  return row;
}

std::vector<Row> ChangeGenerator::current_rows() const {
  std::vector<Row> rows;
  for (uint64_t k : present_) rows.push_back(make_row({RowKind::kInsert, k, version_[k]}));
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return a.fields[key_column_].as_bigint() < b.fields[key_column_].as_bigint();
  });
  return rows;
}

// Flink's datagen with the same number of rows and rate, its key a sequence.
FlinkSqlTable flink_sql_table(const DatagenOptions& gen) {
  FlinkSqlTable table{.options = {{"connector", "datagen"}}};
  if (gen.rows > 0) table.options.emplace_back("number-of-rows", std::to_string(gen.rows));
  if (gen.rate > 0) {
    table.options.emplace_back("rows-per-second", std::to_string(static_cast<uint64_t>(gen.rate)));
  }
  const std::string key =
      gen.schema.has_primary_key() ? gen.schema.primary_key_names()[0] : gen.schema.column(0).name;
  table.options.emplace_back("fields." + key + ".kind", "sequence");
  table.options.emplace_back("fields." + key + ".start", "0");
  table.options.emplace_back("fields." + key + ".end",
                             std::to_string(gen.rows > 0 ? gen.rows - 1 : INT64_MAX));
  if (gen.update_weight > 0 || gen.delete_weight > 0) {
    table.note =
        "Flink's datagen emits inserts only: Sluice's mix of updates and deletes has no "
        "equivalent here; a CDC source would supply them.";
  }
  return table;
}

SourceDef datagen_source(const DatagenOptions& options) {
  return SourceDef{
      .output = {options.schema, options.changelog_mode()},
      .create = [options](const SubtaskInfo& info) -> std::unique_ptr<Source> {
        return std::make_unique<DatagenSource>(options, info.index, info.parallelism);
      },
      .rate = options.rate,
      .flink_sql = [table = flink_sql_table(options)](const TableSchema&,
                                                      const RuntimeOptions&) { return table; },
  };
}

}  // namespace sluice
