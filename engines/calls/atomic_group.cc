#include "engines/calls/atomic_group.h"

#include <cassert>

namespace kvlab {

void Batch::GroupFrom(uint32_t first, const std::atomic<bool>* abort_if) {
  assert(groups.empty() || groups.back().first + groups.back().count <= first);
  AtomicGroup group;
  group.first = first;
  group.count = static_cast<uint32_t>(ops.size()) - first;
  group.abort_if = abort_if;
  group.needs_state = abort_if != nullptr;
  for (uint32_t i = first; i < ops.size(); ++i) {
    if (NeedsGroupState(ops[i])) group.needs_state = true;
  }
  groups.push_back(group);
}

}  // namespace kvlab
