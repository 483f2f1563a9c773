#include "harness/clients/event_loop_channel.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kvlab::harness {
EventLoopChannel::EventLoopChannel(std::unique_ptr<Connection> connection, double reply_timeout_s)
    : connection_(std::move(connection)),
      reader_(redisReaderCreate()),
      reply_timeout_ns_(static_cast<uint64_t>(reply_timeout_s * 1e9)),
      read_buffer_(kReadChunkBytes, '\0') {
  if (reader_ == nullptr) failure_ = Status::IoError("cannot allocate a hiredis reader");
}

EventLoopChannel::~EventLoopChannel() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

void EventLoopChannel::Queue(std::string_view bytes, ReplyWaiter* waiter, uint64_t now_ns) {
  if (failed()) {
    waiter->Complete(failure_, nullptr);
    return;
  }
  if (awaiting_.empty()) last_progress_ns_ = now_ns;  // the reply timeout starts now
  unsent_.append(bytes);
  awaiting_.push_back(waiter);
}

Status EventLoopChannel::Flush() {
  while (!failed() && wants_write()) {
    const ssize_t sent = ::send(fd(), unsent_.data() + unsent_offset_,
                                unsent_.size() - unsent_offset_, MSG_NOSIGNAL | MSG_DONTWAIT);
    ++sends_;
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();  // wait for EPOLLOUT
      Fail(Status::IoError(std::string("write failed: ") + std::strerror(errno)));
      break;
    }
    unsent_offset_ += static_cast<size_t>(sent);
  }
  if (!wants_write()) {
    unsent_.clear();
    unsent_offset_ = 0;
  }
  return failure_;
}

Status EventLoopChannel::OnReadable(uint64_t now_ns) {
  if (failed()) return failure_;
  for (;;) {
    const ssize_t got = ::recv(fd(), read_buffer_.data(), read_buffer_.size(), MSG_DONTWAIT);
    if (got == 0) {
      Fail(Status::IoError("connection closed by the server"));
      return failure_;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      Fail(Status::IoError(std::string("read failed: ") + std::strerror(errno)));
      return failure_;
    }
    if (redisReaderFeed(reader_, read_buffer_.data(), static_cast<size_t>(got)) != REDIS_OK) {
      Fail(Status::IoError("cannot buffer the server's reply"));
      return failure_;
    }
    if (static_cast<size_t>(got) < read_buffer_.size()) break;  // drained: no second recv
  }
  for (;;) {
    void* parsed = nullptr;
    if (redisReaderGetReply(reader_, &parsed) != REDIS_OK) {
      Fail(Status::IoError("protocol error in the server's reply"));
      return failure_;
    }
    if (parsed == nullptr) break;
    ReplyPtr reply(static_cast<redisReply*>(parsed));
    if (awaiting_.empty()) {
      Fail(Status::IoError("a reply nobody asked for"));
      return failure_;
    }
    ReplyWaiter* waiter = awaiting_.front();
    awaiting_.pop_front();
    waiter->Complete(Status::Ok(), std::move(reply));
    last_progress_ns_ = now_ns;
  }
  return Status::Ok();
}

bool EventLoopChannel::Overdue(uint64_t now_ns) const {
  return !awaiting_.empty() && now_ns - last_progress_ns_ > reply_timeout_ns_;
}

void EventLoopChannel::Fail(const Status& status) {
  if (failure_.ok()) failure_ = status;
  std::deque<ReplyWaiter*> abandoned;
  abandoned.swap(awaiting_);
  for (ReplyWaiter* waiter : abandoned) waiter->Complete(failure_, nullptr);
  unsent_.clear();
  unsent_offset_ = 0;
  connection_->Shutdown();
}

}  // namespace kvlab::harness
