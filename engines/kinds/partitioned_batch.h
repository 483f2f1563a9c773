// PartitionedBatch: one Execute() of an engine whose keyspace is split into
// partitions that each belong to one thread (the sharded engine's shards,
// the owner engine's owners), and the steps those engines share on it:
//   Split():        a counting sort of the batch's work by partition;
//   Touched():      the partitions with a share, and the countdown set;
//   RunShare():     one partition's share, run in batch order;
//   ReachGroup():   a partition reaching a group held whole (GroupBarrier);
//   RunGroupOver(): such a group run over every partition it touches;
//   FinishShare():  the one-shot completion.
// And DeferredWakeups: a thread's wake-ups held back to the end of its round
// (Engine::DeferWakeupsOnThisThread()).
// Each engine keeps its own hop (how a share gets to its partition's thread)
// and its own counters.
//
// It lives in the Batch (BatchScratch), so its vectors keep their capacity
// from one Execute() to the next and a hop costs no allocation.
//
// Thread-safety: built by the caller before the first share leaves; then
// each partition's thread reads the order and writes the results of its own
// operations; the countdown is atomic.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/engine.h"
#include "engines/threads/group_barrier.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/keyspace/plain_keyspace.h"
#include "engines/keyspace/prefetch_stage.h"

namespace kvlab {

struct PartitionedBatch : BatchScratch {
  Batch* batch = nullptr;
  Engine::Completion done;
  // The batch's operation indexes grouped by partition, in batch order
  // within each partition: partition p runs order[first[p]] ..
  // order[first[p + 1] - 1]. An entry with kGroupEntry set is group
  // (entry & ~kGroupEntry) of the batch, not an operation.
  std::vector<uint32_t> order;
  std::vector<uint32_t> first;
  std::vector<uint32_t> next;         // Split()'s fill positions
  std::vector<uint32_t> part_of_op;   // Split()'s first pass
  std::vector<uint32_t> group_of_op;  // group index + 1 for ops in a held group, else 0
  std::vector<uint8_t> part_marks;    // Split()'s per-group partition set
  // Per group of the batch that runs atomically: its barrier (kept across
  // Execute()s, grown as needed).
  std::vector<std::unique_ptr<GroupBarrier>> barriers;
  bool has_multi_part_group = false;
  // Partitions that have not finished their share yet: the one-shot completion.
  std::atomic<unsigned> shares_outstanding{0};
  static constexpr uint32_t kGroupEntry = 1u << 31;

  // The batch's scratch as a `Pending` (a PartitionedBatch), made on the
  // batch's first Execute(), bound to `batch` and `done`. The previous
  // Execute() of this batch has completed (its `done` ran before the caller
  // could queue more), so its bookkeeping is free again.
  template <typename Pending>
  static Pending& Begin(Batch& batch, Engine::Completion& done) {
    if (!batch.engine_scratch) batch.engine_scratch = std::make_unique<Pending>();
    Pending& pending = static_cast<Pending&>(*batch.engine_scratch);
    pending.batch = &batch;
    pending.done = std::move(done);
    return pending;
  }

  // Keyless operations belong to every partition; their results are set
  // here, and the partitions only add their DBSIZE counts. A group that must
  // run atomically is one entry in the order of every partition it touches,
  // in place of its operations. part_of(key): the key's partition.
  template <typename PartOf>
  void Split(Batch& batch, MultiKey multikey, size_t part_count, PartOf&& part_of);

  // Fills `touched` with the partitions that have a share and sets the
  // countdown to their number: everything a send needs, settled before the
  // first share leaves (a partition may finish and complete the batch
  // before the next send).
  void Touched(std::vector<uint32_t>& touched) {
    touched.clear();
    for (uint32_t p = 0; p + 1 < first.size(); ++p) {
      if (first[p + 1] > first[p]) touched.push_back(p);
    }
    shares_outstanding.store(static_cast<unsigned>(touched.size()), std::memory_order_relaxed);
  }
};

template <typename PartOf>
void PartitionedBatch::Split(Batch& batch, MultiKey multikey, size_t part_count, PartOf&& part_of) {
  const size_t op_count = batch.ops.size();
  part_of_op.resize(op_count);
  has_multi_part_group = false;

  // Which operations belong to a group that is held whole (none: the
  // plain per-partition split, with no per-operation lookup).
  bool holds_groups = false;
  for (const AtomicGroup& group : batch.groups) holds_groups |= MustRunAtomically(group, multikey);
  if (holds_groups) {
    group_of_op.assign(op_count, 0);
    for (uint32_t g = 0; g < batch.groups.size(); ++g) {
      const AtomicGroup& group = batch.groups[g];
      if (!MustRunAtomically(group, multikey)) continue;
      for (uint32_t i = group.first; i < group.first + group.count; ++i) group_of_op[i] = g + 1;
    }
  }
  while (barriers.size() < batch.groups.size())
    barriers.push_back(std::make_unique<GroupBarrier>());

  first.assign(part_count + 1, 0);
  // Visits each unit of work once: on_op(op index) for a lone operation,
  // on_group(group index, partition set) for a held group (once, at its first op).
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
      part_marks.assign(part_count, 0);
      for (uint32_t j = group.first; j < group.first + group.count; ++j) {
        const Operation& op = batch.ops[j];
        if (IsKeyless(op.code)) {
          part_marks.assign(part_count, 1);
          break;
        }
        part_marks[part_of(op.key)] = 1;
      }
      on_group(g, part_marks);
      i = group.first + group.count - 1;
    }
  };
  for_each_unit(
      [&](uint32_t i) {
        const Operation& op = batch.ops[i];
        if (IsKeyless(op.code)) {
          // The counting ones add every partition's share into this result.
          batch.results[i] = op.code == OpCode::kDbSize || op.code == OpCode::kReclaimExpired
                                 ? OpResult::Integer(0)
                                 : OpResult::Ok();
          for (size_t p = 0; p < part_count; ++p) ++first[p + 1];
        } else {
          part_of_op[i] = part_of(op.key);
          ++first[part_of_op[i] + 1];
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        uint32_t participants = 0;
        for (size_t p = 0; p < part_count; ++p) {
          if (in[p]) {
            ++first[p + 1];
            ++participants;
          }
        }
        barriers[g]->Reset(participants);
        if (participants > 1) has_multi_part_group = true;
      });
  for (size_t p = 0; p < part_count; ++p) first[p + 1] += first[p];

  order.resize(first[part_count]);
  next.assign(first.begin(), first.end() - 1);
  for_each_unit(
      [&](uint32_t i) {
        if (IsKeyless(batch.ops[i].code)) {
          for (size_t p = 0; p < part_count; ++p) order[next[p]++] = i;
        } else {
          order[next[part_of_op[i]]++] = i;
        }
      },
      [&](uint32_t g, const std::vector<uint8_t>& in) {
        for (size_t p = 0; p < part_count; ++p) {
          if (in[p]) order[next[p]++] = kGroupEntry | g;
        }
      });
}

// Runs partition `part`'s share of `pending` on `keys` (the partition's
// own), in batch order, hinting the lookups a few operations ahead as
// InlineEngine::Execute() does; on_group(g) for each held group's entry.
// Returns how many operations (not group entries) it ran.
template <typename OnGroup>
uint64_t RunShare(PartitionedBatch& pending, unsigned part, PlainKeyspace& keys, int64_t now_ms,
                  OnGroup&& on_group) {
  Batch& batch = *pending.batch;
  const uint32_t begin = pending.first[part];
  const uint32_t end = pending.first[part + 1];
  auto hint = [&](size_t nth, PrefetchStage stage) {
    const uint32_t entry = pending.order[begin + nth];
    if (entry & PartitionedBatch::kGroupEntry) return;
    const Operation& soon = batch.ops[entry];
    if (!IsKeyless(soon.code)) keys.Prefetch(soon.key, stage);
  };
  BatchPrefetcher ahead(end - begin, hint);
  uint64_t ops_run = 0;
  for (uint32_t k = begin; k < end; ++k) {
    ahead.Before(k - begin);
    const uint32_t i = pending.order[k];
    if (i & PartitionedBatch::kGroupEntry) {
      on_group(i & ~PartitionedBatch::kGroupEntry);
      continue;
    }
    ++ops_run;
    const Operation& op = batch.ops[i];
    switch (op.code) {
      case OpCode::kDbSize:
        // Every partition adds into the same result; the last one's add is
        // published to the completer by the countdown.
        std::atomic_ref<int64_t>(batch.results[i].integer)
            .fetch_add(keys.CountLive(now_ms), std::memory_order_relaxed);
        break;
      case OpCode::kFlushAll:
        keys.Clear();
        break;
      case OpCode::kCollectKeys:
        keys.Collect(*op.collect, now_ms);
        break;
      case OpCode::kReclaimExpired:
        std::atomic_ref<int64_t>(batch.results[i].integer)
            .fetch_add(
                keys.ReclaimExpired(now_ms, static_cast<size_t>(std::max<int64_t>(op.integer, 0))),
                std::memory_order_relaxed);
        break;
      default:
        batch.results[i] = keys.Apply(op, now_ms);
    }
  }
  return ops_run;
}

// A partition's thread reached group `g` of `pending`: runs it (run()) when
// it is the group's only participant, else arrives at the group's barrier,
// where the last participant counts it in `multi_part_groups` and runs it
// while the others wait.
template <typename Run>
void ReachGroup(PartitionedBatch& pending, uint32_t g, std::atomic<uint64_t>& multi_part_groups,
                Run&& run) {
  GroupBarrier& barrier = *pending.barriers[g];
  if (barrier.participants == 1) {  // one partition: its thread runs it like any share
    run();
    return;
  }
  // Counted before the group runs: once it has, the batch may complete and INFO be read.
  barrier.Reach([&] {
    multi_part_groups.fetch_add(1, std::memory_order_relaxed);
    run();
  });
}

// Runs a group over every partition it touches: `parts` is the engine's
// range of partition pointers (each with a `keys` keyspace), part_of(key)
// the key's index in it. REQUIRES: each partition it touches is this thread
// or waits at the group's barrier.
// A logged group's record goes to the lane of every partition it touched
// (write_log.h), which are exactly the partitions held for it.
template <typename Parts, typename PartOf>
void RunGroupOver(Batch& batch, AtomicGroup& group, Parts& parts, PartOf&& part_of,
                  int64_t now_ms) {
  LogPlace place;
  if (group.log != nullptr) {
    thread_local std::vector<uint32_t> lanes;
    lanes.clear();
    for (uint32_t i = group.first; i < group.first + group.count; ++i) {
      const Operation& op = batch.ops[i];
      if (IsKeyless(op.code)) {
        lanes.resize(parts.size());
        for (uint32_t p = 0; p < lanes.size(); ++p) lanes[p] = p;
        break;
      }
      lanes.push_back(static_cast<uint32_t>(part_of(op.key)));
    }
    std::sort(lanes.begin(), lanes.end());
    lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
    place.lanes = lanes;
  }
  RunGroupOps(
      batch, group, now_ms,
      [&](const Operation& op, GroupState& state) {
        return parts[part_of(op.key)]->keys.Apply(op, now_ms, &state);
      },
      [&](const Operation& op) { return RunKeylessOnEach(op, parts, now_ms); }, place);
}

// The one-shot completion: the partition whose share finishes last sees the
// count reach zero (acq_rel makes every other partition's results visible
// to it) and calls `done` on its own thread, after before_done().
template <typename BeforeDone>
void FinishShare(PartitionedBatch* pending, BeforeDone&& before_done) {
  if (pending->shares_outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Moved out first: the caller may free or reuse the batch (and with it
  // `pending`) from inside done().
  Engine::Completion done = std::move(pending->done);
  before_done();
  done();
}

// The calling thread's deferred wake-ups, one per engine class (a
// thread_local in its .cc): for which engine (0: none), and which of its
// partitions have work queued since the last WakeDeferred().
struct DeferredWakeups {
  uint64_t engine_id = 0;
  std::vector<uint32_t> parts;

  // DeferWakeupsOnThisThread(). Called again for this engine (every new
  // connection on the thread does): keep the list, whose wake-up is
  // already due; clearing it lost that wake-up and left the batch waiting
  // (a sweep hung on a new pooled connection). A previous engine's list is
  // empty: its caller woke it.
  void Begin(uint64_t engine) {
    if (engine_id == engine) return;
    engine_id = engine;
    parts.clear();
  }
  bool For(uint64_t engine) const { return engine_id == engine; }
  void Add(uint32_t part) {
    if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
  }
  // WakeDeferred(): wake(p) for each partition listed, if this engine's.
  template <typename Wake>
  void WakeAll(uint64_t engine, Wake&& wake) {
    if (engine_id != engine) return;
    for (uint32_t part : parts) wake(part);
    parts.clear();
  }
};

}  // namespace kvlab
