// DelayQueue: the packets "on the wire" of the emulated remote link.
//
// A packet entering the link in one direction is serialised at the link rate
// behind the packets already queued in that direction (netem's `rate`), then
// travels for the one-way delay; it leaves the queue at its due time. Each
// direction is a FIFO: with a fixed delay and a per-direction serialiser, due
// times are non-decreasing in arrival order, so two deques ordered by arrival
// are also ordered by due time, and the queue's next packet is the earlier of
// the two heads. A direction holding `queue_limit_packets` packets drops the
// next one (drop tail, counted), like netem's `limit`.
//
// Time is passed in by the caller (no clock inside), which is what lets the
// unit tests drive it with a fake clock.
//
// Not thread-safe: one forwarder thread owns a DelayQueue.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace kvlab::link {

enum class Direction : std::uint8_t { ClientToServer = 0, ServerToClient = 1 };

inline constexpr std::array<Direction, 2> kBothDirections = {Direction::ClientToServer,
                                                             Direction::ServerToClient};

inline const char* DirectionName(Direction direction) {
  return direction == Direction::ClientToServer ? "client->server" : "server->client";
}

// What the emulated link does to each direction (both directions alike).
struct LinkShape {
  std::chrono::nanoseconds one_way_delay{0};
  double rate_bits_per_second = 0;         // 0: unlimited (no serialisation delay)
  std::size_t queue_limit_packets = 1000;  // per direction, packets held at once
};

struct DirectionCounters {
  std::uint64_t queued_packets = 0;
  std::uint64_t queued_bytes = 0;
  std::uint64_t dropped_packets = 0;  // queue full on arrival
  std::uint64_t delivered_packets = 0;
};

template <typename Payload>
class DelayQueue {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  struct Entry {
    Direction direction;
    TimePoint due;
    Payload payload;
  };

  explicit DelayQueue(LinkShape shape) : shape_(shape) {}

  DelayQueue(const DelayQueue&) = delete;
  DelayQueue& operator=(const DelayQueue&) = delete;

  // Queues `payload` (of `size_bytes` on the wire) that arrived at `arrival`
  // and returns its due time. When the direction is full, returns nullopt,
  // counts a drop and leaves `payload` untouched (the caller keeps its buffer).
  // REQUIRES: arrival times passed for one direction never decrease.
  std::optional<TimePoint> Push(Direction direction, Payload& payload, std::size_t size_bytes,
                                TimePoint arrival) {
    Lane& lane = lanes_[Index(direction)];
    if (lane.packets.size() >= shape_.queue_limit_packets) {
      ++lane.counters.dropped_packets;
      return std::nullopt;
    }
    // Serialisation: the packet starts when the link is free, occupies it for
    // size/rate, then propagates for the one-way delay.
    const TimePoint transmit_start = std::max(arrival, lane.link_free_at);
    const TimePoint transmit_end = transmit_start + SerialisationTime(size_bytes);
    lane.link_free_at = transmit_end;
    const TimePoint due = transmit_end + shape_.one_way_delay;
    lane.packets.push_back(Entry{direction, due, std::move(payload)});
    ++lane.counters.queued_packets;
    lane.counters.queued_bytes += size_bytes;
    return due;
  }

  // The due time of the packet that leaves next, or nullopt when empty.
  std::optional<TimePoint> NextDue() const {
    const Lane* lane = EarliestLane();
    if (lane == nullptr) return std::nullopt;
    return lane->packets.front().due;
  }

  // Removes and returns the packet that leaves next if it is due at `now`.
  // When both directions' heads are due, the earlier due time goes first
  // (client->server on a tie), so delivery order follows due time.
  std::optional<Entry> PopDue(TimePoint now) {
    Lane* lane = EarliestLane();
    if (lane == nullptr || lane->packets.front().due > now) return std::nullopt;
    Entry entry = std::move(lane->packets.front());
    lane->packets.pop_front();
    ++lane->counters.delivered_packets;
    return entry;
  }

  std::size_t Size(Direction direction) const { return lanes_[Index(direction)].packets.size(); }
  bool Empty() const { return lanes_[0].packets.empty() && lanes_[1].packets.empty(); }
  const DirectionCounters& Counters(Direction direction) const {
    return lanes_[Index(direction)].counters;
  }
  const LinkShape& Shape() const { return shape_; }

 private:
  struct Lane {
    std::deque<Entry> packets;  // arrival order == due order
    TimePoint link_free_at{};   // when the serialiser finishes the last packet
    DirectionCounters counters;
  };

  static std::size_t Index(Direction direction) { return static_cast<std::size_t>(direction); }

  std::chrono::nanoseconds SerialisationTime(std::size_t size_bytes) const {
    if (shape_.rate_bits_per_second <= 0) return std::chrono::nanoseconds{0};
    const double seconds = static_cast<double>(size_bytes) * 8.0 / shape_.rate_bits_per_second;
    return std::chrono::nanoseconds{static_cast<std::int64_t>(seconds * 1e9 + 0.5)};
  }

  const Lane* EarliestLane() const {
    const Lane& a = lanes_[0];
    const Lane& b = lanes_[1];
    if (a.packets.empty()) return b.packets.empty() ? nullptr : &b;
    if (b.packets.empty()) return &a;
    return b.packets.front().due < a.packets.front().due ? &b : &a;
  }
  Lane* EarliestLane() {
    return const_cast<Lane*>(static_cast<const DelayQueue*>(this)->EarliestLane());
  }

  LinkShape shape_;
  std::array<Lane, 2> lanes_;
};

}  // namespace kvlab::link
