#include <algorithm>
#include <vector>

#include "engines/calls/container_call.h"
#include "engines/calls/container_tables.h"

namespace kvlab {

std::span<const ContainerCommand> ContainerCommands() {
  static const std::vector<ContainerCommand> all = [] {
    std::vector<ContainerCommand> joined;
    for (const std::span<const ContainerCommand> table :
         {HashCommands(), ListCommands(), SetCommands(), ZSetCommands(), GeoCommands()}) {
      joined.insert(joined.end(), table.begin(), table.end());
    }
    return joined;
  }();
  return all;
}

const ContainerCommand* FindContainerCommand(std::string_view name) {
  const std::span<const ContainerCommand> all = ContainerCommands();
  const auto found = std::find_if(all.begin(), all.end(), [&](const ContainerCommand& command) {
    return command.name == name;
  });
  return found == all.end() ? nullptr : &*found;
}

}  // namespace kvlab
