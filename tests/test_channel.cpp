#include <catch2/catch.hpp>
#include <thread>

#include "sluice/engine/runtime/channel.hpp"
#include "sluice/engine/runtime/mailbox.hpp"

using namespace sluice;

namespace {

const Schema kIds = Schema::parse("id BIGINT");

std::unique_ptr<Batch> batch_of(Channel& channel, int64_t first, int count) {
  auto batch = channel.acquire();
  for (int i = 0; i < count; ++i) batch->append(Row(RowKind::kInsert, {first + i}));
  return batch;
}

int64_t first_id(const Batch& batch) { return batch.column(0).values<int64_t>().front(); }

}  // namespace

TEST_CASE("a channel holds at most its capacity and hands batches over in order", "[engine]") {
  Notifier consumer, producer;
  Channel channel(2, consumer, producer, kIds);
  auto a = batch_of(channel, 0, 3);
  auto b = batch_of(channel, 3, 3);
  auto c = batch_of(channel, 6, 3);
  const uint64_t consumer_epoch = consumer.epoch();
  CHECK(channel.try_push(a));
  CHECK(consumer.epoch() != consumer_epoch);
  CHECK(channel.try_push(b));
  CHECK_FALSE(channel.try_push(c));
  REQUIRE(c != nullptr);  // a failed push leaves the batch with the producer

  const uint64_t producer_epoch = producer.epoch();
  auto first = channel.try_pop();
  CHECK(producer.epoch() != producer_epoch);
  REQUIRE(first);
  CHECK(first_id(*first) == 0);
  channel.recycle(std::move(first));
  CHECK(channel.try_push(c));
  CHECK(first_id(*channel.try_pop()) == 3);
  CHECK(first_id(*channel.try_pop()) == 6);
  CHECK_FALSE(channel.try_pop());
  CHECK(channel.empty());
}

TEST_CASE("a recycled batch comes back empty with its capacity", "[engine]") {
  Notifier consumer, producer;
  Channel channel(1, consumer, producer, kIds);
  auto batch = batch_of(channel, 0, 100);
  batch->event = {EventKind::kFlush, 7};
  const Batch* address = batch.get();
  REQUIRE(channel.try_push(batch));
  channel.recycle(channel.try_pop());
  auto again = channel.acquire();
  CHECK(again.get() == address);
  CHECK(again->size() == 0);
  CHECK(again->column(0).values<int64_t>().capacity() >= 100);
  CHECK(again->event.kind == EventKind::kNone);
}

TEST_CASE("a notifier wakes a sleeping waiter and honours a deadline", "[engine]") {
  Notifier notifier;
  const uint64_t seen = notifier.epoch();
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    notifier.notify();
  });
  notifier.wait(seen);
  CHECK(notifier.epoch() != seen);
  waker.join();

  const uint64_t now = notifier.epoch();
  notifier.wait(now, Notifier::Clock::now() + std::chrono::milliseconds(5));
  CHECK(notifier.epoch() == now);
}

TEST_CASE("a mailbox coalesces flush ticks and runs mail in order", "[engine]") {
  Notifier owner;
  Mailbox mailbox(owner);
  CHECK(mailbox.offer_tick(1));
  CHECK_FALSE(mailbox.offer_tick(2));  // coalesced: 1 was still pending
  CHECK(mailbox.take_tick() == 2);
  CHECK(mailbox.take_tick() == 0);

  std::vector<int> ran;
  mailbox.post([&] { ran.push_back(1); });
  mailbox.post([&] { ran.push_back(2); });
  CHECK(mailbox.has_mail());
  mailbox.run_mail();
  CHECK(ran == std::vector<int>{1, 2});
  CHECK_FALSE(mailbox.has_mail());
}
