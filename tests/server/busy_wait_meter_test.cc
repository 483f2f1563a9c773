// BusyWaitMeter's known answers on a clock the test drives: spans tile the
// time between marks, Pause() drops a gap, and after Reset(t) the span in
// progress counts from t only (CONFIG RESETSTAT while a thread sleeps or
// works through a round).
#include "base/busy_wait_meter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

namespace kvlab {
namespace {

TEST(BusyWaitMeter, SpansBetweenMarksAreBusyThenWaiting) {
  BusyWaitMeter meter;
  meter.WaitEnds(100);  // the first mark starts a span and adds nothing
  meter.WaitBegins(130);
  meter.WaitEnds(200);
  meter.WaitBegins(205);
  EXPECT_EQ(meter.Totals().busy_ns, 35);
  EXPECT_EQ(meter.Totals().wait_ns, 70);
}

TEST(BusyWaitMeter, APauseDropsTheGapUntilTheNextMark) {
  BusyWaitMeter meter;
  meter.WaitEnds(100);
  meter.Pause();
  meter.WaitBegins(1000);  // sampling back on: starts a span
  meter.WaitEnds(1010);
  EXPECT_EQ(meter.Totals().busy_ns, 0);
  EXPECT_EQ(meter.Totals().wait_ns, 10);
}

TEST(BusyWaitMeter, AResetClipsTheSpanInProgress) {
  BusyWaitMeter meter;
  meter.WaitBegins(100);  // asleep since 100
  meter.WaitEnds(150);
  meter.WaitBegins(160);  // asleep again
  meter.Reset(1000);
  EXPECT_EQ(meter.Totals().busy_ns, 0);
  EXPECT_EQ(meter.Totals().wait_ns, 0);
  meter.WaitEnds(1040);    // woke: waited 40 since the reset, not 880
  meter.WaitBegins(1100);  // worked 60
  EXPECT_EQ(meter.Totals().wait_ns, 40);
  EXPECT_EQ(meter.Totals().busy_ns, 60);
  meter.Reset(1200);  // a reset in the middle of a wait, then work
  meter.WaitEnds(1250);
  meter.WaitBegins(1251);
  EXPECT_EQ(meter.Totals().wait_ns, 50);
  EXPECT_EQ(meter.Totals().busy_ns, 1);
}

// The owner marks on its own clock while another thread resets: no data
// race (ThreadSanitizer), and after the last reset, the totals hold only
// spans that began at or after it.
TEST(BusyWaitMeter, ResetsFromAnotherThreadWhileTheOwnerMarks) {
  BusyWaitMeter meter;
  std::atomic<int64_t> clock{1};
  std::atomic<bool> done{false};
  meter.WaitEnds(clock.load());  // before the owner starts: it has a span from the outset
  std::thread owner([&] {
    for (int i = 0; !done.load(); ++i) {
      const int64_t now = clock.fetch_add(1) + 1;
      if (i % 2 == 0) {
        meter.WaitBegins(now);
      } else {
        meter.WaitEnds(now);
      }
    }
  });
  for (int i = 0; i < 1000 || clock.load() < 10'000; ++i) {
    meter.Reset(clock.load());
    const BusyWaitTotals totals = meter.Totals();
    EXPECT_GE(totals.busy_ns, 0);
    EXPECT_GE(totals.wait_ns, 0);
  }
  done.store(true);
  owner.join();
  const int64_t last_reset = clock.load();
  meter.Reset(last_reset);
  meter.WaitEnds(last_reset + 7);
  meter.WaitBegins(last_reset + 10);
  EXPECT_EQ(meter.Totals().wait_ns, 7);
  EXPECT_EQ(meter.Totals().busy_ns, 3);
}

}  // namespace
}  // namespace kvlab
