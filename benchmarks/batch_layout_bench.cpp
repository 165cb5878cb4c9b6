#include "sluice/benchmarks/batch_layout_bench.hpp"

#include <boost/lockfree/spsc_queue.hpp>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

// The generated values: an id that counts, a value derived from it.
int64_t value_of(int64_t id) { return (id * 2654435761) % 1000; }
bool keep_id(int64_t id) { return id % 8 != 0; }

struct TypedRecord {
  int64_t id;
  int64_t value;
};

// Waits a moment in a busy loop: each side has a core of its own.
void spin() { __builtin_ia32_pause(); }

// Runs `produce(batch, first_id, n)` on a producer thread for `rows` ids in
// batches of `batch_rows`, hands each batch to this thread through an SPSC
// queue, where `consume(batch)` returns what to add to the checksum; spent
// batches go back for reuse. Returns the sample, checking the checksum.
template <typename Batch, typename Produce, typename Consume>
BenchSample across_one_boundary(uint64_t rows, size_t batch_rows, Produce produce,
                                Consume consume) {
  boost::lockfree::spsc_queue<Batch*> full(16), empty(20);
  std::vector<std::unique_ptr<Batch>> owned;
  for (int i = 0; i < 20; ++i) {
    owned.push_back(std::make_unique<Batch>());
    empty.push(owned.back().get());
  }
  const auto start = Clock::now();
  std::thread producer([&] {
    for (uint64_t first = 0; first < rows; first += batch_rows) {
      Batch* batch;
      while (!empty.pop(batch)) spin();
      produce(*batch, static_cast<int64_t>(first), std::min<uint64_t>(batch_rows, rows - first));
      while (!full.push(batch)) spin();
    }
    while (!full.push(nullptr)) spin();
  });
  uint64_t checksum = 0;
  while (true) {
    Batch* batch;
    if (!full.pop(batch)) {
      spin();
      continue;
    }
    if (batch == nullptr) break;
    checksum += consume(*batch);
    empty.push(batch);
  }
  producer.join();
  if (checksum == 0) throw std::logic_error("the consumer received nothing");
  return {rows, seconds_since(start), {}};
}

// Columns per type; strings as offsets into one byte area; a filter keeps
// row numbers in a selection vector instead of moving rows.
struct ColumnarBatch {
  size_t size = 0;
  std::vector<int64_t> id, value;
  std::vector<uint32_t> name_end;  // name i is name_bytes[name_end[i-1], name_end[i])
  std::string name_bytes;
  std::vector<uint16_t> selection;
};

// Fixed-width rows (id, value, and a name's offset and length into the
// variable-width area), as Flink's BinaryRowData; the same selection vector.
struct BinaryRowBatch {
  static constexpr size_t kWidth = 24;
  size_t size = 0;
  std::vector<std::byte> fixed;
  std::string var;
  std::vector<uint16_t> selection;

  int64_t get(size_t row, size_t field) const {
    int64_t v;
    std::memcpy(&v, fixed.data() + row * kWidth + field * 8, 8);
    return v;
  }
  void set(size_t row, size_t field, int64_t v) {
    std::memcpy(fixed.data() + row * kWidth + field * 8, &v, 8);
  }
};

// Appends "customer-<id % 100000>" to `out`.
size_t append_name(std::string& out, int64_t id) {
  char buffer[32] = "customer-";
  const auto end = std::to_chars(buffer + 9, buffer + sizeof(buffer), id % 100000).ptr;
  out.append(buffer, end);
  return static_cast<size_t>(end - buffer);
}

template <bool kWithName, typename Map, typename Keep>
void produce_columnar(ColumnarBatch& b, int64_t first, size_t n, Map map, Keep keep) {
  b.size = n;
  b.id.resize(n);
  b.value.resize(n);
  b.selection.clear();
  if (kWithName) {
    b.name_end.resize(n);
    b.name_bytes.clear();
  }
  for (size_t i = 0; i < n; ++i) {
    b.id[i] = first + static_cast<int64_t>(i);
    b.value[i] = value_of(b.id[i]);
    if (kWithName) {
      append_name(b.name_bytes, b.id[i]);
      b.name_end[i] = static_cast<uint32_t>(b.name_bytes.size());
    }
  }
  for (size_t i = 0; i < n; ++i) b.value[i] = map(b.value[i]);
  for (size_t i = 0; i < n; ++i) {
    if (keep(b.id[i])) b.selection.push_back(static_cast<uint16_t>(i));
  }
}

template <bool kWithName>
uint64_t consume_columnar(const ColumnarBatch& b) {
  uint64_t sum = 0;
  for (const uint16_t i : b.selection) {
    sum += static_cast<uint64_t>(b.value[i]) + 1;
    if (kWithName) sum += b.name_end[i] - (i == 0 ? 0 : b.name_end[i - 1]);
  }
  return sum;
}

template <bool kWithName, typename Map, typename Keep>
void produce_rows(BinaryRowBatch& b, int64_t first, size_t n, Map map, Keep keep) {
  b.size = n;
  b.fixed.resize(n * BinaryRowBatch::kWidth);
  b.selection.clear();
  if (kWithName) b.var.clear();
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = first + static_cast<int64_t>(i);
    b.set(i, 0, id);
    b.set(i, 1, value_of(id));
    if (kWithName) {
      const size_t offset = b.var.size();
      const size_t length = append_name(b.var, id);
      b.set(i, 2, static_cast<int64_t>(offset << 16 | length));
    }
  }
  for (size_t i = 0; i < n; ++i) b.set(i, 1, map(b.get(i, 1)));
  for (size_t i = 0; i < n; ++i) {
    if (keep(b.get(i, 0))) b.selection.push_back(static_cast<uint16_t>(i));
  }
}

template <bool kWithName>
uint64_t consume_rows(const BinaryRowBatch& b) {
  uint64_t sum = 0;
  for (const uint16_t i : b.selection) {
    sum += static_cast<uint64_t>(b.get(i, 1)) + 1;
    if (kWithName) sum += static_cast<uint64_t>(b.get(i, 2)) & 0xffff;
  }
  return sum;
}

constexpr auto kMap = [](int64_t value) { return value + 1; };
constexpr auto kKeep = [](int64_t id) { return keep_id(id); };
constexpr size_t kBatchRows = 1024;

template <bool kWithName>
BenchSample columnar(uint64_t rows) {
  return across_one_boundary<ColumnarBatch>(
      rows, kBatchRows,
      [](ColumnarBatch& b, int64_t first, size_t n) {
        produce_columnar<kWithName>(b, first, n, kMap, kKeep);
      },
      [](const ColumnarBatch& b) { return consume_columnar<kWithName>(b); });
}

template <bool kWithName>
BenchSample binary_rows(uint64_t rows) {
  return across_one_boundary<BinaryRowBatch>(
      rows, kBatchRows,
      [](BinaryRowBatch& b, int64_t first, size_t n) {
        produce_rows<kWithName>(b, first, n, kMap, kKeep);
      },
      [](const BinaryRowBatch& b) { return consume_rows<kWithName>(b); });
}

}  // namespace

BenchSample typed_single_thread_loop(uint64_t rows) {
  const auto start = Clock::now();
  uint64_t checksum = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    TypedRecord record{static_cast<int64_t>(i), value_of(static_cast<int64_t>(i))};
    record.value = kMap(record.value);
    if (kKeep(record.id)) checksum += static_cast<uint64_t>(record.value);
  }
  if (checksum == 0) throw std::logic_error("the loop kept nothing");
  return {rows, seconds_since(start), {}};
}

BenchSample typed_two_thread_spsc(uint64_t rows) {
  struct TypedBatch {
    size_t size = 0;
    TypedRecord records[256];
  };
  return across_one_boundary<TypedBatch>(
      rows, 256,
      [](TypedBatch& b, int64_t first, size_t n) {
        b.size = 0;
        for (size_t i = 0; i < n; ++i) {
          TypedRecord record{first + static_cast<int64_t>(i),
                             value_of(first + static_cast<int64_t>(i))};
          record.value = kMap(record.value);
          if (kKeep(record.id)) b.records[b.size++] = record;
        }
      },
      [](const TypedBatch& b) {
        uint64_t sum = 0;
        for (size_t i = 0; i < b.size; ++i) sum += static_cast<uint64_t>(b.records[i].value);
        return sum;
      });
}

Benchmark batch_layout_benchmark() {
  return {
      .name = "batch-layout",
      .description =
          "generate -> map -> filter -> (thread boundary) -> consume, in recycled batches of "
          "1024 rows: columns and a selection vector, or fixed-width binary rows",
      .scenarios =
          [](const BenchSettings& settings) {
            const uint64_t rows = settings.quick ? 2'000'000 : 50'000'000;
            return std::vector<BenchScenario>{
                {"baseline: typed two-thread SPSC", true,
                 [=] { return typed_two_thread_spsc(rows); }},
                {"columnar, 2 BIGINT", false, [=] { return columnar<false>(rows); }},
                {"binary rows, 2 BIGINT", false, [=] { return binary_rows<false>(rows); }},
                {"columnar, 2 BIGINT + STRING", false, [=] { return columnar<true>(rows); }},
                {"binary rows, 2 BIGINT + STRING", false, [=] { return binary_rows<true>(rows); }},
            };
          },
  };
}

}  // namespace sluice
