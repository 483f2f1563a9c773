// The blocking list and sorted-set commands (Redis 7.0's t_list.c,
// t_zset.c, blocked.c): BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH,
// BZPOPMIN, BZPOPMAX, BZMPOP. Each parses its arguments in Redis's order,
// then looks at its keys once through its non-blocking twin; if that finds
// nothing outside EXEC, the Session blocks the client and looks again
// whenever the registry hands it a key (blocking_command.h).
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/containers/list_value.h"
#include "engines/calls/zset_algebra.h"
#include "engines/rules/redis_float.h"
#include "server/blocking_command.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

using Kind = BlockingCommand::Kind;

bool IsZSet(Kind kind) { return kind == Kind::kZPop || kind == Kind::kZMultiPop; }

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = AsciiLower(c);
  return lower;
}

// The look's reply (the twin's results, in the blocking command's shape).
void RenderBlocking(const DeferredReply& deferred, std::span<const OpResult> results,
                    ReplyWriter& writer, ServerContext&) {
  const auto& command = *static_cast<const BlockingCommand*>(deferred.state);
  for (const OpResult& result : results) {
    if (result.kind == OpResult::Kind::kError) return RenderContainerResult(result, writer);
  }
  if (command.kind == Kind::kMove) {
    if (results[1].kind == OpResult::Kind::kBulk) return writer.Bulk(results[1].bulk);
    // Inside EXEC: lmove's nil (blmoveGenericCommand()); a Session that
    // cannot block (no connection) answers as on a timeout.
    if (command.in_exec) return writer.Nil();
    return WriteBlockingTimeout(command, writer);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const OpResult& result = results[i];
    if (result.kind != OpResult::Kind::kReply) continue;
    const std::string& key = command.attempt_keys[i];
    if (command.kind == Kind::kMultiPop || command.kind == Kind::kZMultiPop) {
      writer.ArrayHeader(2);
      writer.Bulk(key);
      return RenderContainerResult(result, writer);
    }
    // One element: [key, element] or [key, member, score], flat.
    writer.ArrayHeader(command.kind == Kind::kZPop ? 3 : 2);
    writer.Bulk(key);
    result.reply->ForEach([&](ReplyList::Item item, int64_t number, std::string_view bytes) {
      if (item == ReplyList::Item::kBulk) writer.Bulk(bytes);
      if (item == ReplyList::Item::kDouble) writer.Double(ReplyList::DoubleOf(number));
    });
    return;
  }
  writer.NilArray();  // inside EXEC: nothing to pop is a timeout
}

// getTimeoutFromObjectOrReply() in seconds: the deadline, nullopt for 0
// (forever), or an error replied.
bool ParseTimeout(CommandCall& call, std::string_view arg,
                  std::optional<BlockingRegistry::Clock::time_point>* deadline) {
  const std::optional<long double> seconds = ParseRedisLongDouble(arg);
  if (!seconds) {
    call.reply().Error("ERR timeout is not a float or out of range");
    return false;
  }
  const long double ms = std::ceil(*seconds * 1000.0L);
  // Redis casts to long long: what does not fit becomes LLONG_MIN on x86.
  if (!(ms < 9.2e18L) || ms < 0) {
    call.reply().Error("ERR timeout is negative");
    return false;
  }
  deadline->reset();
  // Beyond a century is forever for any client.
  if (ms > 0 && ms < 3.2e12L) {
    *deadline =
        BlockingRegistry::Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(ms));
  }
  return true;
}

// Queues the first look; the Session blocks the client if it answers
// nothing, except inside EXEC (CLIENT_DENY_BLOCKING).
void Start(CommandCall& call, std::shared_ptr<BlockingCommand> command) {
  QueueBlockingAttempt(call, *command, command->keys);
  command->in_exec = call.in_exec();
  if (!command->in_exec) call.client.may_block = command;
  call.KeepForRender(std::move(command));
}

// BLPOP|BRPOP|BZPOPMIN|BZPOPMAX key [key ...] timeout
template <Kind kKind, const std::string_view& kEnd>
void BPop(CommandCall& call) {
  auto command = std::make_shared<BlockingCommand>();
  if (!ParseTimeout(call, call.args.back(), &command->deadline)) return;
  command->kind = kKind;
  command->end = kEnd;
  command->keys.assign(call.args.begin() + 1, call.args.end() - 1);
  Start(call, std::move(command));
}
constexpr std::string_view kLeft = "left", kRight = "right", kMin = "min", kMax = "max";

// BLMPOP|BZMPOP timeout numkeys key [key ...] where [COUNT count]: the
// twin's checks first, then the timeout (lmpopGenericCommand()).
void BMultiPop(CommandCall& call, Kind kind, std::string_view twin, std::string_view first_end,
               std::string_view second_end) {
  std::vector<std::string_view> twin_args(call.args.begin() + 1, call.args.end());
  twin_args[0] = twin;
  CommandCall check = call.WithArgs(twin_args);
  const std::optional<size_t> numkeys = ParseMultiPop(check, first_end, second_end);
  if (!numkeys) return;
  auto command = std::make_shared<BlockingCommand>();
  if (!ParseTimeout(call, call.args[1], &command->deadline)) return;
  command->kind = kind;
  command->keys.assign(twin_args.begin() + 2, twin_args.begin() + 2 + *numkeys);
  command->end = Lower(twin_args[2 + *numkeys]);
  if (twin_args.size() > 4 + *numkeys) command->count = std::string(twin_args[4 + *numkeys]);
  Start(call, std::move(command));
}

void BLMPop(CommandCall& call) { BMultiPop(call, Kind::kMultiPop, "lmpop", "left", "right"); }
void BZMPop(CommandCall& call) { BMultiPop(call, Kind::kZMultiPop, "zmpop", "min", "max"); }

void StartMove(CommandCall& call, std::string_view from, std::string_view to,
               std::string_view timeout) {
  auto command = std::make_shared<BlockingCommand>();
  if (!ParseTimeout(call, timeout, &command->deadline)) return;
  command->kind = Kind::kMove;
  command->keys.emplace_back(call.args[1]);
  command->destination = std::string(call.args[2]);
  command->end = Lower(from);
  command->to = Lower(to);
  Start(call, std::move(command));
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
void BLMove(CommandCall& call) {
  if (!IsListEnd(call.args[3]) || !IsListEnd(call.args[4])) {
    call.reply().Error(kSyntaxError);
    return;
  }
  StartMove(call, call.args[3], call.args[4], call.args[5]);
}

// BRPOPLPUSH source destination timeout
void BRPopLPush(CommandCall& call) { StartMove(call, "right", "left", call.args[3]); }

}  // namespace

void QueueBlockingAttempt(CommandCall& call, BlockingCommand& command,
                          std::span<const std::string> keys) {
  command.attempt_keys.assign(keys.begin(), keys.end());
  std::vector<std::string>& args = command.attempt;
  args.clear();
  if (command.kind == Kind::kMove) {
    args = {"lmove", keys[0], command.destination, command.end, command.to};
  } else {
    args.emplace_back(IsZSet(command.kind) ? "zmpop" : "lmpop");
    args.push_back(std::to_string(keys.size()));
    args.insert(args.end(), keys.begin(), keys.end());
    args.insert(args.end(), {command.end, "count", command.count});
  }
  const std::vector<std::string_view> views(args.begin(), args.end());
  CommandCall twin = call.WithArgs(views);
  if (command.kind == Kind::kMove) {
    QueueListMove(twin);
  } else {
    QueueMultiPopSteps(twin, IsZSet(command.kind) ? kZMPopStep : kListMPopStep, keys.size());
  }
  call.Adopt(twin);
  call.Defer(RenderBlocking);
  call.deferred_reply().state = &command;
}

bool AttemptAnswers(const BlockingCommand& command, std::span<const OpResult> results, bool retry) {
  // The source's steps come first; on a retry its WRONGTYPE answers nothing.
  const size_t source_steps = command.kind == Kind::kMove ? 1 : results.size();
  for (size_t i = 0; i < results.size(); ++i) {
    const OpResult& result = results[i];
    if (result.kind == OpResult::Kind::kError) {
      return !(retry && i < source_steps && result.error == EngineError::kWrongType);
    }
    if (result.kind == OpResult::Kind::kReply) return true;
    if (command.kind == Kind::kMove && i == 1) return result.kind == OpResult::Kind::kBulk;
  }
  return false;
}

void WriteBlockingTimeout(const BlockingCommand&, ReplyWriter& writer) {
  writer.NilArray();  // replyToBlockedClientTimedOut(): every kind
}

void RegisterBlockingCommands(CommandTable& table) {
  using F = CommandSpec;
  const uint32_t flags = F::kWrite | F::kBlocking;
  const KeyPositions all_but_timeout = {.first = 1, .last = -2, .step = 1};
  const KeyPositions source_and_destination = {.first = 1, .last = 2, .step = 1};
  table.Add({.name = "blpop",
             .arity = -3,
             .flags = flags,
             .handler = BPop<Kind::kPop, kLeft>,
             .keys = all_but_timeout,
             .group = "list",
             .summary = "Remove and get the first element in a list, or block until one is "
                        "available"});
  table.Add({.name = "brpop",
             .arity = -3,
             .flags = flags,
             .handler = BPop<Kind::kPop, kRight>,
             .keys = all_but_timeout,
             .group = "list",
             .summary = "Remove and get the last element in a list, or block until one is "
                        "available"});
  table.Add({.name = "blmpop",
             .arity = -5,
             .flags = flags,
             .handler = BLMPop,
             .group = "list",
             .summary = "Pop elements from a list, or block until one is available"});
  table.Add({.name = "blmove",
             .arity = 6,
             .flags = flags | F::kDenyOom,
             .handler = BLMove,
             .keys = source_and_destination,
             .group = "list",
             .summary = "Pop an element from a list, push it to another list and return it; or "
                        "block until one is available"});
  table.Add({.name = "brpoplpush",
             .arity = 4,
             .flags = flags | F::kDenyOom,
             .handler = BRPopLPush,
             .keys = source_and_destination,
             .group = "list",
             .summary = "Pop an element from a list, push it to another list and return it; or "
                        "block until one is available"});
  table.Add({.name = "bzpopmin",
             .arity = -3,
             .flags = flags | F::kFast,
             .handler = BPop<Kind::kZPop, kMin>,
             .keys = all_but_timeout,
             .group = "sorted-set",
             .summary = "Remove and return the member with the lowest score from one or more "
                        "sorted sets, or block until one is available"});
  table.Add({.name = "bzpopmax",
             .arity = -3,
             .flags = flags | F::kFast,
             .handler = BPop<Kind::kZPop, kMax>,
             .keys = all_but_timeout,
             .group = "sorted-set",
             .summary = "Remove and return the member with the highest score from one or more "
                        "sorted sets, or block until one is available"});
  table.Add({.name = "bzmpop",
             .arity = -5,
             .flags = flags,
             .handler = BZMPop,
             .group = "sorted-set",
             .summary = "Remove and return members with scores in a sorted set or block until "
                        "one is available"});
}

}  // namespace kvlab
