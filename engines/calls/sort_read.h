// ReadSorted: SORT's and SORT_RO's step, run by the engine as a kReadKeys
// operation (operation.h) on the sorted key, inside the command's atomic
// group: it reads the list, set or sorted set, the keys its BY and GET
// patterns name (through the group's KeyReader), sorts as Redis 7.0's
// sortCommandGeneric() does, and either answers the elements or, with
// STORE, leaves them in the group's carry as a list for the kStoreCarry
// after it (an empty list deletes the destination) and answers their count.
//
// Not synchronised: runs with the group's keys held (key_reader.h).
#pragma once

#include "engines/calls/atomic_group.h"
#include "engines/calls/key_reader.h"
#include "engines/operation.h"

namespace kvlab {

// Operation::read_keys for SORT; op.arg_pool[arg_first, +arg_count) is the
// whole command (already validated by ParseSortOptions), and op.integer is
// 1 for SORT_RO.
OpResult ReadSorted(const Operation& op, KeyReader& keys, GroupState& group);

}  // namespace kvlab
