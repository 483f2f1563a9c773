// ParseRedisInt64 must accept exactly what Redis's string2ll() accepts, and
// CheckedAdd must refuse exactly the sums that overflow int64.
#include "engines/rules/redis_integer.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

TEST(ParseRedisInt64, AcceptsCanonicalDecimals) {
  EXPECT_EQ(ParseRedisInt64("0"), 0);
  EXPECT_EQ(ParseRedisInt64("7"), 7);
  EXPECT_EQ(ParseRedisInt64("-7"), -7);
  EXPECT_EQ(ParseRedisInt64("1234567890"), 1234567890);
  EXPECT_EQ(ParseRedisInt64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseRedisInt64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
}

TEST(ParseRedisInt64, RejectsEverythingElse) {
  for (const std::string text : {"",
                                 "-",
                                 "+1",
                                 " 1",
                                 "1 ",
                                 "01",
                                 "00",
                                 "-0",
                                 "-01",
                                 "1.0",
                                 "1e5",
                                 "0x1",
                                 "abc",
                                 "1a",
                                 "9223372036854775808",
                                 "-9223372036854775809",
                                 "18446744073709551616",
                                 "99999999999999999999",
                                 "123456789012345678901",
                                 "-00000000000000000001"}) {
    EXPECT_EQ(ParseRedisInt64(text), std::nullopt) << "'" << text << "'";
  }
  EXPECT_EQ(ParseRedisInt64(std::string("5\0", 2)), std::nullopt);
}

TEST(CheckedAdd, RefusesOnlyOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(CheckedAdd(1, 2), 3);
  EXPECT_EQ(CheckedAdd(kMax, 0), kMax);
  EXPECT_EQ(CheckedAdd(kMax, -1), kMax - 1);
  EXPECT_EQ(CheckedAdd(kMax, kMin), -1);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, kMin), std::nullopt);
}

}  // namespace
}  // namespace kvlab
