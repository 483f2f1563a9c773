// Known answers for the bit commands' arithmetic (engines/rules/bit_arithmetic.h),
// each taken from redis-server 7.0.15: BITFIELD's overflow rules at the
// edges of its types (i8, u8, i64, u63), BITPOS looking for a 0 in a
// string of ones, BITCOUNT over BIT ranges, and BITOP's fold.
#include "engines/rules/bit_arithmetic.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kU63Max = (uint64_t{1} << 63) - 1;

const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

TEST(BitArithmetic, SingleBitsCountFromTheTopOfTheFirstByte) {
  const std::string bytes("\x80\x01", 2);
  EXPECT_TRUE(GetBit(bytes, 0));
  EXPECT_FALSE(GetBit(bytes, 1));
  EXPECT_TRUE(GetBit(bytes, 15));
  EXPECT_FALSE(GetBit(bytes, 16));          // past the end reads 0
  EXPECT_FALSE(GetBit(bytes, 4294967295));  // the largest offset
  std::string edited = bytes;
  SetBit(edited, 0, false);
  SetBit(edited, 9, true);
  EXPECT_EQ(edited, std::string("\x00\x41", 2));
}

TEST(BitArithmetic, SignedOverflowAtTheEdgesOfI8) {
  int64_t limit = 0;
  EXPECT_EQ(CheckSignedFieldOverflow(127, 1, 8, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, -128);
  EXPECT_EQ(CheckSignedFieldOverflow(127, 1, 8, FieldOverflow::kSat, &limit), 1);
  EXPECT_EQ(limit, 127);
  EXPECT_EQ(CheckSignedFieldOverflow(-128, -1, 8, FieldOverflow::kSat, &limit), -1);
  EXPECT_EQ(limit, -128);
  // A wrap answers 1 whichever way it went, as Redis's does.
  EXPECT_EQ(CheckSignedFieldOverflow(-128, -1, 8, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, 127);
  limit = 42;
  EXPECT_EQ(CheckSignedFieldOverflow(100, 100, 8, FieldOverflow::kFail, &limit), 1);
  EXPECT_EQ(limit, 42);  // FAIL stores nothing
  EXPECT_EQ(CheckSignedFieldOverflow(-100, 227, 8, FieldOverflow::kFail, &limit), 0);
  // SET i8 to INT64_MIN under SAT stores 127: Redis's maxincr wraps negative.
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Min, 0, 8, FieldOverflow::kSat, &limit), 1);
  EXPECT_EQ(limit, 127);
}

TEST(BitArithmetic, SignedOverflowAtTheEdgesOfI64) {
  int64_t limit = 0;
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Max, 1, 64, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, kInt64Min);
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Max, 1, 64, FieldOverflow::kSat, &limit), 1);
  EXPECT_EQ(limit, kInt64Max);
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Min, -1, 64, FieldOverflow::kSat, &limit), -1);
  EXPECT_EQ(limit, kInt64Min);
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Min, -1, 64, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, kInt64Max);
  EXPECT_EQ(CheckSignedFieldOverflow(kInt64Min, kInt64Max, 64, FieldOverflow::kFail, &limit), 0);
  EXPECT_EQ(CheckSignedFieldOverflow(-1, kInt64Min, 64, FieldOverflow::kFail, &limit), -1);
}

TEST(BitArithmetic, UnsignedOverflowAtTheEdgesOfU8AndU63) {
  uint64_t limit = 0;
  EXPECT_EQ(CheckUnsignedFieldOverflow(255, 1, 8, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, 0u);
  EXPECT_EQ(CheckUnsignedFieldOverflow(255, 1, 8, FieldOverflow::kSat, &limit), 1);
  EXPECT_EQ(limit, 255u);
  EXPECT_EQ(CheckUnsignedFieldOverflow(0, -1, 8, FieldOverflow::kSat, &limit), -1);
  EXPECT_EQ(limit, 0u);
  EXPECT_EQ(CheckUnsignedFieldOverflow(0, -1, 8, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, 255u);
  EXPECT_EQ(CheckUnsignedFieldOverflow(kU63Max, 1, 63, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, 0u);
  EXPECT_EQ(CheckUnsignedFieldOverflow(kU63Max, 1, 63, FieldOverflow::kSat, &limit), 1);
  EXPECT_EQ(limit, kU63Max);
  // SET u63 -1: the value itself is past the type; WRAP keeps its low bits.
  EXPECT_EQ(CheckUnsignedFieldOverflow(~uint64_t{0}, 0, 63, FieldOverflow::kWrap, &limit), 1);
  EXPECT_EQ(limit, kU63Max);
  EXPECT_EQ(CheckUnsignedFieldOverflow(kU63Max - 1, 1, 63, FieldOverflow::kFail, &limit), 0);
}

TEST(BitArithmetic, FieldsReadAndWriteAcrossByteBoundaries) {
  const std::string bytes("\xff\x00", 2);
  EXPECT_EQ(GetUnsignedField(Bytes(bytes), 4, 8), 0xf0u);
  EXPECT_EQ(GetSignedField(Bytes(bytes), 0, 8), -1);
  EXPECT_EQ(GetSignedField(Bytes(bytes), 4, 5), -2);
  EXPECT_EQ(ReadUnsignedField(bytes, 12, 8), 0u);  // past the end reads zeros
  EXPECT_EQ(ReadSignedField(std::string(8, '\xff'), 0, 64), -1);
  EXPECT_EQ(ReadUnsignedField(std::string(8, '\xff'), 1, 63), kU63Max);
  std::string edited(2, '\0');
  // Redis's own example: u5 23 at offset 7 is 00000001|01110000.
  SetUnsignedField(reinterpret_cast<unsigned char*>(edited.data()), 7, 5, 23);
  EXPECT_EQ(edited, std::string("\x01\x70", 2));
  EXPECT_EQ(GetUnsignedField(Bytes(edited), 7, 5), 23u);
}

TEST(BitArithmetic, BitposFindsAZeroPastAStringOfOnesUnlessTheEndIsGiven) {
  const std::string ones("\xff\xff", 2);
  EXPECT_EQ(FindBit(ones, false), 16);
  EXPECT_EQ(FindBit(ones, false, 1, std::nullopt, false), 16);
  EXPECT_EQ(FindBit(ones, false, 0, -1, false), -1);
  EXPECT_EQ(FindBit(ones, false, 0, 15, true), -1);
  EXPECT_EQ(FindBit(std::string("\xff\xfe", 2), false, 0, 15, true), 15);
  EXPECT_EQ(FindBit(ones, true, 3, 10, true), 3);
  EXPECT_EQ(FindBit(std::string(3, '\0'), true), -1);
  EXPECT_EQ(FindBit("", false), -1);
  EXPECT_EQ(FindBit("foobar", false, 2, -1, true), 3);
  EXPECT_EQ(FindBit("foobar", true, 2, 1, false), -1);  // an empty range
}

TEST(BitArithmetic, BitcountCountsBitRangesAndByteRanges) {
  EXPECT_EQ(CountBits("foobar"), 26);
  EXPECT_EQ(CountBits("foobar", 1, 1, false), 6);
  EXPECT_EQ(CountBits("foobar", 5, 30, true), 17);
  EXPECT_EQ(CountBits("foobar", -1, -2, false), 0);
  EXPECT_EQ(CountBits("\xff", 1, 6, true), 6);
  EXPECT_EQ(CountBits("\xff\xff", 7, 8, true), 2);
  EXPECT_EQ(CountBits("\xff", 0, 100, true), 8);
  EXPECT_EQ(CountBits("\xff", -3, -1, true), 3);
  EXPECT_EQ(CountBits("", 0, -1, true), 0);
}

TEST(BitArithmetic, BitopFoldsPadTheShorterSideWithZeros) {
  std::string result;
  FoldBitOperand(BitOperator::kAnd, true, std::string("\xff\x0f", 2), result);
  FoldBitOperand(BitOperator::kAnd, false, "\x3c", result);
  EXPECT_EQ(result, std::string("\x3c\x00", 2));
  FoldBitOperand(BitOperator::kOr, true, "", result);  // a missing first source
  FoldBitOperand(BitOperator::kOr, false, "ab", result);
  EXPECT_EQ(result, "ab");
  FoldBitOperand(BitOperator::kXor, false, "a", result);
  EXPECT_EQ(result, std::string("\x00"
                                "b",
                                2));
  FoldBitOperand(BitOperator::kNot, true, "\x0f", result);
  EXPECT_EQ(result, "\xf0");
}

}  // namespace
}  // namespace kvlab
