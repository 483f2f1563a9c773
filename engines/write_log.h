// WriteLog and LogEntry: how an engine hands a write's record to the
// server's append-only log at the moment the write takes effect.
//
// The server prepares one LogEntry per logged write command before the batch
// runs and hangs it on the command's AtomicGroup (AtomicGroup::log; a logged
// command of one operation is made a group of one). RunGroupOps() calls
// Append() once the group has run, while the engine still holds every key the
// write touched: a later write to one of those keys can only take effect,
// and so only be appended, after it. The log's order therefore agrees with
// the order of the effects on every key, which is all a replay needs (writes
// to disjoint keys commute). A WATCH-aborted group appends nothing.
// Append() also gets the clock reading the group ran with (its batch's
// now_ms), so that a replay can decide every expiry as the write did.
//
// Log lanes: an engine whose keyspace is split among threads (the sharded
// engine's shards, the owner engine's owners) has one lane per partition
// (Engine::LogLanes()), so that each thread may append to a log of its own.
// Append() gets the group's place: the lanes whose keys it touched (every
// lane for a keyless write such as FLUSHALL). A group of several lanes runs
// with every one of them held (the engine's group barrier), so its place in
// each of those lanes' order is the same moment.
//
// The entry's bytes are opaque to the engine: it neither builds nor reads
// them. Thread-safe: Append() is called from any engine thread at once.
#pragma once

#include <cstdint>
#include <span>

namespace kvlab {

struct OpResult;
struct LogEntry;

// Where a group's record belongs: `lanes`, ascending, the partitions it
// touched; empty means lane 0 alone (an engine of one lane).
struct LogPlace {
  std::span<const uint32_t> lanes;
};

class WriteLog {
 public:
  virtual ~WriteLog() = default;
  // `results` are those of the group's operations, for a record that
  // depends on them (SPOP's popped members); `now_ms` the clock reading the
  // group decided expiry with.
  virtual void Append(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
                      LogPlace place) = 0;
};

struct LogEntry {
  WriteLog* log = nullptr;
  void AppendWith(std::span<const OpResult> results, int64_t now_ms, LogPlace place) const {
    log->Append(*this, results, now_ms, place);
  }
};

}  // namespace kvlab
