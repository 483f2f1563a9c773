// Operation and OpResult: the vocabulary between the server shell and every
// keyspace engine.
//
// The server turns each parsed command into one or more single-key
// Operations (MGET k1 k2 becomes two kGet operations; DEL k1 k2 two kDel),
// the engine fills one OpResult per Operation, and the server renders the
// replies. Engines therefore never see RESP bytes, and every engine answers
// the same command with the same reply because they share one vocabulary.
//
// Plain value types; not synchronised. An Operation's string_views point into
// the connection's read buffer, which the server keeps alive until the batch
// holding the Operation has completed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engines/value_bytes.h"

namespace kvlab {

enum class OpCode : uint8_t {
  kGet,      // -> kBulk or kNil
  kSet,      // uses `value` and `set`; -> kOk, kNil (condition not met), or the
             //    old value as kBulk/kNil when set.return_old
  kGetSet,   // set value, drop expiry, -> old value as kBulk or kNil
  kDel,      // -> kInteger 1 if a live key was removed, else 0
  kExists,   // -> kInteger 1 or 0
  kIncrBy,   // `integer` is the delta -> kInteger new value, or kError
  kAppend,   // -> kInteger new length
  kStrlen,   // -> kInteger length (0 when missing)
  kExpireAt, // `integer` is an absolute deadline in unix ms; a deadline not in
             //    the future deletes the key -> kInteger 1 if key existed, else 0
  kPttl,     // -> kInteger ms left, -1 when no expiry, -2 when missing
  kPersist,  // -> kInteger 1 if an expiry was removed, else 0
  kDbSize,   // keyless: -> kInteger number of live keys in the whole engine
  kFlushAll, // keyless: removes every key in the whole engine -> kOk
};

// SET's flags, already validated by the server.
struct SetOptions {
  enum class Condition : uint8_t { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };
  Condition condition = Condition::kAlways;
  bool return_old = false;   // SET ... GET
  bool keep_ttl = false;     // KEEPTTL: leave an existing expiry in place
  int64_t expire_at_ms = 0;  // absolute unix ms; 0 = no expiry (clears any old one)
};

struct Operation {
  OpCode code = OpCode::kGet;
  std::string_view key;
  std::string_view value;  // kSet, kGetSet, kAppend
  int64_t integer = 0;     // kIncrBy delta, kExpireAt deadline
  SetOptions set;          // kSet
  // The server already applied the maxmemory rule to this operation's
  // command (Redis decides once per command, so MSET is refused whole or
  // runs whole); the engine does not refuse it again.
  bool memory_admitted = false;
};

enum class EngineError : uint8_t {
  kNone,
  kNotInteger,   // value is not an integer or out of range (INCR family)
  kOverflow,     // increment or decrement would overflow
  kOutOfMemory,  // write refused: the engine reached its memory limit
};

struct OpResult {
  enum class Kind : uint8_t { kNil, kOk, kInteger, kBulk, kError };
  Kind kind = Kind::kNil;
  EngineError error = EngineError::kNone;
  int64_t integer = 0;
  ValueBytes bulk;

  static OpResult Nil() { return {}; }
  static OpResult Ok() { OpResult r; r.kind = Kind::kOk; return r; }
  static OpResult Integer(int64_t v) { OpResult r; r.kind = Kind::kInteger; r.integer = v; return r; }
  static OpResult Bulk(std::string_view v) { OpResult r; r.kind = Kind::kBulk; r.bulk.assign(v); return r; }
  static OpResult Error(EngineError e) { OpResult r; r.kind = Kind::kError; r.error = e; return r; }
};

}  // namespace kvlab
