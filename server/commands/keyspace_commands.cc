// Keyspace commands: DEL UNLINK EXISTS TOUCH EXPIRE PEXPIRE EXPIREAT
// PEXPIREAT EXPIRETIME PEXPIRETIME TTL PTTL PERSIST TYPE RENAME RENAMENX COPY
// KEYS SCAN RANDOMKEY OBJECT DBSIZE FLUSHDB FLUSHALL, with Redis 7.0's
// replies (db.c, expire.c, object.c). Commands over several keys queue one
// AtomicGroup; KEYS, SCAN and RANDOMKEY collect the keys through the engine.
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "engines/clock.h"
#include "engines/entry.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/rules/glob.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

void RenderSum(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
               ServerContext&) {
  int64_t sum = 0;
  for (const OpResult& result : results) sum += result.integer;
  writer.Integer(sum);
}

// ttlGenericCommand()'s rounding to the nearest second, (ms + 500) / 1000.
// Redis writes it in a signed long long, where a deadline within 500 ms of
// LLONG_MAX overflows; its build answers the exact quotient there
// (9223372036854776 for LLONG_MAX), so that is computed without overflow.
int64_t RoundToSeconds(int64_t ms) {
  if (ms < 0) return ms;
  return ms / 1000 + (ms % 1000 + 500) / 1000;
}

void RenderTtlSeconds(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                      ServerContext&) {
  writer.Integer(RoundToSeconds(results[0].integer));
}

void AddPerKey(CommandCall& call, OpCode code) {
  for (size_t i = 1; i < call.args.size(); ++i) call.Add(MakeOp(code, call.args[i]));
}

// DEL and UNLINK (kvlab frees at once either way).
void Del(CommandCall& call) {
  AddPerKey(call, OpCode::kDel);
  call.Defer(RenderSum);
  call.GroupQueued();
}

// EXISTS and TOUCH: each argument counts, repeated keys too.
void Exists(CommandCall& call) {
  AddPerKey(call, OpCode::kExists);
  call.Defer(RenderSum);
  call.GroupQueued();
}

// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key amount [NX|XX|GT|LT]
// (expireGenericCommand()). The conditions are decided by the engine with
// the key held, so the read and the write are one atomic step.
void ExpireGeneric(CommandCall& call, bool seconds, bool relative, std::string_view name) {
  int64_t conditions = 0;
  for (size_t j = 3; j < call.args.size(); ++j) {
    std::string_view opt = call.args[j];
    if (EqualsIgnoreCase(opt, "nx"))
      conditions |= kExpireIfNoExpiry;
    else if (EqualsIgnoreCase(opt, "xx"))
      conditions |= kExpireIfHasExpiry;
    else if (EqualsIgnoreCase(opt, "gt"))
      conditions |= kExpireIfGreater;
    else if (EqualsIgnoreCase(opt, "lt"))
      conditions |= kExpireIfLess;
    else {
      call.reply().Error("ERR Unsupported option " + std::string(AsCString(opt)));
      return;
    }
  }
  if ((conditions & kExpireIfNoExpiry) &&
      (conditions & (kExpireIfHasExpiry | kExpireIfGreater | kExpireIfLess))) {
    call.reply().Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if ((conditions & kExpireIfGreater) && (conditions & kExpireIfLess)) {
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
  const int64_t base = relative ? UnixNowMs() : 0;
  if (when > LLONG_MAX - base) {
    call.reply().Error(InvalidExpireTimeError(name));
    return;
  }
  when += base;
  Operation op = MakeOp(OpCode::kExpireAt, call.args[1], {}, when);
  op.integer2 = conditions;
  call.Add(op);
  call.Defer(RenderInteger);
}

void Expire(CommandCall& call) { ExpireGeneric(call, true, true, "expire"); }
void Pexpire(CommandCall& call) { ExpireGeneric(call, false, true, "pexpire"); }
void ExpireAt(CommandCall& call) { ExpireGeneric(call, true, false, "expireat"); }
void PexpireAt(CommandCall& call) { ExpireGeneric(call, false, false, "pexpireat"); }

// EXPIRETIME rounds to the nearest second, as ttlGenericCommand().
void RenderExpireTimeSeconds(const DeferredReply&, std::span<const OpResult> results,
                             ReplyWriter& writer, ServerContext&) {
  writer.Integer(RoundToSeconds(results[0].integer));
}

constexpr CommandHandler ExpireTime = KeyCommand<OpCode::kExpireTime, RenderExpireTimeSeconds>;

constexpr CommandHandler PexpireTime = KeyCommand<OpCode::kExpireTime, RenderInteger>;

void RenderType(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                ServerContext&) {
  writer.SimpleString(results[0].kind == OpResult::Kind::kBulk ? results[0].bulk.view() : "none");
}

constexpr CommandHandler Type = KeyCommand<OpCode::kType, RenderType>;

// ---- RENAME RENAMENX COPY: a value carried between keys, in one step ------

// Bits of the deferred reply's int64_t flags (plain constants, not an enum:
// they are or-ed and tested as integers).
constexpr int64_t kMoveNx = 1;
constexpr int64_t kMoveSameKey = 2;
constexpr int64_t kMoveReplace = 4;

// RENAME/RENAMENX: results[0] says whether the source existed, and for
// RENAMENX results[1] whether the destination did.
void RenderRename(const DeferredReply& deferred, std::span<const OpResult> results,
                  ReplyWriter& writer, ServerContext&) {
  const bool nx = deferred.flags & kMoveNx;
  if (results[0].integer == 0) {
    writer.Error("ERR no such key");
  } else if (nx && ((deferred.flags & kMoveSameKey) || results[1].integer != 0)) {
    writer.Integer(0);
  } else if (nx) {
    writer.Integer(1);
  } else {
    writer.Ok();
  }
}

Operation Guard(OpCode code, std::string_view key, uint32_t span, int64_t integer = 0) {
  Operation op = MakeOp(code, key, {}, integer);
  op.guard_span = span;
  return op;
}

void RenameGeneric(CommandCall& call, bool nx) {
  const std::string_view source = call.args[1];
  const std::string_view target = call.args[2];
  int64_t flags = nx ? kMoveNx : 0;
  if (source == target) {
    // renameGenericCommand(): nothing moves, but a missing key is an error.
    flags |= kMoveSameKey;
    call.Add(Guard(OpCode::kLoadCarry, source, 0));
  } else if (!nx) {
    call.Add(Guard(OpCode::kLoadCarry, source, 1, /*erase=*/1));
    call.Add(MakeOp(OpCode::kStoreCarry, target, "rename_to"));
  } else {
    call.Add(Guard(OpCode::kLoadCarry, source, 3));
    call.Add(Guard(OpCode::kRequireAbsent, target, 2));
    call.Add(MakeOp(OpCode::kDel, source, "rename_from"));  // its keyspace event
    call.Add(MakeOp(OpCode::kStoreCarry, target, "rename_to"));
  }
  call.Defer(RenderRename);
  call.deferred_reply().flags = flags;
  call.GroupQueued();
}

void Rename(CommandCall& call) { RenameGeneric(call, false); }
void RenameNx(CommandCall& call) { RenameGeneric(call, true); }

void RenderCopy(const DeferredReply& deferred, std::span<const OpResult> results,
                ReplyWriter& writer, ServerContext&) {
  const bool copied =
      results[0].integer != 0 && ((deferred.flags & kMoveReplace) || results[1].integer == 0);
  writer.Integer(copied ? 1 : 0);
}

// COPY source destination [DB n] [REPLACE] (copyCommand()); kvlab has one
// database, so only DB 0 exists.
void Copy(CommandCall& call) {
  bool replace = false;
  const auto& args = call.args;
  for (size_t j = 3; j < args.size(); ++j) {
    if (EqualsIgnoreCase(args[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(args[j], "db") && j + 1 < args.size()) {
      std::optional<int64_t> db = ParseRedisInt64(args[++j]);
      if (!db) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      if (*db < INT32_MIN || *db > INT32_MAX) {
        call.reply().Error(
            "ERR value is out of range, value must between -2147483648 and 2147483647");
        return;
      }
      if (*db != 0) {
        call.reply().Error("ERR DB index is out of range");
        return;
      }
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  if (args[1] == args[2]) {
    call.reply().Error("ERR source and destination objects are the same");
    return;
  }
  if (replace) {
    call.Add(Guard(OpCode::kLoadCarry, args[1], 1));
    call.Add(MakeOp(OpCode::kStoreCarry, args[2], "copy_to"));
  } else {
    call.Add(Guard(OpCode::kLoadCarry, args[1], 2));
    call.Add(Guard(OpCode::kRequireAbsent, args[2], 1));
    call.Add(MakeOp(OpCode::kStoreCarry, args[2], "copy_to"));
  }
  call.Defer(RenderCopy);
  call.deferred_reply().flags = replace ? kMoveReplace : 0;
  call.GroupQueued();
}

// ---- KEYS SCAN RANDOMKEY: the engine offers every live key ----------------

// A collector that also writes its command's reply once the engine is done.
class ReplyingCollector : public KeyCollector {
 public:
  virtual void Render(ReplyWriter& writer) const = 0;
};

void RenderCollected(const DeferredReply& deferred, std::span<const OpResult>, ReplyWriter& writer,
                     ServerContext&) {
  static_cast<const ReplyingCollector*>(deferred.state)->Render(writer);
}

// Queues the whole-keyspace collection; the collector lives in the reply.
void Collect(CommandCall& call, std::shared_ptr<ReplyingCollector> collector) {
  Operation op = MakeOp(OpCode::kCollectKeys, {});
  op.collect = collector.get();  // the engine writes to it; the render reads it
  call.Add(op);
  call.Defer(RenderCollected);
  call.KeepForRender(std::move(collector));
}

// KEYS pattern: every live key that matches (keysCommand()).
class MatchingKeys final : public ReplyingCollector {
 public:
  explicit MatchingKeys(std::string pattern) : pattern_(std::move(pattern)) {}
  void Offer(std::string_view key) override {
    if (!all_ && !GlobMatch(pattern_, key, false)) return;
    MutexLock lock(mutex_);
    keys_.emplace_back(key);
  }
  // Renders after the engines' last Offer(): the collection is over and
  // nothing writes any more (the analysis cannot see that order).
  void Render(ReplyWriter& writer) const override NO_THREAD_SAFETY_ANALYSIS {
    writer.ArrayHeader(keys_.size());
    for (const std::string& key : keys_) writer.Bulk(key);
  }

 private:
  const std::string pattern_;
  const bool all_ = pattern_ == "*";
  Mutex mutex_;
  std::vector<std::string> keys_ GUARDED_BY(mutex_);
};

void Keys(CommandCall& call) {
  Collect(call, std::make_shared<MatchingKeys>(std::string(call.args[1])));
}

// SCAN's cursor is a position in the keys' hash order: a call returns the
// COUNT keys of smallest hash at or past the cursor, and the next cursor is
// one past the last hash returned (0 when none is left). A key present for
// the whole iteration has one hash, inside exactly one page, so it is
// returned exactly once, as Redis promises; unlike Redis's bucket cursor,
// each call reads the whole keyspace (O(N)).
class ScanPage final : public ReplyingCollector {
 public:
  ScanPage(uint64_t cursor, size_t count, std::string pattern, std::string type)
      : cursor_(cursor), count_(count), pattern_(std::move(pattern)), type_(std::move(type)) {}
  void Offer(std::string_view key) override {
    const uint64_t hash = KeyHash{}(key);
    if (hash < cursor_) return;
    MutexLock lock(mutex_);
    if (page_.size() >= count_ && hash > page_.rbegin()->first) {
      more_ = true;
      return;
    }
    page_[hash].emplace_back(key);
    if (page_.size() > count_) {
      page_.erase(std::prev(page_.end()));
      more_ = true;
    }
  }
  // Redis filters by MATCH and TYPE after choosing the page, so a page may
  // come back short or empty with a cursor that is not 0.
  // Renders after the engines' last Offer(): the collection is over and
  // nothing writes any more (the analysis cannot see that order).
  void Render(ReplyWriter& writer) const override NO_THREAD_SAFETY_ANALYSIS {
    const bool type_matches = type_.empty() || EqualsIgnoreCase(type_, "string");
    std::vector<const std::string*> keys;
    for (const auto& [hash, names] : page_) {
      for (const std::string& name : names) {
        if (!type_matches) continue;
        if (!pattern_.empty() && !GlobMatch(pattern_, name, false)) continue;
        keys.push_back(&name);
      }
    }
    const uint64_t next = more_ && !page_.empty() ? page_.rbegin()->first + 1 : 0;
    writer.ArrayHeader(2);
    writer.Bulk(std::to_string(next));
    writer.ArrayHeader(keys.size());
    for (const std::string* key : keys) writer.Bulk(*key);
  }

 private:
  const uint64_t cursor_;
  const size_t count_;
  const std::string pattern_;  // empty: no MATCH (or MATCH *)
  const std::string type_;     // empty: no TYPE
  Mutex mutex_;
  std::map<uint64_t, std::vector<std::string>> page_ GUARDED_BY(mutex_);
  bool more_ GUARDED_BY(mutex_) = false;
};

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] (scanGenericCommand()).
void Scan(CommandCall& call) {
  const auto& args = call.args;
  // parseScanCursorOrReply(): strtoul, so "-1" wraps and "" is 0.
  const std::string cursor_text(AsCString(args[1]));
  errno = 0;
  char* end = nullptr;
  const unsigned long cursor = std::strtoul(cursor_text.c_str(), &end, 10);
  if (std::isspace(static_cast<unsigned char>(cursor_text[0])) || *end != '\0' || errno == ERANGE) {
    call.reply().Error("ERR invalid cursor");
    return;
  }
  int64_t count = 10;
  std::string pattern;
  std::string type;
  for (size_t i = 2; i < args.size();) {
    const bool has_value = args.size() - i >= 2;
    if (EqualsIgnoreCase(args[i], "count") && has_value) {
      std::optional<int64_t> n = ParseRedisInt64(args[i + 1]);
      if (!n) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      if (*n < 1) {
        call.reply().Error(kSyntaxError);
        return;
      }
      count = *n;
    } else if (EqualsIgnoreCase(args[i], "match") && has_value) {
      pattern = args[i + 1] == "*" ? std::string() : std::string(args[i + 1]);
    } else if (EqualsIgnoreCase(args[i], "type") && has_value) {
      type = std::string(AsCString(args[i + 1]));
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
    i += 2;
  }
  Collect(call, std::make_shared<ScanPage>(cursor, static_cast<size_t>(count), std::move(pattern),
                                           std::move(type)));
}

// RANDOMKEY: one live key chosen uniformly (reservoir sampling), nil if none.
class RandomKey final : public ReplyingCollector {
 public:
  void Offer(std::string_view key) override {
    MutexLock lock(mutex_);
    ++seen_;
    if (std::uniform_int_distribution<uint64_t>(1, seen_)(random_) == 1) chosen_.assign(key);
  }
  // Renders after the engines' last Offer(): the collection is over and
  // nothing writes any more (the analysis cannot see that order).
  void Render(ReplyWriter& writer) const override NO_THREAD_SAFETY_ANALYSIS {
    if (seen_ == 0) {
      writer.Nil();
    } else {
      writer.Bulk(chosen_);
    }
  }

 private:
  Mutex mutex_;
  std::mt19937_64 random_ GUARDED_BY(mutex_){std::random_device{}()};
  uint64_t seen_ GUARDED_BY(mutex_) = 0;
  std::string chosen_ GUARDED_BY(mutex_);
};

void RandomKeyCommand(CommandCall& call) { Collect(call, std::make_shared<RandomKey>()); }

// OBJECT FREQ and IDLETIME of a present key: errors, since kvlab keeps no
// access statistics. FREQ's is Redis's own under any non-LFU policy (and
// kvlab's only policy is noeviction); IDLETIME's says what kvlab lacks
// rather than answer an idle time it never measured.
void RenderObjectStatsError(const DeferredReply& deferred, std::span<const OpResult> results,
                            ReplyWriter& writer, ServerContext&) {
  if (results[0].integer == 0) {
    writer.Nil();
  } else if (deferred.flags == 0) {
    writer.Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
        "that when switching between policies at runtime LRU and LFU data will take some time "
        "to adjust.");
  } else {
    writer.Error("ERR kvlab-server does not track access times: OBJECT IDLETIME is not supported");
  }
}

// OBJECT ENCODING | REFCOUNT | FREQ | IDLETIME key | OBJECT HELP (a
// container command, as in Redis 7.0).
void Object(CommandCall& call) {
  const std::string_view sub = call.args[1];
  struct KeySubcommand {
    std::string_view name;
    OpCode code;
    RenderFn render;
    int64_t flags;
  };
  static constexpr KeySubcommand kKeySubcommands[] = {
      {"encoding", OpCode::kObjectEncoding, RenderBulkOrNil, 0},
      {"refcount", OpCode::kObjectRefcount, RenderIntegerOrNil, 0},
      {"freq", OpCode::kExists, RenderObjectStatsError, 0},
      {"idletime", OpCode::kExists, RenderObjectStatsError, 1},
  };
  for (const KeySubcommand& key_sub : kKeySubcommands) {
    if (!EqualsIgnoreCase(sub, key_sub.name)) continue;
    if (call.args.size() != 3) {
      call.reply().Error(WrongArityError("object|" + std::string(key_sub.name)));
      return;
    }
    call.Add(MakeOp(key_sub.code, call.args[2]));
    call.Defer(key_sub.render);
    call.deferred_reply().flags = key_sub.flags;
    return;
  }
  if (EqualsIgnoreCase(sub, "help")) {
    if (call.args.size() != 2) {
      call.reply().Error(WrongArityError("object|help"));
      return;
    }
    static constexpr std::string_view kHelp[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help."};
    call.reply().StatusLines(kHelp);
  } else {
    call.reply().Error("ERR unknown subcommand '" + std::string(AsCString(sub).substr(0, 128)) +
                       "'. Try OBJECT HELP.");
  }
}

constexpr CommandHandler Ttl = KeyCommand<OpCode::kPttl, RenderTtlSeconds>;

constexpr CommandHandler Pttl = KeyCommand<OpCode::kPttl, RenderInteger>;

constexpr CommandHandler Persist = KeyCommand<OpCode::kPersist, RenderInteger>;

void DbSize(CommandCall& call) {
  call.Add(MakeOp(OpCode::kDbSize, {}));
  call.Defer(RenderInteger);
}

// FLUSHDB/FLUSHALL [SYNC|ASYNC]: kvlab has one database, so both empty it.
void Flush(CommandCall& call) {
  if (call.args.size() > 2 || (call.args.size() == 2 && !EqualsIgnoreCase(call.args[1], "sync") &&
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
  table.Add({.name = "del",
             .arity = -2,
             .flags = F::kWrite,
             .handler = Del,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "generic",
             .summary = "Delete a key"});
  table.Add({.name = "exists",
             .arity = -2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Exists,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "generic",
             .summary = "Determine if a key exists"});
  table.Add({.name = "unlink",
             .arity = -2,
             .flags = F::kWrite | F::kFast,
             .handler = Del,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "generic",
             .summary = "Delete a key asynchronously in another thread"});
  table.Add({.name = "touch",
             .arity = -2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Exists,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "generic",
             .summary = "Alters the last access time of a key(s)"});
  table.Add({.name = "expire",
             .arity = -3,
             .flags = F::kWrite | F::kFast,
             .handler = Expire,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Set a key's time to live in seconds"});
  table.Add({.name = "pexpire",
             .arity = -3,
             .flags = F::kWrite | F::kFast,
             .handler = Pexpire,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Set a key's time to live in milliseconds"});
  table.Add({.name = "expireat",
             .arity = -3,
             .flags = F::kWrite | F::kFast,
             .handler = ExpireAt,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Set the expiration for a key as a UNIX timestamp"});
  table.Add({.name = "pexpireat",
             .arity = -3,
             .flags = F::kWrite | F::kFast,
             .handler = PexpireAt,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Set the expiration for a key as a UNIX timestamp specified in ms"});
  table.Add({.name = "expiretime",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = ExpireTime,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Get the expiration Unix timestamp for a key"});
  table.Add({.name = "pexpiretime",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = PexpireTime,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Get the expiration Unix timestamp for a key in milliseconds"});
  table.Add({.name = "type",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Type,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Determine the type stored at key"});
  table.Add({.name = "rename",
             .arity = 3,
             .flags = F::kWrite,
             .handler = Rename,
             .keys = {.first = 1, .last = 2, .step = 1},
             .group = "generic",
             .summary = "Rename a key"});
  table.Add({.name = "renamenx",
             .arity = 3,
             .flags = F::kWrite | F::kFast,
             .handler = RenameNx,
             .keys = {.first = 1, .last = 2, .step = 1},
             .group = "generic",
             .summary = "Rename a key, only if the new key does not exist"});
  table.Add({.name = "copy",
             .arity = -3,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Copy,
             .keys = {.first = 1, .last = 2, .step = 1},
             .group = "generic",
             .summary = "Copy a key"});
  table.Add({.name = "keys",
             .arity = 2,
             .flags = F::kReadOnly,
             .handler = Keys,
             .group = "generic",
             .summary = "Find all keys matching the given pattern"});
  table.Add({.name = "scan",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = Scan,
             .group = "generic",
             .summary = "Incrementally iterate the keys space"});
  table.Add({.name = "randomkey",
             .arity = 1,
             .flags = F::kReadOnly,
             .handler = RandomKeyCommand,
             .group = "generic",
             .summary = "Return a random key from the keyspace"});
  table.Add({.name = "object",
             .arity = -2,
             .flags = F::kReadOnly,
             .handler = Object,
             .group = "generic",
             .summary = "A container for object introspection commands",
             .subcommands = {"object|encoding", "object|freq", "object|help", "object|idletime",
                             "object|refcount"}});
  table.Add({.name = "ttl",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Ttl,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Get the time to live for a key in seconds"});
  table.Add({.name = "pttl",
             .arity = 2,
             .flags = F::kReadOnly | F::kFast,
             .handler = Pttl,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Get the time to live for a key in milliseconds"});
  table.Add({.name = "persist",
             .arity = 2,
             .flags = F::kWrite | F::kFast,
             .handler = Persist,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Remove the expiration from a key"});
  table.Add({.name = "dbsize",
             .arity = 1,
             .flags = F::kReadOnly | F::kFast,
             .handler = DbSize,
             .group = "server",
             .summary = "Return the number of keys in the selected database"});
  table.Add({.name = "flushdb",
             .arity = -1,
             .flags = F::kWrite,
             .handler = Flush,
             .group = "server",
             .summary = "Remove all keys from the current database"});
  table.Add({.name = "flushall",
             .arity = -1,
             .flags = F::kWrite,
             .handler = Flush,
             .group = "server",
             .summary = "Remove all keys from all databases"});
}

}  // namespace kvlab
