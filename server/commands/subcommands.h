// Subcommand dispatch for Redis 7.0's container commands (CONFIG GET,
// MEMORY USAGE, ...): each subcommand has its own arity, and the errors
// name it as Redis does ("'config|set'", "Try CONFIG HELP.").
//
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/ascii_case.h"
#include "server/command.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"

namespace kvlab {

struct Subcommand {
  std::string_view name;  // lower case
  int arity;              // Redis's, the command and subcommand counted
  void (*run)(CommandCall&);
};

// Runs the subcommand args[1] names, or answers Redis's arity or
// unknown-subcommand error. `command` is the container's name, lower case.
inline void DispatchSubcommand(CommandCall& call, std::string_view command,
                               std::span<const Subcommand> subcommands) {
  for (const Subcommand& subcommand : subcommands) {
    if (!EqualsIgnoreCase(call.args[1], subcommand.name)) continue;
    if (!ArityMatches(subcommand.arity, call.args.size())) {
      call.reply().Error(
          WrongArityError(std::string(command) + "|" + std::string(subcommand.name)));
      return;
    }
    subcommand.run(call);
    return;
  }
  call.reply().Error("ERR unknown subcommand '" +
                     std::string(AsCString(call.args[1]).substr(0, 128)) + "'. Try " +
                     AsciiUppercase(command) + " HELP.");
}

}  // namespace kvlab
