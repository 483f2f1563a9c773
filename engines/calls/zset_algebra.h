// The multi-key sorted-set commands' steps, run by the engine as kReadKeys
// operations (operation.h) inside the command's atomic group, so that every
// key is read, and the destination written, in one atomic step on every
// engine:
//
//   ZUNION ZINTER ZDIFF ZINTERCARD ZUNIONSTORE ZINTERSTORE ZDIFFSTORE: one
//     ReadZSetAlgebraSource step per source key, in the command's order;
//     each copies its sorted set or set into the group's state (WRONGTYPE
//     for another type stops the rest), and the last one parses the
//     options and computes the result as Redis 7.0's
//     zunionInterDiffGenericCommand() does: it answers it, or, for the
//     STORE forms, leaves it in the group's carry for the kStoreCarry on
//     the destination after it (an empty result deletes the destination)
//     and answers its size.
//   ZRANGESTORE: ReadZRangeStore on the source, then kStoreCarry.
//
// Not synchronised: runs with the group's keys held (key_reader.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/calls/key_reader.h"
#include "engines/operation.h"

namespace kvlab {

// Operation::integer of a ReadZSetAlgebraSource step: what it computes.
enum class ZSetAlgebra : int64_t { kUnion, kInter, kDiff, kInterCard };

// Operation::integer2 of a ReadZSetAlgebraSource step: where numkeys is
// (1, or 2 for the STORE forms), and whether the step reads the first
// source. The first starts the group's copies afresh: a transaction is one
// group, and an earlier command's sources (or those of one that a
// WRONGTYPE source stopped) must not count as this one's.
struct ZSetAlgebraStep {
  size_t numkeys_index = 1;
  bool first_source = false;

  int64_t Encode() const {
    return static_cast<int64_t>(numkeys_index) | (first_source ? kFirstSourceBit : 0);
  }
  static ZSetAlgebraStep Decode(int64_t integer2) {
    return {.numkeys_index = static_cast<size_t>(integer2 & ~kFirstSourceBit),
            .first_source = (integer2 & kFirstSourceBit) != 0};
  }

 private:
  static constexpr int64_t kFirstSourceBit = int64_t{1} << 32;
};

// Operation::read_keys for one source of ZUNION..ZDIFFSTORE.
// op.arg_pool[arg_first, +arg_count) is the whole command, whose numkeys
// the server validated; op.integer2 is a ZSetAlgebraStep, op.integer a
// ZSetAlgebra. REQUIRES: the command's sources are read in order by one
// step each, in one group.
OpResult ReadZSetAlgebraSource(const Operation& op, KeyReader& keys, GroupState& group);

// Operation::read_keys for ZRANGESTORE dst src min max [BYSCORE|BYLEX]
// [REV] [LIMIT offset count] (op.key: src; the arguments as above): leaves
// the range in the group's carry and answers its size, or an error.
OpResult ReadZRangeStore(const Operation& op, KeyReader& keys, GroupState& group);

// A sorted set built from `members` (in that order, Redis's encoding for its
// size) left in the group's carry for the kStoreCarry after the step (an
// empty one deletes the destination); answers its size. GEORADIUS ... STORE
// and GEOSEARCHSTORE end with it.
OpResult CarryZSetForStore(const std::vector<std::pair<std::string, double>>& members,
                           GroupState& group);

// ZMPOP's per-key step (an internal container command, with
// kContainerGuard): pops from its key as ZMPOP's arguments say, answering
// nil when the key is missing (the next key's step runs) or the popped
// [member, score] pairs.
inline constexpr std::string_view kZMPopStep = "zmpop-step";

}  // namespace kvlab
