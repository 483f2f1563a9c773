#include "server/append_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "server/aof_record.h"
#include "server/file_writes.h"

namespace kvlab {
namespace {

constexpr auto kEverySec = std::chrono::seconds(1);
// A rewrite copies while writers go on until less than this is left; the
// writer thread copies the rest with appenders held (their wait).
constexpr uint64_t kRewriteCatchUpBytes = 1 << 20;

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
  log->reset(new AppendLog(fd, path, valid_bytes, policy));
  return Status::Ok();
}

AppendLog::AppendLog(int fd, std::string path, uint64_t file_base, AppendFsync policy)
    : path_(std::move(path)),
      fd_(fd),
      policy_(policy),
      file_base_(static_cast<int64_t>(file_base)) {
  counters_.base_bytes = file_base;
  writer_ = std::thread([this] { WriterLoop(); });
}

AppendLog::~AppendLog() { Close(); }

void AppendLog::Append(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
                       LogPlace) {
  AppendRendered(&entry, results, now_ms, {});
}

void AppendLog::AppendAnnotated(const LogEntry& entry, std::span<const OpResult> results,
                                int64_t now_ms, std::string_view annotation) {
  AppendRendered(&entry, results, now_ms, annotation);
}

void AppendLog::AppendAnnotation(std::string_view annotation) {
  AppendRendered(nullptr, {}, 0, annotation);
}

void AppendLog::AppendRendered(const LogEntry* entry, std::span<const OpResult> results,
                               int64_t now_ms, std::string_view annotation) {
  bool was_empty;
  {
    MutexLock lock(mu_);
    was_empty = pending_.empty();
    const size_t before = pending_.size();
    if (entry != nullptr && last_clock_ms_ != now_ms) {
      AppendClockAnnotation(now_ms, pending_);
      last_clock_ms_ = now_ms;
    }
    if (!annotation.empty()) {
      pending_.append(annotation);
      pending_ += "\r\n";
    }
    if (entry != nullptr) static_cast<const AofRecord&>(*entry).RenderInto(results, pending_);
    counters_.appended_bytes += pending_.size() - before;
  }
  // The writer sleeps only on an empty buffer.
  if (was_empty) work_cv_.notify_one();
}

void AppendLog::Close() {
  if (closed_) return;
  closed_ = true;
  {
    std::lock_guard lock(rewriter_mu_);
    if (rewriter_.joinable()) rewriter_.join();
  }
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  writer_.join();
  ::close(fd_);
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
  Counters counters = counters_;
  counters.file_bytes =
      static_cast<uint64_t>(file_base_ + static_cast<int64_t>(counters.written_bytes));
  return counters;
}

bool AppendLog::TryBeginRewrite() {
  MutexLock lock(mu_);
  if (counters_.rewrite_in_progress) return false;
  counters_.rewrite_in_progress = true;
  return true;
}

uint64_t AppendLog::MarkRewriteStart() {
  MutexLock lock(mu_);
  last_clock_ms_.reset();  // the new file's first record must say its clock
  return counters_.appended_bytes;
}

void AppendLog::FinishRewrite(std::vector<std::string> head, uint64_t start) {
  std::lock_guard lock(rewriter_mu_);
  if (rewriter_.joinable()) rewriter_.join();  // the previous one has ended
  rewriter_ = std::thread(
      [this, head = std::move(head), start]() mutable { Rewrite(std::move(head), start); });
}

void AppendLog::AbandonRewrite() {
  MutexLock lock(mu_);
  counters_.rewrite_in_progress = false;
}

void AppendLog::NoteRewriteHold(uint64_t micros) {
  MutexLock lock(mu_);
  counters_.last_rewrite_hold_us = micros;
}

bool AppendLog::CopyRecords(int out, uint64_t from, uint64_t to, int64_t base) {
  const int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  std::string buffer(1 << 20, '\0');
  bool ok = true;
  while (ok && from < to) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), to - from));
    const ssize_t got =
        ::pread(in, buffer.data(), want, static_cast<off_t>(base + static_cast<int64_t>(from)));
    if (got < 0 && errno == EINTR) continue;
    ok = got > 0 && WriteAll(out, std::string(buffer.data(), static_cast<size_t>(got)));
    from += got > 0 ? static_cast<uint64_t>(got) : 0;
  }
  ::close(in);
  return ok;
}

void AppendLog::Rewrite(std::vector<std::string> head, uint64_t start) {
  const auto began = std::chrono::steady_clock::now();
  RewriteSwitch change;
  change.temp_path = path_ + ".rewrite";
  change.fd =
      ::open(change.temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  bool ok = change.fd >= 0;
  for (const std::string& piece : head) {
    ok = ok && WriteAll(change.fd, piece);
    change.head_bytes += piece.size();
  }
  head = {};
  change.base = static_cast<int64_t>(change.head_bytes) - static_cast<int64_t>(start);
  // Copy while writers go on, until what is left is small; the writer
  // thread copies the rest with appenders held.
  change.copied = start;
  while (ok) {
    uint64_t written;
    int64_t base;
    {
      MutexLock lock(mu_);
      written = counters_.written_bytes;
      base = file_base_;
    }
    // The mark may be ahead of what is written yet (records appended before
    // it still in the buffer): nothing to copy until the writer passes it.
    if (written <= change.copied || written - change.copied < kRewriteCatchUpBytes) break;
    ok = CopyRecords(change.fd, change.copied, written, base);
    change.copied = written;
  }
  ok = ok && ::fdatasync(change.fd) == 0;
  if (ok) {
    MutexLock lock(mu_);
    switch_ = &change;
    work_cv_.notify_one();
    lock.Wait(released_cv_, [&]() REQUIRES(mu_) { return change.done; });
    ok = change.ok;
  }
  if (!ok) {
    std::cerr << "kvlab-server: rewriting the append-only file failed: " << std::strerror(errno)
              << "\n";
    if (change.fd >= 0) ::close(change.fd);
    ::unlink(change.temp_path.c_str());
  }
  MutexLock lock(mu_);
  counters_.rewrite_in_progress = false;
  counters_.last_rewrite_ok = ok;
  if (ok) ++counters_.rewrites;
  counters_.last_rewrite_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

void AppendLog::SwitchFiles() {
  const auto began = std::chrono::steady_clock::now();
  RewriteSwitch& change = *switch_;
  switch_ = nullptr;
  const uint64_t written = counters_.written_bytes;
  change.ok = CopyRecords(change.fd, change.copied, written, file_base_) &&
              ::fdatasync(change.fd) == 0 && ::rename(change.temp_path.c_str(), path_.c_str()) == 0;
  if (change.ok) {
    // The rename itself is on disk once the folder is.
    SyncFolder(path_.substr(0, path_.find_last_of('/') + 1));
    ::close(fd_);
    fd_ = change.fd;
    file_base_ = change.base;
    counters_.base_bytes = static_cast<uint64_t>(change.base + static_cast<int64_t>(written));
    counters_.durable_bytes = written;  // the new file was fsynced whole
    change.fd = -1;
  }
  counters_.last_rewrite_switch_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - began)
                                .count());
  change.done = true;
  released_cv_.notify_all();
}

bool AppendLog::WriteAll(int fd, const std::string& bytes) {
  if (WriteFully(fd, bytes)) return true;
  std::cerr << "kvlab-server: writing the append-only file: " << std::strerror(errno) << "\n";
  return false;
}

void AppendLog::WriterLoop() {
  std::string writing;
  auto last_fsync = std::chrono::steady_clock::now();
  MutexLock lock(mu_);
  while (true) {
    auto ready = [&]() REQUIRES(mu_) { return stop_ || !pending_.empty() || switch_ != nullptr; };
    if (policy_ == AppendFsync::kEverySec) {
      lock.WaitFor(work_cv_, kEverySec, ready);
    } else {
      lock.Wait(work_cv_, ready);
    }
    // Between two writes, the file whole; and only once it holds every record
    // before the mark, which belong to the old file alone (until then the
    // buffer holds some, so the loop writes them first).
    if (switch_ != nullptr && counters_.written_bytes >= switch_->copied) SwitchFiles();
    const bool stopping = stop_;
    writing.swap(pending_);
    const uint64_t end = counters_.written_bytes + writing.size();
    // An fsync with nothing new to cover costs a disk flush for nothing (an
    // idle everysec server would make one a second, as Redis does not).
    const bool unsynced = end > counters_.durable_bytes;
    lock.Unlock();

    const bool wrote = writing.empty() || WriteAll(fd_, writing);
    const auto now = std::chrono::steady_clock::now();
    bool synced = false;
    if (wrote && unsynced &&
        (policy_ == AppendFsync::kAlways || stopping ||
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
