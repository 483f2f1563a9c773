#include "harness/measurement/start_instant.h"

#include <gtest/gtest.h>

#include <atomic>

namespace kvlab::harness {
namespace {

TEST(StartInstantTest, APassedInstantReturnsAtOnceAndSaysHowLate) {
  const uint64_t before = RealtimeNowNs();
  const int64_t late_ns = SleepUntilRealtime(before - 1'000'000, nullptr);
  EXPECT_GE(late_ns, 1'000'000);  // it was already 1 ms late when called
}

TEST(StartInstantTest, AFutureInstantIsNeverLeftEarly) {
  const uint64_t instant = RealtimeNowNs() + 30'000'000;
  const int64_t late_ns = SleepUntilRealtime(instant, nullptr);
  EXPECT_GE(late_ns, 0);
  EXPECT_GE(RealtimeNowNs(), instant);
}

TEST(StartInstantTest, CancellingReturnsBeforeTheInstant) {
  const std::atomic<bool> cancel{true};
  const uint64_t instant = RealtimeNowNs() + 3'600'000'000'000;  // an hour ahead
  EXPECT_LT(SleepUntilRealtime(instant, &cancel), 0);
}

}  // namespace
}  // namespace kvlab::harness
