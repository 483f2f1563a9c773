// The redis-benchmark adapter's pure parts: its arguments, its CSV (a known
// answer) and what it refuses. kvlab_load_cli_test.cc runs it for real.
#include "harness/redis_benchmark.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/workloads/workload.h"

namespace kvlab::harness {
namespace {

constexpr const char* kCsv =
    "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\","
    "\"p99_latency_ms\",\"max_latency_ms\"\n"
    "\"PING_MBULK\",\"90909.09\",\"0.026\",\"0.016\",\"0.031\",\"0.039\",\"0.071\",\"0.159\"\n"
    "\"SET\",\"111111.12\",\"0.025\",\"0.016\",\"0.030\",\"0.031\",\"0.063\",\"0.231\"\n"
    "\"LRANGE_100 (first 100 "
    "elements)\",\"40000.00\",\"0.5\",\"0.1\",\"0.4\",\"0.6\",\"0.9\",\"2\"\n"
    "\"LRANGE_1000 (first 1000 elements)\",\"4000.00\",\"5\",\"1\",\"4\",\"6\",\"9\",\"20\"\n";

WorkloadSpec Command(std::string_view text) {
  WorkloadSpec spec;
  EXPECT_TRUE(ParseCommand(text, &spec).ok()) << text;
  return spec;
}

TEST(RedisBenchmarkTest, CsvGivesTheCommandsTest) {
  RedisBenchmarkFigures set;
  ASSERT_TRUE(ParseRedisBenchmarkCsv(kCsv, Command("set"), &set).ok());
  EXPECT_DOUBLE_EQ(set.rps, 111111.12);
  EXPECT_DOUBLE_EQ(set.avg_ms, 0.025);
  EXPECT_DOUBLE_EQ(set.p50_ms, 0.030);
  EXPECT_DOUBLE_EQ(set.p99_ms, 0.063);
  EXPECT_DOUBLE_EQ(set.max_ms, 0.231);
  RedisBenchmarkFigures ping;
  ASSERT_TRUE(ParseRedisBenchmarkCsv(kCsv, Command("ping"), &ping).ok());
  EXPECT_DOUBLE_EQ(ping.rps, 90909.09);
  // A test whose row carries a note; LRANGE_100 is not LRANGE_1000's prefix match.
  RedisBenchmarkFigures lrange;
  ASSERT_TRUE(ParseRedisBenchmarkCsv(kCsv, Command("rb:lrange_100"), &lrange).ok());
  EXPECT_DOUBLE_EQ(lrange.rps, 40000.0);
  RedisBenchmarkFigures get;
  const Status missing = ParseRedisBenchmarkCsv(kCsv, Command("get"), &get);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no figures for GET"), std::string::npos);
  EXPECT_FALSE(ParseRedisBenchmarkCsv("", Command("set"), &set).ok());
  EXPECT_FALSE(ParseRedisBenchmarkCsv("no csv here\n", Command("set"), &set).ok());
}

// With --cluster, redis-benchmark names the masters before its CSV.
TEST(RedisBenchmarkTest, CsvAfterTheClusterPreamble) {
  const std::string csv = std::string(
                              "Cluster has 2 master nodes:\n\nMaster 0: 0f1e 127.0.0.1:7000\n"
                              "Master 1: 9a8b 127.0.0.1:7001\n\n") +
                          kCsv;
  RedisBenchmarkFigures set;
  ASSERT_TRUE(ParseRedisBenchmarkCsv(csv, Command("set"), &set).ok());
  EXPECT_DOUBLE_EQ(set.rps, 111111.12);
}

TEST(RedisBenchmarkTest, ItsOwnTestsAreCommandsOnlyItSends) {
  for (const std::string_view test : kRedisBenchmarkTests) {
    const WorkloadSpec spec = Command("rb:" + std::string(test));
    EXPECT_EQ(spec.command, CommandKind::kRedisBenchmark);
    EXPECT_EQ(CommandLabel(spec), "rb:" + std::string(test));
  }
  WorkloadSpec spec;
  const Status unknown = ParseCommand("rb:lrange_1000", &spec);
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("lrange_600"), std::string::npos);
  LoadConfig config;
  ASSERT_TRUE(ParseTarget("tcp://127.0.0.1:7000", &config.target).ok());
  config.workload = Command("rb:lpush");
  const Status own = ValidateConfig(config);
  EXPECT_FALSE(own.ok());
  EXPECT_NE(own.message().find("--loadgen redis-benchmark"), std::string::npos);
  EXPECT_TRUE(ValidateRedisBenchmarkConfig(config).ok());
  const std::vector<std::string> args = RedisBenchmarkArguments(config, 1, 100);
  EXPECT_NE(std::find(args.begin(), args.end(), "lpush"), args.end());
}

TEST(RedisBenchmarkTest, ArgumentsStateThePoint) {
  LoadConfig config;
  ASSERT_TRUE(ParseTarget("tcp://127.0.0.1:7000", &config.target).ok());
  config.workload.command = CommandKind::kGet;
  config.workload.keys = 50;
  config.workload.value_size_min = config.workload.value_size_max = 32;
  config.pipeline = 4;
  config.connections = 8;
  const std::vector<std::string> expected = {
      "-h", "127.0.0.1", "-p", "7000", "--threads", "2",    "-c",    "8",  "-P", "4",
      "-d", "32",        "-t", "get",  "-n",        "5000", "--csv", "-r", "50"};
  EXPECT_EQ(RedisBenchmarkArguments(config, 2, 5000), expected);
  config.workload.keys = 1;  // one key: no -r (redis-benchmark's literal key)
  ASSERT_TRUE(ParseTarget("unix:///tmp/s.sock", &config.target).ok());
  const std::vector<std::string> args = RedisBenchmarkArguments(config, 1, 10);
  EXPECT_EQ(args[0], "-s");
  EXPECT_EQ(args[1], "/tmp/s.sock");
  EXPECT_EQ(std::count(args.begin(), args.end(), "-r"), 0);
}

TEST(RedisBenchmarkTest, RefusesWhatItCannotRun) {
  LoadConfig config;
  ASSERT_TRUE(ParseTarget("tcp://127.0.0.1:7000", &config.target).ok());
  EXPECT_TRUE(ValidateRedisBenchmarkConfig(config).ok());
  LoadConfig incrby = config;
  incrby.workload.command = CommandKind::kIncrby;
  EXPECT_FALSE(ValidateRedisBenchmarkConfig(incrby).ok());
  LoadConfig pooled = config;
  pooled.client = ClientKind::kPooled;
  EXPECT_FALSE(ValidateRedisBenchmarkConfig(pooled).ok());
  LoadConfig open_loop = config;
  open_loop.rate = 1000;
  EXPECT_FALSE(ValidateRedisBenchmarkConfig(open_loop).ok());
  LoadConfig sizes = config;
  sizes.workload.value_size_max = 128;
  EXPECT_FALSE(ValidateRedisBenchmarkConfig(sizes).ok());
}

}  // namespace
}  // namespace kvlab::harness
