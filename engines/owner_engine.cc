#include "engines/owner_engine.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "base/hash_slot.h"
#include "engines/atomic_group.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/group_barrier.h"
#include "engines/keyspace_ops.h"
#include "engines/prefetch_stage.h"

namespace kvlab {


// One Execute() that left its caller's thread. Built by the caller, then
// shared by the owners it was queued to; it lives in the Batch
// (BatchScratch), so its vectors keep their capacity from one Execute() to
// the next.
struct OwnerEngine::PendingBatch final : BatchScratch {
  Batch* batch = nullptr;
  Completion done;
  unsigned origin = kNoOwner;  // the caller's owner index, if it is one
  // Operation indexes by owner, in batch order within each owner: owner o
  // runs order[first[o]] .. order[first[o + 1] - 1]. An entry with
  // kGroupEntry set is group (entry & ~kGroupEntry) of the batch.
  std::vector<uint32_t> order;
  std::vector<uint32_t> first;
  std::vector<uint32_t> next;
  std::vector<uint32_t> owner_of_op;
  std::vector<uint32_t> group_of_op;   // group index + 1 for ops of a held group, else 0
  std::vector<uint8_t> owner_marks;
  std::vector<std::unique_ptr<GroupBarrier>> barriers;
  bool has_multi_owner_group = false;
  std::atomic<unsigned> shares_outstanding{0};
  static constexpr uint32_t kGroupEntry = 1u << 31;
};

// An owner's thread of its own, for an engine no server attached: a queue
// of functions and a thread that runs them, the smallest EventLoop.
class OwnerEngine::OwnThread {
 public:
  OwnThread() : thread_([this] { Run(); }) {}
  ~OwnThread() {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  void Post(std::function<void()> function) {
    {
      MutexLock lock(mutex_);
      queue_.push_back(std::move(function));
    }
    ready_.notify_one();
  }

 private:
  void Run() {
    std::vector<std::function<void()>> running;
    MutexLock lock(mutex_);
    for (;;) {
      lock.Wait(ready_, [this]() REQUIRES(mutex_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything posted has run
      running.swap(queue_);
      lock.Unlock();
      for (auto& function : running) function();
      running.clear();
      lock.Lock();
    }
  }

  Mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::function<void()>> queue_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

namespace {

std::atomic<uint64_t> next_instance_id{1};

// Which owner of which engine the calling thread is (0: none).
struct OwnerIdentity {
  uint64_t engine_id = 0;
  unsigned owner = 0;
};
thread_local OwnerIdentity owner_identity;

// The calling thread's deferred drain messages: for which engine, and which
// owners have shares queued since the last WakeDeferred().
struct DeferredDrains {
  uint64_t engine_id = 0;
  std::vector<uint32_t> owners;
};
thread_local DeferredDrains deferred_drains;

// Counters with one writer (the owner's thread): no locked instruction.
void Bump(std::atomic<uint64_t>& counter, uint64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace

OwnerEngine::OwnerEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)),
      instance_id_(next_instance_id.fetch_add(1, std::memory_order_relaxed)),
      multikey_(config.multikey),
      meter_(config.max_memory_bytes) {
  const unsigned count = std::min(ResolvedShards(config), kHashSlots);
  owners_.reserve(count);
  for (unsigned i = 0; i < count; ++i) owners_.push_back(std::make_unique<Owner>(meter_, modifications_));
  owner_of_slot_.resize(kHashSlots);
  for (uint32_t slot = 0; slot < kHashSlots; ++slot) {
    owner_of_slot_[slot] = static_cast<uint16_t>(OwnerOfSlot(slot, count));
  }
}

OwnerEngine::~OwnerEngine() {
  own_threads_.clear();  // each runs what was posted to it, then exits
}

unsigned OwnerEngine::OwnerOf(std::string_view key) const {
  return owners_.size() == 1 ? 0 : owner_of_slot_[HashSlot(key)];
}

unsigned OwnerEngine::CallerOwner() const {
  return owner_identity.engine_id == instance_id_ ? owner_identity.owner : kNoOwner;
}

void OwnerEngine::AttachIoThread(unsigned index, IoThreadPost post) {
  if (index >= owners_.size()) return;
  attached_.store(true, std::memory_order_relaxed);  // the server starts its threads after
  Attach(index, std::move(post));
}

void OwnerEngine::Attach(unsigned index, IoThreadPost post) {
  owners_[index]->post = std::move(post);
  // Runs before anything else posted to that thread: before its connections.
  owners_[index]->post([this, index] { owner_identity = {instance_id_, index}; });
}

// Under call_once: no caller goes on before every owner has its thread.
void OwnerEngine::StartOwnThreads() {
  for (unsigned i = 0; i < owners_.size(); ++i) {
    own_threads_.push_back(std::make_unique<OwnThread>());
    OwnThread* thread = own_threads_.back().get();
    Attach(i, [thread](std::function<void()> function) { thread->Post(std::move(function)); });
  }
}

// ---- The caller's thread: inline when it owns every key, else hand over ----

void OwnerEngine::Execute(Batch& batch, Completion done) {
  if (!attached_.load(std::memory_order_relaxed)) {
    std::call_once(own_threads_once_, [this] { StartOwnThreads(); });
  }
  if (batch.ops.empty()) {
    done();
    return;
  }
  const unsigned me = CallerOwner();
  if (me != kNoOwner) {
    bool all_mine = true;
    if (owners_.size() > 1) {
      for (const Operation& op : batch.ops) {
        if (IsKeyless(op.code) || OwnerOf(op.key) != me) {
          all_mine = false;
          break;
        }
      }
    }
    if (all_mine) {
      RunAllOn(me, batch, UnixNowMs());
      Bump(owners_[me]->local_ops, batch.ops.size());
      done();
      return;
    }
  }

  if (!batch.engine_scratch) batch.engine_scratch = std::make_unique<PendingBatch>();
  PendingBatch& pending = static_cast<PendingBatch&>(*batch.engine_scratch);
  pending.batch = &batch;
  pending.done = std::move(done);
  pending.origin = me;
  GroupByOwner(batch, pending);
  // Settled before the first share leaves: an owner may finish the batch
  // (and its caller reuse it) before the next one is queued.
  thread_local std::vector<uint32_t> touched;
  touched.clear();
  for (uint32_t o = 0; o < owners_.size(); ++o) {
    if (pending.first[o + 1] > pending.first[o]) touched.push_back(o);
  }
  pending.shares_outstanding.store(static_cast<unsigned>(touched.size()), std::memory_order_relaxed);
  batches_in_flight_.fetch_add(1, std::memory_order_relaxed);

  // ==== THE HOP: shares for other owners go to their inboxes. ====
  if (pending.has_multi_owner_group) {
    {
      std::lock_guard order(multi_owner_order_);
      for (uint32_t o : touched) Queue(o, &pending);
    }
    for (uint32_t o : touched) PostDrain(o);
    return;
  }
  const bool defer = deferred_drains.engine_id == instance_id_;
  bool runs_here = false;
  for (uint32_t o : touched) {
    if (o == me) {
      runs_here = true;
      continue;
    }
    Queue(o, &pending);
    if (!defer) {
      PostDrain(o);
    } else if (std::find(deferred_drains.owners.begin(), deferred_drains.owners.end(), o) ==
               deferred_drains.owners.end()) {
      deferred_drains.owners.push_back(o);
    }
  }
  if (runs_here) {
    RunShare(me, pending, UnixNowMs());
    FinishShare(&pending);  // may complete the batch: `pending` is not touched after
  }
}

// As InlineEngine::Execute() over one keyspace: the `single` engine's path.
void OwnerEngine::RunAllOn(unsigned owner, Batch& batch, int64_t now_ms) {
  PlainKeyspace& keys = owners_[owner]->keys;
  const size_t count = batch.ops.size();
  auto hint = [&](size_t i, PrefetchStage stage) {
    if (!IsKeyless(batch.ops[i].code)) keys.Prefetch(batch.ops[i].key, stage);
  };
  BatchPrefetcher ahead(count, hint);
  size_t next_group = 0;
  size_t group_at = batch.groups.empty() ? count : batch.groups[0].first;
  for (size_t i = 0; i < count; ++i) {
    ahead.Before(i);
    if (i == group_at) {
      AtomicGroup& group = batch.groups[next_group++];
      group_at = next_group < batch.groups.size() ? batch.groups[next_group].first : count;
      if (MustRunAtomically(group, multikey_)) {
        for (size_t j = i + 1; j < i + group.count; ++j) ahead.Before(j);
        RunGroup(batch, group, now_ms);
        i += group.count - 1;
        continue;
      }
    }
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        batch.results[i] = OpResult::Integer(keys.CountLive(now_ms));
        break;
      case OpCode::kFlushAll:
        keys.Clear();
        batch.results[i] = OpResult::Ok();
        break;
      case OpCode::kCollectKeys:
        keys.Collect(*op.collect, now_ms);
        batch.results[i] = OpResult::Ok();
        break;
      default:
        batch.results[i] = keys.Apply(op, now_ms);
    }
  }
}

// A counting sort of the batch's work by owner (sharded_engine.cc's
// GroupByShard): keyless operations belong to every owner, and a group held
// whole is one entry in the order of every owner it touches.
void OwnerEngine::GroupByOwner(Batch& batch, PendingBatch& pending) const {
  const size_t owner_count = owners_.size();
  const size_t op_count = batch.ops.size();
  pending.owner_of_op.resize(op_count);
  pending.has_multi_owner_group = false;
  std::vector<uint32_t>& group_of_op = pending.group_of_op;
  bool holds_groups = false;
  for (const AtomicGroup& group : batch.groups) holds_groups |= MustRunAtomically(group, multikey_);
  if (holds_groups) {
    group_of_op.assign(op_count, 0);
    for (uint32_t g = 0; g < batch.groups.size(); ++g) {
      const AtomicGroup& group = batch.groups[g];
      if (!MustRunAtomically(group, multikey_)) continue;
      for (uint32_t i = group.first; i < group.first + group.count; ++i) group_of_op[i] = g + 1;
    }
  }
  while (pending.barriers.size() < batch.groups.size()) {
    pending.barriers.push_back(std::make_unique<GroupBarrier>());
  }
  std::vector<uint32_t>& first = pending.first;
  first.assign(owner_count + 1, 0);
  std::vector<uint8_t>& marks = pending.owner_marks;
  auto for_each_unit = [&](auto&& on_op, auto&& on_group) {
    for (uint32_t i = 0; i < op_count; ++i) {
      if (!holds_groups || group_of_op[i] == 0) {
        on_op(i);
        continue;
      }
      const uint32_t g = group_of_op[i] - 1;
      const AtomicGroup& group = batch.groups[g];
      marks.assign(owner_count, 0);
      for (uint32_t j = group.first; j < group.first + group.count; ++j) {
        const Operation& op = batch.ops[j];
        if (IsKeyless(op.code)) {
          marks.assign(owner_count, 1);
          break;
        }
        marks[OwnerOf(op.key)] = 1;
      }
      on_group(g, marks);
      i = group.first + group.count - 1;
    }
  };
  for_each_unit(
      [&](uint32_t i) {
        const Operation& op = batch.ops[i];
        if (IsKeyless(op.code)) {
          batch.results[i] = op.code == OpCode::kDbSize ? OpResult::Integer(0) : OpResult::Ok();
          for (size_t o = 0; o < owner_count; ++o) ++first[o + 1];
        } else {
          pending.owner_of_op[i] = OwnerOf(op.key);
          ++first[pending.owner_of_op[i] + 1];
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        uint32_t participants = 0;
        for (size_t o = 0; o < owner_count; ++o) {
          if (in[o]) {
            ++first[o + 1];
            ++participants;
          }
        }
        GroupBarrier& barrier = *pending.barriers[g];
        barrier.Reset(participants);
        if (participants > 1) pending.has_multi_owner_group = true;
      });
  for (size_t o = 0; o < owner_count; ++o) first[o + 1] += first[o];
  pending.order.resize(first[owner_count]);
  std::vector<uint32_t>& next = pending.next;
  next.assign(first.begin(), first.end() - 1);
  for_each_unit(
      [&](uint32_t i) {
        if (IsKeyless(batch.ops[i].code)) {
          for (size_t o = 0; o < owner_count; ++o) pending.order[next[o]++] = i;
        } else {
          pending.order[next[pending.owner_of_op[i]]++] = i;
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        for (size_t o = 0; o < owner_count; ++o) {
          if (in[o]) pending.order[next[o]++] = PendingBatch::kGroupEntry | g;
        }
      });
}

void OwnerEngine::Queue(unsigned owner, PendingBatch* pending) {
  Owner& target = *owners_[owner];
  MutexLock lock(target.inbox_mutex);
  target.inbox.push_back(pending);
}

// One drain message per owner while its inbox waits: later shares ride on
// the message already posted.
void OwnerEngine::PostDrain(unsigned owner) {
  Owner& target = *owners_[owner];
  {
    MutexLock lock(target.inbox_mutex);
    if (target.drain_posted || target.inbox.empty()) return;
    target.drain_posted = true;
  }
  target.post([this, owner] { Drain(owner); });
}

void OwnerEngine::DeferWakeupsOnThisThread() {
  // As ShardedEngine: a second call for the same engine keeps the list.
  if (deferred_drains.engine_id == instance_id_) return;
  deferred_drains.engine_id = instance_id_;
  deferred_drains.owners.clear();
}

void OwnerEngine::WakeDeferred() {
  if (deferred_drains.engine_id != instance_id_) return;
  for (uint32_t o : deferred_drains.owners) PostDrain(o);
  deferred_drains.owners.clear();
}

// ---- The owner's thread: run the shares its inbox holds ----------------------

void OwnerEngine::Drain(unsigned owner) {
  Owner& self = *owners_[owner];
  std::vector<PendingBatch*>& received = self.draining;
  {
    MutexLock lock(self.inbox_mutex);
    received.swap(self.inbox);
    self.drain_posted = false;
  }
  if (received.empty()) return;
  // Counted before the shares run: a completion may reuse its batch.
  uint64_t hops = 0;
  for (const PendingBatch* pending : received) hops += pending->origin != owner;
  Bump(self.hops, hops);
  if (hops != 0) Bump(self.messages, 1);
  const int64_t now_ms = UnixNowMs();  // one clock reading per message
  for (PendingBatch* pending : received) {
    RunShare(owner, *pending, now_ms);
    FinishShare(pending);
  }
  received.clear();
}

void OwnerEngine::RunShare(unsigned owner, PendingBatch& pending, int64_t now_ms) {
  Owner& self = *owners_[owner];
  Batch& batch = *pending.batch;
  const uint32_t begin = pending.first[owner];
  const uint32_t end = pending.first[owner + 1];
  auto hint = [&](size_t nth, PrefetchStage stage) {
    const uint32_t entry = pending.order[begin + nth];
    if (entry & PendingBatch::kGroupEntry) return;
    const Operation& soon = batch.ops[entry];
    if (!IsKeyless(soon.code)) self.keys.Prefetch(soon.key, stage);
  };
  BatchPrefetcher ahead(end - begin, hint);
  uint64_t ops_run = 0;  // a multi-owner group's are counted in multi_owner_groups_
  for (uint32_t k = begin; k < end; ++k) {
    ahead.Before(k - begin);
    const uint32_t i = pending.order[k];
    if (i & PendingBatch::kGroupEntry) {
      const uint32_t g = i & ~PendingBatch::kGroupEntry;
      if (pending.barriers[g]->participants == 1) ops_run += batch.groups[g].count;
      ReachGroup(pending, g, now_ms);
      continue;
    }
    ++ops_run;
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        std::atomic_ref<int64_t>(batch.results[i].integer)
            .fetch_add(self.keys.CountLive(now_ms), std::memory_order_relaxed);
        break;
      case OpCode::kFlushAll:
        self.keys.Clear();
        break;
      case OpCode::kCollectKeys:
        self.keys.Collect(*op.collect, now_ms);
        break;
      default:
        batch.results[i] = self.keys.Apply(op, now_ms);
    }
  }
  Bump(pending.origin == owner ? self.local_ops : self.remote_ops, ops_run);
}

void OwnerEngine::ReachGroup(PendingBatch& pending, uint32_t g, int64_t now_ms) {
  GroupBarrier& barrier = *pending.barriers[g];
  AtomicGroup& group = pending.batch->groups[g];
  auto run = [&] { RunGroup(*pending.batch, group, now_ms); };
  if (barrier.participants == 1) {  // one partition: its thread runs it like any share
    run();
    return;
  }
  // Counted before the group runs: once it has, the batch may complete and INFO be read.
  barrier.Reach([&] {
    multi_owner_groups_.fetch_add(1, std::memory_order_relaxed);
    run();
  });
}

// REQUIRES: every owner the group touches is this thread or waits at its barrier.
void OwnerEngine::RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  RunGroupOps(
      batch, group,
      [&](const Operation& op, GroupState& state) {
        return owners_[OwnerOf(op.key)]->keys.Apply(op, now_ms, &state);
      },
      [&](const Operation& op) { return RunKeylessOnEach(op, owners_, now_ms); });
}

// The owner whose share finishes last calls `done`, on its own thread.
void OwnerEngine::FinishShare(PendingBatch* pending) {
  if (pending->shares_outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Completion done = std::move(pending->done);
  batches_in_flight_.fetch_sub(1, std::memory_order_release);
  done();
}

EngineInfo OwnerEngine::Info() const {
  uint64_t local = 0, remote = 0, hops = 0, messages = 0;
  for (const auto& owner : owners_) {
    local += owner->local_ops.load(std::memory_order_relaxed);
    remote += owner->remote_ops.load(std::memory_order_relaxed);
    hops += owner->hops.load(std::memory_order_relaxed);
    messages += owner->messages.load(std::memory_order_relaxed);
  }
  char per_message[32];
  std::snprintf(per_message, sizeof per_message, "%.2f",
                messages == 0 ? 0.0 : static_cast<double>(hops) / static_cast<double>(messages));
  EngineInfo info = {{"engine", "owner"},
                     {"owners", std::to_string(owners_.size())},
                     {"local_ops", std::to_string(local)},
                     {"remote_ops", std::to_string(remote)},
                     {"hops", std::to_string(hops)},
                     {"messages", std::to_string(messages)},
                     {"hops_per_message", per_message},
                     {"multi_owner_groups",
                      std::to_string(multi_owner_groups_.load(std::memory_order_relaxed))},
                     {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
  for (size_t o = 0; o < owners_.size(); ++o) {
    const Owner& owner = *owners_[o];
    const std::string prefix = "owner" + std::to_string(o) + "_";
    info.emplace_back(prefix + "first_slot", std::to_string(FirstSlotOf(o, owners_.size())));
    info.emplace_back(prefix + "local_ops", std::to_string(owner.local_ops.load(std::memory_order_relaxed)));
    info.emplace_back(prefix + "remote_ops", std::to_string(owner.remote_ops.load(std::memory_order_relaxed)));
  }
  return info;
}

}  // namespace kvlab
