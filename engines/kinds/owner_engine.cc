#include "engines/kinds/owner_engine.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "base/hash_slot.h"
#include "engines/calls/atomic_group.h"
#include "engines/kinds/batch_in_order.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/kinds/partitioned_batch.h"

namespace kvlab {

// One Execute() that left its caller's thread (partitioned_batch.h). Built
// by the caller, then shared by the owners it was queued to.
struct OwnerEngine::PendingBatch final : PartitionedBatch {
  unsigned origin = kNoOwner;  // the caller's owner index, if it is one
};

namespace {

std::atomic<uint64_t> next_owner_instance_id{1};

// Which owner of which engine the calling thread is (0: none).
struct OwnerIdentity {
  uint64_t engine_id = 0;
  unsigned owner = 0;
};
thread_local OwnerIdentity owner_identity;

// The calling thread's deferred drain messages (partitioned_batch.h).
thread_local DeferredWakeups deferred_drains;

// Counters with one writer (the owner's thread): no locked instruction.
void Bump(std::atomic<uint64_t>& counter, uint64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace

OwnerEngine::OwnerEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)),
      instance_id_(next_owner_instance_id.fetch_add(1, std::memory_order_relaxed)),
      multikey_(config.multikey),
      meter_(config.max_memory_bytes) {
  const unsigned count = std::min(ResolvedShards(config), kHashSlots);
  owners_.reserve(count);
  for (unsigned i = 0; i < count; ++i)
    owners_.push_back(std::make_unique<Owner>(meter_, modifications_));
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
    own_threads_.push_back(std::make_unique<FunctionThread>());
    FunctionThread* thread = own_threads_.back().get();
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
      if (batch.stage_marks != nullptr) NoteStagePickedUp(*batch.stage_marks, /*hop=*/false);
      RunAllOn(me, batch, UnixNowMs());
      if (batch.stage_marks != nullptr) NoteStageExecuted(*batch.stage_marks);
      Bump(owners_[me]->local_ops, batch.ops.size());
      done();
      return;
    }
  }

  PendingBatch& pending = PartitionedBatch::Begin<PendingBatch>(batch, done);
  pending.origin = me;
  pending.Split(batch, multikey_, owners_.size(),
                [this](std::string_view key) { return OwnerOf(key); });
  // Settled before the first share leaves: an owner may finish the batch
  // (and its caller reuse it) before the next one is queued.
  thread_local std::vector<uint32_t> touched;
  pending.Touched(touched);
  batches_in_flight_.fetch_add(1, std::memory_order_relaxed);

  // ==== THE HOP: shares for other owners go to their inboxes. ====
  if (pending.has_multi_part_group) {
    {
      std::lock_guard order(multi_owner_order_);
      for (uint32_t o : touched) Queue(o, &pending);
    }
    for (uint32_t o : touched) PostDrain(o);
    return;
  }
  const bool defer = deferred_drains.For(instance_id_);
  bool runs_here = false;
  for (uint32_t o : touched) {
    if (o == me) {
      runs_here = true;
      continue;
    }
    Queue(o, &pending);
    if (!defer) {
      PostDrain(o);
    } else {
      deferred_drains.Add(o);
    }
  }
  if (runs_here) {
    RunShare(me, pending, UnixNowMs());
    FinishShare(&pending);  // may complete the batch: `pending` is not touched after
  }
}

// As InlineEngine::Execute() over one keyspace: the `single` engine's path.
void OwnerEngine::RunAllOn(unsigned owner, Batch& batch, int64_t now_ms) {
  RunBatchInOrder(batch, multikey_, now_ms, owners_[owner]->keys,
                  [this](Batch& b, AtomicGroup& group, int64_t now) { RunGroup(b, group, now); });
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

void OwnerEngine::DeferWakeupsOnThisThread() { deferred_drains.Begin(instance_id_); }

void OwnerEngine::WakeDeferred() {
  deferred_drains.WakeAll(instance_id_, [this](uint32_t o) { PostDrain(o); });
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
  // Read before the share: once every share is finished the caller may reuse the batch.
  EngineStageMarks* const marks = batch.stage_marks;
  if (marks != nullptr) NoteStagePickedUp(*marks, /*hop=*/pending.origin != owner);
  uint64_t group_ops = 0;  // a multi-owner group's are counted in multi_owner_groups_
  const uint64_t ops_run = kvlab::RunShare(pending, owner, self.keys, now_ms, [&](uint32_t g) {
    if (pending.barriers[g]->participants == 1) group_ops += batch.groups[g].count;
    ReachGroup(pending, g, multi_owner_groups_, [&] { RunGroup(batch, batch.groups[g], now_ms); });
  });
  Bump(pending.origin == owner ? self.local_ops : self.remote_ops, ops_run + group_ops);
  if (marks != nullptr) NoteStageExecuted(*marks);
}

// REQUIRES: every owner the group touches is this thread or waits at its barrier.
void OwnerEngine::RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  RunGroupOver(
      batch, group, owners_, [this](std::string_view key) { return OwnerOf(key); }, now_ms);
}

// The owner whose share finishes last calls `done`, on its own thread.
void OwnerEngine::FinishShare(PendingBatch* pending) {
  kvlab::FinishShare(pending,
                     [this] { batches_in_flight_.fetch_sub(1, std::memory_order_release); });
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
  EngineInfo info = {
      {"engine", "owner"},
      {"owners", std::to_string(owners_.size())},
      {"local_ops", std::to_string(local)},
      {"remote_ops", std::to_string(remote)},
      {"hops", std::to_string(hops)},
      {"messages", std::to_string(messages)},
      {"hops_per_message", per_message},
      {"multi_owner_groups", std::to_string(multi_owner_groups_.load(std::memory_order_relaxed))},
      {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
  for (size_t o = 0; o < owners_.size(); ++o) {
    const Owner& owner = *owners_[o];
    const std::string prefix = "owner" + std::to_string(o) + "_";
    info.emplace_back(prefix + "first_slot", std::to_string(FirstSlotOf(o, owners_.size())));
    info.emplace_back(prefix + "local_ops",
                      std::to_string(owner.local_ops.load(std::memory_order_relaxed)));
    info.emplace_back(prefix + "remote_ops",
                      std::to_string(owner.remote_ops.load(std::memory_order_relaxed)));
  }
  return info;
}

}  // namespace kvlab
