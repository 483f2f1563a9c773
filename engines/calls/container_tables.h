// Each container type's command table (one file per type owns its
// commands' semantics); container_calls.cc joins them into the one
// table ContainerCommands() serves.
//
// Immutable static data; thread-safe.
#pragma once

#include <span>

#include "engines/calls/container_call.h"

namespace kvlab {

std::span<const ContainerCommand> HashCommands();  // hash_calls.cc
std::span<const ContainerCommand> ListCommands();  // list_calls.cc
std::span<const ContainerCommand> SetCommands();   // set_calls.cc
std::span<const ContainerCommand> ZSetCommands();  // zset_calls.cc
std::span<const ContainerCommand> GeoCommands();   // geo_calls.cc (on sorted sets)

}  // namespace kvlab
