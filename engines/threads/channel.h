// MpscChannel<T>: a multi-producer, single-consumer message queue — the wire
// between the connection threads and one shard thread of the sharded engine.
//
// Any thread may Send(); exactly one thread (the consumer) calls
// ReceiveAll(), which blocks while the channel is empty and then takes every
// queued message at once, so one wakeup drains a whole burst. A mutex guards
// the queue; the condition variable is signalled only when the consumer is
// actually asleep, so a busy consumer costs producers no futex wake.
//
// Close() ends the channel: later Send()s are refused, and the consumer still
// receives everything sent before it, then sees the end.
//
// Thread-safe as described; Depth()/MaxDepth() may be read from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace kvlab {

template <typename T>
class MpscChannel {
 public:
  MpscChannel() = default;
  MpscChannel(const MpscChannel&) = delete;
  MpscChannel& operator=(const MpscChannel&) = delete;

  // Queues `message` and wakes the consumer if it sleeps. Returns false (and
  // drops it) once the channel is closed.
  bool Send(T message) {
    bool wake_consumer = false;
    if (!Queue(std::move(message), &wake_consumer)) return false;
    if (wake_consumer) ready_.notify_one();
    return true;
  }

  // Queues `message` without waking the consumer: a producer that sends
  // several messages in a row wakes it once, with Wake(), after the last.
  // REQUIRES: the producer calls Wake() after it (until then a sleeping
  // consumer does not see the message). Returns false once closed.
  bool SendWithoutWake(T message) {
    bool ignored = false;
    return Queue(std::move(message), &ignored);
  }

  // Wakes the consumer if it sleeps while messages wait.
  void Wake() {
    bool wake_consumer = false;
    {
      MutexLock guard(mutex_);
      wake_consumer = consumer_asleep_ && !queue_.empty();
    }
    if (wake_consumer) ready_.notify_one();
  }

  // Consumer only. Blocks until a message is queued or the channel is closed,
  // then moves every queued message into *batch (which it clears first).
  // Returns false once the channel is closed and drained.
  bool ReceiveAll(std::vector<T>* batch) {
    batch->clear();
    MutexLock guard(mutex_);
    while (queue_.empty() && !closed_) {
      consumer_asleep_ = true;
      guard.Wait(ready_);
      consumer_asleep_ = false;
    }
    if (queue_.empty()) return false;
    batch->swap(queue_);  // the consumer's old buffer becomes the next queue
    RecordDepth(0);
    return true;
  }

  // Refuses further sends and wakes the consumer to drain what is queued.
  void Close() {
    {
      MutexLock guard(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
  }

  // Messages queued and not yet received, and the most ever queued at once.
  size_t Depth() const { return depth_.load(std::memory_order_relaxed); }
  size_t MaxDepth() const { return max_depth_.load(std::memory_order_relaxed); }

 private:
  // REQUIRES: mutex_ held (the atomics are only for lock-free readers).
  void RecordDepth(size_t depth) REQUIRES(mutex_) {
    depth_.store(depth, std::memory_order_relaxed);
    if (depth > max_depth_.load(std::memory_order_relaxed)) {
      max_depth_.store(depth, std::memory_order_relaxed);
    }
  }

  bool Queue(T message, bool* consumer_asleep) EXCLUDES(mutex_) {
    MutexLock guard(mutex_);
    if (closed_) return false;
    queue_.push_back(std::move(message));
    RecordDepth(queue_.size());
    *consumer_asleep = consumer_asleep_;
    return true;
  }

  Mutex mutex_;
  std::condition_variable ready_;
  std::vector<T> queue_ GUARDED_BY(mutex_);
  bool closed_ GUARDED_BY(mutex_) = false;
  bool consumer_asleep_ GUARDED_BY(mutex_) = false;
  std::atomic<size_t> depth_{0};
  std::atomic<size_t> max_depth_{0};
};

}  // namespace kvlab
