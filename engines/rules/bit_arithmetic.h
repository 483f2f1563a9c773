// The arithmetic of Redis 7.0's bit commands (src/bitops.c) over a string's
// bytes: single bits, population counts and first-bit searches over BYTE or
// BIT ranges, BITFIELD's integers of 1..64 bits with their overflow rules,
// and BITOP's byte-wise fold. Bit 0 is the most significant bit of byte 0.
//
// Kept apart from the commands (engines/calls/bit_calls.cc) so each rule can be
// checked against known answers on its own.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvlab {

// A bit of `bytes`; bits past the end read as 0.
bool GetBit(std::string_view bytes, uint64_t offset);
// REQUIRES: offset / 8 < bytes.size().
void SetBit(std::string& bytes, uint64_t offset, bool on);

// BITCOUNT key start end [BYTE|BIT]: the set bits between `start` and
// `end` inclusive, counted in bytes or bits, negative from the end.
int64_t CountBits(std::string_view bytes, int64_t start, int64_t end, bool bit_units);
int64_t CountBits(std::string_view bytes);  // the whole string

// BITPOS key bit [start [end [BYTE|BIT]]]: the first position of `bit`, or
// -1. Without `end` the string counts as followed by zeros (so a 0 is
// found past its end); with it, only the range is searched.
int64_t FindBit(std::string_view bytes, bool bit, int64_t start, std::optional<int64_t> end,
                bool bit_units);
int64_t FindBit(std::string_view bytes, bool bit);  // the whole string

// BITFIELD's integers: `bits` wide (1..64 signed, 1..63 unsigned) at bit
// `offset`. REQUIRES: the bytes hold bit offset + bits - 1.
uint64_t GetUnsignedField(const unsigned char* bytes, uint64_t offset, int bits);
int64_t GetSignedField(const unsigned char* bytes, uint64_t offset, int bits);
void SetUnsignedField(unsigned char* bytes, uint64_t offset, int bits, uint64_t value);
// A field read from a string that may end before it (zeros past the end).
uint64_t ReadUnsignedField(std::string_view bytes, uint64_t offset, int bits);
int64_t ReadSignedField(std::string_view bytes, uint64_t offset, int bits);

enum class FieldOverflow : uint8_t { kWrap, kSat, kFail };

// Whether value + increment leaves a `bits`-wide field: 0 when it fits,
// 1 above, -1 below; then *limit is what WRAP or SAT stores (FAIL stores
// nothing and leaves it unset). Redis's check*BitfieldOverflow(), with
// their exact corner cases at 64 and 63 bits.
int CheckUnsignedFieldOverflow(uint64_t value, int64_t increment, int bits, FieldOverflow overflow,
                               uint64_t* limit);
int CheckSignedFieldOverflow(int64_t value, int64_t increment, int bits, FieldOverflow overflow,
                             int64_t* limit);

enum class BitOperator : uint8_t { kAnd, kOr, kXor, kNot };

// BITOP folds its sources in order into `result`: the first source is
// copied (NOT: inverted), each later one combined byte by byte, the shorter
// side padded with zero bytes. The result is as long as the longest source.
void FoldBitOperand(BitOperator op, bool first, std::string_view source, std::string& result);

}  // namespace kvlab
