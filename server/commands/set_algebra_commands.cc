// The multi-key set commands. Each queues its per-key steps as one atomic
// group, so the sets are read (and written) as of one instant on every
// engine:
//   SINTER, SUNION, SDIFF, SINTERCARD: one internal "setmembers" container
//     step per key; the answer is computed in the render
//     (engines/containers/set_algebra.h holds Redis's orders and encodings);
//   SINTERSTORE, SUNIONSTORE, SDIFFSTORE: one source step per key, then the
//     store step on the destination, which computes the result inside the
//     group and writes it there, so no client sees the destination between
//     the read and the write;
//   SMOVE: the source read, the destination's add, the source's removal.
// A key of another type is WRONGTYPE, checked on the sources before any
// write (a source step's error skips the steps after it).
#include <cassert>
#include <string_view>
#include <vector>

#include "engines/calls/container_call.h"
#include "engines/containers/set_algebra.h"
#include "engines/containers/set_value.h"
#include "engines/rules/redis_integer.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

// The members one "setmembers" step answered (views into its reply).
SetMembers MembersOf(const OpResult& result) {
  SetMembers members;
  if (result.kind != OpResult::Kind::kReply || !result.reply) return members;
  result.reply->ForEach([&](ReplyList::Item item, int64_t number, std::string_view bytes) {
    if (item == ReplyList::Item::kSet) members.reserve(static_cast<size_t>(number));
    if (item == ReplyList::Item::kBulk) members.push_back(bytes);
  });
  return members;
}

std::vector<SetMembers> SetsOf(std::span<const OpResult> results) {
  std::vector<SetMembers> sets;
  sets.reserve(results.size());
  for (const OpResult& result : results) sets.push_back(MembersOf(result));
  return sets;
}

// flags: the SetOperation.
void RenderSetAlgebra(const DeferredReply& deferred, std::span<const OpResult> results,
                      ReplyWriter& writer, ServerContext&) {
  const SetAlgebraResult answer =
      ComputeSetAlgebra(static_cast<SetOperation>(deferred.flags), SetsOf(results));
  writer.SetHeader(answer.members.size());  // a RESP3 set, as Redis's
  for (const std::string_view member : answer.members) writer.Bulk(member);
}

// flags: SINTERCARD's LIMIT (0: none).
void RenderInterCard(const DeferredReply& deferred, std::span<const OpResult> results,
                     ReplyWriter& writer, ServerContext&) {
  writer.Integer(IntersectionCardinality(SetsOf(results), deferred.flags));
}

const ContainerCommand* Step(std::string_view name) {
  const ContainerCommand* step = FindContainerCommand(name);
  assert(step != nullptr);
  return step;
}

// The arguments every "setmembers" step sees: its own name.
const std::vector<std::string_view>& MembersStepArgs() {
  static const std::vector<std::string_view> args = {kSetMembersStep};
  return args;
}

// One "setmembers" step per key of `keys`.
void QueueMembersSteps(CommandCall& call, std::span<const std::string_view> keys) {
  static const ContainerCommand* const step = Step(kSetMembersStep);
  for (const std::string_view key : keys) {
    Operation op = MakeOp(OpCode::kContainer, key);
    op.container_command = step;
    op.arg_pool = &MembersStepArgs();
    op.arg_first = 0;
    op.arg_count = 1;
    call.Add(op);
  }
}

// A group step on `key`, which sees the command's arguments; `guard_span`:
// how many steps after it its error skips.
void QueueGroupStep(CommandCall& call, std::string_view name, std::string_view key,
                    uint32_t guard_span = 0) {
  Operation op = MakeOp(OpCode::kContainer, key);
  op.container_command = Step(name);
  op.guard_span = guard_span;
  call.AddWithArgs(op);
}

template <SetOperation kOp>
void SetAlgebraCommand(CommandCall& call) {
  QueueMembersSteps(call, call.args.subspan(1));
  call.Defer(RenderSetAlgebra);
  call.deferred_reply().flags = static_cast<int64_t>(kOp);
  call.GroupQueued();
}

// SINTERSTORE, SUNIONSTORE, SDIFFSTORE destination key [key ...].
template <const std::string_view& kStoreStep>
void SetStoreCommand(CommandCall& call) {
  const size_t sources = call.args.size() - 2;
  for (size_t i = 0; i < sources; ++i) {
    // A source of another type skips the later sources and the store.
    QueueGroupStep(call, i == 0 ? kSetStoreFirstSourceStep : kSetStoreSourceStep, call.args[2 + i],
                   static_cast<uint32_t>(sources - i));
  }
  QueueGroupStep(call, kStoreStep, call.args[1]);
  call.Defer(RenderFirstErrorOr);
  call.deferred_reply().flags = static_cast<int64_t>(sources);
  call.GroupQueued();
}

// SINTERCARD numkeys key [key ...] [LIMIT limit] (sinterCardCommand()): the
// arguments are checked before any key is read.
void SetInterCardCommand(CommandCall& call) {
  const std::optional<int64_t> numkeys = ParseRedisInt64(call.args[1]);
  if (!numkeys || *numkeys <= 0) {
    call.reply().Error("ERR numkeys should be greater than 0");
    return;
  }
  const size_t after_numkeys = call.args.size() - 2;
  if (static_cast<uint64_t>(*numkeys) > after_numkeys) {
    call.reply().Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  const size_t key_end = 2 + static_cast<size_t>(*numkeys);
  int64_t limit = 0;
  for (size_t j = key_end; j < call.args.size(); ++j) {
    if (EqualsIgnoreCase(call.args[j], "limit") && j + 1 < call.args.size()) {
      const std::optional<int64_t> parsed = ParseRedisInt64(call.args[++j]);
      if (!parsed || *parsed < 0) {
        call.reply().Error("ERR LIMIT can't be negative");
        return;
      }
      limit = *parsed;
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  QueueMembersSteps(call, call.args.subspan(2, key_end - 2));
  call.Defer(RenderInterCard);
  call.deferred_reply().flags = limit;
  call.GroupQueued();
}

// SMOVE source destination member: the source step's WRONGTYPE skips the
// three others; the destination's skips the removal and the add. The
// reply is the destination step's.
void SetMoveCommand(CommandCall& call) {
  QueueGroupStep(call, kSetMoveSourceStep, call.args[1], 3);
  QueueGroupStep(call, kSetMoveDestinationStep, call.args[2], 2);
  QueueGroupStep(call, kSetMoveRemoveStep, call.args[1]);
  QueueGroupStep(call, kSetMoveAddStep, call.args[2]);
  call.Defer(RenderFirstErrorOr);
  call.deferred_reply().flags = 1;
  call.GroupQueued();
}

}  // namespace

void RegisterSetAlgebraCommands(CommandTable& table) {
  using F = CommandSpec;
  const KeyPositions all_keys = {.first = 1, .last = -1, .step = 1};
  table.Add({.name = "sinter",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = SetAlgebraCommand<SetOperation::kInter>,
             .keys = all_keys,
             .group = "set",
             .summary = "Intersect multiple sets"});
  table.Add({.name = "sunion",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = SetAlgebraCommand<SetOperation::kUnion>,
             .keys = all_keys,
             .group = "set",
             .summary = "Add multiple sets"});
  table.Add({.name = "sdiff",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = SetAlgebraCommand<SetOperation::kDiff>,
             .keys = all_keys,
             .group = "set",
             .summary = "Subtract multiple sets"});
  // Its keys follow numkeys: COMMAND INFO's legacy range cannot say where.
  table.Add({.name = "sintercard",
             .arity = -3,
             .flags = F::kReadOnly,
             .handler = SetInterCardCommand,
             .group = "set",
             .summary = "Intersect multiple sets and return the cardinality of the result"});
  table.Add({.name = "sinterstore",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetStoreCommand<kSetInterStoreStep>,
             .keys = all_keys,
             .group = "set",
             .summary = "Intersect multiple sets and store the resulting set in a key"});
  table.Add({.name = "sunionstore",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetStoreCommand<kSetUnionStoreStep>,
             .keys = all_keys,
             .group = "set",
             .summary = "Add multiple sets and store the resulting set in a key"});
  table.Add({.name = "sdiffstore",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetStoreCommand<kSetDiffStoreStep>,
             .keys = all_keys,
             .group = "set",
             .summary = "Subtract multiple sets and store the resulting set in a key"});
  table.Add({.name = "smove",
             .arity = 4,
             .flags = F::kWrite | F::kFast,
             .handler = SetMoveCommand,
             .keys = {.first = 1, .last = 2, .step = 1},
             .group = "set",
             .summary = "Move a member from one set to another"});
}

}  // namespace kvlab
