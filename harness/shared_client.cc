#include "harness/shared_client.h"

#include <utility>

#include "harness/cpu_usage.h"
#include "harness/load_clock.h"

namespace kvlab::harness {
namespace {

constexpr int kReaderPollMs = 100;  // how often an idle reader re-checks for shutdown

}  // namespace

SharedClient::SharedClient(const StrategyOptions& options) : options_(options) {}

SharedClient::~SharedClient() { Close(); }

Status SharedClient::Connect() {
  Status opened = Connection::Open(options_.target, options_.connection, &connection_);
  if (!opened.ok()) return opened;
  writer_ = std::thread([this] {
    (void)PinCurrentThread(options_.cpus);  // best effort: the app threads report bad --cpus
    WriterLoop();
  });
  reader_ = std::thread([this] {
    (void)PinCurrentThread(options_.cpus);  // best effort: the app threads report bad --cpus
    ReaderLoop();
  });
  return Status::Ok();
}

Status SharedClient::Call(std::string_view request, ReplyPtr* reply) {
  Waiter waiter;
  bool wake_writer = false;
  {
    std::lock_guard lock(mutex_);
    if (!failure_.ok()) return failure_;
    wake_writer = outgoing_.empty();  // otherwise the writer is already due to run
    outgoing_.append(request);
    pending_.push_back(&waiter);
  }
  if (wake_writer) queued_.notify_one();
  std::unique_lock lock(waiter.mutex);
  waiter.done_signal.wait(lock, [&] { return waiter.done; });
  if (!waiter.status.ok()) return waiter.status;
  *reply = std::move(waiter.reply);
  return Status::Ok();
}

void SharedClient::WriterLoop() {
  std::string batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return !outgoing_.empty() || closing_ || !failure_.ok(); });
      if (closing_ || !failure_.ok()) return;
      batch.swap(outgoing_);
      ++writes_;
    }
    Status written = connection_->Write(batch);
    if (!written.ok()) {
      Fail(written.WithContext("shared connection"));
      return;
    }
    batch.clear();
  }
}

void SharedClient::ReaderLoop() {
  const int reply_timeout_ms = static_cast<int>(options_.connection.reply_timeout_s * 1000);
  uint64_t last_progress_ns = NowNs();
  for (;;) {
    ReplyPtr reply;
    while (connection_->PopReply(&reply)) {
      Waiter* waiter = nullptr;
      {
        std::lock_guard lock(mutex_);
        if (!pending_.empty()) {
          waiter = pending_.front();
          pending_.pop_front();
        }
      }
      if (waiter == nullptr) {
        Fail(Status::IoError("shared connection: a reply nobody asked for"));
        return;
      }
      Complete(waiter, Status::Ok(), std::move(reply));
      last_progress_ns = NowNs();
    }
    bool idle = false;
    {
      std::lock_guard lock(mutex_);
      if (!failure_.ok()) return;
      idle = pending_.empty();
      if (idle && closing_) return;
    }
    if (!connection_->WaitReadable(kReaderPollMs)) {
      if (idle) {
        last_progress_ns = NowNs();
      } else if (NowNs() - last_progress_ns > uint64_t(reply_timeout_ms) * 1'000'000) {
        Fail(Status::IoError("shared connection: no reply within " +
                             std::to_string(reply_timeout_ms / 1000) + " s"));
        return;
      }
      continue;
    }
    Status read = connection_->ReadAvailable();
    if (!read.ok()) {
      bool expected_close = false;
      {
        std::lock_guard lock(mutex_);
        expected_close = closing_ && pending_.empty();
      }
      if (!expected_close) Fail(read.WithContext("shared connection"));
      return;
    }
  }
}

void SharedClient::Complete(Waiter* waiter, Status status, ReplyPtr reply) {
  // Notify under the waiter's lock: once we unlock, the caller may return and
  // destroy the waiter, so nothing touches it after that.
  std::lock_guard lock(waiter->mutex);
  waiter->status = std::move(status);
  waiter->reply = std::move(reply);
  waiter->done = true;
  waiter->done_signal.notify_one();
}

void SharedClient::Fail(const Status& status) {
  std::deque<Waiter*> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (failure_.ok()) failure_ = status;
    abandoned.swap(pending_);
    outgoing_.clear();
  }
  queued_.notify_all();
  Status reported;
  {
    std::lock_guard lock(mutex_);
    reported = failure_;
  }
  for (Waiter* waiter : abandoned) Complete(waiter, reported, nullptr);
  if (connection_) connection_->Shutdown();
}

void SharedClient::Interrupt() { Fail(Status::Cancelled("interrupted")); }

uint64_t SharedClient::writes() const {
  std::lock_guard lock(mutex_);
  return writes_;
}

void SharedClient::Close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  queued_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (reader_.joinable()) reader_.join();
}

}  // namespace kvlab::harness
