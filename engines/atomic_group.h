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
#include "engines/engine.h"
#include "engines/operation.h"
#include "engines/string_call.h"

namespace kvlab {

// What one group's operations pass along to each other while it runs.
struct GroupState {
  bool carried = false;        // kLoadCarry found its key
  std::string value;           // the carried string
  std::unique_ptr<Container> container;  // or the carried container
  int64_t expire_at_ms = 0;    // and its expiry
  std::string bit_result;      // BITOP: its sources folded so far
};

// Guards, carries and string-command group steps need a GroupState;
// nothing else does.
inline bool NeedsGroupState(const Operation& op) {
  if (op.code == OpCode::kString) return (op.string_command->flags & kStringGroupStep) != 0;
  return op.code == OpCode::kRequireAbsent || op.code == OpCode::kLoadCarry ||
         op.code == OpCode::kStoreCarry;
}

// Whether a guard's result says the rest of its command must not run. A
// string step with a guard span guards with its error (BITOP: a source of
// another type stops the store).
inline bool GuardFailed(const Operation& op, const OpResult& result) {
  if (op.code == OpCode::kRequireAbsent) return result.integer != 0;
  if (op.code == OpCode::kLoadCarry) return result.integer == 0;
  if (op.code == OpCode::kString) return result.kind == OpResult::Kind::kError;
  return false;
}

// Runs batch.ops of `group` in order. run_keyed(op, GroupState&) -> OpResult
// runs one keyed operation, run_keyless(op) -> OpResult one keyless one.
template <typename RunKeyed, typename RunKeyless>
void RunGroupOps(Batch& batch, AtomicGroup& group, RunKeyed&& run_keyed,
                 RunKeyless&& run_keyless) {
  const uint32_t end = group.first + group.count;
  if (group.abort_if != nullptr && group.abort_if->load(std::memory_order_acquire)) {
    group.aborted = true;
    for (uint32_t i = group.first; i < end; ++i) batch.results[i] = OpResult::Nil();
    return;
  }
  GroupState state;
  uint32_t skip_until = group.first;
  for (uint32_t i = group.first; i < end; ++i) {
    const Operation& op = batch.ops[i];
    if (i < skip_until) {
      batch.results[i] = OpResult::Nil();
      continue;
    }
    if (op.code == OpCode::kDbSize || op.code == OpCode::kFlushAll ||
        op.code == OpCode::kCollectKeys) {
      batch.results[i] = run_keyless(op);
      continue;
    }
    batch.results[i] = run_keyed(op, state);
    if (GuardFailed(op, batch.results[i])) skip_until = i + 1 + op.guard_span;
  }
}

// Whether an engine built with `multikey` must hold the group's keys at once.
inline bool MustRunAtomically(const AtomicGroup& group, MultiKey multikey) {
  return multikey == MultiKey::kAtomic || group.needs_state;
}

}  // namespace kvlab
