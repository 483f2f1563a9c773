// MergeLanes: the order in which a segment of several lanes (lane_log.h) is
// replayed, and where each lane's file must be cut.
//
// Each lane's units are replayed in its file's order; units of different
// lanes touch different keys and so commute, except a group of several
// lanes, which ran with all of them held: it is replayed once (its first
// lane's record) when every one of its lanes has reached it. A lane stops
// at a group that some other lane never reached — a crash between the
// lanes' writes left only part of it — and so does every lane after it in
// that lane's order (the merge is a prefix of every lane that is closed
// under the groups: nothing replayed can have seen a write left out).
// What a lane leaves out is dropped like a truncated tail.
//
// A pure function; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "server/net/aof_loader.h"

namespace kvlab {

struct LaneMerge {
  std::vector<std::pair<uint32_t, size_t>> order;  // (lane, unit index) to replay
  std::vector<size_t> replayed;                    // per lane: its units replayed (a prefix)
  uint64_t incomplete_groups = 0;                  // groups some lane lacks: left out
  uint64_t max_group = 0;                          // the largest group id seen
  std::string corruption;                          // non-empty: the lanes disagree
};

LaneMerge MergeLanes(std::span<const AppendLogScan> lanes);

}  // namespace kvlab
