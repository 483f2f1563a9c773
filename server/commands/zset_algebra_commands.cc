// The multi-key sorted-set commands: ZUNION ZINTER ZDIFF ZINTERCARD,
// ZUNIONSTORE ZINTERSTORE ZDIFFSTORE, ZRANGESTORE and ZMPOP. Each checks
// numkeys at once (Redis answers those errors before reading a key), then
// queues one atomic group whose steps read every key and compute — and
// store — the result inside the group (engines/calls/zset_algebra.h),
// never at render time, so a concurrent writer can never slip between the
// read and the store on any engine:
//   ZUNION..ZDIFFSTORE  one read step per source, [kStoreCarry destination]
//   ZRANGESTORE         the range step on the source, kStoreCarry destination
//   ZMPOP               one pop step per key; the first that answers stops
//                       the rest (a guard), as genericZpopCommand()'s loop
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/calls/container_call.h"
#include "engines/calls/zset_algebra.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

// numkeys at args[index], as zunionInterDiffGenericCommand() checks it;
// nullopt when it answered an error.
std::optional<size_t> ParseNumKeys(CommandCall& call, size_t index, std::string_view name) {
  const std::optional<int64_t> numkeys = ParseRedisInt64(call.args[index]);
  if (!numkeys) {
    call.reply().Error(kNotIntegerError);
    return std::nullopt;
  }
  if (*numkeys < 1) {
    std::string lower(name);  // the table's spelling, whatever the client's
    for (char& c : lower) c = AsciiLower(c);
    call.reply().Error("ERR at least 1 input key is needed for '" + lower + "' command");
    return std::nullopt;
  }
  if (*numkeys > static_cast<int64_t>(call.args.size() - index - 1)) {
    call.reply().Error(kSyntaxError);
    return std::nullopt;
  }
  return static_cast<size_t>(*numkeys);
}

template <ZSetAlgebra kAlgebra, bool kStore>
void ZSetAlgebraCommand(CommandCall& call) {
  constexpr size_t kNumKeysIndex = kStore ? 2 : 1;
  const std::optional<size_t> numkeys = ParseNumKeys(call, kNumKeysIndex, call.args[0]);
  if (!numkeys) return;
  Operation read =
      MakeOp(OpCode::kReadKeys, call.args[kNumKeysIndex + 1], {}, static_cast<int64_t>(kAlgebra));
  read.read_keys = ReadZSetAlgebraSource;
  const size_t steps = *numkeys + (kStore ? 1 : 0);
  for (size_t i = 0; i < *numkeys; ++i) {
    read.key = call.args[kNumKeysIndex + 1 + i];
    read.integer2 =
        ZSetAlgebraStep{.numkeys_index = kNumKeysIndex, .first_source = i == 0}.Encode();
    // A WRONGTYPE source, or the last one's error, skips what follows.
    read.guard_span = static_cast<uint32_t>(steps - i - 1);
    if (i == 0) {
      call.AddWithArgs(read);
    } else {
      call.AddWithSharedArgs(read);
    }
  }
  if (kStore) {
    // The keyspace event the store raises (keyspace_events.h).
    constexpr std::string_view kEvent = kAlgebra == ZSetAlgebra::kUnion   ? "zunionstore"
                                        : kAlgebra == ZSetAlgebra::kInter ? "zinterstore"
                                                                          : "zdiffstore";
    call.Add(MakeOp(OpCode::kStoreCarry, call.args[1], kEvent));
  }
  call.Defer(RenderFirstErrorOr);
  call.deferred_reply().flags = static_cast<int64_t>(*numkeys - 1);
  call.GroupQueued();
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count].
void ZRangeStore(CommandCall& call) {
  Operation range = MakeOp(OpCode::kReadKeys, call.args[2]);
  range.read_keys = ReadZRangeStore;
  range.guard_span = 1;
  call.AddWithArgs(range);
  call.Add(MakeOp(OpCode::kStoreCarry, call.args[1], "zrangestore"));
  call.Defer(RenderFirstErrorOr);
  call.GroupQueued();
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] (zmpopGenericCommand()).
void ZMPop(CommandCall& call) { QueueMultiPop(call, kZMPopStep, "min", "max"); }

}  // namespace

void RegisterZSetAlgebraCommands(CommandTable& table) {
  using F = CommandSpec;
  auto add = [&](std::string name, int arity, uint32_t flags, CommandHandler handler,
                 KeyPositions keys, std::string summary) {
    table.Add({.name = std::move(name),
               .arity = arity,
               .flags = flags,
               .handler = handler,
               .keys = keys,
               .group = "sorted_set",
               .summary = std::move(summary)});
  };
  // Key positions as Redis 7.0's COMMAND INFO gives them (its "movablekeys"
  // commands: the destination only, or none).
  const KeyPositions destination = {.first = 1, .last = 1, .step = 1};
  const F::Flags store = static_cast<F::Flags>(F::kWrite | F::kDenyOom);
  add("zunion", -3, F::kReadOnly, ZSetAlgebraCommand<ZSetAlgebra::kUnion, false>, {},
      "Add multiple sorted sets");
  add("zinter", -3, F::kReadOnly, ZSetAlgebraCommand<ZSetAlgebra::kInter, false>, {},
      "Intersect multiple sorted sets");
  add("zdiff", -3, F::kReadOnly, ZSetAlgebraCommand<ZSetAlgebra::kDiff, false>, {},
      "Subtract multiple sorted sets");
  add("zintercard", -3, F::kReadOnly, ZSetAlgebraCommand<ZSetAlgebra::kInterCard, false>, {},
      "Intersect multiple sorted sets and return the cardinality of the result");
  add("zunionstore", -4, store, ZSetAlgebraCommand<ZSetAlgebra::kUnion, true>, destination,
      "Add multiple sorted sets and store the resulting sorted set in a new key");
  add("zinterstore", -4, store, ZSetAlgebraCommand<ZSetAlgebra::kInter, true>, destination,
      "Intersect multiple sorted sets and store the resulting sorted set in a new key");
  add("zdiffstore", -4, store, ZSetAlgebraCommand<ZSetAlgebra::kDiff, true>, destination,
      "Subtract multiple sorted sets and store the resulting sorted set in a new key");
  add("zrangestore", -5, store, ZRangeStore, {.first = 1, .last = 2, .step = 1},
      "Store a range of members from sorted set into another key");
  add("zmpop", -4, F::kWrite, ZMPop, {}, "Remove and return members with scores in a sorted set");
}

}  // namespace kvlab
