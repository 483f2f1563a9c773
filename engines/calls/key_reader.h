// KeyReader: how a kReadKeys operation (SORT) reads keys while its
// AtomicGroup runs — the key it was queued for and, when its group also
// holds kHoldKeyspace, any key at all (the keys SORT's BY and GET patterns
// name are only known once the sorted value has been read).
//
// RunGroupOps() (atomic_group.h) implements it over the engine's own keyed
// path: each read is a kVisit operation run like any other of the group, so
// every engine serves it with what it already holds (the one thread, the
// group's stripes or entries, every shard at the group's barrier).
//
// Not synchronised: used only by the thread running the group, while the
// group's keys are held.
#pragma once

#include <optional>
#include <string_view>

#include "engines/entry.h"

namespace kvlab {

class KeyReader {
 public:
  virtual ~KeyReader() = default;
  // The live entry of `key`, or nullopt when it is missing or expired. The
  // view is valid until the group's next write.
  // REQUIRES: `key` is the kReadKeys operation's key, or the group holds
  // kHoldKeyspace.
  // `zset_as_skiplist`: a sorted set found there is first moved to its
  // skiplist form (a write; the group holds the key for writing).
  virtual std::optional<EntryView> Live(std::string_view key, bool zset_as_skiplist = false) = 0;
};

}  // namespace kvlab
