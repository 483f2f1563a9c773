// WindowMarks (harness/window_marks.h): a mark takes every source's reading
// at one boundary, and Between() turns two marks into a repetition's
// figures — checked against a fake point whose counts, backlog, server CPU,
// wake-ups, -MOVED replies, INFO stages and INFO commandstats are known.
#include "harness/window_marks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "harness/measurement/info_fields.h"

namespace kvlab::harness {
namespace {

// A point whose readings the test sets before each Take().
class FakeSources final : public WindowSources {
 public:
  ThreadCounters TakeCounters(uint64_t* at_ns) override {
    *at_ns = at_ns_;
    ThreadCounters taken = counters;
    counters = ThreadCounters{};
    return taken;
  }
  uint64_t Backlog(uint64_t at_ns) const override {
    backlog_asked_at = at_ns;
    return backlog;
  }
  double ServerCpuSeconds() override { return server_cpu_s; }
  int64_t LoopWakeups() const override { return wakeups; }
  int64_t Moved() const override { return moved; }
  StageTotals ServerStages() override { return ParseStageTotals(stages_info); }
  CommandStatTotals ServerCommandStats() override {
    CommandStatTotals totals = ParseCommandStatTotals(commandstats_info);
    totals.read_at_ns = commandstats_read_at_ns;
    return totals;
  }

  uint64_t at_ns_ = 0;
  ThreadCounters counters;
  uint64_t backlog = 0;
  mutable uint64_t backlog_asked_at = 0;
  double server_cpu_s = -1;
  int64_t wakeups = -1;
  int64_t moved = -1;
  std::string stages_info;               // INFO stages' text
  std::string commandstats_info;         // INFO commandstats' text
  uint64_t commandstats_read_at_ns = 0;  // when its reply came back
};

class WindowMarksTest : public testing::Test {
 protected:
  // The stage figures of one window whose edges read INFO stages as
  // `start_info` and `end_info`, and which completed `ops` operations.
  StageFigures StagesOver(WindowMarks& marks, const char* start_info, const char* end_info,
                          uint64_t ops) {
    sources_.stages_info = start_info;
    WindowMark start = marks.Take();
    sources_.stages_info = end_info;
    sources_.counters.ops = ops;
    WindowMark end = marks.Take();
    return marks.Between(start, end).stages;
  }

  FakeSources sources_;
  const WindowWatch watch_{WatchOptions{}, 0};
};

TEST_F(WindowMarksTest, ClosedLoopCountsAndRates) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, /*usable_cores=*/3, /*allowed_cores=*/2.5);
  sources_.at_ns_ = 1'000'000'000;
  sources_.wakeups = 10;
  sources_.moved = 4;
  WindowMark start = marks.Take();
  EXPECT_EQ(start.at_ns, 1'000'000'000u);

  sources_.at_ns_ = 3'000'000'000;  // a 2 s window
  sources_.counters.ops = 1000;
  sources_.counters.errors = 5;
  sources_.counters.misses = 7;
  sources_.counters.wrong_type = 2;
  sources_.counters.ops_total = 1234;
  for (int i = 0; i < 10; ++i) sources_.counters.latency.Record(1000);
  sources_.wakeups = 510;
  sources_.moved = 9;
  WindowMark end = marks.Take();
  EXPECT_EQ(end.counters.ops_total, 1234u);
  EXPECT_EQ(sources_.backlog_asked_at, 0u);  // closed loop: no backlog asked for

  const RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.ops, 1000u);
  EXPECT_EQ(r.errors, 5u);
  EXPECT_EQ(r.misses, 7u);
  EXPECT_EQ(r.wrong_type, 2u);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0);
  EXPECT_DOUBLE_EQ(r.ops_per_s, 500.0);
  EXPECT_DOUBLE_EQ(r.loop_wakeups_per_op, 0.5);
  EXPECT_EQ(r.moved, 5);
  EXPECT_EQ(r.latency.count(), 10u);  // moved out of the end mark
  EXPECT_EQ(r.usable_cores, 3);
  EXPECT_DOUBLE_EQ(r.allowed_cores, 2.5);
  EXPECT_GE(r.client_cpu, 0.0);
  EXPECT_LT(r.server_cpu, 0.0);  // not reported
  EXPECT_DOUBLE_EQ(r.offered_rate, 0.0);
  EXPECT_FALSE(r.behind);
}

TEST_F(WindowMarksTest, OpenLoopBacklogDecidesBehind) {
  WindowMarks marks(sources_, watch_, /*rate=*/1000, 1, 1.0);
  sources_.at_ns_ = 0;
  sources_.backlog = 10;
  sources_.server_cpu_s = 4.0;
  WindowMark start = marks.Take();

  // 1 s: 900 answered, the backlog grew by 90: 900 < 0.95 * 990, behind.
  sources_.at_ns_ = 1'000'000'000;
  sources_.counters.ops = 880;
  sources_.counters.errors = 20;
  sources_.backlog = 100;
  sources_.server_cpu_s = 4.5;
  WindowMark end = marks.Take();
  EXPECT_EQ(sources_.backlog_asked_at, 1'000'000'000u);  // at the boundary
  RepetitionResult r = marks.Between(start, end);
  EXPECT_DOUBLE_EQ(r.offered_rate, 1000.0);
  EXPECT_DOUBLE_EQ(r.achieved_rate, 900.0);
  EXPECT_EQ(r.backlog, 100u);
  EXPECT_TRUE(r.behind);
  // Over the time between the two INFO readings.
  EXPECT_DOUBLE_EQ(r.server_cpu, 0.5 / ((end.server_cpu_at_ns - start.server_cpu_at_ns) / 1e9));
  EXPECT_EQ(r.moved, -1);  // not routed
  EXPECT_DOUBLE_EQ(r.loop_wakeups_per_op, -1.0);

  // The next 1 s: the backlog shrinks by 50 while 960 are answered: not behind.
  start = std::move(end);
  sources_.at_ns_ = 2'000'000'000;
  sources_.counters.ops = 960;
  sources_.backlog = 50;
  end = marks.Take();
  r = marks.Between(start, end);
  EXPECT_FALSE(r.behind);
  EXPECT_EQ(r.backlog, 50u);
}

// INFO stages at both edges: microseconds per request timed in the window,
// stage by stage, adding up to the total's; a stage the window did not
// record (queue: the server's engine has no hop) stays absent.
TEST_F(WindowMarksTest, ServerStagesAreWindowDeltasPerSampledRequest) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  sources_.stages_info =
      "# Stages\r\nstage_sample:10\r\nstage_samples:100\r\n"
      "stage_read:calls=100,usec=200.000,usec_per_call=2.000,p50=1.9,p99=3,p99.9=4\r\n"
      "stage_execute:calls=100,usec=100.000,usec_per_call=1.000,p50=1,p99=1,p99.9=1\r\n"
      "stage_queue:calls=7,usec=70.000,usec_per_call=10.000,p50=10,p99=10,p99.9=10\r\n"
      "stage_total:calls=100,usec=370.000,usec_per_call=3.700,p50=3,p99=4,p99.9=5\r\n"
      "thread_io0:busy_usec=1.000,wait_usec=2.000\r\n";
  WindowMark start = marks.Take();
  sources_.at_ns_ = 1'000'000'000;
  sources_.stages_info =
      "stage_read:calls=150,usec=300.000,usec_per_call=2.000,p50=2,p99=3,p99.9=4\r\n"
      "stage_execute:calls=150,usec=250.000,usec_per_call=1.667,p50=1,p99=5,p99.9=5\r\n"
      "stage_queue:calls=7,usec=70.000,usec_per_call=10.000,p50=10,p99=10,p99.9=10\r\n"
      "stage_total:calls=150,usec=620.000,usec_per_call=4.133,p50=3,p99=6,p99.9=7\r\n";
  WindowMark end = marks.Take();
  const RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.stages.samples, 50u);
  const auto& names = ServerStageNames();
  auto figure = [&](std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return r.stages.us_per_request[i];
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(figure("read"), 2.0);
  EXPECT_DOUBLE_EQ(figure("execute"), 3.0);
  EXPECT_DOUBLE_EQ(figure("total"), 5.0);
  EXPECT_TRUE(std::isnan(figure("queue")));  // no call in the window
  EXPECT_TRUE(std::isnan(figure("parse")));  // never reported
}

// A server without INFO stages (redis-server), or totals that went back
// (CONFIG RESETSTAT inside the window): no figure at all.
TEST_F(WindowMarksTest, ServerStagesAbsentOrResetGiveNothing) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  WindowMark start = marks.Take();
  sources_.at_ns_ = 1'000'000'000;
  WindowMark end = marks.Take();
  RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.stages.samples, 0u);
  EXPECT_TRUE(std::isnan(r.stages.us_per_request[0]));
  sources_.stages_info = "stage_total:calls=90,usec=9.0\r\n";
  start = marks.Take();
  sources_.stages_info = "stage_total:calls=3,usec=1.0\r\n";
  end = marks.Take();
  r = marks.Between(start, end);
  EXPECT_EQ(r.stages.samples, 0u);
}

// INFO stages' thread lines at both edges: the I/O threads' and the shard
// threads' busy share of the window, and every thread's busy microseconds
// per operation. Here io0 and io1 each work 300 and 100 of 1,000 us, and
// the shard 500 of 1,000, over 400 operations.
TEST_F(WindowMarksTest, ThreadBusyTimesAreWindowSharesAndPerOp) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  const StageFigures sharded = StagesOver(marks,
                                          "stage_total:calls=1,usec=1.0\r\n"
                                          "thread_io0:busy_usec=1000.000,wait_usec=2000.000\r\n"
                                          "thread_io1:busy_usec=10.000,wait_usec=20.000\r\n"
                                          "thread_shard0:busy_usec=5.000,wait_usec=5.000\r\n",
                                          "stage_total:calls=2,usec=2.0\r\n"
                                          "thread_io0:busy_usec=1300.000,wait_usec=2700.000\r\n"
                                          "thread_io1:busy_usec=110.000,wait_usec=920.000\r\n"
                                          "thread_shard0:busy_usec=505.000,wait_usec=505.000\r\n",
                                          400);
  EXPECT_DOUBLE_EQ(sharded.io_busy_share, 400.0 / 2000.0);
  EXPECT_DOUBLE_EQ(sharded.other_busy_share, 0.5);
  EXPECT_DOUBLE_EQ(sharded.busy_us_per_op, 900.0 / 400.0);

  // An inline engine has I/O threads only: no shard share, and the busy
  // time per operation is theirs.
  const StageFigures inline_engine = StagesOver(marks, "thread_io0:busy_usec=0,wait_usec=0\r\n",
                                                "thread_io0:busy_usec=200,wait_usec=600\r\n", 400);
  EXPECT_DOUBLE_EQ(inline_engine.io_busy_share, 0.25);
  EXPECT_TRUE(std::isnan(inline_engine.other_busy_share));
  EXPECT_DOUBLE_EQ(inline_engine.busy_us_per_op, 0.5);
}

// No thread figure when sampling was off (nothing added), the totals went
// back (CONFIG RESETSTAT), a group's threads changed, or the server has no
// thread lines (redis-server). Every window completed 100 operations.
TEST_F(WindowMarksTest, ThreadBusyTimesWithoutAWindowGiveNothing) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  const char* kIo = "thread_io0:busy_usec=5,wait_usec=5\r\n";
  const StageFigures idle = StagesOver(marks, kIo, kIo, 100);
  EXPECT_TRUE(std::isnan(idle.io_busy_share));
  EXPECT_TRUE(std::isnan(idle.busy_us_per_op));
  const StageFigures reset = StagesOver(marks, kIo, "thread_io0:busy_usec=1,wait_usec=1\r\n", 100);
  EXPECT_TRUE(std::isnan(reset.io_busy_share));
  const StageFigures grew = StagesOver(
      marks, kIo, "thread_io0:busy_usec=9,wait_usec=9\r\nthread_io1:busy_usec=1,wait_usec=1\r\n",
      100);
  EXPECT_TRUE(std::isnan(grew.io_busy_share));
  // The shard threads went back: a share for the I/O threads, but no busy
  // time per operation, which would leave the shards' out; with the shard
  // thread moving on instead, the same window has one.
  const char* kWithShard =
      "thread_io0:busy_usec=5,wait_usec=5\r\nthread_shard0:busy_usec=9,wait_usec=9\r\n";
  const StageFigures part = StagesOver(
      marks, kWithShard,
      "thread_io0:busy_usec=6,wait_usec=8\r\nthread_shard0:busy_usec=1,wait_usec=1\r\n", 100);
  EXPECT_DOUBLE_EQ(part.io_busy_share, 0.25);
  EXPECT_TRUE(std::isnan(part.other_busy_share));
  EXPECT_TRUE(std::isnan(part.busy_us_per_op));
  const StageFigures whole = StagesOver(
      marks, kWithShard,
      "thread_io0:busy_usec=6,wait_usec=8\r\nthread_shard0:busy_usec=19,wait_usec=9\r\n", 100);
  EXPECT_DOUBLE_EQ(whole.busy_us_per_op, (1.0 + 10.0) / 100);
  const StageFigures none =
      StagesOver(marks, "stage_total:calls=1,usec=1\r\n", "stage_total:calls=2,usec=2\r\n", 100);
  EXPECT_TRUE(std::isnan(none.io_busy_share));
  EXPECT_TRUE(std::isnan(none.busy_us_per_op));
}

// INFO commandstats as redis-server 7.0 writes it: the window's commands
// and microseconds per command, summed over every command but the
// harness's own INFO, subcommands ("config|get") included.
TEST_F(WindowMarksTest, CommandStatsAreWindowDeltasPerCall) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  sources_.commandstats_info =
      "# Commandstats\r\n"
      "cmdstat_set:calls=100,usec=150,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_info:calls=4,usec=400,usec_per_call=100.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_config|get:calls=1,usec=20,usec_per_call=20.00,rejected_calls=0,failed_calls=1\r\n";
  WindowMark start = marks.Take();
  sources_.at_ns_ = 1'000'000'000;
  sources_.commandstats_info =
      "# Commandstats\r\n"
      "cmdstat_set:calls=400,usec=600,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_get:calls=100,usec=50,usec_per_call=0.50,rejected_calls=0,failed_calls=2\r\n"
      "cmdstat_info:calls=6,usec=9000,usec_per_call=1500.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_config|get:calls=1,usec=20,usec_per_call=20.00,rejected_calls=0,failed_calls=1\r\n";
  WindowMark end = marks.Take();
  const RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.commands.calls, 400u);  // 300 SET + 100 GET; INFO left out
  EXPECT_DOUBLE_EQ(r.commands.usec_per_call, (450.0 + 50.0) / 400.0);
  EXPECT_EQ(r.commands.failed_calls, 2u);
}

// Each edge's INFO reply comes after its boundary: the window's lag is the
// two gaps summed (2 ms after the start, 3 ms after the end), the time in
// which calls can gain or lose commands against the window's ops.
TEST_F(WindowMarksTest, CommandStatsLagIsBothEdgesGapToTheirReply) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  sources_.at_ns_ = 5'000'000'000;
  sources_.commandstats_read_at_ns = 5'002'000'000;
  sources_.commandstats_info = "cmdstat_set:calls=100,usec=100\r\n";
  WindowMark start = marks.Take();
  sources_.at_ns_ = 6'000'000'000;
  sources_.commandstats_read_at_ns = 6'003'000'000;
  sources_.commandstats_info = "cmdstat_set:calls=300,usec=300\r\n";
  WindowMark end = marks.Take();
  RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.commands.calls, 200u);
  EXPECT_NEAR(r.commands.boundary_lag_s, 0.005, 1e-12);

  // No figure, no lag.
  sources_.commandstats_info.clear();
  start = marks.Take();
  end = marks.Take();
  r = marks.Between(start, end);
  EXPECT_TRUE(std::isnan(r.commands.boundary_lag_s));
}

// A server without INFO commandstats (kvlab-server), a window in which
// nothing but INFO ran, or totals that went back (CONFIG RESETSTAT, a
// restart): no figure at all.
TEST_F(WindowMarksTest, CommandStatsAbsentIdleOrResetGiveNothing) {
  WindowMarks marks(sources_, watch_, /*rate=*/0, 1, 1.0);
  WindowMark start = marks.Take();
  sources_.at_ns_ = 1'000'000'000;
  WindowMark end = marks.Take();
  RepetitionResult r = marks.Between(start, end);
  EXPECT_EQ(r.commands.calls, 0u);
  EXPECT_TRUE(std::isnan(r.commands.usec_per_call));

  sources_.commandstats_info = "cmdstat_info:calls=4,usec=400,usec_per_call=100.00\r\n";
  start = marks.Take();
  EXPECT_TRUE(start.commands.reported);
  sources_.commandstats_info = "cmdstat_info:calls=9,usec=900,usec_per_call=100.00\r\n";
  end = marks.Take();
  r = marks.Between(start, end);
  EXPECT_EQ(r.commands.calls, 0u);
  EXPECT_TRUE(std::isnan(r.commands.usec_per_call));

  sources_.commandstats_info = "cmdstat_set:calls=90,usec=90\r\n";
  start = marks.Take();
  sources_.commandstats_info = "cmdstat_set:calls=3,usec=1\r\n";
  end = marks.Take();
  r = marks.Between(start, end);
  EXPECT_EQ(r.commands.calls, 0u);
  EXPECT_TRUE(std::isnan(r.commands.usec_per_call));
}

// A field list is read by name: "usec" is not "usec_per_call", and a
// field without a number is absent.
TEST(InfoFields, FieldsAreFoundByWholeName) {
  double value = -1;
  EXPECT_TRUE(InfoFieldValue("usec_per_call=2.5,usec=10", "usec", &value));
  EXPECT_DOUBLE_EQ(value, 10.0);
  EXPECT_TRUE(InfoFieldValue("usec_per_call=2.5,usec=10", "usec_per_call", &value));
  EXPECT_DOUBLE_EQ(value, 2.5);
  EXPECT_FALSE(InfoFieldValue("calls=x,usec=1", "calls", &value));
  EXPECT_FALSE(InfoFieldValue("calls=3", "usec", &value));
  EXPECT_FALSE(InfoFieldValue("", "calls", &value));
}

}  // namespace
}  // namespace kvlab::harness
