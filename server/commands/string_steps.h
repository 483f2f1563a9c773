// What the string commands' server files share (bit_commands.cc,
// hll_commands.cc): finding an engine string command by name, and a group
// step, which sees only its own name as arguments.
//
// Thread-safe: the command table and each step's list are built once.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engines/calls/string_call.h"
#include "engines/operation.h"

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

// A group step of the string command `kStep` on `key`, with `parameter` as
// its Operation::integer; an error from it skips the `guard_span`
// operations after it.
template <const std::string_view& kStep>
Operation StringStep(std::string_view key, int64_t parameter, uint32_t guard_span = 0) {
  Operation step;
  step.code = OpCode::kString;
  step.key = key;
  step.string_command = NamedStringCommand(kStep);
  step.integer = parameter;
  step.arg_pool = &StepArgs<kStep>();
  step.arg_count = 1;
  step.guard_span = guard_span;
  return step;
}

}  // namespace kvlab
