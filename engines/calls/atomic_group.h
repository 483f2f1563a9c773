// Running an AtomicGroup (engine.h): the part every engine shares. An
// engine first makes every key of the group its own (its header says how:
// one thread, stripe locks in stripe order, entry locks in key order, every
// shard it touches held at one point of a global order), then calls
// RunGroupOps(), which runs the operations in order with the group's state:
// the WATCH abort, guards that skip the rest of their command, and the
// carry that moves a value between keys.
//
// Not synchronised: the caller holds what makes the group's keys its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/container.h"
#include "engines/calls/container_call.h"
#include "engines/engine.h"
#include "engines/calls/key_reader.h"
#include "engines/operation.h"
#include "engines/calls/string_call.h"
#include "engines/rules/hyperloglog.h"

namespace kvlab {

// SMOVE's source step tells its destination step what it found.
struct SetMove {
  bool source_exists = false;
  bool source_has_member = false;
  bool moved = false;  // the destination took the member
};

// LMOVE's (RPOPLPUSH's) source step tells its destination step what it
// would pop: the element is copied, since the source is popped only after
// the destination's type check has passed.
struct ListMove {
  bool source_exists = false;
  std::string element;
  bool moved = false;  // the destination took the element
};

// What one group's operations pass along to each other while it runs.
struct GroupState {
  int64_t now_ms = 0;                         // the clock the group decides expiry at
  bool carried = false;                       // kLoadCarry found its key
  std::string value;                          // the carried string
  ValueForm value_form = ValueForm::kString;  // and its form (COPY keeps it)
  std::unique_ptr<Container> container;       // or the carried container
  int64_t expire_at_ms = 0;                   // and its expiry
  std::string bit_result;                     // BITOP: its sources folded so far
  // PFCOUNT of several keys, PFMERGE: the registers' maximum so far (made
  // by the first source: 16 KB no other group needs), and whether a source
  // was dense.
  std::unique_ptr<HllRegisters> hll_registers;
  bool hll_dense_source = false;
  // SINTERSTORE, SUNIONSTORE, SDIFFSTORE: the sources' members read so far
  // (a missing key's: none).
  std::vector<std::vector<std::string>> set_sources;
  SetMove set_move;    // SMOVE: what its source step found
  ListMove list_move;  // LMOVE, RPOPLPUSH: what their source step found
  // ZUNIONSTORE and its kin: a copy of each source read so far (null: missing)
  std::vector<std::unique_ptr<Container>> read_values;
};

// Guards, carries and string-command group steps need a GroupState; so
// does kReadKeys, which reads through its group (so its group is never
// split either). Nothing else does.
inline bool NeedsGroupState(const Operation& op) {
  if (op.code == OpCode::kString) return (op.string_command->flags & kStringGroupStep) != 0;
  if (op.code == OpCode::kContainer) {
    return (op.container_command->flags & (kContainerGroupStep | kContainerGuard)) != 0;
  }
  return op.code == OpCode::kRequireAbsent || op.code == OpCode::kLoadCarry ||
         op.code == OpCode::kStoreCarry || op.code == OpCode::kReadKeys;
}

// Whether a guard's result says the rest of its command must not run. A
// string or container step with a guard span guards with its error (BITOP,
// SINTERSTORE: a source of another type stops the store).
inline bool GuardFailed(const Operation& op, const OpResult& result) {
  if (op.code == OpCode::kRequireAbsent) return result.integer != 0;
  if (op.code == OpCode::kLoadCarry) return result.integer == 0;
  if (op.code == OpCode::kReadKeys) return result.kind == OpResult::Kind::kError;
  if (op.code == OpCode::kString) return result.kind == OpResult::Kind::kError;
  if (op.code == OpCode::kContainer) {
    // A guard step (ZMPOP's) stops at its first answer; any other step
    // with a guard span at its error (a set STORE's WRONGTYPE source).
    if ((op.container_command->flags & kContainerGuard) != 0) {
      return result.kind != OpResult::Kind::kNil;
    }
    return result.kind == OpResult::Kind::kError;
  }
  return false;
}

// A KeyReader over an engine's keyed path (run_keyed of RunGroupOps): each
// read is a kVisit operation on the key.
template <typename RunKeyed>
class GroupKeyReader final : public KeyReader {
 public:
  GroupKeyReader(RunKeyed& run_keyed, GroupState& state) : run_keyed_(run_keyed), state_(state) {}
  std::optional<EntryView> Live(std::string_view key, bool zset_as_skiplist) override {
    std::optional<EntryView> live;
    Operation visit;
    visit.code = OpCode::kVisit;
    visit.key = key;
    visit.integer = zset_as_skiplist ? 1 : 0;
    visit.visit_into = &live;
    run_keyed_(static_cast<const Operation&>(visit), state_);
    return live;
  }

 private:
  RunKeyed& run_keyed_;
  GroupState& state_;
};

// Runs batch.ops of `group` in order. run_keyed(op, GroupState&) -> OpResult
// runs one keyed operation, run_keyless(op) -> OpResult one keyless one;
// both decide expiry at `now_ms`, which the group's log record carries;
// `place` is the record's lanes (write_log.h).
template <typename RunKeyed, typename RunKeyless>
void RunGroupOps(Batch& batch, AtomicGroup& group, int64_t now_ms, RunKeyed&& run_keyed,
                 RunKeyless&& run_keyless, LogPlace place = {}) {
  const uint32_t end = group.first + group.count;
  GroupState state;
  state.now_ms = now_ms;
  // EXEC's watched keys come first: reclaiming one that expired since its
  // WATCH touches the flag, which is read only after them.
  uint32_t next = group.first;
  while (next < end && batch.ops[next].code == OpCode::kWatchedKey) {
    batch.results[next] = run_keyed(batch.ops[next], state);
    ++next;
  }
  if (group.abort_if != nullptr && group.abort_if->load(std::memory_order_acquire)) {
    group.aborted = true;
    for (uint32_t i = group.first; i < end; ++i) batch.results[i] = OpResult::Nil();
    return;
  }
  uint32_t skip_until = next;
  for (uint32_t i = next; i < end; ++i) {
    const Operation& op = batch.ops[i];
    if (i < skip_until) {
      batch.results[i] = OpResult::Nil();
      continue;
    }
    if (op.code == OpCode::kDbSize || op.code == OpCode::kFlushAll ||
        op.code == OpCode::kCollectKeys || op.code == OpCode::kHoldKeyspace) {
      batch.results[i] = run_keyless(op);
      continue;
    }
    if (op.code == OpCode::kReadKeys) {
      GroupKeyReader<RunKeyed> reader(run_keyed, state);
      batch.results[i] = op.read_keys(op, reader, state);
    } else {
      batch.results[i] = run_keyed(op, state);
    }
    if (GuardFailed(op, batch.results[i])) skip_until = i + 1 + op.guard_span;
  }
  if (group.log != nullptr) {
    group.log->AppendWith(
        std::span<const OpResult>(batch.results).subspan(group.first, group.count), now_ms, place);
  }
}

// Whether an engine built with `multikey` must hold the group's keys at once.
inline bool MustRunAtomically(const AtomicGroup& group, MultiKey multikey) {
  return multikey == MultiKey::kAtomic || group.needs_state;
}

}  // namespace kvlab
