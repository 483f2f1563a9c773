// The bit commands as string commands (string_call.h): SETBIT, GETBIT,
// BITCOUNT, BITPOS, BITFIELD, BITFIELD_RO, and the steps of BITOP. Their
// semantics are Redis 7.0's bitopsCommand family (src/bitops.c), with its
// replies, its error texts and its order of checks; the arithmetic lives in
// bit_arithmetic.h.
//
// BITOP is one AtomicGroup of steps the server queues: kBitopFirstSource on
// the first source key (starts the fold in the group's state),
// kBitopSource on each further one, kBitopStore on the destination (stores
// the result, or removes the key when it is empty, and answers its
// length). Each step's Operation::integer is the BitOperator. A source
// holding another type answers WRONGTYPE, and its guard span skips the
// store.
//
// The table is built once and never changes: thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "engines/calls/string_call.h"

namespace kvlab {

inline constexpr std::string_view kBitopFirstSource = "bitop-first-source";
inline constexpr std::string_view kBitopSource = "bitop-source";
inline constexpr std::string_view kBitopStore = "bitop-store";

// BITFIELD with no SET or INCRBY runs as this read-only command, as
// Redis's bitfieldGeneric() reads such a key without writing it.
inline constexpr std::string_view kBitfieldReadOnly = "bitfield_ro";

std::span<const StringCommand> BitStringCommands();

}  // namespace kvlab
