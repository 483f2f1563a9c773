#include "server/net/lane_merge.h"

#include <set>

namespace kvlab {

LaneMerge MergeLanes(std::span<const AppendLogScan> lanes) {
  LaneMerge merge;
  merge.replayed.assign(lanes.size(), 0);
  for (const AppendLogScan& lane : lanes) {
    for (const AppendLogUnit& unit : lane.units) {
      if (unit.group > merge.max_group) merge.max_group = unit.group;
      for (uint32_t member : unit.group_lanes) {
        if (member >= lanes.size()) {
          merge.corruption = "a group of lane " + std::to_string(member) + " in a segment of " +
                             std::to_string(lanes.size()) + " lanes";
          return merge;
        }
      }
    }
  }
  std::vector<size_t>& head = merge.replayed;
  // The part of `group` at the head of `lane`, or null.
  auto part_at_head = [&](uint32_t lane, uint64_t group) -> const AppendLogUnit* {
    if (head[lane] >= lanes[lane].units.size()) return nullptr;
    const AppendLogUnit& unit = lanes[lane].units[head[lane]];
    return unit.group == group ? &unit : nullptr;
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (uint32_t lane = 0; lane < lanes.size(); ++lane) {
      while (head[lane] < lanes[lane].units.size()) {
        const AppendLogUnit& unit = lanes[lane].units[head[lane]];
        if (unit.group == 0) {
          merge.order.emplace_back(lane, head[lane]++);
          progress = true;
          continue;
        }
        bool whole = true;
        for (uint32_t member : unit.group_lanes) whole = whole && part_at_head(member, unit.group);
        if (!whole) break;
        const uint32_t first = unit.group_lanes.front();
        if (part_at_head(first, unit.group)->marker) {
          merge.corruption = "group " + std::to_string(unit.group) + " has no record in lane " +
                             std::to_string(first);
          return merge;
        }
        merge.order.emplace_back(first, head[first]);
        for (uint32_t member : unit.group_lanes) ++head[member];
        progress = true;
      }
    }
  }
  std::set<uint64_t> left_out;
  for (uint32_t lane = 0; lane < lanes.size(); ++lane) {
    if (head[lane] < lanes[lane].units.size()) left_out.insert(lanes[lane].units[head[lane]].group);
  }
  merge.incomplete_groups = left_out.size();
  return merge;
}

}  // namespace kvlab
