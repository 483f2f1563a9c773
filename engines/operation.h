// Operation and OpResult: the vocabulary between the server shell and every
// keyspace engine.
//
// The server turns each parsed command into one or more single-key
// Operations (MGET k1 k2 becomes two kGet operations; DEL k1 k2 two kDel),
// the engine fills one OpResult per Operation, and the server renders the
// replies. Engines therefore never see RESP bytes, and every engine answers
// the same command with the same reply because they share one vocabulary.
// A command of several operations is made one atomic step by an AtomicGroup
// (engine.h); inside a group, guard operations (kRequireAbsent, kLoadCarry)
// may skip the rest of their command, and kLoadCarry/kStoreCarry move one
// value between keys (RENAME, COPY).
//
// Plain value types; not synchronised. An Operation's string_views point into
// the connection's read buffer, which the server keeps alive until the batch
// holding the Operation has completed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/reply_list.h"
#include "engines/value_bytes.h"

namespace kvlab {

struct ContainerCommand;  // container_call.h
struct EntryView;         // entry.h
struct GroupState;        // atomic_group.h
class KeyReader;          // key_reader.h
struct StringCommand;     // string_call.h

enum class OpCode : uint8_t {
  kGet,             // -> kBulk or kNil; on a key holding a container, by `integer2`
                    //    (GetOnWrongType): a WRONGTYPE error, nil (MGET) or kNotString
  kSet,             // uses `value` and `set`; -> kOk, kNil (condition not met), or the
                    //    old value as kBulk/kNil when set.return_old
  kGetSet,          // set value, drop expiry, -> old value as kBulk or kNil
  kDel,             // -> kInteger 1 if a live key was removed, else 0; `value`, when
                    //    set, names the keyspace event instead of "del" (RENAMENX)
  kExists,          // -> kInteger 1 or 0
  kIncrBy,          // `integer` is the delta -> kInteger new value, or kError
  kAppend,          // -> kInteger new length
  kStrlen,          // -> kInteger length (0 when missing)
  kExpireAt,        // `integer` is an absolute deadline in unix ms; a deadline not in
                    //    the future deletes the key -> kInteger 1 if key existed, else 0
  kPttl,            // -> kInteger ms left, -1 when no expiry, -2 when missing
  kPersist,         // -> kInteger 1 if an expiry was removed, else 0
  kDbSize,          // keyless: -> kInteger number of live keys in the whole engine
  kFlushAll,        // keyless: removes every key in the whole engine -> kOk
  kGetDel,          // -> old value as kBulk (the key is removed) or kNil
  kGetEx,           // `integer`: new deadline in unix ms (> 0; not in the future deletes),
                    //    0 leaves the expiry, kPersistDeadline removes it -> kBulk or kNil
  kIncrByFloat,     // `value` is the increment (already a valid long double)
                    //    -> kBulk the new value in Redis's format, or kError
  kSetRange,        // `integer` offset, `value` bytes -> kInteger new length (an empty
                    //    value on a missing key creates nothing)
  kGetRange,        // `integer` start, `integer2` end (Redis's negative indexes) -> kBulk
  kType,            // -> kBulk the type name ("string"), or kNil when missing
  kObjectEncoding,  // -> kBulk Redis's encoding name, or kNil when missing
  kObjectRefcount,  // -> kInteger Redis's OBJECT REFCOUNT, or kNil when missing
  kMemoryUsage,     // -> kInteger the entry's Footprint() bytes (the maxmemory
                    //    estimate), or kNil when missing
  kExpireTime,      // -> kInteger absolute deadline in unix ms, -1 none, -2 missing
  kDump,            // -> kBulk DUMP's payload of the entry (dump_payload.h), or kNil when missing
  kRestore,         // `value`: a payload ReadPayload() accepts; `integer`: deadline in unix
                    //    ms (0 none; one already passed only removes the key); `integer2`
                    //    1 = REPLACE -> kInteger 1 when the key exists without REPLACE
                    //    (BUSYKEY: nothing changes), else kOk
  // Guards and carries: only inside an AtomicGroup (the server adds them).
  kRequireAbsent,  // -> kInteger 1 if the key exists (the guard fails), else 0
  kLoadCarry,      // copies value and expiry into the group's carry; `integer` 1 also
                   //    removes the key -> kInteger 1, or 0 when missing (the guard fails)
  kStoreCarry,     // stores the carried value and expiry under the key -> kOk;
                   //    `value` names the keyspace event the store raises
                   //    (rename_to, copy_to, zunionstore, sortstore, ...)
  kCollectKeys,    // keyless: offers every live key to `collect` -> kOk
  // EXEC's check of a key it WATCHes, first in its group: reclaims the entry
  // if it has expired (which the ModificationFeed reports, touching the
  // watchers that saw it live: Redis's isWatchedKeyExpired()) -> kInteger 1
  // if the key is live, else 0. A write (it may erase), never denied.
  kWatchedKey,
  kHoldKeyspace,  // keyless: does nothing -> kOk; makes its group hold every key
                  //    (a kReadKeys that reads keys only known while it runs)
  // Redis's active expiry (activeExpireCycle): keyless, never in a group.
  // Each partition of the engine (a shard, a stripe, an owner, the one map)
  // looks at the next `integer` places of its table from where its last
  // look stopped, and reclaims the expired entries there as a write would
  // (the ModificationFeed hears each one); while more than a tenth of the
  // entries with a deadline it saw had expired, it looks again, up to 16
  // times. A partition that holds no entry with a deadline looks at
  // nothing. -> kInteger entries reclaimed, every partition's together.
  kReclaimExpired,
  kReadKeys,  // `read_keys` runs with op.key and every key its group holds
              //    readable (key_reader.h) and may fill the carry -> any kind;
              //    a guard: an error skips the `guard_span` operations after it
  kVisit,     // only from a kReadKeys: `*visit_into` = the key's live entry
              //    (nullopt when missing) -> kOk; `integer` 1 first moves a
              //    sorted set to its skiplist form (SORT's zsetConvert())
  // A command on a hash, list, set or sorted set: `container_command` runs
  // with the whole command's arguments (container_call.h) -> any kind; a
  // reply of several values is kReply.
  kContainer,
  // A command on a string value (the bit commands): `string_command` runs
  // with the whole command's arguments and `integer` (string_call.h)
  // -> any kind; a reply of several values is kReply.
  kString,
};

// kReclaimExpired's most looks per partition and call.
inline constexpr int kReclaimExpiredRounds = 16;

// kGet's `integer2`: what a GET of a key holding a container answers.
enum GetOnWrongType : int64_t {
  kGetWrongTypeError = 0,      // GET, GETRANGE's kin: WRONGTYPE
  kGetWrongTypeNil = 1,        // MGET: nil
  kGetWrongTypeNotString = 2,  // LCS: EngineError::kNotString
};

// EXPIRE's NX/XX/GT/LT options, as the bits of Operation::integer2 for kExpireAt.
enum ExpireCondition : int64_t {
  kExpireIfNoExpiry = 1,   // NX
  kExpireIfHasExpiry = 2,  // XX
  kExpireIfGreater = 4,    // GT
  kExpireIfLess = 8,       // LT
};

// kGetEx's `integer` for GETEX ... PERSIST.
inline constexpr int64_t kPersistDeadline = -1;

// Where kCollectKeys puts the keys it finds (KEYS, SCAN, RANDOMKEY).
// Thread-safe by contract: the sharded engine's shards offer keys at once.
class KeyCollector {
 public:
  virtual ~KeyCollector() = default;
  // Called once per live key, with the key's owner held; the view is valid
  // only during the call.
  virtual void Offer(std::string_view key) = 0;
};

// SET's flags, already validated by the server.
struct SetOptions {
  enum class Condition : uint8_t { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };
  Condition condition = Condition::kAlways;
  bool return_old = false;   // SET ... GET
  bool keep_ttl = false;     // KEEPTTL: leave an existing expiry in place
  int64_t expire_at_ms = 0;  // absolute unix ms; 0 = no expiry (clears any old one)
};

struct OpResult;

struct Operation {
  OpCode code = OpCode::kGet;
  std::string_view key;
  std::string_view value;  // kSet, kGetSet, kAppend
  int64_t integer = 0;     // kIncrBy delta, kExpireAt deadline, ...
  int64_t integer2 = 0;    // kGetRange end, kExpireAt conditions
  SetOptions set;          // kSet
  // Guards (kRequireAbsent, kLoadCarry): how many of the operations after
  // this one belong to the same command and are skipped if the guard fails.
  uint32_t guard_span = 0;
  KeyCollector* collect = nullptr;  // kCollectKeys
  // kReadKeys: the read (SORT), given the operation, its group's keys and carry.
  OpResult (*read_keys)(const Operation& op, KeyReader& keys, GroupState& group) = nullptr;
  std::optional<EntryView>* visit_into = nullptr;  // kVisit
  // kContainer: what runs, and the command's arguments (name and key
  // included): arg_pool[arg_first, arg_first + arg_count), the batch's pool,
  // read when the operation runs (the pool may grow while the batch fills).
  const ContainerCommand* container_command = nullptr;
  const StringCommand* string_command = nullptr;  // kString, with the same arguments
  const std::vector<std::string_view>* arg_pool = nullptr;
  uint32_t arg_first = 0;
  uint32_t arg_count = 0;
  // The server already applied the maxmemory rule to this operation's
  // command (Redis decides once per command, so MSET is refused whole or
  // runs whole); the engine does not refuse it again.
  bool memory_admitted = false;

  // REQUIRES: code == kContainer or kString.
  std::span<const std::string_view> container_args() const {
    return {arg_pool->data() + arg_first, arg_count};
  }
};

enum class EngineError : uint8_t {
  kNone,
  kNotInteger,     // value is not an integer or out of range (INCR family)
  kOverflow,       // increment or decrement would overflow
  kOutOfMemory,    // write refused: the engine reached its memory limit
  kNotFloat,       // INCRBYFLOAT: the value is not a valid float
  kNanOrInfinity,  // INCRBYFLOAT: the result would be NaN or infinite
  kWrongType,      // the key holds another type of value (Redis's WRONGTYPE)
  kNotString,      // LCS: a key holds a container
  kCommandError,   // a container command's own error; `bulk` holds its text
};

struct OpResult {
  enum class Kind : uint8_t { kNil, kOk, kInteger, kBulk, kError, kReply };
  Kind kind = Kind::kNil;
  EngineError error = EngineError::kNone;
  int64_t integer = 0;
  ValueBytes bulk;
  std::shared_ptr<ReplyList> reply;  // kReply (shared by copies; never changed once built)

  static OpResult Nil() { return {}; }
  static OpResult Ok() {
    OpResult r;
    r.kind = Kind::kOk;
    return r;
  }
  static OpResult Integer(int64_t v) {
    OpResult r;
    r.kind = Kind::kInteger;
    r.integer = v;
    return r;
  }
  static OpResult Bulk(std::string_view v) {
    OpResult r;
    r.kind = Kind::kBulk;
    r.bulk.assign(v);
    return r;
  }
  static OpResult Error(EngineError e) {
    OpResult r;
    r.kind = Kind::kError;
    r.error = e;
    return r;
  }
  static OpResult ErrorText(std::string_view text) {
    OpResult r = Error(EngineError::kCommandError);
    r.bulk.assign(text);
    return r;
  }
  // Becomes an empty kReply; returns the list to build in place.
  ReplyList& StartList() {
    *this = OpResult();
    kind = Kind::kReply;
    reply = std::make_shared<ReplyList>();
    return *reply;
  }
};

}  // namespace kvlab
