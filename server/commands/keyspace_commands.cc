// Keyspace commands: DEL EXISTS EXPIRE PEXPIRE TTL PTTL PERSIST DBSIZE
// FLUSHDB FLUSHALL, with Redis 7.0's replies (db.c and expire.c).
#include <climits>

#include "engines/clock.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

enum ExpireFlag : int64_t { kExpireNx = 1, kExpireXx = 2, kExpireGt = 4, kExpireLt = 8 };

void RenderSum(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
               ServerContext&) {
  int64_t sum = 0;
  for (const OpResult& result : results) sum += result.integer;
  writer.Integer(sum);
}

// TTL rounds the milliseconds left to the nearest second, as ttlGenericCommand.
void RenderTtlSeconds(const DeferredReply&, std::span<const OpResult> results,
                      ReplyWriter& writer, ServerContext&) {
  int64_t ms = results[0].integer;
  writer.Integer(ms < 0 ? ms : (ms + 500) / 1000);
}

void AddPerKey(CommandCall& call, OpCode code) {
  for (size_t i = 1; i < call.args.size(); ++i) call.Add(MakeOp(code, call.args[i]));
}

void Del(CommandCall& call) {
  AddPerKey(call, OpCode::kDel);
  call.Defer(RenderSum);
}

void Exists(CommandCall& call) {
  AddPerKey(call, OpCode::kExists);
  call.Defer(RenderSum);
}

// Second step of EXPIRE with NX/XX/GT/LT: `results` holds the key's PTTL.
// Mirrors expireGenericCommand(); not atomic with other clients' writes in
// between the two steps (documented limitation).
void ExpireWithConditions(const DeferredReply& deferred, std::span<const OpResult> results,
                          CommandCall& call) {
  int64_t pttl = results[0].integer;
  const int64_t flags = deferred.expire_conditions;
  const int64_t when = deferred.expire_deadline_ms;
  if (pttl == -2) {  // no such key
    call.reply().Integer(0);
    return;
  }
  bool has_expiry = pttl >= 0;
  int64_t current = has_expiry ? UnixNowMs() + pttl : -1;
  bool refused = ((flags & kExpireNx) && has_expiry) || ((flags & kExpireXx) && !has_expiry) ||
                 ((flags & kExpireGt) && (!has_expiry || when <= current)) ||
                 ((flags & kExpireLt) && has_expiry && when >= current);
  if (refused) {
    call.reply().Integer(0);
    return;
  }
  call.Add(MakeOp(OpCode::kExpireAt, call.args[1], {}, when));
  call.Defer(RenderInteger);
}

// EXPIRE/PEXPIRE key amount [NX|XX|GT|LT]
void ExpireGeneric(CommandCall& call, bool seconds, std::string_view name) {
  int64_t flags = 0;
  for (size_t j = 3; j < call.args.size(); ++j) {
    std::string_view opt = call.args[j];
    if (EqualsIgnoreCase(opt, "nx")) flags |= kExpireNx;
    else if (EqualsIgnoreCase(opt, "xx")) flags |= kExpireXx;
    else if (EqualsIgnoreCase(opt, "gt")) flags |= kExpireGt;
    else if (EqualsIgnoreCase(opt, "lt")) flags |= kExpireLt;
    else {
      call.reply().Error("ERR Unsupported option " + std::string(AsCString(opt)));
      return;
    }
  }
  if ((flags & kExpireNx) && (flags & (kExpireXx | kExpireGt | kExpireLt))) {
    call.reply().Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if ((flags & kExpireGt) && (flags & kExpireLt)) {
    call.reply().Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  std::optional<int64_t> amount = ParseRedisInt64(call.args[2]);
  if (!amount) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  int64_t when = *amount;
  if (seconds) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
      call.reply().Error(InvalidExpireTimeError(name));
      return;
    }
    when *= 1000;
  }
  int64_t now = UnixNowMs();
  if (when > LLONG_MAX - now) {
    call.reply().Error(InvalidExpireTimeError(name));
    return;
  }
  when += now;
  if (flags == 0) {
    call.Add(MakeOp(OpCode::kExpireAt, call.args[1], {}, when));
    call.Defer(RenderInteger);
    return;
  }
  call.Add(MakeOp(OpCode::kPttl, call.args[1]));
  call.DeferFollowUp(ExpireWithConditions);
  call.deferred_reply().expire_conditions = flags;
  call.deferred_reply().expire_deadline_ms = when;
}

void Expire(CommandCall& call) { ExpireGeneric(call, true, "expire"); }
void Pexpire(CommandCall& call) { ExpireGeneric(call, false, "pexpire"); }

void Ttl(CommandCall& call) {
  call.Add(MakeOp(OpCode::kPttl, call.args[1]));
  call.Defer(RenderTtlSeconds);
}

void Pttl(CommandCall& call) {
  call.Add(MakeOp(OpCode::kPttl, call.args[1]));
  call.Defer(RenderInteger);
}

void Persist(CommandCall& call) {
  call.Add(MakeOp(OpCode::kPersist, call.args[1]));
  call.Defer(RenderInteger);
}

void DbSize(CommandCall& call) {
  call.Add(MakeOp(OpCode::kDbSize, {}));
  call.Defer(RenderInteger);
}

// FLUSHDB/FLUSHALL [SYNC|ASYNC]: kvlab has one database, so both empty it.
void Flush(CommandCall& call) {
  if (call.args.size() > 2 ||
      (call.args.size() == 2 && !EqualsIgnoreCase(call.args[1], "sync") &&
       !EqualsIgnoreCase(call.args[1], "async"))) {
    call.reply().Error(kSyntaxError);
    return;
  }
  call.Add(MakeOp(OpCode::kFlushAll, {}));
  call.Defer(RenderOk);
}

}  // namespace

void RegisterKeyspaceCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "del", .arity = -2, .flags = F::kWrite, .handler = Del,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "generic",
             .summary = "Delete a key"});
  table.Add({.name = "exists", .arity = -2, .flags = F::kReadOnly | F::kFast, .handler = Exists,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "generic",
             .summary = "Determine if a key exists"});
  table.Add({.name = "expire", .arity = -3, .flags = F::kWrite | F::kFast | F::kTwoStep,
             .handler = Expire, .keys = {.first = 1, .last = 1, .step = 1}, .group = "generic",
             .summary = "Set a key's time to live in seconds"});
  table.Add({.name = "pexpire", .arity = -3, .flags = F::kWrite | F::kFast | F::kTwoStep,
             .handler = Pexpire, .keys = {.first = 1, .last = 1, .step = 1}, .group = "generic",
             .summary = "Set a key's time to live in milliseconds"});
  table.Add({.name = "ttl", .arity = 2, .flags = F::kReadOnly | F::kFast, .handler = Ttl,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "generic",
             .summary = "Get the time to live for a key in seconds"});
  table.Add({.name = "pttl", .arity = 2, .flags = F::kReadOnly | F::kFast, .handler = Pttl,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "generic",
             .summary = "Get the time to live for a key in milliseconds"});
  table.Add({.name = "persist", .arity = 2, .flags = F::kWrite | F::kFast, .handler = Persist,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "generic",
             .summary = "Remove the expiration from a key"});
  table.Add({.name = "dbsize", .arity = 1, .flags = F::kReadOnly | F::kFast, .handler = DbSize,
             .group = "server", .summary = "Return the number of keys in the selected database"});
  table.Add({.name = "flushdb", .arity = -1, .flags = F::kWrite, .handler = Flush,
             .group = "server", .summary = "Remove all keys from the current database"});
  table.Add({.name = "flushall", .arity = -1, .flags = F::kWrite, .handler = Flush,
             .group = "server", .summary = "Remove all keys from all databases"});
}

}  // namespace kvlab
