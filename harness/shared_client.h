// SharedClient: Lettuce's shared connection. ONE connection carries every
// application thread's requests. A caller appends its request to the
// outgoing buffer and its waiter to the FIFO of pending callers — both under
// one lock, so the FIFO order is the order of the bytes on the wire — then
// blocks on its own waiter. A writer thread takes whatever is queued and
// sends it in one write (so concurrent callers are batched); a reader thread
// parses replies and hands each to the oldest pending caller (RESP answers
// in order). This is where a request crosses threads: caller -> writer
// (the outgoing buffer), reader -> caller (the waiter).
//
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "harness/synchronous_client.h"

namespace kvlab::harness {

class SharedClient final : public SynchronousClient {
 public:
  explicit SharedClient(const StrategyOptions& options);
  ~SharedClient() override;
  SharedClient(const SharedClient&) = delete;
  SharedClient& operator=(const SharedClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  Status Call(std::string_view request, ReplyPtr* reply) override;

  // How many writes the writer made (a write carries >= 1 request), for
  // tests and for reporting the batching achieved.
  uint64_t writes() const;

 private:
  // One blocked caller; lives on its stack until its reply is handed over.
  struct Waiter {
    std::mutex mutex;
    std::condition_variable done_signal;
    bool done = false;  // GUARDED_BY(mutex)
    Status status;
    ReplyPtr reply;
  };

  void WriterLoop();
  void ReaderLoop();
  static void Complete(Waiter* waiter, Status status, ReplyPtr reply);
  void Fail(const Status& status);
  void Close();

  const StrategyOptions options_;
  std::unique_ptr<Connection> connection_;
  std::thread writer_;
  std::thread reader_;

  mutable std::mutex mutex_;
  std::condition_variable queued_;  // the writer waits for requests here
  std::string outgoing_;            // GUARDED_BY(mutex_)
  std::deque<Waiter*> pending_;     // GUARDED_BY(mutex_): written or queued, not answered
  Status failure_;                  // GUARDED_BY(mutex_)
  bool closing_ = false;            // GUARDED_BY(mutex_)
  uint64_t writes_ = 0;             // GUARDED_BY(mutex_)
};

}  // namespace kvlab::harness
