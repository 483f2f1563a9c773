// DelayQueue driven by a fake clock: time is whatever the test says it is.
#include "link/delay_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace kvlab::link {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;
using Queue = DelayQueue<std::string>;
using TimePoint = Queue::TimePoint;

// A fake clock: starts at an arbitrary point and only moves when told to.
struct FakeClock {
  TimePoint now = TimePoint{} + std::chrono::seconds{100};
  void Advance(nanoseconds d) { now += d; }
};

LinkShape DelayOnly(microseconds one_way, std::size_t limit = 1000) {
  LinkShape shape;
  shape.one_way_delay = one_way;
  shape.queue_limit_packets = limit;
  return shape;
}

std::optional<TimePoint> Push(Queue& queue, Direction direction, std::string payload,
                              std::size_t bytes, TimePoint arrival) {
  return queue.Push(direction, payload, bytes, arrival);
}

// Everything due at `now`, in delivery order, as "direction:payload".
std::vector<std::string> DrainDue(Queue& queue, TimePoint now) {
  std::vector<std::string> delivered;
  while (auto entry = queue.PopDue(now)) {
    delivered.push_back(std::string(entry->direction == Direction::ClientToServer ? "c:" : "s:") +
                        entry->payload);
  }
  return delivered;
}

TEST(DelayQueue, HoldsEachPacketForTheOneWayDelay) {
  FakeClock clock;
  Queue queue(DelayOnly(microseconds{125}));
  const TimePoint sent = clock.now;
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "ping", 60, sent), sent + microseconds{125});
  EXPECT_EQ(queue.NextDue(), sent + microseconds{125});

  clock.Advance(microseconds{124});
  EXPECT_FALSE(queue.PopDue(clock.now).has_value());
  clock.Advance(microseconds{1});
  const auto entry = queue.PopDue(clock.now);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->payload, "ping");
  EXPECT_EQ(entry->direction, Direction::ClientToServer);
  EXPECT_TRUE(queue.Empty());
  EXPECT_FALSE(queue.NextDue().has_value());
}

TEST(DelayQueue, ZeroDelayDeliversImmediately) {
  FakeClock clock;
  Queue queue(DelayOnly(microseconds{0}));
  Push(queue, Direction::ServerToClient, "now", 40, clock.now);
  EXPECT_EQ(DrainDue(queue, clock.now), std::vector<std::string>{"s:now"});
}

TEST(DelayQueue, EachDirectionIsFifoEvenWithEqualDueTimes) {
  FakeClock clock;
  Queue queue(DelayOnly(microseconds{100}));
  for (const char* payload : {"a", "b", "c"})
    Push(queue, Direction::ClientToServer, payload, 60, clock.now);
  for (const char* payload : {"x", "y"})
    Push(queue, Direction::ServerToClient, payload, 60, clock.now);
  clock.Advance(microseconds{100});
  const std::vector<std::string> delivered = DrainDue(queue, clock.now);
  // Ties between directions go client->server first; within one, arrival order.
  EXPECT_EQ(delivered, (std::vector<std::string>{"c:a", "c:b", "c:c", "s:x", "s:y"}));
}

TEST(DelayQueue, DeliversAcrossDirectionsInDueTimeOrder) {
  FakeClock clock;
  Queue queue(DelayOnly(microseconds{100}));
  Push(queue, Direction::ClientToServer, "c1", 60, clock.now);  // due 100
  clock.Advance(microseconds{10});
  Push(queue, Direction::ServerToClient, "s1", 60, clock.now);  // due 110
  clock.Advance(microseconds{10});
  Push(queue, Direction::ClientToServer, "c2", 60, clock.now);  // due 120
  clock.Advance(microseconds{5});
  Push(queue, Direction::ServerToClient, "s2", 60, clock.now);  // due 125

  EXPECT_EQ(queue.NextDue(), clock.now - microseconds{25} + microseconds{100});
  clock.Advance(microseconds{90});  // t = 115: c1 and s1 are due
  EXPECT_EQ(DrainDue(queue, clock.now), (std::vector<std::string>{"c:c1", "s:s1"}));
  clock.Advance(microseconds{10});  // t = 125
  EXPECT_EQ(DrainDue(queue, clock.now), (std::vector<std::string>{"c:c2", "s:s2"}));
}

TEST(DelayQueue, RateLimitSerialisesPacketsBehindEachOther) {
  FakeClock clock;
  LinkShape shape = DelayOnly(microseconds{100});
  shape.rate_bits_per_second = 8e6;  // 8 Mbit/s: one byte per microsecond
  Queue queue(shape);
  const TimePoint t0 = clock.now;
  // Three 1000-byte packets arriving together leave 1000 µs apart.
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "1", 1000, t0), t0 + microseconds{1100});
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "2", 1000, t0), t0 + microseconds{2100});
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "3", 1000, t0), t0 + microseconds{3100});
  // The other direction has its own serialiser.
  EXPECT_EQ(Push(queue, Direction::ServerToClient, "r", 500, t0), t0 + microseconds{600});
  // A packet arriving after the link went idle waits for nothing but itself.
  EXPECT_EQ(Push(queue, Direction::ServerToClient, "late", 100, t0 + microseconds{5000}),
            t0 + microseconds{5200});
}

TEST(DelayQueue, DropsTailBeyondTheQueueLimitAndCountsIt) {
  FakeClock clock;
  Queue queue(DelayOnly(microseconds{100}, /*limit=*/2));
  EXPECT_TRUE(Push(queue, Direction::ClientToServer, "1", 60, clock.now).has_value());
  EXPECT_TRUE(Push(queue, Direction::ClientToServer, "2", 60, clock.now).has_value());
  std::string third = "3";
  EXPECT_FALSE(queue.Push(Direction::ClientToServer, third, 60, clock.now).has_value());
  EXPECT_EQ(third, "3") << "a dropped payload stays with the caller";
  // The limit is per direction.
  EXPECT_TRUE(Push(queue, Direction::ServerToClient, "x", 60, clock.now).has_value());

  EXPECT_EQ(queue.Counters(Direction::ClientToServer).queued_packets, 2u);
  EXPECT_EQ(queue.Counters(Direction::ClientToServer).dropped_packets, 1u);
  EXPECT_EQ(queue.Counters(Direction::ServerToClient).dropped_packets, 0u);

  // Delivering frees room again.
  clock.Advance(microseconds{100});
  EXPECT_EQ(DrainDue(queue, clock.now), (std::vector<std::string>{"c:1", "c:2", "s:x"}));
  EXPECT_TRUE(Push(queue, Direction::ClientToServer, "4", 60, clock.now).has_value());
  EXPECT_EQ(queue.Counters(Direction::ClientToServer).delivered_packets, 2u);
  EXPECT_EQ(queue.Size(Direction::ClientToServer), 1u);
}

TEST(DelayQueue, DroppedPacketsDoNotOccupyTheRateLimitedLink) {
  FakeClock clock;
  LinkShape shape = DelayOnly(microseconds{0}, /*limit=*/1);
  shape.rate_bits_per_second = 8e6;
  Queue queue(shape);
  const TimePoint t0 = clock.now;
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "1", 1000, t0), t0 + microseconds{1000});
  EXPECT_FALSE(Push(queue, Direction::ClientToServer, "dropped", 1000, t0).has_value());
  ASSERT_TRUE(queue.PopDue(t0 + microseconds{1000}).has_value());
  EXPECT_EQ(Push(queue, Direction::ClientToServer, "2", 1000, t0 + microseconds{1000}),
            t0 + microseconds{2000});
}

}  // namespace
}  // namespace kvlab::link
