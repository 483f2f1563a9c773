// AppendLog: the append-only file (Redis's AOF) — where every engine appends
// its writes' records (write_log.h), and the thread that writes them to disk
// and fsyncs them as --appendfsync says.
//
// Appends go to an in-memory buffer under one mutex, in the order the engines
// call Append() (which agrees with the order of the writes' effects on every
// key: write_log.h). One writer thread takes the whole buffer, write()s it and,
// per policy, fsyncs (fdatasync):
//   always   — after every write: one fsync covers every record appended while
//              the previous one ran, from every connection and engine thread
//              (group commit). Replies wait for that fsync.
//   everysec — at most a second after the data was written; a power loss
//              loses at most about the last second or two of writes.
//   no       — never; the kernel writes back when it likes.
// Under every policy a reply waits until the writes it may show are at least
// written to the kernel (WaitReleasable(), connection.h), as Redis's
// beforeSleep() writes the AOF buffer before it replies: a killed process
// loses no acknowledged write, only a crashed machine may.
// A failed write is retried every second (everysec, no) with
// aof_last_write_status:err, the replies waiting meanwhile; under always
// the server exits, as Redis does, since it cannot acknowledge.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "engines/write_log.h"
#include "server/server_settings.h"

namespace kvlab {

class AppendLog final : public WriteLog {
 public:
  struct Counters {
    uint64_t appended_bytes = 0;  // handed to the log since the start
    uint64_t written_bytes = 0;   // of which write() has taken
    uint64_t durable_bytes = 0;   // of which an fsync has covered
    uint64_t fsyncs = 0;
    uint64_t write_errors = 0;
    bool last_write_ok = true;
  };

  // Opens (creating it) `path` for appending after its first `valid_bytes`
  // (what a replay loaded; a truncated tail beyond them is cut off) and
  // starts the writer thread.
  static Status Open(const std::string& path, uint64_t valid_bytes, AppendFsync policy,
                     std::unique_ptr<AppendLog>* log);
  // Writes and fsyncs whatever is buffered, then stops the writer.
  ~AppendLog() override;
  AppendLog(const AppendLog&) = delete;
  AppendLog& operator=(const AppendLog&) = delete;

  void Append(const LogEntry& entry, std::span<const OpResult> results) override;

  AppendFsync policy() const { return policy_; }
  // Bytes appended so far: a reply that may show any write appended before
  // it waits for WaitReleasable(appended()).
  uint64_t appended() const;
  // Blocks until the first `offset` appended bytes are fsynced (always) or
  // written to the kernel (everysec, no).
  void WaitReleasable(uint64_t offset);
  Counters counters() const;

 private:
  AppendLog(int fd, AppendFsync policy);
  void WriterLoop();
  bool WriteAll(const std::string& bytes);

  const int fd_;
  const AppendFsync policy_;
  mutable Mutex mu_;
  std::condition_variable work_cv_;      // the writer waits for appends
  std::condition_variable released_cv_;  // WaitReleasable() waits for writes, fsyncs
  std::string pending_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  Counters counters_ GUARDED_BY(mu_);
  std::thread writer_;
};

}  // namespace kvlab
