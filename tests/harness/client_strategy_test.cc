// Concurrency tests of the client strategies against real servers: every
// caller gets its own reply (shared FIFO matching under many threads), the
// pool stays within its bound and never mixes replies under contention, and
// a dedicated pipelined thread matches replies in order. Also run under
// ThreadSanitizer (label tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/clients/dedicated_client.h"
#include "harness/clients/pooled_client.h"
#include "harness/clients/resp_encoding.h"
#include "harness/clients/server_control.h"
#include "harness/clients/shared_client.h"
#include "tests/harness/strategy_conformance.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::AvailableServers;
using testing::ExpectEveryCallerGetsItsOwnEcho;
using testing::ExpectPerThreadCountersAdvanceByOne;
using testing::RedisServer;
using testing::ServerKind;
using testing::TestServer;

constexpr int kThreads = 12;
constexpr int kCallsPerThread = 400;

class StrategyTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(GetParam());
    ASSERT_TRUE(server_->started()) << server_->start_error();
  }

  StrategyOptions Options(int connections) const {
    StrategyOptions options;
    options.target = server_->unix_target();
    options.threads = kThreads;
    options.connections = connections;
    return options;
  }

  std::unique_ptr<TestServer> server_;
};

TEST_P(StrategyTest, SharedConnectionMatchesEveryReplyToItsCaller) {
  SharedClient client(Options(1));
  ASSERT_TRUE(client.Connect().ok());
  ExpectEveryCallerGetsItsOwnEcho(client);
  ExpectPerThreadCountersAdvanceByOne(client);
  // the shared connection + the probe
  EXPECT_EQ(testing::ConnectedClientsSettlingAt(server_->unix_target(), 2), 2);
  // Every write carries at least one request.
  EXPECT_LE(client.writes(), uint64_t{2} * kThreads * kCallsPerThread);
}

TEST_P(StrategyTest, SharedConnectionWritesOncePerCallOfALoneCaller) {
  // A lone caller waits for each reply before the next call, so nothing can
  // be batched: exactly one write per call (a lost or split write shows).
  SharedClient client(Options(1));
  ASSERT_TRUE(client.Connect().ok());
  constexpr int kCalls = 50;
  for (int i = 0; i < kCalls; ++i) {
    std::string request;
    AppendCommand(&request, {"PING"});
    ReplyPtr reply;
    ASSERT_TRUE(client.Call(request, &reply).ok());
  }
  EXPECT_EQ(client.writes(), uint64_t{kCalls});
}

TEST_P(StrategyTest, PoolUnderContentionStaysWithinItsSizeAndNeverMixesReplies) {
  PooledClient client(Options(3));  // 12 threads, 3 connections: borrowers must wait
  ASSERT_TRUE(client.Connect().ok());
  std::atomic<bool> done{false};
  std::atomic<int> most_borrowed{0};
  std::thread watcher([&] {
    while (!done.load()) {
      const int borrowed = client.borrowed();
      int seen = most_borrowed.load();
      while (borrowed > seen && !most_borrowed.compare_exchange_weak(seen, borrowed)) {
      }
      std::this_thread::yield();
    }
  });
  ExpectEveryCallerGetsItsOwnEcho(client);
  ExpectPerThreadCountersAdvanceByOne(client);
  done.store(true);
  watcher.join();
  EXPECT_LE(most_borrowed.load(), 3);
  EXPECT_EQ(client.borrowed(), 0);
  // 3 pooled + the probe
  EXPECT_EQ(testing::ConnectedClientsSettlingAt(server_->unix_target(), 4), 4);
}

// Needs a caller blocked in BLPOP: every server has it.
class BlockingStrategyTest : public StrategyTest {};

TEST_P(BlockingStrategyTest, InterruptUnblocksWaitingCallersWithAnError) {
  for (const ClientKind kind : {ClientKind::kPooled, ClientKind::kShared}) {
    SCOPED_TRACE(ClientKindName(kind));
    auto client = MakeClientStrategy(kind, Options(1));
    ASSERT_TRUE(client->Connect().ok());
    testing::ExpectInterruptUnblocksWaitingCallers(*static_cast<SynchronousClient*>(client.get()));
  }
}

TEST_P(StrategyTest, DedicatedThreadsPipelineAndCountEveryReply) {
  for (const RefillMode refill : {RefillMode::kSteady, RefillMode::kBurst}) {
    SCOPED_TRACE(RefillModeName(refill));
    StrategyOptions options = Options(kThreads * 2);
    options.pipeline = 8;
    options.refill = refill;
    DedicatedClient client(options);
    ASSERT_TRUE(client.Connect().ok());
    EXPECT_EQ(client.ConnectionsOf(0), 2);
    // Burst refill sends and reads whole pipelines only.
    testing::ExpectIncrbySumMatchesServer(client, server_->unix_target(), kThreads, 3,
                                          std::chrono::milliseconds(300),
                                          /*ops_multiple=*/refill == RefillMode::kBurst ? 8 : 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, StrategyTest, ::testing::ValuesIn(AvailableServers()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Servers, BlockingStrategyTest, ::testing::ValuesIn(AvailableServers()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kvlab::harness
