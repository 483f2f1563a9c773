// PubSubRegistry: who listens on which Pub/Sub channel, pattern and shard
// channel (Redis's pubsub.c: server.pubsub_channels, pubsub_patterns,
// pubsubshard_channels), and PUBLISH's delivery to them.
//
// A subscriber is a client id and its PubSubMailbox. PUBLISH runs on the
// publisher's I/O thread and only queues the message in each receiver's
// mailbox; the receiver's connection renders the queued messages on its own
// thread, in its protocol of the moment (RESP2 array or RESP3 push), as
// Redis writes them into the client's reply buffer. Messages from one
// publisher reach every receiver in the order they were published; those of
// two publishers at once may interleave differently for two receivers (each
// I/O thread publishes on its own, as any multi-threaded server does).
//
// The count PUBLISH answers is Redis's: one per channel subscriber plus one
// per (client, pattern) pair whose pattern matches, so a client subscribed
// both ways counts (and receives) twice. Shard channels ignore patterns.
//
// Thread-safe: every member may be called from any thread. A mailbox's
// `wake` is called from the publishing thread, at most once per Take(), and
// must only post work to its client's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"

namespace kvlab {

// One delivered message: "message" (channel), "pmessage" (the pattern that
// matched, then the channel) or "smessage" (shard channel); or kRaw, bytes
// sent as they are (a MONITOR line, server/monitor_feed.h).
struct PubSubMessage {
  enum class Kind : uint8_t { kMessage, kPatternMessage, kShardMessage, kRaw };
  Kind kind = Kind::kMessage;
  std::string pattern;  // kPatternMessage only
  std::string channel;
  std::string payload;
};

// One client's queue of messages not yet rendered.
// Thread-safe: Deliver() from any thread, Take() from the client's thread.
class PubSubMailbox {
 public:
  // `wake` (may be empty: the messages then wait for the next Take()) is
  // called when a message arrives in an empty mailbox.
  explicit PubSubMailbox(std::function<void()> wake) : wake_(std::move(wake)) {}

  void Deliver(PubSubMessage message);
  // Every queued message, oldest first; the next Deliver() wakes again.
  std::vector<PubSubMessage> Take();
  // Whether messages wait (a relaxed hint for the client's thread).
  bool HasMessages() const { return waiting_.load(std::memory_order_acquire); }

 private:
  const std::function<void()> wake_;
  Mutex mutex_;
  std::vector<PubSubMessage> queue_ GUARDED_BY(mutex_);
  std::atomic<bool> waiting_{false};
};

class PubSubRegistry {
 public:
  // Channels and shard channels are separate namespaces (SUBSCRIBE and
  // SSUBSCRIBE; PUBLISH and SPUBLISH).
  enum class Space : uint8_t { kGlobal, kShard };

  // Adds client `client` to `channel`; false when it was subscribed already.
  bool Subscribe(Space space, std::string_view channel, uint64_t client,
                 const std::shared_ptr<PubSubMailbox>& mailbox);
  // False when `client` was not subscribed to `channel`.
  bool Unsubscribe(Space space, std::string_view channel, uint64_t client);
  bool SubscribePattern(std::string_view pattern, uint64_t client,
                        const std::shared_ptr<PubSubMailbox>& mailbox);
  bool UnsubscribePattern(std::string_view pattern, uint64_t client);
  // Every subscription of `client` (CLIENT KILL: gone before the client's
  // own thread closes it, as Redis frees a killed client at once).
  void RemoveClient(uint64_t client);

  // Queues `payload` for every subscriber of `channel` (and, in kGlobal,
  // of every matching pattern); returns how many deliveries it made.
  int64_t Publish(Space space, std::string_view channel, std::string_view payload);

  // PUBSUB CHANNELS / SHARDCHANNELS: the channels with a subscriber,
  // matching `pattern` when one is given (sorted).
  std::vector<std::string> Channels(Space space, const std::string* pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB: `channel`'s subscribers (not patterns').
  int64_t Subscribers(Space space, std::string_view channel) const;
  // PUBSUB NUMPAT: how many distinct patterns have a subscriber.
  int64_t Patterns() const;
  // INFO stats: channels with a subscriber.
  int64_t ChannelCount(Space space) const;

 private:
  // Subscribers of one channel or pattern, in subscription order (Redis
  // appends to a list; delivery follows it).
  using SubscriberList = std::vector<std::pair<uint64_t, std::shared_ptr<PubSubMailbox>>>;
  using ByName = std::unordered_map<std::string, SubscriberList>;
  ByName& Names(Space space) REQUIRES(mutex_) {
    return space == Space::kGlobal ? channels_ : shard_channels_;
  }
  const ByName& ReadNames(Space space) const REQUIRES_SHARED(mutex_) {
    return space == Space::kGlobal ? channels_ : shard_channels_;
  }

  // Publishers and counters read at once; (un)subscribing writes.
  mutable SharedMutex mutex_;
  ByName channels_ GUARDED_BY(mutex_);
  ByName shard_channels_ GUARDED_BY(mutex_);
  // Sorted: Redis iterates its pattern dict, so the order of one message's
  // pmessages is no promise of Redis's either.
  std::map<std::string, SubscriberList> patterns_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
