// PlainKeyspace's active-expiry step (ReclaimExpired()) and the count of
// keys with a deadline that lets it skip a keyspace without any.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engines/keyspace/plain_keyspace.h"
#include "engines/memory_meter.h"
#include "engines/modification_feed.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

// The keyspace takes the time from its caller: each test moves `now_` itself.
class PlainKeyspaceTest : public ::testing::Test {
 protected:
  std::string Do(const Operation& op) { return Describe(keys_.Apply(op, now_)); }

  int64_t now_ = 1'700'000'000'000;  // unix ms
  MemoryMeter meter_{0};
  ModificationFeed feed_;
  PlainKeyspace keys_{meter_, feed_};
};

TEST_F(PlainKeyspaceTest, CountsTheKeysThatHaveADeadline) {
  const int64_t far = now_ + 600'000;
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  ASSERT_EQ(Do(Set("a", "1", {.expire_at_ms = far})), Ok());
  EXPECT_EQ(keys_.KeysWithDeadline(), 1u);
  ASSERT_EQ(Do(Persist("a")), Int(1));
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  ASSERT_EQ(Do(ExpireAt("a", far)), Int(1));
  ASSERT_EQ(Do(ExpireAt("a", far + 1)), Int(1));  // a deadline replaced: still one key
  EXPECT_EQ(keys_.KeysWithDeadline(), 1u);
  ASSERT_EQ(Do(Append("a", "2")), Int(2));  // keeps the deadline
  ASSERT_EQ(Do(IncrBy("a", 1)), Int(13));   // keeps it too
  EXPECT_EQ(keys_.KeysWithDeadline(), 1u);
  ASSERT_EQ(Do(Set("a", "3")), Ok());  // drops it
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  ASSERT_EQ(Do(Set("b", "1", {.expire_at_ms = far})), Ok());
  ASSERT_EQ(Do(Set("c", "1", {.expire_at_ms = far})), Ok());
  ASSERT_EQ(Do(GetSet("c", "2")), Bulk("1"));  // drops it
  EXPECT_EQ(keys_.KeysWithDeadline(), 1u);
  ASSERT_EQ(Do(Del("b")), Int(1));
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  ASSERT_EQ(Do(Set("d", "1", {.expire_at_ms = far})), Ok());
  keys_.Clear();
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);

  // An expired entry a write reclaims leaves the count too.
  const int64_t soon = now_ + 20;
  ASSERT_EQ(Do(Set("e", "1", {.expire_at_ms = soon})), Ok());
  now_ = soon + 1;
  ASSERT_EQ(Do(Set("e", "2")), Ok());
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  EXPECT_EQ(feed_.expired(), 1u);
}

TEST_F(PlainKeyspaceTest, ReclaimLooksFurtherOnlyWhileMuchOfWhatItMeetsHasExpired) {
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) names.push_back("k" + std::to_string(i));
  const int64_t soon = now_ + 30;
  for (const std::string& name : names) ASSERT_EQ(Do(Set(name, "v", {.expire_at_ms = soon})), Ok());
  now_ = soon + 1;
  // Every entry met has expired: it looks again, 16 times at most.
  const int64_t first = keys_.ReclaimExpired(now_, 8);
  EXPECT_GT(first, 8);
  EXPECT_LE(first, 8 * kReclaimExpiredRounds);
  int64_t reclaimed = first;
  for (int call = 0; call < 10'000 && reclaimed < 2000; ++call) {
    reclaimed += keys_.ReclaimExpired(now_, 8);
  }
  EXPECT_EQ(reclaimed, 2000);
  EXPECT_EQ(keys_.StoredKeys(), 0u);
  EXPECT_EQ(keys_.KeysWithDeadline(), 0u);
  EXPECT_EQ(meter_.UsedBytes(), 0);
  EXPECT_EQ(feed_.expired(), 2000u);

  // Live entries with deadlines: one look, then it stops.
  const int64_t far = now_ + 600'000;
  for (const std::string& name : names) ASSERT_EQ(Do(Set(name, "v", {.expire_at_ms = far})), Ok());
  EXPECT_EQ(keys_.ReclaimExpired(now_, 8), 0);
  EXPECT_EQ(keys_.StoredKeys(), 2000u);
}

}  // namespace
}  // namespace kvlab::testing
