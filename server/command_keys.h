// CommandKeys: where a command's keys are among its arguments, as Redis
// 7.0's COMMAND GETKEYS finds them (db.c: getKeysFromCommandWithSpecs()
// tries the command's key specs, then its getkeys procedure where a spec
// cannot say). Three kinds of command: the fixed positions of COMMAND INFO
// (first, last, step); the "numkeys" commands (ZUNIONSTORE, LMPOP, ...),
// whose count of keys is an argument; and SORT, whose STORE names one.
//
// Pure functions over the command table; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace kvlab {

struct CommandKeys {
  enum class Outcome {
    kKeys,              // `positions` holds them (at least one)
    kUnknownCommand,    // "Invalid command specified"
    kNoKeyArguments,    // "The command has no key arguments"
    kWrongArity,        // "Invalid number of arguments specified for command"
    kInvalidArguments,  // "Invalid arguments specified for command"
  };
  Outcome outcome = Outcome::kKeys;
  // Indexes into the command's arguments (0: its name), in Redis's order.
  std::vector<size_t> positions;
};

// The keys of `command` (its name first, then its arguments).
CommandKeys FindCommandKeys(std::span<const std::string_view> command);

// Whether COMMAND INFO flags `name` (lower case) "movablekeys": its keys'
// positions depend on its other arguments.
bool HasMovableKeys(std::string_view name);

// The error reply text (after "-ERR ") of an outcome other than kKeys.
std::string_view CommandKeysError(CommandKeys::Outcome outcome);

}  // namespace kvlab
