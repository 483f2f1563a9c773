// EventLoop: one thread that owns a set of channels (connections) on epoll —
// the Netty event loop under Lettuce. This is where a request crosses
// threads, twice:
//   caller -> loop: Submit() puts the command on the loop's task queue and
//     wakes the loop (an eventfd write) only when the loop was idle, i.e.
//     blocked or about to block in epoll_wait; a busy loop picks the task up
//     on its next turn without being woken;
//   loop -> caller: the loop writes the command (a send per command with
//     FlushMode::kPerCommand, Lettuce's autoFlush; or one send per channel of
//     everything it took from the queue with kBatch), reads, decodes and
//     completes the caller's ReplyWaiter.
// wakeups() counts the eventfd writes, the hand-offs that cost a wake-up.
//
// EventLoopGroup: N loops; channels are given to them round-robin (Netty's
// next()).
//
// Thread safety: Submit, Interrupt and wakeups are thread-safe. Adopt and
// Start run before any Submit, on one thread; Stop after the last.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "harness/clients/event_loop_channel.h"
#include "harness/clients/io_model.h"
#include "harness/clients/reply_waiter.h"
#include "harness/status.h"

namespace kvlab::harness {

class EventLoop {
 public:
  // `cpus`: where the loop thread may run (empty: anywhere).
  EventLoop(FlushMode flush, std::vector<int> cpus);
  ~EventLoop();  // Stop()s
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Creates epoll and the eventfd. REQUIRES: before Adopt.
  Status Open();
  // The loop will own `channel`'s I/O (the caller keeps the object alive
  // until Stop). REQUIRES: Open succeeded; before Start.
  Status Adopt(EventLoopChannel* channel);
  // Starts the loop's thread.
  void Start();

  // Queues `request` for `channel` (adopted by this loop); `waiter` is
  // completed on the loop's thread with the reply or an error.
  void Submit(EventLoopChannel* channel, std::string_view request, ReplyWaiter* waiter);

  // Fails every channel's waiting requests (and later ones) with `status`.
  void Interrupt(const Status& status);

  // Ends the thread; queued requests are failed. Idempotent.
  void Stop();

  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  struct Task {
    EventLoopChannel* channel;
    ReplyWaiter* waiter;
    size_t offset;  // of the request's bytes in queued_bytes_
    size_t length;
  };

  void Run();
  void RunTasks(const std::vector<Task>& tasks, const std::string& bytes);
  void FailChannel(EventLoopChannel* channel, const Status& status);
  void WatchWrites(EventLoopChannel* channel);
  void Wake();

  const FlushMode flush_;
  const std::vector<int> cpus_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::vector<EventLoopChannel*> channels_;  // set before Start, then read by the loop only
  std::vector<bool> watching_writes_;        // loop thread: EPOLLOUT registered, per channel
  std::thread thread_;

  Mutex mutex_;
  std::vector<Task> tasks_ GUARDED_BY(mutex_);
  std::string queued_bytes_ GUARDED_BY(mutex_);  // the tasks' request bytes
  bool idle_ GUARDED_BY(mutex_) = false;         // the loop will block; wake it to hand over
  bool stopping_ GUARDED_BY(mutex_) = false;
  Status interrupted_ GUARDED_BY(mutex_);
  std::atomic<uint64_t> wakeups_{0};
};

class EventLoopGroup {
 public:
  // `threads` loops (>= 1) writing with `flush`, their threads on `cpus`.
  EventLoopGroup(int threads, FlushMode flush, const std::vector<int>& cpus);
  Status Open();
  EventLoop* Next();  // round-robin, for Adopt
  void Start();
  void Interrupt(const Status& status);
  void Stop();
  uint64_t wakeups() const;

 private:
  std::vector<std::unique_ptr<EventLoop>> loops_;
  size_t next_ = 0;
};

// The loop threads `--loop-threads` asks for: `requested`, or when 0 the
// cores the harness may use (Lettuce's default: the number of cores).
int EffectiveLoopThreads(int requested, const std::vector<int>& cpus);

}  // namespace kvlab::harness
