// Cluster routing on the shard ports (--shard-ports BASE, owner engine): the
// address a client is told to use, and Redis Cluster's -MOVED for a command
// that reached a port whose thread does not own its key.
//
// Pure functions over the settings and one client's info; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/client_info.h"
#include "server/server_settings.h"

namespace kvlab {

struct CommandSpec;

// The IP a client reaches this server on: the connection's local address,
// or for a Unix client the --bind address (127.0.0.1 for a wildcard).
std::string AnnouncedIp(const ClientInfo& client, const ServerSettings& settings);

// "MOVED <slot> <ip>:<port>" when `client` is on a shard port and the
// command's first key belongs to another thread; nullopt to run it here.
// Keys after the first may live elsewhere: the engine hops for them, so a
// multi-key command stays atomic across owners (Redis Cluster would answer
// -CROSSSLOT instead).
std::optional<std::string> MovedError(const CommandSpec& spec,
                                      std::span<const std::string_view> args,
                                      const ClientInfo& client, const ServerSettings& settings);

}  // namespace kvlab
