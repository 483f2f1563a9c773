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
// Before a record whose write ran at another clock reading than the record
// before it, the log writes that reading as an annotation (aof_record.h), so
// a replay decides expiry as the writes did.
// Under every policy a reply waits until the writes it may show are at least
// written to the kernel (WaitReleasable(), connection.h), as Redis's
// beforeSleep() writes the AOF buffer before it replies: a killed process
// loses no acknowledged write, only a crashed machine may.
// A failed write is retried every second (everysec, no) with
// aof_last_write_status:err, the replies waiting meanwhile; under always
// the server exits, as Redis does, since it cannot acknowledge.
//
// BGREWRITEAOF (aof_rewrite.h) compacts the file: while the whole keyspace
// is held, MarkRewriteStart() notes where the records after the snapshot
// begin; FinishRewrite() then writes the snapshot and every record appended
// since the mark to a new file beside the old one, copying while writers go
// on, and the writer thread renames it over the old file between two of its
// writes: appenders wait only for the last copy (what arrived during the
// copies), the new file's fsync and the rename.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "engines/write_log.h"
#include "server/durable_log.h"
#include "server/server_settings.h"

namespace kvlab {

class AppendLog final : public DurableLog {
 public:
  // Opens (creating it) `path` for appending after its first `valid_bytes`
  // (what a replay loaded; a truncated tail beyond them is cut off) and
  // starts the writer thread.
  static Status Open(const std::string& path, uint64_t valid_bytes, AppendFsync policy,
                     std::unique_ptr<AppendLog>* log);
  // Waits for a rewrite in progress; writes and fsyncs whatever is buffered,
  // then stops the writer.
  ~AppendLog() override;
  AppendLog(const AppendLog&) = delete;
  AppendLog& operator=(const AppendLog&) = delete;

  // Appends to this one file whatever the place's lanes.
  void Append(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
              LogPlace place) override;
  // The record with `annotation` (a `#...` line without its CRLF) between
  // its clock and its bytes (LaneLog's group lead).
  void AppendAnnotated(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
                       std::string_view annotation);
  // `annotation` alone, as a line (LaneLog's group marker).
  void AppendAnnotation(std::string_view annotation);
  // Writes and fsyncs what is buffered and stops the writer thread; the
  // object stays readable (counters(), WaitReleasable() return at once).
  // No Append() may follow.
  void Close();

  AppendFsync policy() const override { return policy_; }
  // Bytes appended so far: a reply that may show any write appended before
  // it waits for WaitReleasable(appended()).
  uint64_t appended() const;
  // Blocks until the first `offset` appended bytes are fsynced (always) or
  // written to the kernel (everysec, no).
  void WaitReleasable(uint64_t offset);
  void WaitForAppended() override { WaitReleasable(appended()); }
  Counters counters() const override;
  const std::string& path() const { return path_; }

  bool TryBeginRewrite() override;
  // The offset (in appended bytes) where the records after the snapshot
  // begin. The next record says its clock.
  uint64_t MarkRewriteStart() override;
  // Starts the rewrite's background thread: the new file is `head` and then
  // every record appended since `start`, renamed over the old one.
  void FinishRewrite(std::vector<std::string> head, uint64_t start) override;
  void AbandonRewrite() override;
  void NoteRewriteHold(uint64_t micros) override;

 private:
  // What the rewrite thread hands the writer thread to finish: a new file
  // holding every record up to `copied` (in appended bytes), and the
  // logical offset its first byte of records stands for.
  struct RewriteSwitch {
    std::string temp_path;
    int fd = -1;
    uint64_t head_bytes = 0;
    uint64_t copied = 0;
    int64_t base = 0;  // file offset = base + appended offset
    bool done = false;
    bool ok = false;
  };

  AppendLog(int fd, std::string path, uint64_t file_base, AppendFsync policy);
  void AppendRendered(const LogEntry* entry, std::span<const OpResult> results, int64_t now_ms,
                      std::string_view annotation);
  void WriterLoop();
  bool WriteAll(int fd, const std::string& bytes);
  void Rewrite(std::vector<std::string> head, uint64_t start);
  // The writer thread, between two writes, with mu_ held.
  void SwitchFiles() REQUIRES(mu_);
  // Copies the records in [from, to) (appended offsets) from the current
  // file to `out`; false on an error.
  bool CopyRecords(int out, uint64_t from, uint64_t to, int64_t base);

  const std::string path_;
  int fd_;  // only the writer thread uses it (and the destructor, after it)
  const AppendFsync policy_;
  mutable Mutex mu_;
  std::condition_variable work_cv_;      // the writer waits for appends
  std::condition_variable released_cv_;  // WaitReleasable() waits for writes, fsyncs
  std::string pending_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  // The clock the last record ran at (its annotation is in the file);
  // none yet: the first record after the open says its own.
  std::optional<int64_t> last_clock_ms_ GUARDED_BY(mu_);
  Counters counters_ GUARDED_BY(mu_);
  int64_t file_base_ GUARDED_BY(mu_);                // file offset = file_base_ + appended offset
  RewriteSwitch* switch_ GUARDED_BY(mu_) = nullptr;  // a switch for the writer to do
  // The last rewrite's thread: a new rewrite (from any connection's thread)
  // joins it before starting its own, once the last one has said it ended.
  std::mutex rewriter_mu_;
  std::thread rewriter_;
  std::thread writer_;
  bool closed_ = false;  // Close() ran (the owner's thread only)
};

}  // namespace kvlab
