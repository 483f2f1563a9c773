// PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST in the server's table. PFADD,
// PFCOUNT of one key and PFDEBUG queue the engines' string command
// (engines/calls/hll_calls.h) with the command's arguments. PFCOUNT of
// several keys and PFMERGE queue one step per key as one atomic group, so
// that every key is read (and PFMERGE's destination written) as one step on
// every engine. PFSELFTEST touches no key: it runs here, on the connection's
// thread, as redis-server runs it on its one thread.
#include <random>
#include <vector>

#include "engines/calls/hll_calls.h"
#include "engines/calls/string_call.h"
#include "engines/rules/hyperloglog.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/commands/string_steps.h"

namespace kvlab {

namespace {

void QueueWhole(CommandCall& call, std::string_view name, std::string_view key) {
  Operation op;
  op.code = OpCode::kString;
  op.key = key;
  op.string_command = NamedStringCommand(name);
  call.AddWithArgs(op);
  call.Defer(RenderFirstErrorOr);
}

// A group's reply: its first error (a source that is no HLL skips the
// steps after it), else its last step's.
void DeferGroupReply(CommandCall& call, size_t steps) {
  call.Defer(RenderFirstErrorOr);
  call.deferred_reply().flags = static_cast<int64_t>(steps - 1);
  call.GroupQueued();
}

void Pfadd(CommandCall& call) { QueueWhole(call, "pfadd", call.args[1]); }

void Pfcount(CommandCall& call) {
  if (call.args.size() == 2) {
    QueueWhole(call, "pfcount", call.args[1]);
    return;
  }
  const size_t keys = call.args.size() - 1;
  for (size_t i = 0; i < keys; ++i) {
    const bool last = i + 1 == keys;
    call.Add(StringStep<kPfcountSource>(call.args[1 + i], last ? 1 : 0,
                                        static_cast<uint32_t>(keys - 1 - i)));
  }
  DeferGroupReply(call, keys);
}

// PFMERGE dest [source ...]: the destination is read as the first source.
void Pfmerge(CommandCall& call) {
  const size_t keys = call.args.size() - 1;
  for (size_t i = 0; i < keys; ++i) {
    call.Add(StringStep<kPfmergeSource>(call.args[1 + i], 0, static_cast<uint32_t>(keys - i)));
  }
  call.Add(StringStep<kPfmergeStore>(call.args[1], 0));
  DeferGroupReply(call, keys + 1);
}

void Pfdebug(CommandCall& call) { QueueWhole(call, "pfdebug", call.args[2]); }

void Pfselftest(CommandCall& call) {
  const std::string failure = HllSelfTest(std::random_device{}());
  if (failure.empty()) {
    call.reply().Ok();
  } else {
    call.reply().Error(failure);
  }
}

}  // namespace

void RegisterHllCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "pfadd",
             .arity = -2,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Pfadd,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "hyperloglog",
             .summary = "Adds the specified elements to the specified HyperLogLog."});
  table.Add({.name = "pfcount",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = Pfcount,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "hyperloglog",
             .summary = "Return the approximated cardinality of the set(s) observed by the "
                        "HyperLogLog at key(s)."});
  table.Add({.name = "pfmerge",
             .arity = -2,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Pfmerge,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "hyperloglog",
             .summary = "Merge N different HyperLogLogs into a single one."});
  table.Add({.name = "pfdebug",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Pfdebug,
             .keys = {.first = 2, .last = 2, .step = 1},
             .group = "hyperloglog",
             .summary = "Internal commands for debugging HyperLogLog values"});
  table.Add({.name = "pfselftest",
             .arity = 1,
             .flags = F::kNone,
             .handler = Pfselftest,
             .group = "hyperloglog",
             .summary = "An internal command for testing HyperLogLog values"});
}

}  // namespace kvlab
