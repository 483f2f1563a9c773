// The list commands that touch several keys: LMOVE, RPOPLPUSH and LMPOP.
// Each queues one atomic group, so the pop and the push (or the keys'
// looks) happen as one step on every engine:
//   LMOVE, RPOPLPUSH: the source read, the destination's push, the
//     source's pop (engines/calls/list_calls.cc);
//   LMPOP: one pop step per key, the first that answers stops the rest
//     (multi_pop.cc, shared with ZMPOP).
#include <string_view>

#include "engines/calls/container_call.h"
#include "engines/containers/list_value.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

// A group step on `key`, which sees the command's arguments; `guard_span`:
// how many steps after it its error skips.
void QueueMoveStep(CommandCall& call, std::string_view name, std::string_view key,
                   uint32_t guard_span) {
  Operation op = MakeOp(OpCode::kContainer, key);
  op.container_command = FindContainerCommand(name);
  op.guard_span = guard_span;
  call.AddWithArgs(op);
}

}  // namespace

// The source step's WRONGTYPE skips both others, the destination's the
// pop; the reply is the destination step's (the element, or nil).
void QueueListMove(CommandCall& call) {
  QueueMoveStep(call, kListMoveSourceStep, call.args[1], 2);
  QueueMoveStep(call, kListMoveDestinationStep, call.args[2], 1);
  QueueMoveStep(call, kListMoveRemoveStep, call.args[1], 0);
  call.Defer(RenderFirstErrorOr);
  call.deferred_reply().flags = 1;
  call.GroupQueued();
}

bool IsListEnd(std::string_view arg) {
  return EqualsIgnoreCase(arg, "left") || EqualsIgnoreCase(arg, "right");
}

namespace {

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT: both ends are checked
// before any key is looked at (lmoveCommand()).
void LMove(CommandCall& call) {
  if (!IsListEnd(call.args[3]) || !IsListEnd(call.args[4])) {
    call.reply().Error(kSyntaxError);
    return;
  }
  QueueListMove(call);
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] (lmpopGenericCommand()).
void LMPop(CommandCall& call) { QueueMultiPop(call, kListMPopStep, "left", "right"); }

}  // namespace

void RegisterListMoveCommands(CommandTable& table) {
  using F = CommandSpec;
  const KeyPositions source_and_destination = {.first = 1, .last = 2, .step = 1};
  table.Add({.name = "lmove",
             .arity = 5,
             .flags = F::kWrite | F::kDenyOom,
             .handler = LMove,
             .keys = source_and_destination,
             .group = "list",
             .summary = "Pop an element from a list, push it to another list and return it"});
  table.Add({.name = "rpoplpush",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = QueueListMove,
             .keys = source_and_destination,
             .group = "list",
             .summary = "Remove the last element in a list, prepend it to another list and "
                        "return it"});
  // Its keys follow numkeys: COMMAND INFO's legacy range cannot say where.
  table.Add({.name = "lmpop",
             .arity = -4,
             .flags = F::kWrite,
             .handler = LMPop,
             .group = "list",
             .summary = "Pop elements from a list"});
}

}  // namespace kvlab
