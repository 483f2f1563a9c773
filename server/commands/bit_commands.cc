// SETBIT GETBIT BITCOUNT BITPOS BITFIELD BITFIELD_RO BITOP in the server's
// table. Each queues the engines' string command (engines/calls/bit_calls.h)
// with the command's arguments, where every engine runs it; BITFIELD with
// no SET or INCRBY is queued as a read. BITOP queues one step per source
// and one for the destination as one atomic group, so the sources are read
// and the destination written as one step on every engine.

#include "engines/rules/bit_arithmetic.h"
#include "engines/calls/bit_calls.h"
#include "engines/calls/string_call.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/commands/string_steps.h"

namespace kvlab {

namespace {

void RenderBitCommand(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                      ServerContext&) {
  // BITOP's reply is its store step's, the last; a single command has one.
  RenderContainerResult(results.back(), writer);
}

void Queue(CommandCall& call, const StringCommand* command) {
  Operation op;
  op.code = OpCode::kString;
  op.key = call.args[1];
  op.string_command = command;
  call.AddWithArgs(op);
  call.Defer(RenderBitCommand);
}

void SetBit(CommandCall& call) { Queue(call, NamedStringCommand("setbit")); }
void GetBit(CommandCall& call) { Queue(call, NamedStringCommand("getbit")); }
void BitCount(CommandCall& call) { Queue(call, NamedStringCommand("bitcount")); }
void BitPos(CommandCall& call) { Queue(call, NamedStringCommand("bitpos")); }
void BitfieldReadOnly(CommandCall& call) { Queue(call, NamedStringCommand(kBitfieldReadOnly)); }

// Redis reads the key of a BITFIELD without SET or INCRBY; such a command
// answers exactly as BITFIELD_RO does, so it runs as that read.
void Bitfield(CommandCall& call) {
  bool writes = false;
  for (size_t i = 2; i < call.args.size(); ++i) {
    writes |= EqualsIgnoreCase(call.args[i], "set") || EqualsIgnoreCase(call.args[i], "incrby");
  }
  Queue(call, NamedStringCommand(writes ? "bitfield" : kBitfieldReadOnly));
}

void Bitop(CommandCall& call) {
  BitOperator op;
  if (EqualsIgnoreCase(call.args[1], "and")) {
    op = BitOperator::kAnd;
  } else if (EqualsIgnoreCase(call.args[1], "or")) {
    op = BitOperator::kOr;
  } else if (EqualsIgnoreCase(call.args[1], "xor")) {
    op = BitOperator::kXor;
  } else if (EqualsIgnoreCase(call.args[1], "not")) {
    op = BitOperator::kNot;
  } else {
    call.reply().Error(kSyntaxError);
    return;
  }
  if (op == BitOperator::kNot && call.args.size() != 4) {
    call.reply().Error("ERR BITOP NOT must be called with a single source key.");
    return;
  }
  const size_t sources = call.args.size() - 3;
  for (size_t i = 0; i < sources; ++i) {
    Operation step = i == 0 ? StringStep<kBitopFirstSource>(call.args[3], static_cast<int64_t>(op))
                            : StringStep<kBitopSource>(call.args[3 + i], static_cast<int64_t>(op));
    // A source of another type skips the rest: the later sources and the store.
    step.guard_span = static_cast<uint32_t>(sources - i);
    call.Add(step);
  }
  call.Add(StringStep<kBitopStore>(call.args[2], static_cast<int64_t>(op)));
  call.Defer(RenderBitCommand);
  call.GroupQueued();
}

}  // namespace

void RegisterBitCommands(CommandTable& table) {
  using F = CommandSpec;
  const KeyPositions first_key = {.first = 1, .last = 1, .step = 1};
  table.Add({.name = "setbit",
             .arity = 4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetBit,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Sets or clears the bit at offset in the string value stored at key"});
  table.Add({.name = "getbit",
             .arity = 3,
             .flags = F::kReadOnly | F::kFast,
             .handler = GetBit,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Returns the bit value at offset in the string value stored at key"});
  table.Add({.name = "bitcount",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = BitCount,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Count set bits in a string"});
  table.Add({.name = "bitpos",
             .arity = -3,
             .flags = F::kReadOnly,
             .handler = BitPos,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Find first bit set or clear in a string"});
  table.Add({.name = "bitfield",
             .arity = -2,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Bitfield,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Perform arbitrary bitfield integer operations on strings"});
  table.Add({.name = "bitfield_ro",
             .arity = -2,
             .flags = F::kReadOnly | F::kFast,
             .handler = BitfieldReadOnly,
             .keys = first_key,
             .group = "bitmap",
             .summary = "Perform arbitrary bitfield integer operations on strings. Read-only "
                        "variant of BITFIELD"});
  table.Add({.name = "bitop",
             .arity = -4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Bitop,
             .keys = {.first = 2, .last = -1, .step = 1},
             .group = "bitmap",
             .summary = "Perform bitwise operations between strings"});
}

}  // namespace kvlab
