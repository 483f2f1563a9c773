// Engine: the one interface every keyspace architecture implements.
//
// An engine stores binary-safe string keys and values with optional expiry
// and executes Batches of Operations (see operation.h). It never sees a
// socket or a RESP byte: the server shell parses commands into Operations and
// renders OpResults into replies.
//
// Thread-safety: Execute() may be called concurrently from every I/O thread,
// except on engines whose Traits().single_threaded is true (the `single`
// engine), which the server must drive from exactly one thread.
//
// Completion: Execute() calls `done` exactly once, after every result of the
// batch is filled. Inline engines (single, concurrent, striped) call it before
// Execute() returns, on the calling thread. The sharded engine calls it from
// whichever shard thread finished last; the caller (the server) is
// responsible for resuming the connection on its own thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/busy_wait_meter.h"
#include "base/status.h"
#include "engines/modification_feed.h"
#include "engines/operation.h"
#include "engines/write_log.h"
#include "engines/stage_marks.h"

namespace kvlab {

// Bookkeeping an engine keeps with a Batch between Execute() calls (the
// sharded engine's per-shard grouping and completion count), so that it is
// allocated once per connection rather than once per Execute(). Opaque to
// the server; owned by the Batch.
class BatchScratch {
 public:
  virtual ~BatchScratch() = default;
};

// Operations [first, first + count) of a batch that run as one atomic step,
// as Redis runs a command: no other connection observes a moment between
// them (MSET, MGET, DEL k1 k2, RENAME, MSETNX, MULTI/EXEC). How each engine
// holds every key of a group at once is in its header.
struct AtomicGroup {
  uint32_t first = 0;
  uint32_t count = 0;
  // EXEC after WATCH: the session's "a watched key was touched" flag. Read
  // with every key of the group held, after the group's leading kWatchedKey
  // operations; when true, no other operation runs, each result is kNil and
  // `aborted` is set.
  const std::atomic<bool>* abort_if = nullptr;
  bool aborted = false;  // written by the engine
  // Parts depend on one another (guards, carries, abort_if): such a group
  // stays atomic even under MultiKey::kSplit, which cannot tear it apart.
  bool needs_state = false;
  // The group's record in the server's append-only log, appended once every
  // operation has run, with every key still held (write_log.h). Null: none.
  // Every logged write is a group (one of one operation too), so that an
  // unlogged operation pays nothing for the log.
  const LogEntry* log = nullptr;
};

// A batch of operations from one connection. REQUIRES: results.size() ==
// ops.size() before Execute(); groups are sorted by `first` and disjoint;
// the batch and the bytes its ops point to stay alive until `done` has been
// called. A batch is executed by one engine only.
struct Batch {
  std::vector<Operation> ops;
  std::vector<OpResult> results;
  std::vector<AtomicGroup> groups;
  // The arguments of the batch's container commands (Operation::arg_pool).
  std::vector<std::string_view> arg_pool;
  std::unique_ptr<BatchScratch> engine_scratch;  // see BatchScratch
  // A sampled batch's engine-side stage times (stage_marks.h); nullptr for
  // every batch not sampled. Set by the server before Execute(), alive
  // until `done` has run.
  EngineStageMarks* stage_marks = nullptr;

  void Clear() {
    ops.clear();
    results.clear();
    groups.clear();
    arg_pool.clear();
  }
  // Gives back the memory of a batch much larger than usual (a command of
  // 100,000 arguments). REQUIRES: cleared.
  void Release() {
    std::vector<Operation>().swap(ops);
    std::vector<OpResult>().swap(results);
    std::vector<AtomicGroup>().swap(groups);
    std::vector<std::string_view>().swap(arg_pool);
    engine_scratch.reset();  // an engine's per-batch lists grew with it
  }
  void Add(const Operation& op) {
    ops.push_back(op);
    results.emplace_back();
  }
  // Makes ops [first, ops.size()) one atomic group.
  void GroupFrom(uint32_t first, const std::atomic<bool>* abort_if = nullptr);
};

// How the server should drive an engine.
struct EngineTraits {
  // Only one thread may call Execute() (the Redis model).
  bool single_threaded = false;
  // One Execute() per read of pipelined commands (true) or one per command,
  // each awaited before the next is dispatched (false). The sharded engine's
  // `--hop batch|command`; inline engines take the whole read at once.
  bool batch_per_read = true;
  // Thread-per-core (owner): the engine's shards are the server's I/O
  // threads, one each. The server attaches every I/O thread
  // (AttachIoThread) before any connection runs, and lets its loops stop
  // only once HasWorkInFlight() is false.
  bool runs_on_io_threads = false;
};

// Name/value pairs for the `# kvlab` section of INFO (engine, shards, hop
// mode, per-shard operation counts, queue depths, ...).
using EngineInfo = std::vector<std::pair<std::string, std::string>>;

class Engine {
 public:
  using Completion = std::function<void()>;

  virtual ~Engine() = default;
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  virtual EngineTraits Traits() const = 0;
  virtual void Execute(Batch& batch, Completion done) = 0;
  virtual EngineInfo Info() const = 0;
  // How many log lanes the engine appends to (write_log.h): one per
  // partition for an engine whose threads each own part of the keyspace,
  // else one. Fixed for the engine's life.
  virtual unsigned LogLanes() const { return 1; }
  // Wake-ups per round instead of per batch, for engines whose Execute()
  // hands the batch to other threads (sharded). After
  // DeferWakeupsOnThisThread(), Execute() calls made on this thread may queue
  // their work without waking the threads that run it; WakeDeferred() wakes
  // them. An I/O thread calls it once after a round of ready connections,
  // so one wake-up (and one futex) covers every batch that round queued.
  // REQUIRES: a thread that opted in calls WakeDeferred() after its
  // Execute() calls before it waits for their completions. No-ops by
  // default (inline engines run the batch in Execute()).
  virtual void DeferWakeupsOnThisThread() {}
  virtual void WakeDeferred() {}
  // Thread-per-core engines (Traits().runs_on_io_threads): `post(f)` runs f
  // on I/O thread `index`'s loop, from any thread. The server calls this for
  // every I/O thread, from one thread, before any connection runs; the
  // engine posts its own set-up there first. No-op by default.
  using IoThreadPost = std::function<void(std::function<void()>)>;
  virtual void AttachIoThread(unsigned index, IoThreadPost post) {
    (void)index;
    (void)post;
  }
  // True while a batch's work is queued for, or running on, an I/O thread
  // other than its caller's: until then no I/O loop may stop. Thread-safe.
  virtual bool HasWorkInFlight() const { return false; }
  // Busy versus waiting time of the engine's own threads (the sharded
  // engine's shard threads), timed while `on` (stage sampling, set by the
  // server at start and by CONFIG SET). ThreadTimes() names each thread
  // ("shard0", ...); ResetThreadTimes() is CONFIG RESETSTAT. Thread-safe.
  // Engines without threads of their own have none.
  virtual void TimeThreads(bool on) { (void)on; }
  virtual std::vector<std::pair<std::string, BusyWaitTotals>> ThreadTimes() const { return {}; }
  virtual void ResetThreadTimes() {}
  // Redis's maxmemory rule: true once the engine's keys use at least the
  // configured limit, so commands that may grow the dataset are refused
  // whole before they run. A gauge: thread-safe, not a synchronisation point.
  virtual bool OverMemoryLimit() const = 0;
  // The limit (0: none), and CONFIG SET maxmemory's change of it.
  virtual uint64_t MemoryLimit() const = 0;
  virtual void SetMemoryLimit(uint64_t bytes) = 0;
  // Every key a write changes (FLUSHALL: every key it removes) is reported
  // here, by the thread that changed it, with the key held.
  ModificationFeed& modifications() { return modifications_; }

 protected:
  ModificationFeed modifications_;
};

enum class HopMode : uint8_t { kCommand, kBatch };

// Whether an AtomicGroup is honoured (kAtomic, Redis's promise) or run as
// independent single-key operations (kSplit: the price of the promise,
// measured; groups whose parts depend on one another stay atomic).
enum class MultiKey : uint8_t { kAtomic, kSplit };

// What to build; engine_kind.h says which fields apply to which kind, and
// their defaults and limits.
struct EngineConfig {
  std::string kind = "sharded";  // a name from engine_kind.h's table
  unsigned shards = 0;           // sharded: shard threads; 0 = HardwareThreads()
  unsigned stripes = 0;          // striped: lock stripes; 0 = kDefaultStripes
  HopMode hop = HopMode::kCommand;
  uint64_t max_memory_bytes = 0;          // 0 = unlimited; writes past it fail kOutOfMemory
  MultiKey multikey = MultiKey::kAtomic;  // every kind
};

// Builds the engine named by config.kind into *engine. InvalidArgument (and
// *engine untouched) when the kind or an option is invalid.
Status MakeEngine(const EngineConfig& config, std::unique_ptr<Engine>* engine);

}  // namespace kvlab
