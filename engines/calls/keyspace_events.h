// KeyEventsOf: which keyspace events (Redis's notifyKeyspaceEvent() calls)
// an operation that changed its key raises, in Redis's order and with its
// names, derived from the operation alone (its code, its command's name
// and arguments) so that no command's code carries them: "new" when the
// key was created, then the command's event ("set", "lpush", "zincr",
// "rename_from", ...), then "expire" after a SET with a deadline, or "del"
// when the change left the key missing (a container emptied, EXPIRE with a
// deadline passed, a STORE of an empty result). "expired" is raised where
// an expired entry is reclaimed (ModificationFeed::ReportExpired()).
//
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "engines/modification_feed.h"
#include "engines/operation.h"

namespace kvlab {

// Raises on `feed` the events of `op`, which changed its key; `existed` and
// `exists`: whether the key held a live entry before and after it.
void NotifyKeyEvents(const Operation& op, bool existed, bool exists, const ModificationFeed& feed);

}  // namespace kvlab
