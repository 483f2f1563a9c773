#include "engines/calls/string_call.h"

#include "engines/calls/bit_calls.h"
#include "engines/calls/hll_calls.h"

namespace kvlab {

const StringCommand* FindStringCommand(std::string_view name) {
  for (std::span<const StringCommand> table : {BitStringCommands(), HllStringCommands()}) {
    for (const StringCommand& command : table) {
      if (command.name == name) return &command;
    }
  }
  return nullptr;
}

}  // namespace kvlab
