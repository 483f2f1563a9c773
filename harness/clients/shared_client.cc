#include "harness/clients/shared_client.h"

#include <utility>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"

namespace kvlab::harness {
namespace {

constexpr int kReaderPollMs = 100;  // how often an idle reader re-checks for shutdown

}  // namespace

SharedClient::SharedClient(const StrategyOptions& options) : options_(options) {}

SharedClient::~SharedClient() { Close(); }

Status SharedClient::Connect() {
  Status opened = Connection::Open(options_.target, options_.connection, &connection_);
  if (!opened.ok()) return opened;
  reader_ = std::thread([this] {
    (void)PinCurrentThread(options_.cpus);  // best effort: the app threads report bad --cpus
    ReaderLoop();
  });
  return Status::Ok();
}

// The caller that becomes the writer is in send while it drains the batch
// (its own request and those queued behind it); every caller then waits
// for the reader thread, which parses the reply on its own time.
Status SharedClient::RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) {
  ReplyWaiter waiter;
  bool become_writer = false;
  {
    MutexLock lock(mutex_);
    if (!failure_.ok()) return failure_;
    outgoing_.append(request);
    pending_.push_back(&waiter);
    become_writer = !writing_;  // otherwise the caller sending now sends ours too
    writing_ = true;
  }
  if (become_writer) {
    EnterPhase(phases, ClientPhase::kSend);
    WriteUntilDrained();
    EnterPhase(phases, ClientPhase::kWait);
  }
  return waiter.Wait(reply);
}

void SharedClient::WriteUntilDrained() {
  std::string batch;
  for (;;) {
    {
      MutexLock lock(mutex_);
      if (outgoing_.empty() || !failure_.ok()) {
        writing_ = false;
        return;
      }
      batch.swap(outgoing_);
      ++writes_;
    }
    Status written = connection_->Write(batch);
    if (!written.ok()) {
      Fail(written.WithContext("shared connection"));
      MutexLock lock(mutex_);
      writing_ = false;
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
      ReplyWaiter* waiter = nullptr;
      {
        MutexLock lock(mutex_);
        if (!pending_.empty()) {
          waiter = pending_.front();
          pending_.pop_front();
        }
      }
      if (waiter == nullptr) {
        Fail(Status::IoError("shared connection: a reply nobody asked for"));
        return;
      }
      waiter->Complete(Status::Ok(), std::move(reply));
      last_progress_ns = NowNs();
    }
    bool idle = false;
    {
      MutexLock lock(mutex_);
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
        MutexLock lock(mutex_);
        expected_close = closing_ && pending_.empty();
      }
      if (!expected_close) Fail(read.WithContext("shared connection"));
      return;
    }
  }
}

void SharedClient::Fail(const Status& status) {
  std::deque<ReplyWaiter*> abandoned;
  Status reported;
  {
    MutexLock lock(mutex_);
    if (failure_.ok()) failure_ = status;
    abandoned.swap(pending_);
    outgoing_.clear();
    reported = failure_;
  }
  for (ReplyWaiter* waiter : abandoned) waiter->Complete(reported, nullptr);
  if (connection_) connection_->Shutdown();
}

void SharedClient::Interrupt() { Fail(Status::Cancelled("interrupted")); }

uint64_t SharedClient::writes() const {
  MutexLock lock(mutex_);
  return writes_;
}

void SharedClient::Close() {
  {
    MutexLock lock(mutex_);
    closing_ = true;
  }
  if (reader_.joinable()) reader_.join();
}

}  // namespace kvlab::harness
