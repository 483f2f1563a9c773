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

#include "harness/dedicated_client.h"
#include "harness/pooled_client.h"
#include "harness/resp_encoding.h"
#include "harness/server_control.h"
#include "harness/shared_client.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::AvailableServers;
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

  int ConnectedClients() {
    std::unique_ptr<ServerControl> control;
    EXPECT_TRUE(ServerControl::Open(server_->unix_target(), {}, &control).ok());
    std::string text;
    EXPECT_TRUE(control->Info("clients", &text).ok());
    return std::stoi(ParseInfo(text)["connected_clients"]);
  }

  std::unique_ptr<TestServer> server_;
};

// Each thread ECHOes payloads only it could have sent and checks each reply.
void ExpectEveryCallerGetsItsOwnEcho(SynchronousClient& client) {
  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        const std::string payload = "thread-" + std::to_string(t) + "-call-" + std::to_string(i) +
                                    std::string(static_cast<size_t>(i % 7) * 50, 'x');
        std::string request;
        AppendCommand(&request, {"ECHO", payload});
        ReplyPtr reply;
        if (!client.Call(request, &reply).ok()) {
          ++failures;
          return;
        }
        if (reply->type != REDIS_REPLY_STRING || std::string(reply->str, reply->len) != payload) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Each thread INCRs its own key and must see 1, 2, 3, ... in order.
void ExpectPerThreadCountersAdvanceByOne(SynchronousClient& client) {
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "counter:" + std::to_string(t);
      for (int i = 1; i <= kCallsPerThread; ++i) {
        std::string request;
        AppendCommand(&request, {"INCRBY", key, "1"});
        ReplyPtr reply;
        if (!client.Call(request, &reply).ok() || reply->type != REDIS_REPLY_INTEGER ||
            reply->integer != i) {
          ++out_of_order;
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(out_of_order.load(), 0);
}

TEST_P(StrategyTest, SharedConnectionMatchesEveryReplyToItsCaller) {
  SharedClient client(Options(1));
  ASSERT_TRUE(client.Connect().ok());
  ExpectEveryCallerGetsItsOwnEcho(client);
  ExpectPerThreadCountersAdvanceByOne(client);
  EXPECT_EQ(ConnectedClients(), 2);  // the shared connection + the probe
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
  EXPECT_EQ(ConnectedClients(), 4);  // 3 pooled + the probe
}

TEST_P(StrategyTest, InterruptUnblocksWaitingCallersWithAnError) {
  if (GetParam().name != "redis") GTEST_SKIP() << "needs BLPOP, which only redis-server has";
  for (const ClientKind kind : {ClientKind::kPooled, ClientKind::kShared}) {
    SCOPED_TRACE(ClientKindName(kind));
    auto client = MakeClientStrategy(kind, Options(1));
    ASSERT_TRUE(client->Connect().ok());
    auto* synchronous = static_cast<SynchronousClient*>(client.get());
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        // BLPOP on an empty list blocks server-side: the call can only end by Interrupt.
        std::string request;
        AppendCommand(&request, {"BLPOP", "never-filled", "0"});
        ReplyPtr reply;
        if (!synchronous->Call(request, &reply).ok()) ++errors;
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    client->Interrupt();
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(errors.load(), 4);
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
    WorkloadSpec spec;
    spec.command = CommandKind::kIncrby;
    spec.keys = 3;
    std::atomic<bool> stop{false};
    std::vector<std::unique_ptr<WorkloadGenerator>> generators;
    std::vector<std::unique_ptr<ThreadRecorder>> recorders;
    std::vector<Status> statuses(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      generators.push_back(std::make_unique<WorkloadGenerator>(spec, t, 0));
      recorders.push_back(std::make_unique<ThreadRecorder>());
    }
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ThreadLoad load;
        load.thread_index = t;
        load.generator = generators[t].get();
        load.recorder = recorders[t].get();
        load.stop = &stop;
        statuses[t] = client.RunThread(load);
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
    for (auto& thread : threads) thread.join();
    int64_t sent_sum = 0;
    uint64_t ops = 0;
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_TRUE(statuses[t].ok()) << statuses[t].message();
      const ThreadCounters counters = recorders[t]->Take();
      EXPECT_EQ(counters.errors, 0u);
      // Burst: whole pipelines only, every in-flight reply was read.
      if (refill == RefillMode::kBurst) {
        EXPECT_EQ(counters.ops % 8, 0u);
      }
      ops += counters.ops;
      sent_sum += recorders[t]->incrby_sum();
    }
    EXPECT_GT(ops, 0u);
    EXPECT_EQ(sent_sum, static_cast<int64_t>(ops) * 7);
    std::unique_ptr<ServerControl> control;
    ASSERT_TRUE(ServerControl::Open(server_->unix_target(), {}, &control).ok());
    int64_t server_sum = 0;
    for (int key = 0; key < 3; ++key) {
      int64_t value = 0;
      if (control->GetInteger("key:" + std::to_string(key), &value).ok()) server_sum += value;
    }
    EXPECT_EQ(server_sum, sent_sum);
    ASSERT_TRUE(control->FlushAll().ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, StrategyTest, ::testing::ValuesIn(AvailableServers()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kvlab::harness
