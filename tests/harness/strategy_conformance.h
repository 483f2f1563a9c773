// The conformance checks every synchronous client strategy must pass, shared
// by the strategy test files: every caller gets its own reply (FIFO matching
// under many threads), per-thread order is kept, and under a real INCRBY load
// run by RunThread the increments the server holds equal those acknowledged.
//
// Thread safety: each check runs its own threads; call from one test thread.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/clients/client_strategy.h"
#include "harness/clients/resp_encoding.h"
#include "harness/clients/server_control.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness::testing {

constexpr int kConformanceThreads = 12;
constexpr int kConformanceCallsPerThread = 400;

// The server's connected_clients (INFO clients, counting this probe's own
// connection) once it has seen every connect and close already sent: both reach
// the server asynchronously (a TestServer's readiness probe may still be
// counted), so one reading can be off by the connections in flight. Polls
// until `expected` or about two seconds, then returns the last reading, which
// the caller asserts on.
inline int ConnectedClientsSettlingAt(const Target& target, int expected) {
  int count = -1;
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::unique_ptr<ServerControl> control;
    EXPECT_TRUE(ServerControl::Open(target, {}, &control).ok());
    std::string text;
    EXPECT_TRUE(control->Info("clients", &text).ok());
    count = std::stoi(ParseInfo(text)["connected_clients"]);
    if (count == expected) break;
  }
  return count;
}

// Each thread ECHOes payloads only it could have sent and checks each reply.
inline void ExpectEveryCallerGetsItsOwnEcho(SynchronousClient& client) {
  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kConformanceThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kConformanceCallsPerThread; ++i) {
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
inline void ExpectPerThreadCountersAdvanceByOne(SynchronousClient& client) {
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kConformanceThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "counter:" + std::to_string(t);
      for (int i = 1; i <= kConformanceCallsPerThread; ++i) {
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

// Four callers block in BLPOP (only an Interrupt can end the call; needs
// redis-server); Interrupt() must return an error to each of them.
inline void ExpectInterruptUnblocksWaitingCallers(SynchronousClient& client) {
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::string request;
      AppendCommand(&request, {"BLPOP", "never-filled", "0"});
      ReplyPtr reply;
      if (!client.Call(request, &reply).ok()) ++errors;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  client.Interrupt();
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 4);
}

// Runs `threads` application threads of `client` (connected) on INCRBY 7
// over `keys` keys for `run_for`, then checks: every thread ended ok, no
// error replies, each thread's ops a multiple of `ops_multiple` (whole
// pipelines), the acknowledged increments are ops * 7, and the server's
// values add up to exactly that.
inline void ExpectIncrbySumMatchesServer(ClientStrategy& client, const Target& target, int threads,
                                         int keys, std::chrono::milliseconds run_for,
                                         uint64_t ops_multiple = 1) {
  WorkloadSpec spec;
  spec.command = CommandKind::kIncrby;
  spec.keys = static_cast<uint64_t>(keys);
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<WorkloadGenerator>> generators;
  std::vector<std::unique_ptr<ThreadRecorder>> recorders;
  std::vector<Status> statuses(static_cast<size_t>(threads));
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    generators.push_back(std::make_unique<WorkloadGenerator>(spec, t, 0));
    recorders.push_back(std::make_unique<ThreadRecorder>());
  }
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      ThreadLoad load;
      load.thread_index = t;
      load.generator = generators[t].get();
      load.recorder = recorders[t].get();
      load.stop = &stop;
      statuses[t] = client.RunThread(load);
    });
  }
  std::this_thread::sleep_for(run_for);
  stop.store(true);
  for (auto& thread : running) thread.join();
  int64_t acknowledged = 0;
  uint64_t ops = 0;
  for (int t = 0; t < threads; ++t) {
    EXPECT_TRUE(statuses[t].ok()) << statuses[t].message();
    const ThreadCounters counters = recorders[t]->Take();
    EXPECT_EQ(counters.errors, 0u);
    EXPECT_EQ(counters.ops % ops_multiple, 0u);
    ops += counters.ops;
    acknowledged += recorders[t]->incrby_sum();
  }
  EXPECT_GT(ops, 0u);
  EXPECT_EQ(acknowledged, static_cast<int64_t>(ops) * spec.increment);
  std::unique_ptr<ServerControl> control;
  ASSERT_TRUE(ServerControl::Open(target, {}, &control).ok());
  int64_t server_sum = 0;
  for (int key = 0; key < keys; ++key) {
    int64_t value = 0;
    if (control->GetInteger(spec.key_prefix + std::to_string(key), &value).ok())
      server_sum += value;
  }
  EXPECT_EQ(server_sum, acknowledged);
  ASSERT_TRUE(control->FlushAll().ok());  // the next check starts from zero
}

}  // namespace kvlab::harness::testing
