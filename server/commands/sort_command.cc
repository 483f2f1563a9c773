// SORT and SORT_RO. The handler parses the options (an error is answered at
// once, before the key is read, as in Redis) and queues one atomic group:
//   [kHoldKeyspace]  when BY or GET patterns may read other keys
//   kReadKeys        the sort itself (engines/calls/sort_read.h)
//   [kStoreCarry]    STORE: the destination, skipped if the sort failed
// Why a whole-keyspace group for patterns: the keys they name are known
// only once the sorted value has been read, inside the group, so no engine
// could take just those keys in its global order beforehand. Every engine
// already holds the whole keyspace for a group with a keyless operation
// (KEYS inside MULTI): one thread (single), every stripe in order
// (striped), the closed table gate (concurrent), every shard or owner at
// the group's barrier (sharded, owner). Without patterns the group holds
// only the sorted key and STORE's destination, like RENAME.
//
// Cluster mode: Redis refuses BY/GET patterns when cluster-enabled; kvlab
// is never cluster-enabled (CONFIG GET cluster-enabled is "no" even on
// --shard-ports, which keeps multi-key commands atomic across owners
// instead of answering CROSSSLOT), so patterns are served everywhere.
#include "engines/calls/sort_options.h"
#include "engines/calls/sort_read.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

// flags: the index of the kReadKeys operation among the command's results.
void RenderSort(const DeferredReply& deferred, std::span<const OpResult> results,
                ReplyWriter& writer, ServerContext&) {
  RenderContainerResult(results[static_cast<size_t>(deferred.flags)], writer);
}

template <bool kReadOnly>
void SortCommand(CommandCall& call) {
  SortOptions options;
  if (const std::optional<std::string_view> error =
          ParseSortOptions(call.args, kReadOnly, &options)) {
    call.reply().Error(*error);
    return;
  }
  int64_t read_index = 0;
  if (options.ReadsOtherKeys()) {
    call.Add(MakeOp(OpCode::kHoldKeyspace, {}));
    read_index = 1;
  }
  Operation read = MakeOp(OpCode::kReadKeys, call.args[1], {}, kReadOnly ? 1 : 0);
  read.read_keys = ReadSorted;
  read.guard_span = options.store ? 1 : 0;
  call.AddWithArgs(read);
  if (options.store) call.Add(MakeOp(OpCode::kStoreCarry, *options.store, "sortstore"));
  call.Defer(RenderSort);
  call.deferred_reply().flags = read_index;
  call.GroupQueued();
}

}  // namespace

void RegisterSortCommands(CommandTable& table) {
  using F = CommandSpec;
  // Both take the sorted key first; SORT may write (STORE), so Redis marks
  // it write and denyoom even when it only reads.
  auto add = [&](std::string name, uint32_t flags, CommandHandler handler, std::string summary) {
    table.Add({.name = std::move(name),
               .arity = -2,
               .flags = flags,
               .handler = handler,
               .keys = {.first = 1, .last = 1, .step = 1},
               .group = "generic",
               .summary = std::move(summary)});
  };
  add("sort", F::kWrite | F::kDenyOom, SortCommand<false>,
      "Sort the elements in a list, set or sorted set");
  add("sort_ro", F::kReadOnly, SortCommand<true>,
      "Sort the elements in a list, set or sorted set. Read-only variant of SORT.");
}

}  // namespace kvlab
