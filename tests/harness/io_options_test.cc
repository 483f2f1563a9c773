// kvlab-load's I/O-model options: --io, --loop-threads, --io-flush.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/command_line.h"
#include "harness/clients/event_loop.h"

namespace kvlab::harness {
namespace {

Status ParseWithTarget(std::vector<std::string> extra, CommandLineOptions* out) {
  std::vector<std::string> args = {"kvlab-load", "--target", "unix:///tmp/x.sock"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ParseCommandLine(args, out);
}

TEST(IoOptionsTest, DirectIsTheDefault) {
  CommandLineOptions options;
  ASSERT_TRUE(ParseWithTarget({"--client", "shared"}, &options).ok());
  EXPECT_EQ(options.config.io.model, IoModel::kDirect);
  EXPECT_EQ(options.config.io.flush, FlushMode::kPerCommand);
  EXPECT_EQ(options.config.io.loop_threads, 0);
}

TEST(IoOptionsTest, EventLoopWithThreadsAndBatchedFlush) {
  CommandLineOptions options;
  ASSERT_TRUE(ParseWithTarget({"--client", "pooled", "--io", "event-loop", "--loop-threads", "3",
                               "--io-flush", "batch"},
                              &options)
                  .ok());
  EXPECT_EQ(options.config.io.model, IoModel::kEventLoop);
  EXPECT_EQ(options.config.io.loop_threads, 3);
  EXPECT_EQ(options.config.io.flush, FlushMode::kBatch);
}

TEST(IoOptionsTest, MistakesNameTheOptionAndWhatIsAllowed) {
  CommandLineOptions options;
  Status bad = ParseWithTarget({"--client", "shared", "--io", "netty"}, &options);
  EXPECT_NE(bad.message().find("bad --io 'netty' (allowed: direct, event-loop)"),
            std::string::npos);
  bad = ParseWithTarget({"--client", "shared", "--io", "event-loop", "--io-flush", "sometimes"},
                        &options);
  EXPECT_NE(bad.message().find("allowed: command, batch"), std::string::npos);
  bad = ParseWithTarget({"--client", "shared", "--io", "event-loop", "--loop-threads", "0"},
                        &options);
  EXPECT_NE(bad.message().find("--loop-threads"), std::string::npos);
  bad = ParseWithTarget({"--client", "shared", "--loop-threads", "2"}, &options);
  EXPECT_NE(bad.message().find("apply to --io event-loop only"), std::string::npos);
  bad = ParseWithTarget({"--client", "dedicated", "--io", "event-loop"}, &options);
  EXPECT_NE(bad.message().find("applies to --client pooled and shared only"), std::string::npos);
}

TEST(IoOptionsTest, LoopThreadsDefaultToTheUsableCores) {
  EXPECT_EQ(EffectiveLoopThreads(0, {0, 1, 2}), 3);
  EXPECT_EQ(EffectiveLoopThreads(5, {0}), 5);
}

}  // namespace
}  // namespace kvlab::harness
