// The GEO commands as container commands on a sorted set (container_call.h),
// with Redis 7.0's semantics (src/geo.c): GEOADD is ZADD of geohash scores
// (its NX XX CH, its reply); GEOPOS, GEOHASH and GEODIST decode scores;
// GEORADIUS, GEORADIUSBYMEMBER, their _RO forms and GEOSEARCH read the
// boxes engines/rules/geohash.h names, in Redis's order, and sort, count and
// format as it does. Their forms that store (GEORADIUS[BYMEMBER] ... STORE |
// STOREDIST key, GEOSEARCHSTORE) run as ReadGeoStore on the source, then
// the kStoreCarry of zset_algebra.h on the destination, in one group.
//
// The commands are internal (kContainerInternal): the server registers them
// under their names (server/commands/geo_commands.cc) with Redis's flags.
//
// The tables are immutable: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "engines/calls/atomic_group.h"
#include "engines/calls/container_call.h"
#include "engines/calls/key_reader.h"
#include "engines/operation.h"

namespace kvlab {

// Which search a command is (georadiusGeneric()'s flags).
enum GeoSearchFlags : int64_t {
  kGeoFromCoords = 1,   // GEORADIUS: around a longitude, latitude
  kGeoFromMember = 2,   // GEORADIUSBYMEMBER: around a member
  kGeoNoStore = 4,      // the _RO forms: STORE is a syntax error
  kGeoSearch = 8,       // GEOSEARCH's arguments
  kGeoSearchStore = 16  // GEOSEARCHSTORE: always stores
};

// The search flags of the command named `name` (lower case); 0 if none.
int64_t GeoSearchFlagsOf(std::string_view name);

// Where the key to store into is in `args` (the whole command), walking the
// options as Redis's parser does; nullopt when the command does not store.
std::optional<size_t> GeoStoreKeyIndex(std::span<const std::string_view> args, int64_t flags);

// Operation::read_keys for a search that stores: op.key is the source,
// op.integer the GeoSearchFlags, the arguments the whole command. Leaves
// the result for the kStoreCarry after it and answers its size, or an error.
OpResult ReadGeoStore(const Operation& op, KeyReader& keys, GroupState& group);

}  // namespace kvlab
