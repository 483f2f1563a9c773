// The HyperLogLog commands as string commands (string_call.h): PFADD,
// PFCOUNT of one key, PFDEBUG, and the steps of PFCOUNT of several keys and
// of PFMERGE. Their semantics are Redis 7.0's (src/hyperloglog.c): replies,
// error texts and the order of checks; the representation lives in
// engines/rules/hyperloglog.h.
//
// PFCOUNT of one key may write: it stores the estimate in the value's cache
// when the cache is stale, as Redis does (the value changes; a WATCH on the
// key fails). PFCOUNT of several keys is one AtomicGroup of kPfcountSource
// steps, each folding its key's registers into the group's state; the
// last (Operation::integer 1) answers the estimate. PFMERGE is
// kPfmergeSource on the destination and on each source, then kPfmergeStore
// on the destination. A source that is not an HLL answers its error and
// its guard span skips the rest.
//
// The table is built once and never changes: thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "engines/calls/string_call.h"

namespace kvlab {

inline constexpr std::string_view kPfcountSource = "pfcount-source";
inline constexpr std::string_view kPfmergeSource = "pfmerge-source";
inline constexpr std::string_view kPfmergeStore = "pfmerge-store";

std::span<const StringCommand> HllStringCommands();

}  // namespace kvlab
