// SetAlgebra: the intersection, union and difference of sets as Redis 7.0's
// sinterGenericCommand() and sunionDiffGenericCommand() compute them,
// written once for the commands that answer the result (SINTER, SUNION,
// SDIFF, SINTERCARD: server/commands/set_algebra_commands.cc) and those
// that store it (SINTERSTORE, SUNIONSTORE, SDIFFSTORE: engines/calls/set_calls.cc).
//
// Redis's details decide more than the members: a result it builds as an
// intset (every member an integer, at most set-max-intset-entries) is
// answered in ascending order and stored as an intset; SINTER walks its
// smallest set in that set's own order; SDIFF's choice between its two
// algorithms decides which intermediate set it builds, and so the result's
// encoding.
//
// Thread-safe: pure functions over the caller's views.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace kvlab {

enum class SetOperation : int64_t { kInter, kUnion, kDiff };

using SetMembers = std::vector<std::string_view>;

struct SetAlgebraResult {
  SetMembers members;   // in the order Redis answers them
  bool intset = false;  // whether Redis builds the result as an intset
};

// `op` over `sets` (a missing key is an empty set), in the keys' order.
SetAlgebraResult ComputeSetAlgebra(SetOperation op, const std::vector<SetMembers>& sets);

// SINTERCARD: the intersection's size, counting stops at `limit` (0: none).
int64_t IntersectionCardinality(const std::vector<SetMembers>& sets, int64_t limit);

}  // namespace kvlab
