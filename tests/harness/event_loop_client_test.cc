// The event-loop strategies (--io event-loop) under the same conformance as
// the direct ones: every caller gets its own reply, per-thread order holds,
// the INCRBY sum the harness acknowledged equals the server's value, the pool
// stays within its size, and Interrupt unblocks callers. Each case runs with
// one and with several loop threads, flushing per command and batched. Also
// run under ThreadSanitizer (label tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "harness/clients/event_loop_pooled_client.h"
#include "harness/clients/event_loop_shared_client.h"
#include "harness/clients/resp_encoding.h"
#include "harness/clients/server_control.h"
#include "tests/harness/strategy_conformance.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::AvailableServers;
using testing::RedisServer;
using testing::ServerKind;
using testing::TestServer;

struct LoopCase {
  std::string name;
  ClientKind client;
  int connections;  // pooled: the pool's size (< the conformance threads, so borrowers wait)
  int loop_threads;
  FlushMode flush;
};

std::vector<LoopCase> LoopCases() {
  return {
      {"pooled_1loop_command", ClientKind::kPooled, 3, 1, FlushMode::kPerCommand},
      {"pooled_2loops_batch", ClientKind::kPooled, 3, 2, FlushMode::kBatch},
      {"shared_1loop_command", ClientKind::kShared, 1, 1, FlushMode::kPerCommand},
      {"shared_3loops_batch", ClientKind::kShared, 1, 3, FlushMode::kBatch},
  };
}

class EventLoopClientTest : public ::testing::TestWithParam<std::tuple<ServerKind, LoopCase>> {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(std::get<0>(GetParam()));
    ASSERT_TRUE(server_->started()) << server_->start_error();
  }

  const LoopCase& loop_case() const { return std::get<1>(GetParam()); }

  std::unique_ptr<SynchronousClient> MakeClient() const {
    StrategyOptions options;
    options.target = server_->unix_target();
    options.threads = testing::kConformanceThreads;
    options.connections = loop_case().connections;
    options.io = {IoModel::kEventLoop, loop_case().loop_threads, loop_case().flush};
    auto strategy = MakeClientStrategy(loop_case().client, options);
    return std::unique_ptr<SynchronousClient>(static_cast<SynchronousClient*>(strategy.release()));
  }

  std::unique_ptr<TestServer> server_;
};

TEST_P(EventLoopClientTest, EveryCallerGetsItsOwnReplyInOrder) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Connect().ok());
  const int expected = loop_case().connections + 1;  // + the probe
  EXPECT_EQ(testing::ConnectedClientsSettlingAt(server_->unix_target(), expected), expected);
  testing::ExpectEveryCallerGetsItsOwnEcho(*client);
  testing::ExpectPerThreadCountersAdvanceByOne(*client);
  if (loop_case().client == ClientKind::kPooled) {
    EXPECT_EQ(static_cast<EventLoopPooledClient&>(*client).borrowed(), 0);
  }
}

TEST_P(EventLoopClientTest, IncrbySumEqualsTheServersValue) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Connect().ok());
  testing::ExpectIncrbySumMatchesServer(*client, server_->unix_target(), 6, 3,
                                        std::chrono::milliseconds(300));
}

TEST_P(EventLoopClientTest, CallersWakeTheLoopOnlyWhenItIsIdle) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Connect().ok());
  constexpr int kCalls = 200;
  for (int i = 0; i < kCalls; ++i) {
    std::string request;
    AppendCommand(&request, {"PING"});
    ReplyPtr reply;
    ASSERT_TRUE(client->Call(request, &reply).ok());
    ASSERT_EQ(reply->type, REDIS_REPLY_STATUS);
    // Give the loop time to block in epoll_wait, so this caller's next
    // command finds it idle (without the pause the caller may win the race
    // and hand over while the loop is still running: then no wake-up is due).
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // One caller at a time: calls that find the loop idle wake it, and no call
  // wakes it more than once.
  EXPECT_GT(client->loop_wakeups(), 0);
  EXPECT_LE(client->loop_wakeups(), kCalls);
}

// Needs a caller blocked in BLPOP: every server has it.
class BlockingEventLoopClientTest : public EventLoopClientTest {};

TEST_P(BlockingEventLoopClientTest, InterruptUnblocksWaitingCallersWithAnError) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Connect().ok());
  testing::ExpectInterruptUnblocksWaitingCallers(*client);
}

TEST_P(EventLoopClientTest, AServerThatDiesFailsTheCallersInsteadOfHanging) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Connect().ok());
  server_->Kill();
  std::string request;
  AppendCommand(&request, {"PING"});
  ReplyPtr reply;
  EXPECT_FALSE(client->Call(request, &reply).ok());
}

auto LoopCaseName(const ::testing::TestParamInfo<EventLoopClientTest::ParamType>& info) {
  return std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(EventLoop, EventLoopClientTest,
                         ::testing::Combine(::testing::ValuesIn(AvailableServers()),
                                            ::testing::ValuesIn(LoopCases())),
                         LoopCaseName);
INSTANTIATE_TEST_SUITE_P(EventLoop, BlockingEventLoopClientTest,
                         ::testing::Combine(::testing::ValuesIn(AvailableServers()),
                                            ::testing::ValuesIn(LoopCases())),
                         LoopCaseName);

}  // namespace
}  // namespace kvlab::harness
