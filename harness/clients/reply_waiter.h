// ReplyWaiter: a one-shot completion for one request — the blocked caller's
// side of a synchronous call whose reply arrives on another thread (a
// future, in Lettuce's terms). The caller creates it on its stack, hands its
// address to whoever will answer, and Wait()s; the answering thread calls
// Complete() exactly once.
//
// Thread safety: Complete and Wait may run on different threads. The waiter
// may be destroyed as soon as Wait returns: Complete touches nothing after
// it releases the lock.
#pragma once

#include <condition_variable>
#include <utility>

#include "base/mutex.h"
#include "harness/clients/connection.h"
#include "harness/status.h"

namespace kvlab::harness {

class ReplyWaiter {
 public:
  ReplyWaiter() = default;
  ReplyWaiter(const ReplyWaiter&) = delete;
  ReplyWaiter& operator=(const ReplyWaiter&) = delete;

  // REQUIRES: called once.
  void Complete(Status status, ReplyPtr reply) {
    // Notify under the lock: once it is released the caller may return and
    // destroy this waiter.
    MutexLock lock(mutex_);
    status_ = std::move(status);
    reply_ = std::move(reply);
    done_ = true;
    done_signal_.notify_one();
  }

  // Blocks until Complete; returns its status and, when ok, its reply.
  Status Wait(ReplyPtr* reply) {
    MutexLock lock(mutex_);
    lock.Wait(done_signal_, [&]() REQUIRES(mutex_) { return done_; });
    if (status_.ok()) *reply = std::move(reply_);
    return status_;
  }

 private:
  Mutex mutex_;
  std::condition_variable done_signal_;
  bool done_ GUARDED_BY(mutex_) = false;
  Status status_ GUARDED_BY(mutex_);
  ReplyPtr reply_ GUARDED_BY(mutex_);
};

}  // namespace kvlab::harness
