// String commands: GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET
// MSETNX APPEND STRLEN SETRANGE GETRANGE SUBSTR LCS and the INCR family. Each
// becomes one single-key Operation per key (several keys: one AtomicGroup);
// replies follow Redis 7.0's t_string.c.
#include <algorithm>
#include <climits>
#include <vector>
#include <memory>

#include "engines/clock.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/rules/redis_float.h"
#include "engines/rules/proto_max_bulk_len.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

// SET's reply: +OK, nil when NX/XX stopped it, or the old value with GET.
void RenderSet(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
               ServerContext&) {
  const OpResult& result = results[0];
  switch (result.kind) {
    case OpResult::Kind::kOk:
      writer.Ok();
      break;
    case OpResult::Kind::kBulk:
      writer.Bulk(result.bulk);
      break;
    default:
      writer.Nil();
      break;
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

constexpr CommandHandler Get = KeyCommand<OpCode::kGet, RenderBulkOrNil>;

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] and GETEX
// key [EX|PX|EXAT|PXAT|PERSIST], parsed in the order and with the conflicts
// of parseExtendedStringArgumentsOrReply().
enum Unit { kNone, kEx, kPx, kExat, kPxat };

Unit ExpiryUnit(std::string_view opt) {
  if (EqualsIgnoreCase(opt, "ex")) return kEx;
  if (EqualsIgnoreCase(opt, "px")) return kPx;
  if (EqualsIgnoreCase(opt, "exat")) return kExat;
  if (EqualsIgnoreCase(opt, "pxat")) return kPxat;
  return kNone;
}

// getExpireMillisecondsOrReply(): positive, no overflow once in ms and
// absolute. nullopt with *error set when it is not.
std::optional<int64_t> AbsoluteDeadline(std::string_view amount_arg, Unit unit,
                                        std::string_view command, std::string* error) {
  std::optional<int64_t> amount = ParseRedisInt64(amount_arg);
  if (!amount) {
    *error = kNotIntegerError;
    return std::nullopt;
  }
  int64_t ms = *amount;
  const bool seconds = unit == kEx || unit == kExat;
  if (ms <= 0 || (seconds && ms > LLONG_MAX / 1000)) {
    *error = InvalidExpireTimeError(command);
    return std::nullopt;
  }
  if (seconds) ms *= 1000;
  if ((unit == kEx || unit == kPx) && __builtin_add_overflow(ms, UnixNowMs(), &ms)) {
    *error = InvalidExpireTimeError(command);
    return std::nullopt;
  }
  return ms;
}

// The same, replying with the error.
std::optional<int64_t> AbsoluteDeadlineOrReply(CommandCall& call, std::string_view amount_arg,
                                               Unit unit, std::string_view command) {
  std::string error;
  std::optional<int64_t> deadline = AbsoluteDeadline(amount_arg, unit, command, &error);
  if (!deadline) call.reply().Error(error);
  return deadline;
}

enum class ExtendedFor { kSet, kGetEx };

struct ExtendedOptions {
  SetOptions set;
  bool persist = false;  // GETEX PERSIST
  Unit unit = kNone;
  std::string_view expire_arg;
};

// Parses args[from..]; false after replying with the syntax error.
bool ParseExtendedOptions(CommandCall& call, size_t from, ExtendedFor command,
                          ExtendedOptions& out) {
  const auto& args = call.args;
  SetOptions& options = out.set;
  const bool for_set = command == ExtendedFor::kSet;
  for (size_t j = from; j < args.size(); ++j) {
    std::string_view opt = args[j];
    bool has_next = j + 1 < args.size();
    bool expiry_given = out.unit != kNone;
    if (for_set && EqualsIgnoreCase(opt, "nx") &&
        options.condition != SetOptions::Condition::kIfPresent) {
      options.condition = SetOptions::Condition::kIfAbsent;
    } else if (for_set && EqualsIgnoreCase(opt, "xx") &&
               options.condition != SetOptions::Condition::kIfAbsent) {
      options.condition = SetOptions::Condition::kIfPresent;
    } else if (for_set && EqualsIgnoreCase(opt, "get")) {
      options.return_old = true;
    } else if (for_set && EqualsIgnoreCase(opt, "keepttl") && !expiry_given) {
      options.keep_ttl = true;
    } else if (!for_set && EqualsIgnoreCase(opt, "persist") && !expiry_given) {
      out.persist = true;
    } else if (Unit given = ExpiryUnit(opt); given != kNone && !options.keep_ttl && !out.persist &&
                                             (out.unit == kNone || out.unit == given) && has_next) {
      // Redis lets the same unit repeat (the last one wins), not two units.
      out.unit = given;
      out.expire_arg = args[++j];
    } else {
      call.reply().Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

void Set(CommandCall& call) {
  ExtendedOptions parsed;
  if (!ParseExtendedOptions(call, 3, ExtendedFor::kSet, parsed)) return;
  if (parsed.unit != kNone) {
    std::optional<int64_t> deadline =
        AbsoluteDeadlineOrReply(call, parsed.expire_arg, parsed.unit, "set");
    if (!deadline) return;
    parsed.set.expire_at_ms = *deadline;
  }
  call.Add(MakeOp(OpCode::kSet, call.args[1], call.args[2], 0, parsed.set));
  call.Defer(RenderSet);
}

// SETEX key seconds value / PSETEX key milliseconds value.
void SetWithExpiry(CommandCall& call, Unit unit, std::string_view name) {
  std::optional<int64_t> deadline = AbsoluteDeadlineOrReply(call, call.args[2], unit, name);
  if (!deadline) return;
  SetOptions options;
  options.expire_at_ms = *deadline;
  call.Add(MakeOp(OpCode::kSet, call.args[1], call.args[3], 0, options));
  call.Defer(RenderOk);
}

void SetEx(CommandCall& call) { SetWithExpiry(call, kEx, "setex"); }
void PSetEx(CommandCall& call) { SetWithExpiry(call, kPx, "psetex"); }

// GETEX with an invalid expiry: Redis looks the key up first, so a missing
// key answers nil and only a present one gets the error.
void RenderErrorIfPresent(const DeferredReply& deferred, std::span<const OpResult> results,
                          ReplyWriter& writer, ServerContext&) {
  if (results[0].integer == 0) {
    writer.Nil();
  } else {
    writer.Error(*static_cast<const std::string*>(deferred.state));
  }
}

void GetEx(CommandCall& call) {
  ExtendedOptions parsed;
  if (!ParseExtendedOptions(call, 2, ExtendedFor::kGetEx, parsed)) return;
  int64_t deadline = parsed.persist ? kPersistDeadline : 0;
  if (parsed.unit != kNone) {
    auto error = std::make_shared<std::string>();
    std::optional<int64_t> absolute =
        AbsoluteDeadline(parsed.expire_arg, parsed.unit, "getex", error.get());
    if (!absolute) {
      call.Add(MakeOp(OpCode::kExists, call.args[1]));
      call.Defer(RenderErrorIfPresent);
      call.KeepForRender(std::move(error));
      return;
    }
    deadline = *absolute;
  }
  call.Add(MakeOp(OpCode::kGetEx, call.args[1], {}, deadline));
  call.Defer(RenderBulkOrNil);
}

constexpr CommandHandler GetDel = KeyCommand<OpCode::kGetDel, RenderBulkOrNil>;

void SetNx(CommandCall& call) {
  SetOptions options;
  options.condition = SetOptions::Condition::kIfAbsent;
  call.Add(MakeOp(OpCode::kSet, call.args[1], call.args[2], 0, options));
  call.Defer(RenderSetNx);
}

void GetSet(CommandCall& call) {
  call.Add(MakeOp(OpCode::kGetSet, call.args[1], call.args[2]));
  call.Defer(RenderBulkOrNil);
}

void Mget(CommandCall& call) {
  for (size_t i = 1; i < call.args.size(); ++i) {
    Operation get = MakeOp(OpCode::kGet, call.args[i]);
    get.integer2 = kGetWrongTypeNil;  // MGET reads a container as nil
    call.Add(get);
  }
  call.Defer(RenderMget);
  call.GroupQueued();
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
  call.GroupQueued();
}

// MSETNX: 1 when every key was absent (and all were set), else 0.
void RenderMsetNx(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                  ServerContext&) {
  const size_t guards = results.size() / 2;
  for (size_t i = 0; i < guards; ++i) {
    if (results[i].integer != 0) {
      writer.Integer(0);
      return;
    }
  }
  writer.Integer(1);
}

// One guard per key, each skipping the rest of the command if its key
// exists, then the writes: all or nothing, in one atomic step.
void MsetNx(CommandCall& call) {
  if (call.args.size() % 2 == 0) {
    call.reply().Error(WrongArityError("msetnx"));
    return;
  }
  const uint32_t pairs = static_cast<uint32_t>(call.args.size() / 2);
  for (uint32_t i = 0; i < pairs; ++i) {
    Operation guard = MakeOp(OpCode::kRequireAbsent, call.args[1 + 2 * i]);
    guard.guard_span = 2 * pairs - i - 1;
    call.Add(guard);
  }
  for (uint32_t i = 0; i < pairs; ++i) {
    call.Add(MakeOp(OpCode::kSet, call.args[1 + 2 * i], call.args[2 + 2 * i]));
  }
  call.Defer(RenderMsetNx);
  call.GroupQueued();
}

void RenderFloat(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                 ServerContext&) {
  const OpResult& result = results[0];
  if (result.kind == OpResult::Kind::kBulk) {
    writer.Bulk(result.bulk);
  } else if (result.error == EngineError::kNanOrInfinity) {
    writer.Error("ERR increment would produce NaN or Infinity");
  } else {
    writer.Error("ERR value is not a valid float");
  }
}

void IncrByFloat(CommandCall& call) {
  if (!ParseRedisLongDouble(call.args[2])) {
    call.reply().Error("ERR value is not a valid float");
    return;
  }
  call.Add(MakeOp(OpCode::kIncrByFloat, call.args[1], call.args[2]));
  call.Defer(RenderFloat);
}

void SetRange(CommandCall& call) {
  std::optional<int64_t> offset = ParseRedisInt64(call.args[2]);
  if (!offset) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  if (*offset < 0) {
    call.reply().Error("ERR offset is out of range");
    return;
  }
  const int64_t length = static_cast<int64_t>(call.args[3].size());
  if (length > 0 && *offset > ProtoMaxBulkLen() - length) {
    call.reply().Error(kStringTooLongError);
    return;
  }
  call.Add(MakeOp(OpCode::kSetRange, call.args[1], call.args[3], *offset));
  call.Defer(RenderInteger);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: both values
// are read in one atomic step, and the reply is computed here, as Redis 7.0's
// lcsCommand() does (the dynamic-programming table, then a walk back).
enum LcsFlag : int64_t { kLcsIdx = 1, kLcsLen = 2, kLcsWithMatchLen = 4 };
constexpr int kLcsMinShift = 3;  // MINMATCHLEN lives above the flag bits

void RenderLcs(const DeferredReply& deferred, std::span<const OpResult> results,
               ReplyWriter& writer, ServerContext&) {
  if (results[0].kind == OpResult::Kind::kError || results[1].kind == OpResult::Kind::kError) {
    writer.Error("ERR The specified keys must contain string values");
    return;
  }
  const std::string_view a =
      results[0].kind == OpResult::Kind::kBulk ? results[0].bulk.view() : std::string_view();
  const std::string_view b =
      results[1].kind == OpResult::Kind::kBulk ? results[1].bulk.view() : std::string_view();
  const bool get_idx = deferred.flags & kLcsIdx;
  const bool get_len = deferred.flags & kLcsLen;
  const bool with_match_len = deferred.flags & kLcsWithMatchLen;
  const int64_t min_match_len = deferred.flags >> kLcsMinShift;
  // The table is (|a|+1)(|b|+1) integers: refused past proto-max-bulk-len
  // (Redis 7.2's rule and text) rather than allocated until the server dies.
  const uint64_t cells = (static_cast<uint64_t>(a.size()) + 1) * (b.size() + 1);
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1 ||
      cells > static_cast<uint64_t>(ProtoMaxBulkLen()) / sizeof(uint32_t)) {
    writer.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  const uint32_t alen = static_cast<uint32_t>(a.size());
  const uint32_t blen = static_cast<uint32_t>(b.size());
  std::vector<uint32_t> table(static_cast<size_t>(cells));
  auto lcs = [&](uint32_t i, uint32_t j) -> uint32_t& { return table[j + i * (blen + 1)]; };
  for (uint32_t i = 0; i <= alen; ++i) {
    for (uint32_t j = 0; j <= blen; ++j) {
      if (i == 0 || j == 0) {
        lcs(i, j) = 0;
      } else if (a[i - 1] == b[j - 1]) {
        lcs(i, j) = lcs(i - 1, j - 1) + 1;
      } else {
        lcs(i, j) = std::max(lcs(i - 1, j), lcs(i, j - 1));
      }
    }
  }
  uint32_t idx = lcs(alen, blen);
  const bool compute_lcs = get_idx || !get_len;
  std::string result(compute_lcs ? idx : 0, '\0');
  std::string matches;  // the IDX ranges, rendered as they are found
  ReplyWriter match_writer(matches);
  uint32_t match_count = 0;
  uint32_t arange_start = alen, arange_end = 0, brange_start = 0, brange_end = 0;
  uint32_t i = alen, j = blen;
  while (compute_lcs && i > 0 && j > 0) {
    bool emit_range = false;
    if (a[i - 1] == b[j - 1]) {
      result[idx - 1] = a[i - 1];
      if (arange_start == alen) {
        arange_start = arange_end = i - 1;
        brange_start = brange_end = j - 1;
      } else if (arange_start == i && brange_start == j) {
        --arange_start;
        --brange_start;
      } else {
        emit_range = true;
      }
      if (arange_start == 0 || brange_start == 0) emit_range = true;
      --idx;
      --i;
      --j;
    } else {
      if (lcs(i - 1, j) > lcs(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (arange_start != alen) emit_range = true;
    }
    const uint32_t match_len = arange_end - arange_start + 1;
    if (emit_range) {
      if (get_idx && (min_match_len == 0 || match_len >= min_match_len)) {
        match_writer.ArrayHeader(with_match_len ? 3 : 2);
        match_writer.ArrayHeader(2);
        match_writer.Integer(arange_start);
        match_writer.Integer(arange_end);
        match_writer.ArrayHeader(2);
        match_writer.Integer(brange_start);
        match_writer.Integer(brange_end);
        if (with_match_len) match_writer.Integer(match_len);
        ++match_count;
      }
      arange_start = alen;
    }
  }
  if (get_idx) {
    writer.MapHeader(2);
    writer.Bulk("matches");
    writer.ArrayHeader(match_count);
    writer.Raw(matches);
    writer.Bulk("len");
    writer.Integer(lcs(alen, blen));
  } else if (get_len) {
    writer.Integer(idx);
  } else {
    writer.Bulk(result);
  }
}

void Lcs(CommandCall& call) {
  int64_t flags = 0;
  int64_t min_match_len = 0;
  const auto& args = call.args;
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "idx")) {
      flags |= kLcsIdx;
    } else if (EqualsIgnoreCase(args[j], "len")) {
      flags |= kLcsLen;
    } else if (EqualsIgnoreCase(args[j], "withmatchlen")) {
      flags |= kLcsWithMatchLen;
    } else if (EqualsIgnoreCase(args[j], "minmatchlen") && more) {
      std::optional<int64_t> n = ParseRedisInt64(args[++j]);
      if (!n) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      // A match is at most 2^32 bytes: a larger minimum emits nothing either way.
      min_match_len = std::clamp<int64_t>(*n, 0, int64_t{1} << 40);
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  if ((flags & kLcsIdx) && (flags & kLcsLen)) {
    call.reply().Error("ERR If you want both the length and indexes, please just use IDX.");
    return;
  }
  for (const std::string_view key : {args[1], args[2]}) {
    Operation get = MakeOp(OpCode::kGet, key);
    get.integer2 = kGetWrongTypeNotString;
    call.Add(get);
  }
  call.Defer(RenderLcs);
  call.deferred_reply().flags = flags | (min_match_len << kLcsMinShift);
  call.GroupQueued();
}

void GetRange(CommandCall& call) {
  std::optional<int64_t> start = ParseRedisInt64(call.args[2]);
  std::optional<int64_t> end = ParseRedisInt64(call.args[3]);
  if (!start || !end) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  Operation op = MakeOp(OpCode::kGetRange, call.args[1], {}, *start);
  op.integer2 = *end;
  call.Add(op);
  call.Defer(RenderBulkOrNil);
}

// The new length, or the error for a string past proto-max-bulk-len.
void RenderAppend(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                  ServerContext&) {
  const OpResult& result = results[0];
  if (result.kind == OpResult::Kind::kError) {
    writer.Error(result.bulk.view());
  } else {
    writer.Integer(result.integer);
  }
}

void Append(CommandCall& call) {
  call.Add(MakeOp(OpCode::kAppend, call.args[1], call.args[2]));
  call.Defer(RenderAppend);
}

constexpr CommandHandler Strlen = KeyCommand<OpCode::kStrlen, RenderInteger>;

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
  table.Add({.name = "get",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Get,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get the value of a key"});
  table.Add({.name = "set",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Set,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Set the string value of a key"});
  table.Add({.name = "setnx",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = SetNx,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Set the value of a key, only if the key does not exist"});
  table.Add({.name = "getset",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = GetSet,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Set the string value of a key and return its old value"});
  table.Add({.name = "mget",
             .arity = -2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Mget,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "string",
             .summary = "Get the values of all the given keys"});
  table.Add({.name = "mset",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Mset,
             .keys = {.first = 1, .last = -1, .step = 2},
             .group = "string",
             .summary = "Set multiple keys to multiple values"});
  table.Add({.name = "msetnx",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = MsetNx,
             .keys = {.first = 1, .last = -1, .step = 2},
             .group = "string",
             .summary = "Set multiple keys to multiple values, only if none of the keys exist"});
  table.Add({.name = "setex",
             .arity = 4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetEx,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Set the value and expiration of a key"});
  table.Add({.name = "psetex",
             .arity = 4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = PSetEx,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Set the value and expiration in milliseconds of a key"});
  table.Add({.name = "getex",
             .arity = -2,
             .flags = F::kWrite | F::kFast,
             .handler = GetEx,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get the value of a key and optionally set its expiration"});
  table.Add({.name = "getdel",
             .arity = 2,
             .flags = F::kWrite | F::kFast,
             .handler = GetDel,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get the value of a key and delete the key"});
  table.Add({.name = "incrbyfloat",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = IncrByFloat,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Increment the float value of a key by the given amount"});
  table.Add({.name = "setrange",
             .arity = 4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = SetRange,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Overwrite part of a string at key starting at the specified offset"});
  table.Add({.name = "getrange",
             .arity = 4,
             .flags = F::kReadOnly,
             .handler = GetRange,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get a substring of the string stored at a key"});
  table.Add({.name = "substr",
             .arity = 4,
             .flags = F::kReadOnly,
             .handler = GetRange,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get a substring of the string stored at a key"});
  table.Add({.name = "lcs",
             .arity = -3,
             .flags = F::kReadOnly,
             .handler = Lcs,
             .keys = {.first = 1, .last = 2, .step = 1},
             .group = "string",
             .summary = "Find longest common substring"});
  table.Add({.name = "append",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Append,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Append a value to a key"});
  table.Add({.name = "strlen",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Strlen,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Get the length of the value stored in a key"});
  table.Add({.name = "incr",
             .arity = 2,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Incr,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Increment the integer value of a key by one"});
  table.Add({.name = "decr",
             .arity = 2,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = Decr,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Decrement the integer value of a key by one"});
  table.Add({.name = "incrby",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = IncrBy,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Increment the integer value of a key by the given amount"});
  table.Add({.name = "decrby",
             .arity = 3,
             .flags = F::kWrite | F::kDenyOom | F::kFast,
             .handler = DecrBy,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "string",
             .summary = "Decrement the integer value of a key by the given number"});
}

}  // namespace kvlab
