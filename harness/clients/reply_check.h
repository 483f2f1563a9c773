// Reply checking: decides whether a parsed RESP reply is the kind of reply
// the request expects, so that `ops` count only real, correct answers.
// Pure functions; thread-safe.
#pragma once

#include <hiredis/hiredis.h>

namespace kvlab::harness {

// What a request must get back.
enum class ExpectedReply {
  kOk,         // SET: +OK
  kBulkOrNil,  // GET: a bulk string (hit) or nil (miss)
  kInteger,    // INCRBY: an integer
  kPong,       // PING: +PONG
  kArray,      // MGET, EXEC: an array
  kQueued,     // a command inside MULTI: +QUEUED
  kHash,       // HGETALL: an array of field-value pairs (empty: a miss)
};

enum class ReplyVerdict {
  kOk,          // the expected reply
  kMiss,        // GET answered nil, HGETALL an empty hash: correct, but counted apart
  kErrorReply,  // -ERR ...
  kWrongType,   // any other reply
};

ReplyVerdict CheckReply(const redisReply& reply, ExpectedReply expected);

}  // namespace kvlab::harness
