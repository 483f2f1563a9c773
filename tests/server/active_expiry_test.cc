// The active expiry (server/net/expire_cycle.h), with a real client, on every
// engine and on redis-server 7.0.15 (the `redis` case), which must pass the
// same expectations: keys whose deadline passed are reclaimed although no
// command touches them again (INFO's expired_keys counts them, the memory
// comes back), and keys without a deadline, or with one still ahead, stay.
// The only waits are polls of INFO with generous liveness bounds.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/engine_or_redis.h"
#include "tests/server/redis_connection.h"

namespace kvlab::test {
namespace {

class ActiveExpiryTest : public TargetTest {
 protected:
  // An INFO field as a number (-1 when missing).
  long long InfoField(const std::string& section, const std::string& field) {
    const std::string text = client_->Command({"INFO", section}).text;
    const size_t at = text.find("\r\n" + field + ":");
    if (at == std::string::npos) return -1;
    return std::stoll(text.substr(at + field.size() + 3));
  }
};

TEST_P(ActiveExpiryTest, ExpiredKeysNoCommandTouchesAreReclaimed) {
  constexpr int kExpiring = 2000;
  const std::string value(200, 'v');
  ASSERT_TRUE(client_->Command({"SET", "forever", "x"}).IsStatus("OK"));
  ASSERT_TRUE(client_->Command({"SET", "later", "y", "PX", "600000"}).IsStatus("OK"));
  // A container too: its members go back with it.
  ASSERT_TRUE(client_->Command({"HSET", "hash", "f1", value, "f2", value}).IsInteger(2));
  ASSERT_TRUE(client_->Command({"PEXPIRE", "hash", "1500"}).IsInteger(1));
  const long long expired_before = InfoField("stats", "expired_keys");
  ASSERT_GE(expired_before, 0);
  // 1.5 s: none may have expired when the memory is read below, even in a
  // ThreadSanitizer build.
  for (int i = 0; i < kExpiring; ++i) {
    client_->Append({"SET", "soon:" + std::to_string(i), value, "PX", "1500"});
  }
  ASSERT_TRUE(client_->Flush());
  for (int i = 0; i < kExpiring; ++i) ASSERT_TRUE(client_->GetReply().IsStatus("OK"));
  const long long memory_full = InfoField("memory", "used_memory");
  ASSERT_EQ(InfoField("stats", "expired_keys"), expired_before);

  // Nothing but INFO from here on, until every one of them was reclaimed.
  long long expired = 0;
  for (int poll = 0; poll < 1500; ++poll) {
    expired = InfoField("stats", "expired_keys") - expired_before;
    if (expired >= kExpiring + 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(expired, kExpiring + 1);
  // At least the values' bytes came back (both servers count more per key).
  EXPECT_LT(InfoField("memory", "used_memory"), memory_full - kExpiring * 200LL);
  EXPECT_TRUE(client_->Command({"DBSIZE"}).IsInteger(2));
  EXPECT_TRUE(client_->Command({"GET", "forever"}).IsBulk("x"));
  EXPECT_GT(client_->Command({"PTTL", "later"}).integer, 500'000);
  EXPECT_TRUE(client_->Command({"EXISTS", "hash"}).IsInteger(0));
}

INSTANTIATE_TEST_SUITE_P(Targets, ActiveExpiryTest, ::testing::ValuesIn(EnginesAndRedis()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kvlab::test
