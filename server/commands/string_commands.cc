// String commands: GET SET SETNX GETSET MGET MSET APPEND STRLEN and the INCR
// family. Each becomes one single-key Operation per key; replies follow Redis
// 7.0's t_string.c.
#include <climits>

#include "engines/clock.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

void RenderValue(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                 ServerContext&) {
  const OpResult& result = results[0];
  if (result.kind == OpResult::Kind::kBulk) {
    writer.Bulk(result.bulk);
  } else {
    writer.Nil();
  }
}

// SET's reply: +OK, nil when NX/XX stopped it, or the old value with GET.
void RenderSet(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
               ServerContext&) {
  const OpResult& result = results[0];
  switch (result.kind) {
    case OpResult::Kind::kOk: writer.Ok(); break;
    case OpResult::Kind::kBulk: writer.Bulk(result.bulk); break;
    default: writer.Nil(); break;
  }
}

// SETNX: 1 when set, 0 when the key existed.
void RenderSetNx(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                 ServerContext&) {
  writer.Integer(results[0].kind == OpResult::Kind::kOk ? 1 : 0);
}

void RenderIncr(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                ServerContext&) {
  const OpResult& result = results[0];
  if (result.kind == OpResult::Kind::kInteger) {
    writer.Integer(result.integer);
  } else if (result.error == EngineError::kOverflow) {
    writer.Error(kOverflowError);
  } else {
    writer.Error(kNotIntegerError);
  }
}

void RenderMget(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                ServerContext&) {
  writer.ArrayHeader(results.size());
  for (const OpResult& result : results) {
    if (result.kind == OpResult::Kind::kBulk) {
      writer.Bulk(result.bulk);
    } else {
      writer.Nil();
    }
  }
}

void Get(CommandCall& call) {
  call.Add(MakeOp(OpCode::kGet, call.args[1]));
  call.Defer(RenderValue);
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL], parsed in
// the order and with the conflicts of parseExtendedStringArgumentsOrReply().
enum Unit { kNone, kEx, kPx, kExat, kPxat };

Unit ExpiryUnit(std::string_view opt) {
  if (EqualsIgnoreCase(opt, "ex")) return kEx;
  if (EqualsIgnoreCase(opt, "px")) return kPx;
  if (EqualsIgnoreCase(opt, "exat")) return kExat;
  if (EqualsIgnoreCase(opt, "pxat")) return kPxat;
  return kNone;
}

void Set(CommandCall& call) {
  SetOptions options;
  Unit unit = kNone;
  std::string_view expire_arg;
  const auto& args = call.args;
  for (size_t j = 3; j < args.size(); ++j) {
    std::string_view opt = args[j];
    bool has_next = j + 1 < args.size();
    bool expiry_given = unit != kNone;
    if (EqualsIgnoreCase(opt, "nx") && options.condition != SetOptions::Condition::kIfPresent) {
      options.condition = SetOptions::Condition::kIfAbsent;
    } else if (EqualsIgnoreCase(opt, "xx") &&
               options.condition != SetOptions::Condition::kIfAbsent) {
      options.condition = SetOptions::Condition::kIfPresent;
    } else if (EqualsIgnoreCase(opt, "get")) {
      options.return_old = true;
    } else if (EqualsIgnoreCase(opt, "keepttl") && !expiry_given) {
      options.keep_ttl = true;
    } else if (Unit given = ExpiryUnit(opt);
               given != kNone && !options.keep_ttl && (unit == kNone || unit == given) &&
               has_next) {
      // Redis lets the same unit repeat (the last one wins), not two units.
      unit = given;
      expire_arg = args[++j];
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  if (unit != kNone) {
    // getExpireMillisecondsOrReply(): positive, no overflow once in ms and absolute.
    std::optional<int64_t> amount = ParseRedisInt64(expire_arg);
    if (!amount) {
      call.reply().Error(kNotIntegerError);
      return;
    }
    int64_t ms = *amount;
    bool seconds = unit == kEx || unit == kExat;
    if (ms <= 0 || (seconds && ms > LLONG_MAX / 1000)) {
      call.reply().Error(InvalidExpireTimeError("set"));
      return;
    }
    if (seconds) ms *= 1000;
    if (unit == kEx || unit == kPx) {
      if (__builtin_add_overflow(ms, UnixNowMs(), &ms)) {
        call.reply().Error(InvalidExpireTimeError("set"));
        return;
      }
    }
    options.expire_at_ms = ms;
  }
  call.Add(MakeOp(OpCode::kSet, args[1], args[2], 0, options));
  call.Defer(RenderSet);
}

void SetNx(CommandCall& call) {
  SetOptions options;
  options.condition = SetOptions::Condition::kIfAbsent;
  call.Add(MakeOp(OpCode::kSet, call.args[1], call.args[2], 0, options));
  call.Defer(RenderSetNx);
}

void GetSet(CommandCall& call) {
  call.Add(MakeOp(OpCode::kGetSet, call.args[1], call.args[2]));
  call.Defer(RenderValue);
}

void Mget(CommandCall& call) {
  for (size_t i = 1; i < call.args.size(); ++i) {
    call.Add(MakeOp(OpCode::kGet, call.args[i]));
  }
  call.Defer(RenderMget);
}

void Mset(CommandCall& call) {
  if (call.args.size() % 2 == 0) {
    call.reply().Error(WrongArityError("mset"));
    return;
  }
  for (size_t i = 1; i < call.args.size(); i += 2) {
    call.Add(MakeOp(OpCode::kSet, call.args[i], call.args[i + 1]));
  }
  call.Defer(RenderOk);
}

void Append(CommandCall& call) {
  call.Add(MakeOp(OpCode::kAppend, call.args[1], call.args[2]));
  call.Defer(RenderInteger);
}

void Strlen(CommandCall& call) {
  call.Add(MakeOp(OpCode::kStrlen, call.args[1]));
  call.Defer(RenderInteger);
}

void IncrByDelta(CommandCall& call, int64_t delta) {
  call.Add(MakeOp(OpCode::kIncrBy, call.args[1], {}, delta));
  call.Defer(RenderIncr);
}

void Incr(CommandCall& call) { IncrByDelta(call, 1); }
void Decr(CommandCall& call) { IncrByDelta(call, -1); }

void IncrBy(CommandCall& call) {
  std::optional<int64_t> delta = ParseRedisInt64(call.args[2]);
  if (!delta) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  IncrByDelta(call, *delta);
}

void DecrBy(CommandCall& call) {
  std::optional<int64_t> delta = ParseRedisInt64(call.args[2]);
  if (!delta) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  if (*delta == LLONG_MIN) {  // its negation does not fit
    call.reply().Error("ERR decrement would overflow");
    return;
  }
  IncrByDelta(call, -*delta);
}

}  // namespace

void RegisterStringCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "get", .arity = 2, .flags = F::kReadOnly | F::kFast, .handler = Get,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Get the value of a key"});
  table.Add({.name = "set", .arity = -3, .flags = F::kWrite | F::kDenyOom, .handler = Set,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Set the string value of a key"});
  table.Add({.name = "setnx", .arity = 3, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = SetNx, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Set the value of a key, only if the key does not exist"});
  table.Add({.name = "getset", .arity = 3, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = GetSet, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Set the string value of a key and return its old value"});
  table.Add({.name = "mget", .arity = -2, .flags = F::kReadOnly | F::kFast, .handler = Mget,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "string",
             .summary = "Get the values of all the given keys"});
  table.Add({.name = "mset", .arity = -3, .flags = F::kWrite | F::kDenyOom, .handler = Mset,
             .keys = {.first = 1, .last = -1, .step = 2}, .group = "string",
             .summary = "Set multiple keys to multiple values"});
  table.Add({.name = "append", .arity = 3, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Append, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Append a value to a key"});
  table.Add({.name = "strlen", .arity = 2, .flags = F::kReadOnly | F::kFast, .handler = Strlen,
             .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Get the length of the value stored in a key"});
  table.Add({.name = "incr", .arity = 2, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Incr, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Increment the integer value of a key by one"});
  table.Add({.name = "decr", .arity = 2, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Decr, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Decrement the integer value of a key by one"});
  table.Add({.name = "incrby", .arity = 3, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = IncrBy, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Increment the integer value of a key by the given amount"});
  table.Add({.name = "decrby", .arity = 3, .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = DecrBy, .keys = {.first = 1, .last = 1, .step = 1}, .group = "string",
             .summary = "Decrement the integer value of a key by the given number"});
}

}  // namespace kvlab
