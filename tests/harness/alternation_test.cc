// Known-answer tests of alternating measurement (harness/alternation.h):
//  - the slices follow ABBA order;
//  - through the switch: two DelayServers that hold every PING for 2 ms
//    (side A) and 6 ms (side B), driven by a closed loop with a fixed number
//    of requests in flight. Every request either side sent is counted exactly
//    once, in its side's ramp, measured part or drain (nothing is lost or
//    credited to the other side at a switch); in each side's measured parts
//    throughput x mean latency equals the requests in flight (Little's law:
//    the dropped ramp took the pipelines' filling out), so the A/B ratio is
//    the known one, B's reply time over A's;
//  - the command line builds side B as side A with the given options replaced.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/alternation.h"
#include "harness/command_line.h"
#include "tests/harness/delay_server.h"

namespace kvlab::harness {
namespace {

using testing::DelayServer;

TEST(AlternationTest, SlicesFollowAbbaOrder) {
  const std::vector<int> expected = {0, 1, 1, 0, 0, 1, 1, 0};
  for (int i = 0; i < static_cast<int>(expected.size()); ++i) {
    EXPECT_EQ(SideOfSlice(i), expected[static_cast<size_t>(i)]) << "slice " << i;
  }
}

LoadConfig PipelinedPings(const Target& target) {
  LoadConfig config;
  config.target = target;
  config.workload.command = CommandKind::kPing;
  config.connections = 2;
  config.pipeline = 4;
  config.repetitions = 1;
  return config;
}

TEST(AlternationTest, KnownDelaysGiveTheKnownRatioThroughTheSwitch) {
  constexpr int kInFlight = 2 * 4;  // connections x pipeline
  DelayServer fast(2'000'000), slow(6'000'000);
  ASSERT_TRUE(fast.started() && slow.started());
  AlternationConfig config;
  config.a = PipelinedPings(fast.unix_target());
  config.b = PipelinedPings(slow.unix_target());
  config.slice_s = 0.1;
  config.ramp_s = 0.015;  // longer than B's 6 ms: no slice measures an emptying or filling pipeline
  config.duration_s = 3.2;
  config.warmup_s = 0;  // so every request sent is in some slice
  AlternationResult result;
  const Status ran = RunAlternation(config, nullptr, &result);
  ASSERT_TRUE(ran.ok()) << ran.message();
  ASSERT_EQ(result.slices.size(), 32u);

  uint64_t sent[2] = {0, 0}, ops[2] = {0, 0};
  double seconds[2] = {0, 0}, latency_sum_us[2] = {0, 0};
  for (const AlternatingSlice& slice : result.slices) {
    EXPECT_EQ(slice.side, SideOfSlice(slice.index));
    EXPECT_EQ(slice.errors, 0u);
    EXPECT_GT(slice.drain_ops, 0u) << "slice " << slice.index << ": nothing was in flight at the switch";
    sent[slice.side] += slice.ramp_ops + slice.ops + slice.drain_ops;
    ops[slice.side] += slice.ops;
    seconds[slice.side] += slice.seconds;
    latency_sum_us[slice.side] += slice.latency.mean_ns() / 1000.0 * static_cast<double>(slice.ops);
  }
  EXPECT_EQ(sent[0], fast.pings());
  EXPECT_EQ(sent[1], slow.pings());
  double rate[2], mean_us[2];
  for (int side = 0; side < 2; ++side) {
    rate[side] = ops[side] / seconds[side];
    mean_us[side] = latency_sum_us[side] / static_cast<double>(ops[side]);
    const double in_flight = rate[side] * mean_us[side] / 1e6;
    EXPECT_GT(in_flight, 0.95 * kInFlight) << "side " << side;
    EXPECT_LT(in_flight, 1.03 * kInFlight) << "side " << side;
  }
  const double ratio = rate[0] / rate[1];
  EXPECT_NEAR(ratio / (mean_us[1] / mean_us[0]), 1.0, 0.04);
  // 6 ms over 2 ms, less what the stack adds to both reply times.
  EXPECT_GT(ratio, 2.4);
  EXPECT_LT(ratio, 3.05);
}

TEST(AlternationTest, SideBIsSideAWithTheGivenOptionsReplaced) {
  CommandLineOptions options;
  const Status parsed = ParseCommandLine(
      {"kvlab-load", "--target", "tcp://127.0.0.1:7000", "--pipeline", "16", "--connections=50",
       "--duration", "2", "--json", "out.json", "--alternate-with",
       "--target tcp://127.0.0.1:7001 --connections 10", "--slice", "0.05"},
      &options);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_TRUE(options.alternate);
  EXPECT_EQ(options.alternation.a.target.port, 7000);
  EXPECT_EQ(options.alternation.b.target.port, 7001);
  EXPECT_EQ(options.alternation.a.connections, 50);
  EXPECT_EQ(options.alternation.b.connections, 10);
  EXPECT_EQ(options.alternation.b.pipeline, 16);
  EXPECT_DOUBLE_EQ(options.alternation.slice_s, 0.05);
  EXPECT_DOUBLE_EQ(options.alternation.duration_s, 2.0);

  CommandLineOptions repeated;
  EXPECT_FALSE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:7000", "--repeat", "3",
                                 "--alternate-with", "--client pooled"},
                                &repeated)
                   .ok());
  CommandLineOptions nested;
  EXPECT_FALSE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:7000",
                                 "--alternate-with", "--slice 0.2"},
                                &nested)
                   .ok());
}

}  // namespace
}  // namespace kvlab::harness
