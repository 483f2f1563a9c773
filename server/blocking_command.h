// BlockingCommand: a parsed BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH,
// BZPOPMIN, BZPOPMAX or BZMPOP, as the Session keeps it while its client
// is blocked (blocking_registry.h), and how one look at its keys is queued
// and answered. Each look runs the command's non-blocking twin (LMPOP,
// LMOVE, ZMPOP) on the engine, so every engine serves blocked clients with
// the code that runs the twin, atomically as the twin runs.
//
// Not synchronised: it lives on its client's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/blocking_registry.h"
#include "server/command.h"

namespace kvlab {

struct BlockingCommand {
  enum class Kind : uint8_t {
    kPop,        // BLPOP, BRPOP: [key, element]
    kMultiPop,   // BLMPOP: [key, [element ...]]
    kMove,       // BLMOVE, BRPOPLPUSH: the element
    kZPop,       // BZPOPMIN, BZPOPMAX: [key, member, score]
    kZMultiPop,  // BZMPOP: [key, [[member, score] ...]]
  };
  Kind kind = Kind::kPop;
  std::vector<std::string> keys;  // what it waits on (BLMOVE: its source)
  std::string end;                // left|right|min|max (BLMOVE: the source's end)
  std::string count = "1";        // BLMPOP's and BZMPOP's COUNT
  std::string destination;        // BLMOVE's
  std::string to;                 // BLMOVE's destination end
  std::optional<BlockingRegistry::Clock::time_point> deadline;  // nullopt: forever
  bool in_exec = false;  // may not block: answers nothing as LMOVE would

  // The look being run: the twin's arguments, and the keys it looks at.
  std::vector<std::string> attempt;
  std::vector<std::string> attempt_keys;
};

// Queues a look at `keys` (every key first, one key on a retry) through
// `call`, whose reply becomes the look's. REQUIRES: `command` outlives the
// batch (KeepForRender or the Session holds it).
void QueueBlockingAttempt(CommandCall& call, BlockingCommand& command,
                          std::span<const std::string> keys);
// Whether a look's results answer the client. Nothing to pop answers only
// inside EXEC. On a retry, a source key of another type answers nothing
// either (Redis 7.0 keeps the client blocked); its first look answers
// WRONGTYPE.
bool AttemptAnswers(const BlockingCommand& command, std::span<const OpResult> results, bool retry);
// The reply when the client stops waiting unserved: a timeout (nil), or
// CLIENT UNBLOCK ... ERROR.
void WriteBlockingTimeout(const BlockingCommand& command, ReplyWriter& writer);
inline constexpr std::string_view kUnblockedError = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

}  // namespace kvlab
