// ShardedEngine (`sharded`): a shared-nothing keyspace. N shard threads each
// own one plain hash map that no other thread ever touches; a key lives on
// shard hash(key) mod N.
//
// A request's journey (the seed's architecture):
//   1. A connection thread calls Execute(batch). It groups the batch's
//      operations by owning shard and sends ONE message per shard touched
//      over that shard's multi-producer channel (channel.h). This is where a
//      request crosses threads.
//   2. Each shard thread sleeps until its channel has messages, drains them
//      all, and runs its share of each batch on its own map, in batch order.
//   3. A one-shot completion counts the shards still working on the batch;
//      the shard that finishes last calls `done` on its own thread. The
//      server then posts the reply back to the connection's thread: the
//      second hop.
// DBSIZE and FLUSHALL go to every shard; DBSIZE's reply is the sum of the
// shards' counts.
//
// Whether a hop carries one command or a whole read of pipelined commands is
// the server's choice, advertised by Traits().batch_per_read (--hop). A
// connection thread that opted in (DeferWakeupsOnThisThread) only queues in
// step 1 and wakes each shard it sent to once, in WakeDeferred(), after its
// whole round of ready connections.
//
// Atomic groups (MSET, MGET, DEL k1 k2, RENAME, MULTI/EXEC): a group whose
// keys all live on one shard runs there, in batch order, like any share. A
// group over several shards takes them all at one point of a global order,
// in the manner of Dragonfly's transactions but with one scheduling step:
//   1. scheduling: a batch holding such a group is sent to its shards under
//      one engine-wide mutex, so every such batch sits in the same relative
//      order in every shard's inbox (batches of single-shard work never take
//      the mutex: their fast path is unchanged);
//   2. execution: each shard it touches, on reaching the group, arrives at
//      the group's barrier; the last to arrive runs the whole group over
//      the participants' keyspaces (all others are waiting, so their maps
//      are its own) and releases them.
// A shard waits only for shards that have only single-shard work or earlier
// groups ahead of the same group, so the waits cannot form a cycle.
//
// Thread-safe: Execute() and Info() may be called from any number of threads.
// Atomicity: each keyed operation is atomic (its shard runs it alone: a
// container is touched only by its shard's thread, with no lock), a
// batch's operations on one shard run in batch order, and each AtomicGroup
// is atomic as above. DBSIZE and FLUSHALL outside a group are not atomic
// across shards: each shard counts or clears at its own moment. Under
// MultiKey::kSplit a group whose parts are independent is split by shard
// like any other operations.
// Destruction stops the shard threads after they have finished every batch
// already sent, so no completion is lost; REQUIRES: no Execute() in progress.
//
// Append-only log (write_log.h): a lane per shard (LogLanes()), so each
// shard appends to a file of its own (server/lane_log.h). A shard appends a
// single-key write's record to its lane right after running it, still the
// key's sole owner, so every key's records are in one lane in effect order.
// A group's record is appended by the thread that runs the group while
// every shard it touches is held at its point of the global order: the
// record goes to its first shard's lane and a marker to each other's, at
// the same moment of each lane's order, and the replay runs it once every
// lane has reached it (all or nothing; net/lane_merge.h). Shards share no
// buffer: a lane's mutex is taken by its shard, the group that holds it,
// and its writer thread only.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "engines/threads/channel.h"
#include "engines/engine.h"
#include "engines/memory_meter.h"
#include "engines/keyspace/plain_keyspace.h"

namespace kvlab {

class ShardedEngine final : public Engine {
 public:
  explicit ShardedEngine(const EngineConfig& config);
  ~ShardedEngine() override;

  EngineTraits Traits() const override { return traits_; }
  void Execute(Batch& batch, Completion done) override;
  EngineInfo Info() const override;
  unsigned LogLanes() const override { return static_cast<unsigned>(shards_.size()); }
  void DeferWakeupsOnThisThread() override;
  void WakeDeferred() override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }
  uint64_t MemoryLimit() const override { return meter_.Limit(); }
  void SetMemoryLimit(uint64_t bytes) override { meter_.SetLimit(bytes); }
  void TimeThreads(bool on) override;
  std::vector<std::pair<std::string, BusyWaitTotals>> ThreadTimes() const override;
  void ResetThreadTimes() override;

 private:
  struct PendingBatch;  // one Execute() in flight: its per-shard work and completion

  struct Shard {
    Shard(MemoryMeter& meter, const ModificationFeed& feed) : keys(meter, feed) {}
    MpscChannel<PendingBatch*> inbox;  // written by connection threads, read by `thread`
    PlainKeyspace keys;                // touched only by `thread`
    std::atomic<uint64_t> operations{0};
    std::atomic<pid_t> thread_id{0};  // set by `thread` when it starts (INFO's CPU figures)
    BusyWaitMeter busy_wait;          // written by `thread`
    std::thread thread;
  };

  unsigned ShardOf(std::string_view key) const;
  void RunShard(unsigned shard_index);
  void RunShareOfBatch(unsigned shard_index, PendingBatch& pending, int64_t now_ms);
  void RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms);

  const EngineTraits traits_;
  // Which engine a thread defers wake-ups for (DeferWakeupsOnThisThread):
  // a number never reused, unlike an address.
  const uint64_t instance_id_;
  const HopMode hop_;
  const MultiKey multikey_;
  MemoryMeter meter_;  // declared before shards_: they report to it until destroyed
  std::vector<std::unique_ptr<Shard>> shards_;
  // Held while a batch with a multi-shard group is sent: the global order.
  std::mutex multi_shard_order_;
  std::atomic<uint64_t> multi_shard_groups_{0};
  std::atomic<bool> time_threads_{false};  // TimeThreads()
};

}  // namespace kvlab
