// What the string commands' server files share (bit_commands.cc,
// hll_commands.cc): finding an engine string command by name, and the
// argument list of a group step, which sees only its own name.
//
// Thread-safe: the command table and each step's list are built once.
#pragma once

#include <cassert>
#include <string_view>
#include <vector>

#include "engines/calls/string_call.h"

namespace kvlab {

// The engines' string command `name`. REQUIRES: it exists.
inline const StringCommand* NamedStringCommand(std::string_view name) {
  const StringCommand* command = FindStringCommand(name);
  assert(command != nullptr);
  return command;
}

// The arguments every `kStep` step sees: its own name (it needs no other).
template <const std::string_view& kStep>
const std::vector<std::string_view>& StepArgs() {
  static const std::vector<std::string_view> args = {kStep};
  return args;
}

}  // namespace kvlab
