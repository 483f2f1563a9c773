// CommandTable: every command kvlab answers — its name, its Redis arity and
// flags, and the handler that runs it. Lookup is case-insensitive, as in
// Redis. Arity follows Redis: N > 0 means exactly N arguments (name
// included), -N means at least N.
//
// Thread-safe: the table is built once on first use and never changes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/calls/container_call.h"
#include "server/command.h"

namespace kvlab {

// Where a command's keys are, for COMMAND INFO: the first and last argument
// positions (-1: the last argument) and the step between keys. All 0 for a
// command without keys.
struct KeyPositions {
  int first = 0;
  int last = 0;
  int step = 0;
};

// One command, written with designated initialisers, e.g.
//   {.name = "get", .arity = 2, .flags = F::kReadOnly | F::kFast, .handler = Get,
//    .keys = {.first = 1, .last = 1, .step = 1}, .group = "string", .summary = "..."}
struct CommandSpec {
  enum Flags : uint32_t {
    kNone = 0,
    kNoAuth = 1u << 0,  // allowed before AUTH (AUTH, HELLO, QUIT)
    kWrite = 1u << 1,   // may add data ("write" in COMMAND's flags)
    kReadOnly = 1u << 2,
    kFast = 1u << 3,
    // Refused whole with -OOM, before it runs, once the engine is at
    // --maxmemory: Session::Dispatch reads it, and the engine's own check is
    // skipped for the operations of a command it admitted (Redis's denyoom).
    kDenyOom = 1u << 4,
    // Runs at once even inside MULTI, never queued (MULTI EXEC DISCARD WATCH QUIT).
    kNoMulti = 1u << 5,
    kExec = 1u << 6,  // EXEC: the Session runs the queued transaction
    // Dispatched only once the batch queued before it has run (WATCH: a
    // write earlier in the pipeline must not count as after the WATCH).
    kAfterQueued = 1u << 7,
    // Refused inside MULTI, dooming the EXEC (Redis's no-multi: SAVE, SHUTDOWN).
    kRefusedInMulti = 1u << 8,
    // May block the client (BLPOP, BZPOPMIN, ...): dispatched once the
    // queued batch has run, and the last command of its batch, so that the
    // client's later commands wait while it is blocked, as in Redis.
    kBlocking = 1u << 9,
    // Its replies are pushes (Pub/Sub confirmations): CLIENT REPLY OFF and
    // SKIP do not silence them (Redis's CLIENT_PUSHING).
    kPushReply = 1u << 10,
  };
  std::string name;  // lower case, as Redis reports it
  int arity = 0;
  uint32_t flags = kNone;
  CommandHandler handler = nullptr;
  KeyPositions keys;
  std::string group;    // COMMAND DOCS group: "string", "generic", ...
  std::string summary;  // COMMAND DOCS summary
  // A container command: what the engine runs (engines/calls/container_calls.cc).
  const ContainerCommand* container = nullptr;
  // The subcommands its handler answers, as Redis names them ("client|list"):
  // COMMAND LIST lists them, and CLIENT LIST's cmd= shows the one a client ran
  // last. server.differential's ListedSubcommandsAreAnsweredAndNoOthers checks
  // that its handler answers each one and no other subcommand of Redis's.
  std::vector<std::string> subcommands;
};

class CommandTable {
 public:
  static const CommandTable& Instance();

  // nullptr when there is no such command.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<CommandSpec>& commands() const { return commands_; }
  // `spec`'s position in commands(). REQUIRES: `spec` is one of them.
  size_t IndexOf(const CommandSpec& spec) const {
    return static_cast<size_t>(&spec - commands_.data());
  }

  // Registration, used by the command files while the table is built.
  void Add(CommandSpec spec);

 private:
  CommandTable() = default;
  // Lookup runs once per command, so it avoids hashing: names are bucketed
  // by length and lower-cased first letter, and a bucket holds one or two.
  static constexpr size_t kMaxNameLength = 20;  // GEORADIUSBYMEMBER_RO
  static size_t Bucket(size_t length, char first);

  std::vector<CommandSpec> commands_;
  std::vector<std::vector<size_t>> buckets_ =
      std::vector<std::vector<size_t>>((kMaxNameLength + 1) * 26);
};

// The name a command ran under, as CLIENT LIST's cmd= and COMMAND LIST spell
// it: "client|list" for CLIENT LIST; the command's own name for a command
// without subcommands, or for a bare container ("CLIENT"); null for a
// subcommand its handler does not answer (CLIENT LIST shows cmd=NULL, as
// Redis does after a command it could not look up).
const std::string* NameAsRun(const CommandSpec& spec, std::span<const std::string_view> args);

// Redis's arity check: true when `argc` (name included) fits `arity`.
inline bool ArityMatches(int arity, size_t argc) {
  return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

// "wrong number of arguments for 'get' command" — for handlers that check
// arity beyond the table (MSET pairs, PING's optional message).
std::string WrongArityError(std::string_view command_name);

}  // namespace kvlab
