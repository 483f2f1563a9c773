// EventLoopChannel: one connection owned by one event-loop thread (Netty's
// channel). The loop queues each caller's command bytes and its waiter, sends
// them (Flush), reads what the server answered, decodes it with hiredis's
// reader and completes the oldest waiter with each reply (RESP answers in
// order), all on the loop's thread. The socket stays blocking for connect;
// every send and read here is MSG_DONTWAIT, so the loop never blocks on it.
//
// Thread safety: not thread-safe. After construction, every method runs on
// the owning EventLoop's thread.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "harness/clients/connection.h"
#include "harness/clients/reply_waiter.h"
#include "harness/status.h"

namespace kvlab::harness {

class EventLoopChannel {
 public:
  // Takes over an open connection (its socket; this channel decodes replies).
  EventLoopChannel(std::unique_ptr<Connection> connection, double reply_timeout_s);
  ~EventLoopChannel();
  EventLoopChannel(const EventLoopChannel&) = delete;
  EventLoopChannel& operator=(const EventLoopChannel&) = delete;

  int fd() const { return connection_->fd(); }

  // Appends `bytes` to what is to be sent; `waiter` joins the FIFO of
  // requests awaiting a reply. On a failed channel the waiter is completed
  // with the failure at once.
  void Queue(std::string_view bytes, ReplyWaiter* waiter, uint64_t now_ns);

  // Sends what is queued, as far as the socket takes it now (one send call
  // when it all fits). Returns the error that failed the channel, if any.
  Status Flush();
  // Unsent bytes remain: the loop should wait for the socket to be writable.
  bool wants_write() const { return unsent_offset_ < unsent_.size(); }

  // Reads what is available, decodes it and completes one waiter per reply.
  // Returns the error that failed the channel, if any.
  Status OnReadable(uint64_t now_ns);

  // True when requests await replies and none arrived for the reply timeout.
  bool Overdue(uint64_t now_ns) const;

  // Fails every waiting request with `status`; later Queue()s fail at once.
  // The first failure is the one kept.
  void Fail(const Status& status);
  bool failed() const { return !failure_.ok(); }

  uint64_t sends() const { return sends_; }  // send() calls made

 private:
  std::unique_ptr<Connection> connection_;  // owns the socket
  redisReader* reader_;
  std::string unsent_;
  size_t unsent_offset_ = 0;
  std::deque<ReplyWaiter*> awaiting_;  // sent or queued, not answered, oldest first
  uint64_t last_progress_ns_ = 0;
  const uint64_t reply_timeout_ns_;
  Status failure_;
  std::string read_buffer_;
  uint64_t sends_ = 0;
};

}  // namespace kvlab::harness
