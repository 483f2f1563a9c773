// Each container type's command table (one file per type owns its
// commands' semantics); container_commands.cc joins them into the one
// table ContainerCommands() serves.
//
// Immutable static data; thread-safe.
#pragma once

#include <span>

#include "engines/calls/container_call.h"

namespace kvlab {

std::span<const ContainerCommand> HashCommands();  // hash_commands.cc
std::span<const ContainerCommand> ListCommands();  // list_commands.cc
std::span<const ContainerCommand> SetCommands();   // set_commands.cc
std::span<const ContainerCommand> ZSetCommands();  // zset_commands.cc

}  // namespace kvlab
