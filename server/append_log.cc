#include "server/append_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "server/aof_record.h"

namespace kvlab {
namespace {

constexpr auto kEverySec = std::chrono::seconds(1);

}  // namespace

Status AppendLog::Open(const std::string& path, uint64_t valid_bytes, AppendFsync policy,
                       std::unique_ptr<AppendLog>* log) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::InvalidArgument("cannot open the append-only file " + path + ": " +
                                   std::strerror(errno));
  }
  // A truncated last record the replay dropped is cut off, so that the next
  // record does not follow half of one (Redis's aof-load-truncated).
  if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0 || ::fsync(fd) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    return Status::InvalidArgument("cannot prepare the append-only file " + path + ": " + error);
  }
  log->reset(new AppendLog(fd, policy));
  return Status::Ok();
}

AppendLog::AppendLog(int fd, AppendFsync policy) : fd_(fd), policy_(policy) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AppendLog::~AppendLog() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  writer_.join();
  ::close(fd_);
}

void AppendLog::Append(const LogEntry& entry, std::span<const OpResult> results) {
  const auto& record = static_cast<const AofRecord&>(entry);
  bool was_empty;
  {
    MutexLock lock(mu_);
    was_empty = pending_.empty();
    const size_t before = pending_.size();
    record.RenderInto(results, pending_);
    counters_.appended_bytes += pending_.size() - before;
  }
  // The writer sleeps only on an empty buffer.
  if (was_empty) work_cv_.notify_one();
}

uint64_t AppendLog::appended() const {
  MutexLock lock(mu_);
  return counters_.appended_bytes;
}

void AppendLog::WaitReleasable(uint64_t offset) {
  MutexLock lock(mu_);
  lock.Wait(released_cv_, [&]() REQUIRES(mu_) {
    return (policy_ == AppendFsync::kAlways ? counters_.durable_bytes : counters_.written_bytes) >=
           offset;
  });
}

AppendLog::Counters AppendLog::counters() const {
  MutexLock lock(mu_);
  return counters_;
}

bool AppendLog::WriteAll(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      std::cerr << "kvlab-server: writing the append-only file: " << std::strerror(errno) << "\n";
      return false;
    }
    done += static_cast<size_t>(wrote);
  }
  return true;
}

void AppendLog::WriterLoop() {
  std::string writing;
  auto last_fsync = std::chrono::steady_clock::now();
  MutexLock lock(mu_);
  while (true) {
    auto ready = [&]() REQUIRES(mu_) { return stop_ || !pending_.empty(); };
    if (policy_ == AppendFsync::kEverySec) {
      lock.WaitFor(work_cv_, kEverySec, ready);
    } else {
      lock.Wait(work_cv_, ready);
    }
    const bool stopping = stop_;
    writing.swap(pending_);
    const uint64_t end = counters_.written_bytes + writing.size();
    lock.Unlock();

    const bool wrote = writing.empty() || WriteAll(writing);
    const auto now = std::chrono::steady_clock::now();
    bool synced = false;
    if (wrote && (policy_ == AppendFsync::kAlways || stopping ||
                  (policy_ == AppendFsync::kEverySec && now - last_fsync >= kEverySec))) {
      synced = ::fdatasync(fd_) == 0;
      last_fsync = now;
    }
    if (!wrote && policy_ == AppendFsync::kAlways) {
      // Redis: "Can't recover from AOF write error when the AOF fsync policy
      // is 'always'": no reply may claim a write that is not on disk.
      std::cerr << "kvlab-server: exiting: the append-only file cannot be written under "
                   "appendfsync always\n";
      std::_Exit(1);
    }

    lock.Lock();
    counters_.last_write_ok = wrote;
    if (wrote) {
      counters_.written_bytes = end;
      writing.clear();
    } else {
      ++counters_.write_errors;
      writing.append(pending_);  // retried first, in order
      pending_.swap(writing);
      writing.clear();
    }
    if (synced) {
      ++counters_.fsyncs;
      counters_.durable_bytes = counters_.written_bytes;
    }
    if (wrote) released_cv_.notify_all();
    if (stopping && pending_.empty()) return;
    if (!wrote) {
      lock.Unlock();
      std::this_thread::sleep_for(kEverySec);
      lock.Lock();
    }
  }
}

}  // namespace kvlab
