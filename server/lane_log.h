// LaneLog: the append-only log of an engine whose threads each own part of
// the keyspace (sharded: a shard thread each; owner: an I/O thread each) —
// one file per lane (engines/write_log.h), so that each thread appends to a
// buffer and a writer of its own rather than all to one, as ember's shards
// and Garnet's sublogs do. The files and their order are in a manifest
// (aof_manifest.h).
//
// Why the lanes replay to the same keyspace:
//  - every key's writes are in one lane (its partition's), in the order
//    they took effect (each record is appended while its keys are held);
//    writes to keys of different lanes commute;
//  - a group that touched several lanes (MSET over two shards, a
//    transaction, FLUSHALL) ran with every one of those lanes held. Its
//    record goes to its first lane, preceded by `#kvlab-group:<id>:<lanes>`,
//    and the same annotation alone goes to each other lane, at the same
//    moment in each lane's order. The replay (net/lane_merge.h) runs it once
//    every lane has reached it, so nothing after it in any lane runs before
//    it, and nothing before it after;
//  - a crash between two lanes' writes leaves part of a group: the replay
//    stops each lane at the first group it cannot complete (and everything
//    after it in that lane, which may have seen the group's effect), as a
//    truncated tail is dropped, and the files are cut there. Under `always`
//    such a group was never acknowledged: a reply waits for every lane
//    (WaitForAppended()), so it follows every part's fsync.
//  - the lanes of a segment belong to one engine layout (`sharded/4`): a
//    server started with another opens a new segment, replayed after the
//    old ones, rather than append to lanes that split the keys differently.
//
// BGREWRITEAOF: with the keyspace held, MarkRewriteStart() closes the lanes
// (their last records written and fsynced) and opens new ones in a new
// segment, which the manifest lists after the old; the snapshot is then
// written in the background to a base file, and a second manifest replaces
// every old segment by it. Appenders wait only for the switch (inside the
// snapshot's hold); a crash at any point leaves one manifest or the other.
//
// Thread-safe. Append() may be called from any engine thread at once;
// MarkRewriteStart() only with the whole keyspace held.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/aof_load_report.h"
#include "server/aof_manifest.h"
#include "server/append_log.h"
#include "server/durable_log.h"

namespace kvlab {

class LaneLog final : public DurableLog {
 public:
  // Opens the log `<folder><name>` for an engine of `lanes` lanes whose
  // layout is `layout` ("sharded/4"; "one" when lanes is 1), after the
  // replay that found `loaded`: every file is cut where the replay stopped;
  // the last segment goes on if it has this layout, else a new one starts.
  static Status Open(const std::string& path, const AppendLogLoad& loaded,
                     const std::string& layout, unsigned lanes, AppendFsync policy,
                     std::unique_ptr<LaneLog>* log);
  ~LaneLog() override;
  LaneLog(const LaneLog&) = delete;
  LaneLog& operator=(const LaneLog&) = delete;

  void Append(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
              LogPlace place) override;
  AppendFsync policy() const override { return policy_; }
  void WaitForAppended() override;
  Counters counters() const override;

  bool TryBeginRewrite() override;
  uint64_t MarkRewriteStart() override;
  void FinishRewrite(std::vector<std::string> head, uint64_t start) override;
  void AbandonRewrite() override;
  void NoteRewriteHold(uint64_t micros) override;

 private:
  // One segment's open files, a lane each.
  struct Lanes {
    std::vector<std::unique_ptr<AppendLog>> logs;
  };

  LaneLog(std::string path, std::string layout, AppendFsync policy, AofManifest manifest,
          uint64_t next_group);
  // Opens a fresh segment of files and makes it the manifest's last
  // (written to disk); the current lanes are then those files.
  Status StartSegment(unsigned lanes);
  Status OpenLanes(const AofSegment& segment, const std::vector<uint64_t>& valid_bytes);
  void Rewrite(std::vector<std::string> head);
  Counters CountersLocked() const;  // REQUIRES: mu_
  std::string FileName(uint64_t generation, const std::string& suffix) const;

  const std::string path_;    // the log's name: the manifest is path_ + ".manifest"
  const std::string folder_;  // with its trailing slash
  const std::string layout_;
  const AppendFsync policy_;
  // The lanes appended to now: swapped only with the keyspace held (no
  // Append() in flight); read by WaitForAppended() and counters() at any
  // time, so lanes are retired (closed) but never freed while the log lives.
  std::atomic<Lanes*> current_{nullptr};
  std::atomic<uint64_t> next_group_;

  mutable std::mutex mu_;  // the manifest, the retired lanes, the counters below
  AofManifest manifest_;
  std::vector<std::unique_ptr<Lanes>> all_lanes_;
  Counters retired_;              // what closed lanes appended, wrote, fsynced
  uint64_t earlier_bytes_ = 0;    // the files of the segments before the current lanes
  uint64_t base_bytes_ = 0;       // the files' size at the open or the last rewrite
  Counters rewrite_;              // only the rewrite fields
  uint64_t base_generation_ = 0;  // the running rewrite's base file
  std::mutex rewriter_mu_;
  std::thread rewriter_;
};

}  // namespace kvlab
