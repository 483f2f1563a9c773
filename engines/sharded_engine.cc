#include "engines/sharded_engine.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "engines/atomic_group.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/group_barrier.h"
#include "engines/keyspace_ops.h"
#include "engines/thread_cpu.h"

namespace kvlab {

// One Execute() in flight. Built by the connection thread, then shared by
// the shards it was sent to. It lives in the Batch (BatchScratch), so its
// vectors keep their capacity from one Execute() to the next and a hop costs
// no allocation.

struct ShardedEngine::PendingBatch final : BatchScratch {
  Batch* batch = nullptr;
  Completion done;
  // The batch's operation indexes grouped by shard, in batch order within
  // each shard: shard s runs order[first[s]] .. order[first[s + 1] - 1].
  std::vector<uint32_t> order;
  std::vector<uint32_t> first;
  std::vector<uint32_t> next;          // GroupByShard's fill positions
  std::vector<uint32_t> shard_of_op;   // GroupByShard's first pass
  // Shards that have not finished their share yet: the one-shot completion.
  std::atomic<unsigned> shards_outstanding{0};
  // An entry of `order` with this bit set is group (entry & ~kGroupEntry)
  // of the batch, not an operation.
  static constexpr uint32_t kGroupEntry = 1u << 31;
  // Per group of the batch that runs atomically: its barrier (kept across
  // Execute()s, grown as needed), and which shards it touches.
  std::vector<std::unique_ptr<GroupBarrier>> barriers;
  std::vector<uint32_t> group_of_op;   // group index + 1 for ops in a held group, else 0
  std::vector<uint8_t> shard_marks;    // GroupByShard's per-group shard set
  bool has_multi_shard_group = false;
};

namespace {

std::atomic<uint64_t> next_instance_id{1};

// The calling thread's deferred wake-ups: for which engine (0: none), and
// which of its shards have messages queued since the last WakeDeferred().
struct DeferredWakeups {
  uint64_t engine_id = 0;
  std::vector<uint32_t> shards;
};
thread_local DeferredWakeups deferred_wakeups;

}  // namespace

ShardedEngine::ShardedEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)),
      instance_id_(next_instance_id.fetch_add(1, std::memory_order_relaxed)),
      hop_(config.hop), multikey_(config.multikey), meter_(config.max_memory_bytes) {
  const unsigned count = ResolvedShards(config);
  shards_.reserve(count);
  for (unsigned i = 0; i < count; ++i) shards_.push_back(std::make_unique<Shard>(meter_, modifications_));
  // Threads start only once every shard exists: RunShard() reads shards_.
  for (unsigned i = 0; i < count; ++i) shards_[i]->thread = std::thread([this, i] { RunShard(i); });
  // Each thread has said who it is before the engine is used, so that INFO
  // always has the shards' CPU figures.
  for (auto& shard : shards_) shard->thread_id.wait(0, std::memory_order_acquire);
}

ShardedEngine::~ShardedEngine() {
  for (auto& shard : shards_) shard->inbox.Close();  // each drains what was sent, then exits
  for (auto& shard : shards_) shard->thread.join();
}

unsigned ShardedEngine::ShardOf(std::string_view key) const {
  return static_cast<unsigned>(KeyHash{}(key) % shards_.size());
}

// ---- Connection thread: split the batch and hand it over ------------------

void ShardedEngine::Execute(Batch& batch, Completion done) {
  if (batch.ops.empty()) {
    done();
    return;
  }
  // The previous Execute() of this batch has completed (its `done` ran
  // before the caller could queue more), so its bookkeeping is free again.
  if (!batch.engine_scratch) batch.engine_scratch = std::make_unique<PendingBatch>();
  PendingBatch& pending = static_cast<PendingBatch&>(*batch.engine_scratch);
  pending.batch = &batch;
  pending.done = std::move(done);
  GroupByShard(batch, pending);

  // Everything the sends need is settled before the first message leaves:
  // a shard may finish and complete the batch before the next send.
  thread_local std::vector<uint32_t> shards_touched;
  shards_touched.clear();
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    if (pending.first[s + 1] > pending.first[s]) shards_touched.push_back(s);
  }
  pending.shards_outstanding.store(static_cast<unsigned>(shards_touched.size()),
                                   std::memory_order_relaxed);

  // ==== THE HOP: from here on the batch belongs to the shard threads. ====
  if (pending.has_multi_shard_group) {
    // Scheduling: one global order of such batches in every inbox.
    std::lock_guard order(multi_shard_order_);
    for (uint32_t s : shards_touched) shards_[s]->inbox.Send(&pending);
    return;
  }
  if (deferred_wakeups.engine_id != instance_id_) {
    for (uint32_t s : shards_touched) shards_[s]->inbox.Send(&pending);
    return;
  }
  // `pending` may complete (and be reused) as soon as it is queued: the
  // shard list was copied out of it above, and a busy shard runs it
  // without waiting for WakeDeferred().
  std::vector<uint32_t>& to_wake = deferred_wakeups.shards;
  for (uint32_t s : shards_touched) {
    shards_[s]->inbox.SendWithoutWake(&pending);
    if (std::find(to_wake.begin(), to_wake.end(), s) == to_wake.end()) to_wake.push_back(s);
  }
}

void ShardedEngine::DeferWakeupsOnThisThread() {
  // Called again for this engine (every new connection on the thread does):
  // keep the list, whose wake-up is already posted; clearing it lost that
  // wake-up and left the batch waiting (a sweep hung on a new pooled
  // connection). A previous engine's list is empty: its caller woke it.
  if (deferred_wakeups.engine_id == instance_id_) return;
  deferred_wakeups.engine_id = instance_id_;
  deferred_wakeups.shards.clear();
}

void ShardedEngine::WakeDeferred() {
  if (deferred_wakeups.engine_id != instance_id_) return;
  for (uint32_t s : deferred_wakeups.shards) shards_[s]->inbox.Wake();
  deferred_wakeups.shards.clear();
}

// A counting sort of the batch's work by owning shard, keeping batch order
// within each shard. Keyless operations belong to every shard; their
// results are set here, and the shards only add their DBSIZE counts. A group
// that must run atomically is one entry (PendingBatch::kGroupEntry) in the
// order of every shard it touches, in place of its operations.
void ShardedEngine::GroupByShard(Batch& batch, PendingBatch& pending) const {
  const size_t shard_count = shards_.size();
  const size_t op_count = batch.ops.size();
  std::vector<uint32_t>& shard_of_op = pending.shard_of_op;
  shard_of_op.resize(op_count);
  pending.has_multi_shard_group = false;

  // Which operations belong to a group that is held whole (none: the
  // plain per-shard split, with no per-operation lookup).
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
  first.assign(shard_count + 1, 0);
  std::vector<uint8_t>& marks = pending.shard_marks;
  // Visits each unit of work once: fn(op index) for a lone operation,
  // fn_group(group index, shard set) for a held group (once, at its first op).
  auto for_each_unit = [&](auto&& on_op, auto&& on_group) {
    if (!holds_groups) {
      for (uint32_t i = 0; i < op_count; ++i) on_op(i);
      return;
    }
    for (uint32_t i = 0; i < op_count; ++i) {
      if (group_of_op[i] == 0) {
        on_op(i);
        continue;
      }
      const uint32_t g = group_of_op[i] - 1;
      const AtomicGroup& group = batch.groups[g];
      marks.assign(shard_count, 0);
      for (uint32_t j = group.first; j < group.first + group.count; ++j) {
        const Operation& op = batch.ops[j];
        if (IsKeyless(op.code)) {
          marks.assign(shard_count, 1);
          break;
        }
        marks[ShardOf(op.key)] = 1;
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
          for (size_t s = 0; s < shard_count; ++s) ++first[s + 1];
        } else {
          shard_of_op[i] = ShardOf(op.key);
          ++first[shard_of_op[i] + 1];
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        uint32_t participants = 0;
        for (size_t s = 0; s < shard_count; ++s) {
          if (in[s]) {
            ++first[s + 1];
            ++participants;
          }
        }
        GroupBarrier& barrier = *pending.barriers[g];
        barrier.Reset(participants);
        if (participants > 1) pending.has_multi_shard_group = true;
      });
  for (size_t s = 0; s < shard_count; ++s) first[s + 1] += first[s];

  pending.order.resize(first[shard_count]);
  std::vector<uint32_t>& next = pending.next;
  next.assign(first.begin(), first.end() - 1);
  for_each_unit(
      [&](uint32_t i) {
        if (IsKeyless(batch.ops[i].code)) {
          for (size_t s = 0; s < shard_count; ++s) pending.order[next[s]++] = i;
        } else {
          pending.order[next[shard_of_op[i]]++] = i;
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        for (size_t s = 0; s < shard_count; ++s) {
          if (in[s]) pending.order[next[s]++] = PendingBatch::kGroupEntry | g;
        }
      });
}

// ---- Shard thread: own the map, run the shares, complete the batch --------

void ShardedEngine::RunShard(unsigned shard_index) {
  Shard& shard = *shards_[shard_index];
  shard.thread_id.store(CurrentThreadId(), std::memory_order_release);
  shard.thread_id.notify_all();
  std::vector<PendingBatch*> received;
  while (shard.inbox.ReceiveAll(&received)) {
    const int64_t now_ms = UnixNowMs();  // one clock reading per wakeup
    for (PendingBatch* pending : received) RunShareOfBatch(shard_index, *pending, now_ms);
  }
}

void ShardedEngine::RunShareOfBatch(unsigned shard_index, PendingBatch& pending, int64_t now_ms) {
  Shard& shard = *shards_[shard_index];
  Batch& batch = *pending.batch;
  const uint32_t begin = pending.first[shard_index];
  const uint32_t end = pending.first[shard_index + 1];
  // As InlineEngine::Execute(): hint the lookups a few operations ahead.
  auto hint = [&](size_t nth, PrefetchStage stage) {
    const uint32_t entry = pending.order[begin + nth];
    if (entry & PendingBatch::kGroupEntry) return;
    const Operation& soon = batch.ops[entry];
    if (!IsKeyless(soon.code)) shard.keys.Prefetch(soon.key, stage);
  };
  BatchPrefetcher ahead(end - begin, hint);
  for (uint32_t k = begin; k < end; ++k) {
    ahead.Before(k - begin);
    const uint32_t i = pending.order[k];
    if (i & PendingBatch::kGroupEntry) {
      ReachGroup(pending, i & ~PendingBatch::kGroupEntry, now_ms);
      continue;
    }
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        // Every shard adds into the same result; the last one's add is
        // published to the completer by the countdown.
        std::atomic_ref<int64_t>(batch.results[i].integer)
            .fetch_add(shard.keys.CountLive(now_ms), std::memory_order_relaxed);
        break;
      case OpCode::kFlushAll:
        shard.keys.Clear();
        break;
      case OpCode::kCollectKeys:
        shard.keys.Collect(*op.collect, now_ms);
        break;
      default:
        batch.results[i] = shard.keys.Apply(op, now_ms);
    }
  }
  shard.operations.fetch_add(end - begin, std::memory_order_relaxed);
  FinishShare(&pending);
}

void ShardedEngine::ReachGroup(PendingBatch& pending, uint32_t g, int64_t now_ms) {
  GroupBarrier& barrier = *pending.barriers[g];
  AtomicGroup& group = pending.batch->groups[g];
  auto run = [&] { RunGroup(*pending.batch, group, now_ms); };
  if (barrier.participants == 1) {  // one partition: its thread runs it like any share
    run();
    return;
  }
  // Counted before the group runs: once it has, the batch may complete and INFO be read.
  barrier.Reach([&] {
    multi_shard_groups_.fetch_add(1, std::memory_order_relaxed);
    run();
  });
}

// Runs a group over every shard it touches; REQUIRES: each of them is this
// thread or waiting at the group's barrier.
void ShardedEngine::RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  RunGroupOps(
      batch, group,
      [&](const Operation& op, GroupState& state) {
        return shards_[ShardOf(op.key)]->keys.Apply(op, now_ms, &state);
      },
      [&](const Operation& op) { return RunKeylessOnEach(op, shards_, now_ms); });
}

// The one-shot completion: the shard whose share finishes last sees the
// count reach zero (acq_rel makes every other shard's results visible to it)
// and calls `done` here, on the shard thread.
void ShardedEngine::FinishShare(PendingBatch* pending) {
  if (pending->shards_outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Moved out first: the caller may free or reuse the batch (and with it
  // `pending`) from inside done().
  Completion done = std::move(pending->done);
  done();
}

EngineInfo ShardedEngine::Info() const {
  EngineInfo info = {{"engine", "sharded"},
                     {"shards", std::to_string(shards_.size())},
                     {"hop", hop_ == HopMode::kBatch ? "batch" : "command"},
                     {"multi_shard_groups",
                      std::to_string(multi_shard_groups_.load(std::memory_order_relaxed))},
                     {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
  for (size_t s = 0; s < shards_.size(); ++s) {
    const Shard& shard = *shards_[s];
    const std::string prefix = "shard" + std::to_string(s) + "_";
    info.emplace_back(prefix + "ops", std::to_string(shard.operations.load(std::memory_order_relaxed)));
    info.emplace_back(prefix + "queue_depth", std::to_string(shard.inbox.Depth()));
    info.emplace_back(prefix + "queue_max_depth", std::to_string(shard.inbox.MaxDepth()));
    if (auto cpu = ReadThreadCpu(shard.thread_id.load(std::memory_order_relaxed))) {
      info.emplace_back(prefix + "cpu_user", FormatCpuSeconds(cpu->user));
      info.emplace_back(prefix + "cpu_sys", FormatCpuSeconds(cpu->system));
    }
  }
  return info;
}

}  // namespace kvlab
