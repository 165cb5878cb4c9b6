#pragma once

#include <cstdint>
#include <vector>

#include "engine/row.hpp"

namespace sluice {

enum class EventKind : uint8_t {
  kNone,        ///< a batch of records only
  kFlush,       ///< FlushSignal(id = tick): sinks run their flush action
  kBarrier,     ///< Barrier(id = checkpoint id)
  kEndOfData,   ///< no records follow: operators finish, sinks write their tail
  kEndOfInput,  ///< nothing at all follows (after the final checkpoint, if any)
};

/// A control event travelling in a channel behind the records sent before it.
struct ControlEvent {
  EventKind kind = EventKind::kNone;
  int64_t id = 0;
};

/// What a channel carries: some records, then at most one control event. A
/// producer hands its partial batch over with any control event, so records
/// and events keep the order in which they were emitted.
struct Batch {
  std::vector<Row> rows;
  ControlEvent event;

  void clear() {
    rows.clear();
    event = {};
  }
};

}  // namespace sluice
