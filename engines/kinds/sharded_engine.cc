#include "engines/kinds/sharded_engine.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "base/stage_clock.h"
#include "engines/calls/atomic_group.h"
#include "engines/clock.h"
#include "engines/engine_kind.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/kinds/partitioned_batch.h"
#include "engines/threads/thread_cpu.h"

namespace kvlab {

// One Execute() in flight (partitioned_batch.h). Built by the connection
// thread, then shared by the shards it was sent to.
struct ShardedEngine::PendingBatch final : PartitionedBatch {};

namespace {

std::atomic<uint64_t> next_sharded_instance_id{1};

thread_local DeferredWakeups deferred_wakeups;  // partitioned_batch.h

// "0x9c0": an address modulo 4096, for INFO's layout fields.
std::string PageOffset(const void* address) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto offset = reinterpret_cast<uintptr_t>(address) & 0xfffu;
  return {'0', 'x', kDigits[offset >> 8], kDigits[(offset >> 4) & 0xf], kDigits[offset & 0xf]};
}

}  // namespace

ShardedEngine::ShardedEngine(const EngineConfig& config)
    : traits_(TraitsOf(config)),
      instance_id_(next_sharded_instance_id.fetch_add(1, std::memory_order_relaxed)),
      hop_(config.hop),
      multikey_(config.multikey),
      meter_(config.max_memory_bytes) {
  const unsigned count = ResolvedShards(config);
  shards_.reserve(count);
  for (unsigned i = 0; i < count; ++i)
    shards_.push_back(std::make_unique<Shard>(meter_, modifications_));
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
  PendingBatch& pending = PartitionedBatch::Begin<PendingBatch>(batch, done);
  pending.Split(batch, multikey_, shards_.size(),
                [this](std::string_view key) { return ShardOf(key); });

  // Everything the sends need is settled before the first message leaves:
  // a shard may finish and complete the batch before the next send.
  thread_local std::vector<uint32_t> shards_touched;
  pending.Touched(shards_touched);

  // ==== THE HOP: from here on the batch belongs to the shard threads. ====
  if (pending.has_multi_part_group) {
    // Scheduling: one global order of such batches in every inbox.
    std::lock_guard order(multi_shard_order_);
    for (uint32_t s : shards_touched) shards_[s]->inbox.Send(&pending);
    return;
  }
  if (!deferred_wakeups.For(instance_id_)) {
    for (uint32_t s : shards_touched) shards_[s]->inbox.Send(&pending);
    return;
  }
  // `pending` may complete (and be reused) as soon as it is queued: the
  // shard list was copied out of it above, and a busy shard runs it
  // without waiting for WakeDeferred().
  for (uint32_t s : shards_touched) {
    shards_[s]->inbox.SendWithoutWake(&pending);
    deferred_wakeups.Add(s);
  }
}

void ShardedEngine::DeferWakeupsOnThisThread() { deferred_wakeups.Begin(instance_id_); }

void ShardedEngine::WakeDeferred() {
  deferred_wakeups.WakeAll(instance_id_, [this](uint32_t s) { shards_[s]->inbox.Wake(); });
}

// ---- Shard thread: own the map, run the shares, complete the batch --------

void ShardedEngine::RunShard(unsigned shard_index) {
  Shard& shard = *shards_[shard_index];
  shard.thread_id.store(CurrentThreadId(), std::memory_order_release);
  shard.thread_id.notify_all();
  std::vector<PendingBatch*> received;
  for (;;) {
    // Busy versus waiting: timed around the receive while stage sampling is on.
    const bool timed = time_threads_.load(std::memory_order_relaxed);
    if (timed) shard.busy_wait.WaitBegins(StageClockNs());
    if (!shard.inbox.ReceiveAll(&received)) break;
    if (timed) {
      shard.busy_wait.WaitEnds(StageClockNs());
    } else {
      shard.busy_wait.Pause();
    }
    const int64_t now_ms = UnixNowMs();  // one clock reading per wakeup
    for (PendingBatch* pending : received) RunShareOfBatch(shard_index, *pending, now_ms);
  }
}

void ShardedEngine::RunShareOfBatch(unsigned shard_index, PendingBatch& pending, int64_t now_ms) {
  Shard& shard = *shards_[shard_index];
  Batch& batch = *pending.batch;
  // Read before the share: once it is finished the caller may reuse the batch.
  EngineStageMarks* const marks = batch.stage_marks;
  if (marks != nullptr) NoteStagePickedUp(*marks, /*hop=*/true);
  RunShare(pending, shard_index, shard.keys, now_ms, [&](uint32_t g) {
    ReachGroup(pending, g, multi_shard_groups_, [&] { RunGroup(batch, batch.groups[g], now_ms); });
  });
  if (marks != nullptr) NoteStageExecuted(*marks);
  shard.operations.fetch_add(pending.first[shard_index + 1] - pending.first[shard_index],
                             std::memory_order_relaxed);
  FinishShare(&pending, [] {});
}

// Runs a group over every shard it touches; REQUIRES: each of them is this
// thread or waiting at the group's barrier.
void ShardedEngine::RunGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  RunGroupOver(
      batch, group, shards_, [this](std::string_view key) { return ShardOf(key); }, now_ms);
}

void ShardedEngine::TimeThreads(bool on) { time_threads_.store(on, std::memory_order_relaxed); }

std::vector<std::pair<std::string, BusyWaitTotals>> ShardedEngine::ThreadTimes() const {
  std::vector<std::pair<std::string, BusyWaitTotals>> times;
  for (size_t s = 0; s < shards_.size(); ++s) {
    times.emplace_back("shard" + std::to_string(s), shards_[s]->busy_wait.Totals());
  }
  return times;
}

void ShardedEngine::ResetThreadTimes() {
  for (auto& shard : shards_) shard->busy_wait.Reset(StageClockNs());
}

EngineInfo ShardedEngine::Info() const {
  EngineInfo info = {
      {"engine", "sharded"},
      {"shards", std::to_string(shards_.size())},
      {"hop", hop_ == HopMode::kBatch ? "batch" : "command"},
      {"multi_shard_groups", std::to_string(multi_shard_groups_.load(std::memory_order_relaxed))},
      {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
  // Where the hot structures landed, modulo 4096 (a start's layout fingerprint:
  // docs/methodology.md, "Starts"): addresses equal modulo 4096 alias in the
  // store buffer and fall in the same L1 sets.
  info.emplace_back("layout_engine", PageOffset(this));
  for (size_t s = 0; s < shards_.size(); ++s) {
    const Shard& shard = *shards_[s];
    const std::string prefix = "shard" + std::to_string(s) + "_";
    info.emplace_back("layout_" + prefix + "inbox", PageOffset(&shard.inbox));
    info.emplace_back("layout_" + prefix + "operations", PageOffset(&shard.operations));
    info.emplace_back("layout_" + prefix + "keys", PageOffset(&shard.keys));
    info.emplace_back(prefix + "ops",
                      std::to_string(shard.operations.load(std::memory_order_relaxed)));
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
