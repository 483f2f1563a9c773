#include "harness/command_line.h"

#include <gtest/gtest.h>

#include "harness/measurement/cpu_usage.h"
#include "harness/output/summary_table.h"

namespace kvlab::harness {
namespace {

Status Parse(std::vector<std::string> args, CommandLineOptions* options) {
  args.insert(args.begin(), "kvlab-load");
  return ParseCommandLine(args, options);
}

TEST(TargetTest, ParsesTcpUnixAndIpv6) {
  Target target;
  ASSERT_TRUE(ParseTarget("tcp://127.0.0.1:6379", &target).ok());
  EXPECT_EQ(target.transport, Transport::kTcp);
  EXPECT_EQ(target.host, "127.0.0.1");
  EXPECT_EQ(target.port, 6379);
  ASSERT_TRUE(ParseTarget("unix:///tmp/r.sock", &target).ok());
  EXPECT_EQ(target.transport, Transport::kUnix);
  EXPECT_EQ(target.path, "/tmp/r.sock");
  EXPECT_EQ(target.ToUrl(), "unix:///tmp/r.sock");
  ASSERT_TRUE(ParseTarget("tcp://[::1]:7000", &target).ok());
  EXPECT_EQ(target.host, "::1");
  EXPECT_EQ(target.ToUrl(), "tcp://[::1]:7000");
}

TEST(TargetTest, RejectsMalformedTargets) {
  Target target;
  for (const char* bad :
       {"localhost:6379", "tcp://host", "tcp://:6379", "tcp://h:0", "tcp://h:70000", "tcp://h:12x",
        "unix://relative.sock", "unix://", "http://h:1"}) {
    const Status status = ParseTarget(bad, &target);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("tcp://HOST:PORT or unix:///PATH"), std::string::npos);
  }
}

TEST(CommandLineTest, FullCommandLineFillsTheConfig) {
  CommandLineOptions options;
  const Status status = Parse({"--target",      "tcp://127.0.0.1:7000",
                               "--client",      "dedicated",
                               "--threads",     "1,2,4",
                               "--connections", "50",
                               "--pipeline",    "16",
                               "--command",     "mix",
                               "--ratio",       "1:3",
                               "--keys",        "1000",
                               "--key-prefix",  "k:",
                               "--key-dist",    "zipf:0.9",
                               "--value-size",  "10-20",
                               "--duration",    "2.5",
                               "--warmup",      "0.5",
                               "--repeat",      "5",
                               "--rate",        "1000",
                               "--nodelay",     "off",
                               "--cpus",        "0-1",
                               "--csv",         "a.csv",
                               "--json",        "a.json",
                               "--prefill",     "--flush",
                               "--seed",        "9",
                               "--quiet"},
                              &options);
  ASSERT_TRUE(status.ok()) << status.message();
  const LoadConfig& c = options.config;
  EXPECT_EQ(c.threads, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(c.connections, 50);
  EXPECT_EQ(c.pipeline, 16);
  EXPECT_EQ(c.workload.command, CommandKind::kMix);
  EXPECT_EQ(c.workload.mix_set_ratio, 1);
  EXPECT_EQ(c.workload.mix_get_ratio, 3);
  EXPECT_EQ(c.workload.keys, 1000u);
  EXPECT_EQ(c.workload.key_prefix, "k:");
  EXPECT_EQ(c.workload.distribution, KeyDistribution::kZipf);
  EXPECT_DOUBLE_EQ(c.workload.zipf_theta, 0.9);
  EXPECT_EQ(c.workload.value_size_min, 10u);
  EXPECT_EQ(c.workload.value_size_max, 20u);
  EXPECT_DOUBLE_EQ(c.duration_s, 2.5);
  EXPECT_DOUBLE_EQ(c.warmup_s, 0.5);
  EXPECT_EQ(c.repetitions, 5);
  EXPECT_DOUBLE_EQ(c.rate, 1000);
  EXPECT_FALSE(c.tcp_nodelay);
  EXPECT_EQ(c.cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(c.prefill);
  EXPECT_TRUE(c.flush);
  EXPECT_EQ(c.workload.seed, 9u);
  EXPECT_EQ(options.csv_path, "a.csv");
  EXPECT_EQ(options.json_path, "a.json");
  EXPECT_TRUE(options.quiet);
}

TEST(CommandLineTest, DefaultsMatchTheIssue) {
  CommandLineOptions options;
  ASSERT_TRUE(Parse({"--target", "unix:///tmp/x.sock", "--client", "pooled"}, &options).ok());
  EXPECT_EQ(options.config.repetitions, 3);
  EXPECT_TRUE(options.config.tcp_nodelay);
  EXPECT_EQ(options.config.workload.increment, 7);
  EXPECT_EQ(options.config.workload.key_prefix, "key:");
  EXPECT_EQ(EffectiveConnections(options.config, 4), 8);  // commons-pool2 maxTotal
  options.config.client = ClientKind::kShared;
  EXPECT_EQ(EffectiveConnections(options.config, 4), 1);
  options.config.client = ClientKind::kDedicated;
  EXPECT_EQ(EffectiveConnections(options.config, 4), 4);
  EXPECT_EQ(options.config.refill, RefillMode::kSteady);
  EXPECT_EQ(options.config.arrival, ArrivalKind::kUniform);
}

TEST(CommandLineTest, OpenLoopArrivalsAndRefill) {
  CommandLineOptions options;
  ASSERT_TRUE(Parse({"--target", "unix:///tmp/x.sock", "--rate", "5000", "--arrival", "poisson",
                     "--pipeline", "8", "--refill", "burst"},
                    &options)
                  .ok());
  EXPECT_DOUBLE_EQ(options.config.rate, 5000);
  EXPECT_EQ(options.config.arrival, ArrivalKind::kPoisson);
  EXPECT_EQ(options.config.refill, RefillMode::kBurst);
}

TEST(CommandLineTest, BadArgumentsNameTheProblem) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "--target is required"},
      {{"--target", "localhost"}, "bad target"},
      {{"--target", "tcp://h:1", "--client", "async"}, "dedicated, pooled, shared"},
      {{"--target", "tcp://h:1", "--threads", "1,,2"}, "--threads"},
      {{"--target", "tcp://h:1", "--threads", "0"}, "--threads"},
      {{"--target", "tcp://h:1", "--pipeline", "0"}, "--pipeline"},
      {{"--target", "tcp://h:1", "--client", "pooled", "--pipeline", "4"}, "dedicated only"},
      {{"--target", "tcp://h:1", "--client", "shared", "--connections", "3"}, "exactly one"},
      {{"--target", "tcp://h:1", "--duration", "0"}, "--duration"},
      {{"--target", "tcp://h:1", "--duration", "abc"}, "--duration"},
      {{"--target", "tcp://h:1", "--repeat", "0"}, "--repeat"},
      {{"--target", "tcp://h:1", "--rate", "-1"}, "--rate"},
      {{"--target", "tcp://h:1", "--nodelay", "maybe"}, "on, off"},
      {{"--target", "tcp://h:1", "--cpus", "3-1"}, "--cpus"},
      {{"--target", "tcp://h:1", "--ratio", "1:1"}, "--command mix only"},
      {{"--target", "tcp://h:1", "--keys", "0"}, "--keys"},
      {{"--target", "tcp://h:1", "--bogus"}, "bogus"},
      {{"--target", "tcp://h:1", "stray"}, "positional"},
      {{"--target"}, "target"},
      {{"--target", "tcp://h:1", "--arrival", "poisson"}, "open loop only"},
      {{"--target", "tcp://h:1", "--rate", "10", "--arrival", "bursty"}, "uniform, poisson"},
      {{"--target", "tcp://h:1", "--refill", "lazy"}, "steady, burst"},
      {{"--target", "tcp://h:1", "--client", "shared", "--refill", "burst"}, "dedicated only"},
      {{"--target", "tcp://h:1", "--command", "mset:0"}, "N must be 1..1000"},
      {{"--target", "tcp://h:1", "--command", "hset:2"}, "mset, mget, multi-incr"},
      {{"--target", "tcp://h:1", "--command", "multi-incr:4", "--client", "pooled"},
       "one connection per thread"},
      {{"--target", "tcp://h:1", "--command", "multi-incr:4", "--threads", "2", "--connections",
        "4"},
       "one connection per thread"},
      {{"--target", "tcp://h:1", "--command", "multi-incr:4", "--io", "event-loop"}, "--io direct"},
      {{"--target", "tcp://h:1", "--command", "mget:2", "--loadgen", "redis-benchmark"},
       "get, set, ping or rb:TEST"},
  };
  for (const auto& [args, expected] : cases) {
    CommandLineOptions options;
    const Status status = Parse(args, &options);
    ASSERT_FALSE(status.ok()) << ::testing::PrintToString(args);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(status.message().find(expected), std::string::npos)
        << status.message() << " should mention " << expected;
  }
}

TEST(CommandLineTest, HelpNeedsNoTarget) {
  CommandLineOptions options;
  ASSERT_TRUE(Parse({"--help"}, &options).ok());
  EXPECT_TRUE(options.help);
  EXPECT_NE(UsageText().find("--target"), std::string::npos);
  EXPECT_NE(UsageText().find("2 usage error"), std::string::npos);
}

TEST(CommandLineTest, StartAtIsAnInstantInNanoseconds) {
  CommandLineOptions options;
  ASSERT_TRUE(Parse({"--target", "tcp://h:1"}, &options).ok());
  EXPECT_EQ(options.start_at_ns, 0u);  // begin at once
  ASSERT_TRUE(Parse({"--target", "tcp://h:1", "--start-at", "1764547200123456789"}, &options).ok());
  EXPECT_EQ(options.start_at_ns, 1764547200123456789u);
  for (const char* bad : {"0", "-5", "1.5e18", "soon", "18446744073709551616"}) {
    const Status status = Parse({"--target", "tcp://h:1", "--start-at", bad}, &options);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("--start-at"), std::string::npos) << status.message();
  }
}

TEST(CpuListTest, ParsesRangesAndRejectsNonsense) {
  std::vector<int> cpus;
  ASSERT_TRUE(ParseCpuList("3,0-1,1", &cpus).ok());
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(UsableCoreCount(cpus), 3);
  EXPECT_FALSE(ParseCpuList("", &cpus).ok());
  EXPECT_FALSE(ParseCpuList("a", &cpus).ok());
  EXPECT_FALSE(ParseCpuList("-1", &cpus).ok());
  // UsableCoreCount({}) against the affinity mask: cpu_usage_test.cc.
}

TEST(SummaryStatisticsTest, MedianAndConfidenceInterval) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(ConfidenceHalfWidth95({5}), 0);
  // mean 2, s = 1, standard error 1/sqrt(3), t(0.975, 2) = 4.303.
  EXPECT_NEAR(ConfidenceHalfWidth95({1, 2, 3}), 4.303 / std::sqrt(3.0), 1e-9);
}

TEST(PasswordTest, GoesWithItsTargetAndNeverIntoTheRecordedCommandLine) {
  CommandLineOptions options;
  ASSERT_TRUE(
      Parse({"--target", "tcp://127.0.0.1:1", "--password", "pw1", "--user", "bench"}, &options)
          .ok());
  EXPECT_EQ(options.config.password, "pw1");
  EXPECT_EQ(options.config.user, "bench");
  EXPECT_EQ(ConnectionOptionsOf(options.config).password, "pw1");
  EXPECT_EQ(ConnectionOptionsOf(options.config, /*control=*/true).user, "bench");
  // Side B of the same server keeps side A's password; another --target has its own or none.
  ASSERT_TRUE(Parse({"--target", "tcp://127.0.0.1:1", "--password", "pw1", "--alternate-with",
                     "--client pooled"},
                    &options)
                  .ok());
  EXPECT_EQ(options.alternation.b.password, "pw1");
  ASSERT_TRUE(Parse({"--target", "tcp://127.0.0.1:1", "--password", "pw1", "--alternate-with",
                     "--target tcp://127.0.0.1:2"},
                    &options)
                  .ok());
  EXPECT_EQ(options.alternation.b.password, "");
  ASSERT_TRUE(Parse({"--target", "tcp://127.0.0.1:1", "--alternate-with",
                     "--target tcp://127.0.0.1:2 --password pw2"},
                    &options)
                  .ok());
  EXPECT_EQ(options.alternation.a.password, "");
  EXPECT_EQ(options.alternation.b.password, "pw2");
  // An empty password and a user without one are usage errors.
  EXPECT_FALSE(Parse({"--target", "tcp://127.0.0.1:1", "--password", ""}, &options).ok());
  EXPECT_FALSE(Parse({"--target", "tcp://127.0.0.1:1", "--user", "bench"}, &options).ok());
  EXPECT_EQ(
      RedactedArguments({"kvlab-load", "--password", "pw1", "--password=pw2", "--alternate-with",
                         "--target tcp://h:2 --password pw3", "--label", "a=pw"}),
      (std::vector<std::string>{"kvlab-load", "--password", kRedacted,
                                std::string("--password=") + kRedacted, "--alternate-with",
                                std::string("--target tcp://h:2 --password ") + kRedacted,
                                "--label", "a=pw"}));
}

}  // namespace
}  // namespace kvlab::harness
