// OwnerEngine (`owner`): thread-per-core, as Dragonfly, Seastar and ember
// after the seed. The keyspace is split into N owners, one per server I/O
// thread; owner i holds the keys whose Redis Cluster hash slot
// (base/hash_slot.h) lies in the i-th of N even slot ranges, and only
// thread i touches them. There are no shard threads: the thread that parsed
// a command is the one that runs it, when it owns the keys.
//
// A request's journey:
//   1. Thread i calls Execute(batch). When every key of the batch is its own
//      (always, with one owner), it runs the batch inline on its keyspace and
//      completes before returning: no hop, no lock, no atomic: `single`.
//   2. Otherwise it groups the batch by owner, runs its own share inline and
//      queues ONE share per other owner in that owner's inbox. THE HOP: the
//      owner's loop is posted one drain message per round at most (one
//      message carries every share queued for it since its last drain); a
//      thread that opted in (DeferWakeupsOnThisThread) posts after its whole
//      round of ready connections (WakeDeferred).
//   3. Owner j's loop drains its inbox, runs each share on its keyspace and
//      counts the batch's shares down; the owner that finishes last calls
//      `done` on its thread, and the server posts the reply back to the
//      connection's thread.
// DBSIZE, FLUSHALL and key collection go to every owner, as on `sharded`.
//
// Atomic groups over several owners (MSET, MGET, DEL k1 k2, RENAME,
// MULTI/EXEC) are held as sharded_engine.h describes: a batch holding one is
// queued to every owner it touches (its caller's own inbox included) under
// one engine-wide mutex, so such batches sit in one global order in every
// inbox, and posted at once (never deferred: a thread blocked at a barrier
// would otherwise hold back the very message its partner waits for); each
// owner reaching the group arrives at its barrier and the last one runs the
// group over every participant's keyspace while the others wait. A group
// whose keys one owner holds runs on that owner like any share, inline when
// that is the caller.
//
// Threads: AttachIoThread() makes the server's I/O thread `index` owner
// `index`. An engine that is never attached (the in-process tests) starts
// its own N owner threads on its first Execute(), and a caller that is no
// owner's thread sends every share.
//
// Thread-safe: Execute() from any thread; Info() from any thread (counters
// only). Atomicity as `sharded`: each keyed operation, each batch's share on
// one owner in batch order, each held AtomicGroup. Destruction: REQUIRES no
// Execute() in progress and no work in flight (HasWorkInFlight()); the
// server's loops have stopped.
//
// Append-only log (write_log.h): as for `sharded`, a lane per owner: an
// owner appends a local write's record to its lane as it runs it, a hopped
// write's record is appended by its owner's loop, and a multi-owner group's
// record once, by whichever loop runs it with every owner it touches held,
// to the group's first owner's lane, with a marker in each other's
// (server/lane_log.h): replayed once every lane has reached it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "engines/engine.h"
#include "engines/threads/function_thread.h"
#include "engines/memory_meter.h"
#include "engines/keyspace/plain_keyspace.h"

namespace kvlab {

class OwnerEngine final : public Engine {
 public:
  explicit OwnerEngine(const EngineConfig& config);
  ~OwnerEngine() override;

  EngineTraits Traits() const override { return traits_; }
  void Execute(Batch& batch, Completion done) override;
  EngineInfo Info() const override;
  unsigned LogLanes() const override { return static_cast<unsigned>(owners_.size()); }
  void DeferWakeupsOnThisThread() override;
  void WakeDeferred() override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }
  uint64_t MemoryLimit() const override { return meter_.Limit(); }
  void SetMemoryLimit(uint64_t bytes) override { meter_.SetLimit(bytes); }
  void AttachIoThread(unsigned index, IoThreadPost post) override;
  bool HasWorkInFlight() const override {
    return batches_in_flight_.load(std::memory_order_acquire) != 0;
  }

  size_t owners() const { return owners_.size(); }
  // The owner of `key`: the one whose slot range holds HashSlot(key).
  unsigned OwnerOf(std::string_view key) const;

 private:
  struct PendingBatch;  // one Execute() in flight: its per-owner shares and completion

  struct alignas(64) Owner {
    Owner(MemoryMeter& meter, const ModificationFeed& feed) : keys(meter, feed) {}
    PlainKeyspace keys;  // touched only on this owner's thread (or a group's runner)
    IoThreadPost post;   // runs a function on this owner's thread
    Mutex inbox_mutex;
    std::vector<PendingBatch*> inbox GUARDED_BY(inbox_mutex);
    bool drain_posted GUARDED_BY(inbox_mutex) = false;
    std::vector<PendingBatch*> draining;  // the owner thread's copy of the inbox
    // Written only by the owner's thread (Bump()), read by Info().
    std::atomic<uint64_t> local_ops{0};   // run for a connection of this thread
    std::atomic<uint64_t> remote_ops{0};  // run for another thread's connection
    std::atomic<uint64_t> hops{0};        // shares received from another thread
    std::atomic<uint64_t> messages{0};    // drains that carried at least one share
  };

  static constexpr unsigned kNoOwner = ~0u;
  unsigned CallerOwner() const;
  void StartOwnThreads();
  void Attach(unsigned index, IoThreadPost post);
  // Runs every operation of `batch` on `keys` (REQUIRES: it owns them all).
  void RunAllOn(unsigned owner, Batch& batch, int64_t now_ms);
  void Queue(unsigned owner, PendingBatch* pending);
  void PostDrain(unsigned owner);
  void Drain(unsigned owner);
  void RunShare(unsigned owner, PendingBatch& pending, int64_t now_ms);
  void RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms);
  void FinishShare(PendingBatch* pending);

  const EngineTraits traits_;
  const uint64_t instance_id_;  // which engine a thread owns a shard of: never reused
  const MultiKey multikey_;
  MemoryMeter meter_;  // declared before owners_: they report to it until destroyed
  std::vector<std::unique_ptr<Owner>> owners_;
  std::vector<uint16_t> owner_of_slot_;  // kHashSlots entries
  std::atomic<bool> attached_{false};    // by the server, before its threads start
  std::once_flag own_threads_once_;
  std::vector<std::unique_ptr<FunctionThread>> own_threads_;  // when no server attached threads
  // Held while a batch with a multi-owner group is queued: the global order.
  std::mutex multi_owner_order_;
  std::atomic<uint64_t> multi_owner_groups_{0};
  std::atomic<uint64_t> batches_in_flight_{0};
};

}  // namespace kvlab
