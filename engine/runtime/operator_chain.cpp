#include "sluice/engine/runtime/operator_chain.hpp"

#include <type_traits>

#include "sluice/engine/common/error.hpp"

namespace sluice {
namespace {

// Checks what an operator emitted against the changelog mode it declared
// (RuntimeOptions::check_rows); the batch's columns already hold only the
// declared types.
void check_mode(const NodeDef& node, Batch& rows) {
  rows.for_each([&](uint32_t i) {
    // Thrown inside the emitting operator's call: tagged with its name there.
    if (!node.output.mode.contains(rows.kind(i))) {
      throw DataError("emitted " + rows.ref(i).to_string() + ", but its changelog mode is " +
                      node.output.mode.to_string());
    }
  });
}

// The DECIMAL columns of `schema`. Their precision and scale are checked in
// every batch an operator emits, whatever check_rows says: a map that works
// in place can write any Decimal there.
std::vector<size_t> decimal_columns(const Schema& schema) {
  std::vector<size_t> out;
  for (size_t c = 0; c < schema.size(); ++c) {
    if (schema.column(c).type.id == TypeId::kDecimal) out.push_back(c);
  }
  return out;
}

void check_decimals(const Schema& schema, const std::vector<size_t>& columns, Batch& rows) {
  for (size_t c : columns) {
    const DataType& type = schema.column(c).type;
    const ColumnVector& column = rows.column(c);
    const auto& values = column.values<Decimal>();
    rows.for_each([&](uint32_t i) {
      if (column.is_null(i) || values[i].fits(type.precision, type.scale)) return;
      const std::string scale = std::to_string(type.scale);
      throw DataError(
          "emitted " + rows.ref(i).to_string() + ", but column '" + schema.column(c).name +
          "' is " + type.to_string() + " and " + values[i].to_string() + " does not fit it" +
          (values[i].scale() > type.scale
               ? "; round it to the column's scale: rescaled(" + scale +
                     ", Rounding::kHalfEven), or multiply()/divide() with scale " + scale
               : ""));
    });
  }
}

}  // namespace

// What one member of the chain (the source or a transform) emits: its
// output batch, which it fills during a call and which is handed on, checked
// first if asked, when the call returns.
class MemberOutput {
 public:
  MemberOutput(const NodeDef& node, BatchReceiver& next, bool check)
      : node_(node), next_(next), check_(check) {}

  /// Runs `call`, which emits into the collector it is given, then hands on
  /// what it emitted; also when `call` throws, so that what came before a
  /// failure is delivered. Run it inside the operator's guard, so that a
  /// failed check names the operator.
  template <typename F>
  auto run(F&& call) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Collector&>>) {
      call_delivering(call);
      hand_on();
    } else {
      auto result = call_delivering(call);
      hand_on();
      return result;
    }
  }

 private:
  template <typename F>
  auto call_delivering(F& call) {
    try {
      return call(collector_);
    } catch (...) {
      try {
        hand_on();
      } catch (...) {  // the first failure is the one to report
      }
      batch_.clear();
      throw;
    }
  }
  void hand_on() {
    if (check_) check_mode(node_, batch_);
    if (&batch_.schema() != decimals_of_) {
      // Another table's, or its columns changed.
      decimals_of_ = &batch_.schema();
      decimals_ = decimal_columns(batch_.schema());
    }
    if (!decimals_.empty()) check_decimals(batch_.schema(), decimals_, batch_);
    if (!batch_.empty()) next_.push(batch_);
    batch_.clear();
  }

  const NodeDef& node_;
  BatchReceiver& next_;
  const bool check_;
  // The DECIMAL columns of the batch's columns, decimals_of_.
  const Schema* decimals_of_ = &node_.output.schema;
  std::vector<size_t> decimals_ = decimal_columns(node_.output.schema);
  Batch batch_{node_.output.schema};
  Collector collector_ = node_.output.tables.empty()
                             ? Collector(batch_)
                             : Collector(
                                   batch_, node_.output.tables, [this] { hand_on(); },
                                   [this](std::shared_ptr<const SchemaChange> change) {
                                     next_.push_schema_change(change);
                                     kept_.push_back(std::move(change));
                                   });
  // The schema changes emitted: batches here and downstream use their columns.
  std::vector<std::shared_ptr<const SchemaChange>> kept_;
};

namespace {

// Feeds one transform of the chain. Where the operator reads the key of its
// keyed input, the records go one by one, each after setting the operator's
// current key; otherwise a batch at a time.
class OperatorLink final : public BatchReceiver {
 public:
  OperatorLink(const ChainMember& member, MemberOutput& output)
      : m_(member), keys_(member.keys()), output_(output) {}
  void push(Batch& rows) override {
    m_.metrics->records_in.add(rows.selected());
    guarded(m_.node->name, [&] {
      output_.run([&](Collector& out) {
        if (!keys_ || !keys_->wants_keys()) {
          m_.op->process_batch(rows, out);
          return;
        }
        rows.for_each([&](uint32_t i) {
          keys_->take_key(rows.ref(i));
          m_.op->process_row(rows.ref(i), out);
        });
        rows.clear();
      });
    });
  }
  void push_schema_change(const std::shared_ptr<const SchemaChange>& change) override {
    kept_.push_back(change);
    guarded(m_.node->name,
            [&] { output_.run([&](Collector& out) { m_.op->on_schema_change(change, out); }); });
  }

 private:
  const ChainMember& m_;
  TaskOperatorContext* const keys_;
  MemberOutput& output_;
  // The schema changes it took: the batches it gets have their columns.
  std::vector<std::shared_ptr<const SchemaChange>> kept_;
};

// Feeds the sink at the end of the chain.
class SinkLink final : public BatchReceiver {
 public:
  explicit SinkLink(const ChainMember& member) : m_(member) {}
  void push(Batch& rows) override {
    m_.metrics->records_in.add(rows.selected());
    guarded(m_.node->name, [&] { m_.sink->write_batch(rows); });
  }
  void push_schema_change(const std::shared_ptr<const SchemaChange>& change) override {
    kept_.push_back(change);
    guarded(m_.node->name, [&] { m_.sink->on_schema_change(*change); });
  }

 private:
  const ChainMember& m_;
  std::vector<std::shared_ptr<const SchemaChange>> kept_;  // see OperatorLink
};

}  // namespace

CheckpointHooks& ChainMember::hooks() const {
  if (source) return *source;
  if (op) return *op;
  return *sink;
}

StateStore* ChainMember::store_to_snapshot() const {
  return context ? context->store_to_snapshot() : nullptr;
}

TaskOperatorContext* ChainMember::keys() const {
  return context && context->keyed() ? context.get() : nullptr;
}

OperatorChain::OperatorChain(const std::vector<ChainMember>& members, BatchReceiver* writer,
                             bool check_rows)
    : members_(members), outputs_(members_.size()) {
  // Linked from the end: the sink, or the writer into the output channels.
  BatchReceiver* next = writer;
  if (members_.back().sink) {
    links_.push_back(std::make_unique<SinkLink>(members_.back()));
    next = links_.back().get();
  }
  for (size_t i = members_.size(); i-- > 0;) {
    const ChainMember& m = members_[i];
    if (m.sink) continue;
    outputs_[i] = std::make_unique<MemberOutput>(*m.node, *next, check_rows);
    if (!m.op) continue;
    links_.push_back(std::make_unique<OperatorLink>(m, *outputs_[i]));
    next = links_.back().get();
  }
  head_ = next;
}

OperatorChain::~OperatorChain() = default;

PollResult OperatorChain::poll_source() {
  const ChainMember& source = members_.front();
  return guarded(source.node->name, [&] {
    return outputs_.front()->run([&](Collector& out) { return source.source->poll_next(out); });
  });
}

void OperatorChain::finish() {
  for (size_t i = 0; i < members_.size(); ++i) {
    const ChainMember& m = members_[i];
    if (m.op) {
      guarded(m.node->name, [&] { outputs_[i]->run([&](Collector& out) { m.op->finish(out); }); });
    } else if (m.sink) {
      guarded(m.node->name, [&] { m.sink->finish(); });
    }
  }
}

}  // namespace sluice
