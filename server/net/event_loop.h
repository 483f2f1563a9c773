// EventLoop: one I/O thread's readiness loop, as Redis's ae: a level-triggered
// epoll set of client sockets, a queue of functions posted from other
// threads, and callbacks run once after each round of ready sockets.
//
// Why not Boost.Asio's reactor here (Asio still accepts, times retries and
// waits for the stop signal): Asio registers a socket edge-triggered and,
// after every successful read, tries the next read speculatively before it
// waits. A P1 client has not sent its next command when the reply has just
// gone out, so that recv() fails, once per request, and the queued read
// costs an extra epoll_wait per round besides. Counted by the kernel's
// tracepoints at P1 (50 clients, GET): kvlab-server on Asio made 2.0
// recvfrom and 1.1 epoll_wait per request, redis-server 1.0 read and 0.8
// epoll_wait. Asio 1.74 offers no read that waits without either a
// speculative recv() or an epoll_ctl(MOD) (async_wait); a level-triggered
// set tells the loop which sockets have input, so each request costs one
// recv(), one send() and its share of one epoll_wait.
//
// Thread-safety: Post() and ReleaseWhenIdle() may be called from any thread;
// everything else only on the loop's thread (inside Run(): from a Watcher,
// a posted function or an after-round callback).
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/busy_wait_meter.h"
#include "base/mutex.h"

namespace kvlab {

class EventLoop {
 public:
  // What the loop calls when a watched descriptor is ready. `events` is
  // epoll's mask (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP).
  class Watcher {
   public:
    virtual ~Watcher() = default;
    virtual void OnReady(uint32_t events) = 0;
  };

  EventLoop();  // aborts with a message if epoll or eventfd cannot be created
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Runs events, posted functions and after-round callbacks until
  // ReleaseWhenIdle() has been called and no work is left: nothing watched,
  // nothing posted, no HoldWork() outstanding.
  void Run();

  // Any thread: runs `function` on the loop's thread, in posting order,
  // waking the loop if it sleeps.
  void Post(std::function<void()> function);
  // Any thread: lets Run() return once the loop is idle (see Run()).
  void ReleaseWhenIdle();

  // Loop thread. Starts watching `fd` for `events` (see Change()) and
  // reports them to `watcher`, which the loop keeps alive while it watches
  // the descriptor, and for the rest of the round after it stops. Returns
  // false (errno set) if epoll refuses.
  bool Watch(int fd, std::shared_ptr<Watcher> watcher, uint32_t events);
  // Loop thread. Sets which events of a watched `fd` are reported: EPOLLIN
  // and/or EPOLLOUT; 0 takes it out of the epoll set, so that a hang-up is
  // not reported while nothing is wanted. No system call when nothing
  // changes. Returns false (errno set) if `fd` is not watched or epoll refuses.
  bool Change(int fd, uint32_t events) {
    // Inline: a connection asks after every request, and the answer is
    // almost always "as before".
    const size_t slot = static_cast<size_t>(fd);
    if (fd >= 0 && slot < slots_.size() && slots_[slot].events == events &&
        slots_[slot].watcher != nullptr) {
      return true;
    }
    return ChangeWatchedEvents(fd, events);
  }
  // Loop thread. Stops watching `fd`; REQUIRES: before the descriptor is closed.
  void Forget(int fd);

  // Loop thread. Work that is not a watched descriptor but must finish
  // before Run() returns (an engine batch in flight).
  void HoldWork() { ++held_work_; }
  void ReleaseWork() { --held_work_; }

  // Loop thread. Runs `callback` once, after the ready sockets and posted
  // functions of the current round, before the loop next sleeps.
  void AfterRound(std::function<void()> callback);

  // True on the thread running this loop's Run().
  bool OnLoopThread() const;

  // Round timing for INFO stages: while *switch_on is non-zero the loop
  // reads the stage clock when epoll_wait returns (RoundWokeNs(), a sampled
  // request's first timestamp) and adds its busy and waiting time to
  // busy_wait(). Before Run(); `switch_on` outlives the loop.
  void TimeRoundsWhile(const std::atomic<uint32_t>* switch_on) { timing_switch_ = switch_on; }
  // Loop thread: when this round's epoll_wait returned; 0 when not timed.
  int64_t RoundWokeNs() const { return round_woke_ns_; }
  BusyWaitMeter& busy_wait() { return busy_wait_; }

 private:
  struct Slot {
    std::shared_ptr<Watcher> watcher;
    uint32_t events = 0;  // what epoll watches now (0: not in the set)
  };

  bool ChangeWatchedEvents(int fd, uint32_t events);
  void Dispatch(const epoll_event& event);
  bool RunPosted();  // returns whether anything ran
  bool Idle() EXCLUDES(mutex_);

  const int epoll_fd_;
  const int wake_fd_;        // eventfd, edge-triggered: a write wakes epoll_wait, never read
  std::vector<Slot> slots_;  // by descriptor number
  size_t watched_ = 0;
  int64_t held_work_ = 0;
  std::vector<std::shared_ptr<Watcher>> retired_;  // forgotten this round, released after it
  std::vector<std::function<void()>> after_round_;
  const std::atomic<uint32_t>* timing_switch_ = nullptr;  // TimeRoundsWhile()
  int64_t round_woke_ns_ = 0;
  BusyWaitMeter busy_wait_;

  Mutex mutex_;
  std::vector<std::function<void()>> posted_ GUARDED_BY(mutex_);
  bool sleeping_ GUARDED_BY(mutex_) = false;      // in epoll_wait with nothing posted
  bool wake_written_ GUARDED_BY(mutex_) = false;  // the eventfd was written since the loop slept
  bool release_when_idle_ GUARDED_BY(mutex_) = false;
};

}  // namespace kvlab
