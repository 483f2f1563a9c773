// GEOADD GEOPOS GEOHASH GEODIST GEORADIUS GEORADIUSBYMEMBER (and their _RO
// forms) GEOSEARCH GEOSEARCHSTORE in the server's table. A command that
// reads or writes one sorted set queues the engines' container command
// (engines/calls/geo_calls.h) with its arguments. A search that stores
// (GEORADIUS[BYMEMBER] ... STORE|STOREDIST key, GEOSEARCHSTORE) queues the
// search on the source and the store on the destination as one atomic
// group; its reply is the search step's count, or the first error.
#include <optional>
#include <string>

#include "engines/calls/container_call.h"
#include "engines/calls/geo_calls.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

void QueueStore(CommandCall& call, size_t source, size_t destination, int64_t flags) {
  Operation search = MakeOp(OpCode::kReadKeys, call.args[source], {}, flags);
  search.read_keys = ReadGeoStore;
  search.guard_span = 1;  // an error leaves the destination alone
  call.AddWithArgs(search);
  // The keyspace event the store raises (keyspace_events.h).
  const std::string_view event = (flags & kGeoSearch) != 0 ? "geosearchstore" : "georadiusstore";
  call.Add(MakeOp(OpCode::kStoreCarry, call.args[destination], event));
  call.Defer(RenderFirstErrorOr);
  call.GroupQueued();
}

// GEORADIUS and GEORADIUSBYMEMBER: a read, or a store when the options
// name a key to store into.
void Search(CommandCall& call) {
  const int64_t flags = GeoSearchFlagsOf(CommandTable::Instance().Find(call.args[0])->name);
  if (const std::optional<size_t> store = GeoStoreKeyIndex(call.args, flags)) {
    QueueStore(call, 1, *store, flags);
  } else {
    RunContainerCommand(call);
  }
}

void SearchStore(CommandCall& call) { QueueStore(call, 2, 1, GeoSearchFlagsOf("geosearchstore")); }

}  // namespace

void RegisterGeoCommands(CommandTable& table) {
  using F = CommandSpec;
  auto add = [&](std::string_view name, uint32_t flags, CommandHandler handler, KeyPositions keys,
                 std::string summary) {
    const ContainerCommand* command = FindContainerCommand(name);
    table.Add({.name = std::string(name),
               .arity = command != nullptr ? command->arity : -8,  // GEOSEARCHSTORE's
               .flags = flags,
               .handler = handler,
               .keys = keys,
               .group = "geo",
               .summary = std::move(summary),
               .container = command});
  };
  const KeyPositions first = {.first = 1, .last = 1, .step = 1};
  const uint32_t write = F::kWrite | F::kDenyOom;
  add("geoadd", write, RunContainerCommand, first,
      "Add one or more geospatial items in the geospatial index represented using a sorted set");
  add("geopos", F::kReadOnly, RunContainerCommand, first,
      "Returns longitude and latitude of members of a geospatial index");
  add("geohash", F::kReadOnly, RunContainerCommand, first,
      "Returns members of a geospatial index as standard geohash strings");
  add("geodist", F::kReadOnly, RunContainerCommand, first,
      "Returns the distance between two members of a geospatial index");
  add("georadius", write, Search, first,
      "Query a sorted set representing a geospatial index to fetch members matching a given "
      "maximum distance from a point");
  add("georadius_ro", F::kReadOnly, RunContainerCommand, first,
      "A read-only variant for GEORADIUS");
  add("georadiusbymember", write, Search, first,
      "Query a sorted set representing a geospatial index to fetch members matching a given "
      "maximum distance from a member");
  add("georadiusbymember_ro", F::kReadOnly, RunContainerCommand, first,
      "A read-only variant for GEORADIUSBYMEMBER");
  add("geosearch", F::kReadOnly, RunContainerCommand, first,
      "Query a sorted set representing a geospatial index to fetch members inside an area of a "
      "box or a circle.");
  add("geosearchstore", write, SearchStore, {.first = 1, .last = 2, .step = 1},
      "Query a sorted set representing a geospatial index to fetch members inside an area of a "
      "box or a circle, and store the result in another key.");
}

}  // namespace kvlab
