// Concurrent stress for every engine that accepts several calling threads:
// many threads hammer the same and different keys, and the final state must
// be exact. Run under ThreadSanitizer too (label `tsan`), where the iteration
// counts shrink (kStressScale).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engines/engine.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

constexpr int kThreads = 8;

class EngineStress : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override {
    const Status made = MakeEngine(GetParam().config, &engine_);
    ASSERT_TRUE(made.ok()) << made.message();
  }

  // Runs body(thread_index) on kThreads threads and joins them.
  template <typename Body>
  static void OnThreads(Body body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
    for (std::thread& thread : threads) thread.join();
  }

  std::unique_ptr<Engine> engine_;
};

TEST_P(EngineStress, IncrByOnOneKeyLosesNoUpdate) {
  const int per_thread = 250 * kStressScale;
  OnThreads([&](int) {
    for (int i = 0; i < per_thread; ++i) RunOp(*engine_, IncrBy("counter", 1));
  });
  EXPECT_EQ(Describe(RunOp(*engine_, Get("counter"))), Bulk(std::to_string(kThreads * per_thread)));
}

TEST_P(EngineStress, IncrByOnOwnKeysIsExact) {
  const int per_thread = 250 * kStressScale;
  std::vector<std::string> keys;
  for (int t = 0; t < kThreads; ++t) keys.push_back("counter:" + std::to_string(t));
  OnThreads([&](int t) {
    for (int i = 0; i < per_thread; ++i) RunOp(*engine_, IncrBy(keys[t], t + 1));
  });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(Describe(RunOp(*engine_, Get(keys[t]))), Bulk(std::to_string(per_thread * (t + 1))));
  }
}

// A value names its key and writer and carries a filler whose length and
// letter follow from them, so a torn or misplaced value cannot pass.
std::string MakeValue(const std::string& key, int writer, int seq) {
  return key + "|" + std::to_string(writer) + "|" + std::to_string(seq) + "|" +
         std::string(static_cast<size_t>(seq % 40), static_cast<char>('a' + (writer + seq) % 26));
}
bool IsValidValue(const std::string& key, const std::string& value) {
  const size_t a = value.find('|'), b = value.find('|', a + 1), c = value.find('|', b + 1);
  if (a == std::string::npos || b == std::string::npos || c == std::string::npos) return false;
  if (value.substr(0, a) != key) return false;
  const int writer = std::stoi(value.substr(a + 1, b - a - 1));
  const int seq = std::stoi(value.substr(b + 1, c - b - 1));
  return value == MakeValue(key, writer, seq);
}

TEST_P(EngineStress, SetAndGetOfSharedKeysNeverTear) {
  const int per_thread = 150 * kStressScale;
  std::vector<std::string> keys;
  for (int k = 0; k < 64; ++k) keys.push_back("shared:" + std::to_string(k));
  std::atomic<int> bad_reads{0};
  OnThreads([&](int t) {
    for (int i = 0; i < per_thread; ++i) {
      const std::string& key = keys[(t * 31 + i) % keys.size()];
      const std::string value = MakeValue(key, t, i);
      RunOp(*engine_, Set(key, value));
      const std::string& probe = keys[(t * 7 + i * 13) % keys.size()];
      const OpResult read = RunOp(*engine_, Get(probe));
      if (read.kind == OpResult::Kind::kBulk && !IsValidValue(probe, read.bulk.str())) ++bad_reads;
    }
  });
  EXPECT_EQ(bad_reads.load(), 0);
  for (const std::string& key : keys) {
    const OpResult read = RunOp(*engine_, Get(key));
    ASSERT_EQ(read.kind, OpResult::Kind::kBulk) << key;
    EXPECT_TRUE(IsValidValue(key, read.bulk.str())) << read.bulk;
  }
}

// MSET/MGET-shaped batches that span shards: each thread's batch increments
// its 16 keys, then reads them back in one batch; only that thread writes
// them, so every read must show the count of batches it has completed.
TEST_P(EngineStress, MultiKeyBatchesKeepOrderAndCounts) {
  const int rounds = 40 * kStressScale;
  constexpr int kKeysPerBatch = 16;
  std::atomic<int> wrong_reads{0};
  OnThreads([&](int t) {
    std::vector<std::string> keys;
    for (int j = 0; j < kKeysPerBatch; ++j)
      keys.push_back("batch:" + std::to_string(t) + ":" + std::to_string(j));
    std::vector<Operation> increments, reads;
    for (const std::string& key : keys) {
      increments.push_back(IncrBy(key, 1));
      reads.push_back(Get(key));
    }
    for (int round = 1; round <= rounds; ++round) {
      for (const OpResult& r : RunBatch(*engine_, increments)) {
        if (r.kind != OpResult::Kind::kInteger || r.integer != round) ++wrong_reads;
      }
      for (const OpResult& r : RunBatch(*engine_, reads)) {
        if (r.kind != OpResult::Kind::kBulk || r.bulk != std::to_string(round)) ++wrong_reads;
      }
    }
  });
  EXPECT_EQ(wrong_reads.load(), 0);
  EXPECT_EQ(Describe(RunOp(*engine_, DbSize())), Int(kThreads * kKeysPerBatch));
}

// Pipelined batches of new keys from every thread, so the table grows while
// other batches' lookup hints read its mask and segment table (the
// concurrent engine does so without its gate): under ThreadSanitizer any
// unordered read fails this, and every key must read back.
TEST_P(EngineStress, PipelinedInsertsWhileTheTableGrows) {
  const int batches = 60 * kStressScale;
  constexpr int kKeysPerBatch = 16;
  auto key_of = [](int t, int b, int j) {
    return "grow:" + std::to_string(t) + ":" + std::to_string(b) + ":" + std::to_string(j);
  };
  std::atomic<int> wrong_replies{0};
  OnThreads([&](int t) {
    for (int b = 0; b < batches; ++b) {
      std::vector<std::string> keys;
      std::vector<Operation> sets, gets;
      for (int j = 0; j < kKeysPerBatch; ++j) keys.push_back(key_of(t, b, j));
      for (const std::string& key : keys) {
        sets.push_back(Set(key, key));
        gets.push_back(Get(key));
      }
      for (const OpResult& r : RunBatch(*engine_, sets))
        wrong_replies += r.kind != OpResult::Kind::kOk;
      const std::vector<OpResult> read = RunBatch(*engine_, gets);
      for (int j = 0; j < kKeysPerBatch; ++j) wrong_replies += read[j].bulk.str() != keys[j];
    }
  });
  EXPECT_EQ(wrong_replies.load(), 0);
  EXPECT_EQ(Describe(RunOp(*engine_, DbSize())), Int(kThreads * batches * kKeysPerBatch));
}

// FLUSHALL releases the table while other threads' pipelined batches hint
// their lookups (the concurrent engine computes bucket addresses from the
// table without its gate): nothing may crash or race, and a batch that ran
// after the last FLUSHALL must read back whole.
TEST_P(EngineStress, PipelinedBatchesRaceFlushAll) {
  const int batches = 40 * kStressScale;
  constexpr int kKeysPerBatch = 16;
  std::atomic<int> wrong_replies{0};
  OnThreads([&](int t) {
    for (int b = 0; b < batches; ++b) {
      if (t == 0 && b % 4 == 0) {
        wrong_replies += RunOp(*engine_, FlushAll()).kind != OpResult::Kind::kOk;
        continue;
      }
      std::vector<std::string> keys;  // complete before any Operation views them
      for (int j = 0; j < kKeysPerBatch; ++j)
        keys.push_back("flush:" + std::to_string(t) + ":" + std::to_string(j));
      std::vector<Operation> sets, gets;
      for (const std::string& key : keys) {
        sets.push_back(Set(key, key));
        gets.push_back(Get(key));
      }
      for (const OpResult& r : RunBatch(*engine_, sets))
        wrong_replies += r.kind != OpResult::Kind::kOk;
      for (const OpResult& r : RunBatch(*engine_, gets)) {
        wrong_replies += r.kind != OpResult::Kind::kBulk && r.kind != OpResult::Kind::kNil;
      }
    }
  });
  EXPECT_EQ(wrong_replies.load(), 0);
  std::vector<std::string> keys;
  for (int j = 0; j < kKeysPerBatch; ++j) keys.push_back("after:" + std::to_string(j));
  std::vector<Operation> sets, gets;
  for (const std::string& key : keys) {
    sets.push_back(Set(key, "v"));
    gets.push_back(Get(key));
  }
  RunBatch(*engine_, sets);
  for (const OpResult& r : RunBatch(*engine_, gets))
    EXPECT_EQ(Describe(r), Describe(OpResult::Bulk("v")));
}

// DBSIZE and FLUSHALL race with writers; afterwards DBSIZE must agree with
// an EXISTS of every key that could exist.
TEST_P(EngineStress, DbSizeAndFlushAllUnderConcurrentWrites) {
  constexpr int kKeysPerWriter = 50;
  const int rounds = 4 * kStressScale;
  std::vector<std::vector<std::string>> keys(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kKeysPerWriter; ++k)
      keys[t].push_back("w:" + std::to_string(t) + ":" + std::to_string(k));
  }
  std::atomic<int> impossible_sizes{0};
  OnThreads([&](int t) {
    for (int round = 0; round < rounds; ++round) {
      if (t == 0) {
        const OpResult size = RunOp(*engine_, DbSize());
        if (size.integer < 0 || size.integer > (kThreads - 1) * kKeysPerWriter) ++impossible_sizes;
        RunOp(*engine_, FlushAll());
        continue;
      }
      for (const std::string& key : keys[t]) RunOp(*engine_, Set(key, "v"));
    }
  });
  EXPECT_EQ(impossible_sizes.load(), 0);
  int64_t existing = 0;
  for (const auto& writer_keys : keys) {
    for (const std::string& key : writer_keys) existing += RunOp(*engine_, Exists(key)).integer;
  }
  EXPECT_EQ(Describe(RunOp(*engine_, DbSize())), Int(existing));
}

// Many threads submit batches without waiting; every `done` must run exactly
// once, after its results are filled, even when the engine is destroyed with
// batches still queued (the sharded engine drains its channels first).
TEST_P(EngineStress, DoneRunsExactlyOncePerBatchEvenAtShutdown) {
  const int batches_per_thread = 50 * kStressScale;
  struct Submitted {
    Batch batch;
    std::atomic<int> done_calls{0};
    std::atomic<bool> results_filled_at_done{false};
  };
  std::vector<std::vector<std::unique_ptr<Submitted>>> submitted(kThreads);
  static const std::vector<std::string> kKeys = {"a", "b", "c", "d", "e", "f", "g", "h"};
  OnThreads([&](int t) {
    for (int i = 0; i < batches_per_thread; ++i) {
      auto entry = std::make_unique<Submitted>();
      for (int j = 0; j < 1 + (i % 8); ++j)
        entry->batch.Add(IncrBy(kKeys[(t + i + j) % kKeys.size()], 1));
      if (i % 10 == 0) entry->batch.Add(DbSize());
      Submitted* raw = entry.get();
      submitted[t].push_back(std::move(entry));
      engine_->Execute(raw->batch, [raw] {
        bool filled = true;
        for (const OpResult& r : raw->batch.results) filled &= r.kind == OpResult::Kind::kInteger;
        raw->results_filled_at_done.store(filled);
        raw->done_calls.fetch_add(1);
      });
    }
  });
  engine_.reset();  // joins the shard threads of `sharded` after they drain

  // Each increment of a key returned a distinct new value, so per key the
  // returned values must be exactly 1..(increments of that key).
  std::map<std::string_view, std::vector<int64_t>> values_by_key;
  for (const auto& per_thread : submitted) {
    for (const auto& entry : per_thread) {
      ASSERT_EQ(entry->done_calls.load(), 1);
      EXPECT_TRUE(entry->results_filled_at_done.load());
      for (size_t i = 0; i < entry->batch.ops.size(); ++i) {
        if (entry->batch.ops[i].code != OpCode::kIncrBy) continue;
        values_by_key[entry->batch.ops[i].key].push_back(entry->batch.results[i].integer);
      }
    }
  }
  for (auto& [key, values] : values_by_key) {
    std::sort(values.begin(), values.end());
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(values[i], static_cast<int64_t>(i + 1)) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(ConcurrentEngines, EngineStress, ::testing::ValuesIn(MultithreadedCases()),
                         CaseName);

// A sharded engine for the tests below (they fail here if it cannot be made).
void MakeSharded(unsigned shards, HopMode hop, std::unique_ptr<Engine>* engine) {
  EngineConfig config;
  config.kind = "sharded";
  config.shards = shards;
  config.hop = hop;
  const Status made = MakeEngine(config, engine);
  ASSERT_TRUE(made.ok()) << made.message();
}

// An I/O thread's round (Engine::DeferWakeupsOnThisThread): each thread
// queues several batches without waking the shards, then wakes them once;
// every batch completes exactly once with its results, and an engine that
// was never opted in on a thread still wakes its shards per Execute().
TEST(ShardedDeferredWakeups, EveryBatchOfARoundCompletesAfterOneWake) {
  std::unique_ptr<Engine> engine;
  ASSERT_NO_FATAL_FAILURE(MakeSharded(4, HopMode::kBatch, &engine));
  constexpr int kBatchesPerRound = 8;
  const int rounds = 20 * kStressScale;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      engine->DeferWakeupsOnThisThread();
      std::vector<Batch> batches(kBatchesPerRound);
      std::vector<std::string> keys;  // operations point into them
      for (int b = 0; b < kBatchesPerRound; ++b) {
        keys.push_back("k" + std::to_string(t) + ":" + std::to_string(b));
      }
      for (int round = 0; round < rounds; ++round) {
        std::atomic<int> done{0};
        for (int b = 0; b < kBatchesPerRound; ++b) {
          batches[b].Clear();
          batches[b].Add(IncrBy(keys[b], 1));
          batches[b].Add(Get(keys[b]));
          engine->Execute(batches[b], [&done] { done.fetch_add(1, std::memory_order_release); });
        }
        engine->WakeDeferred();
        while (done.load(std::memory_order_acquire) < kBatchesPerRound) std::this_thread::yield();
        for (int b = 0; b < kBatchesPerRound; ++b) {
          if (Describe(batches[b].results[1]) != Bulk(std::to_string(round + 1))) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  // This thread never opted in: its Execute() wakes the shards itself.
  EXPECT_EQ(Describe(RunOp(*engine, Get("k0:0"))), Bulk(std::to_string(rounds)));
}

// A second connection starting on a thread (DeferWakeupsOnThisThread again)
// while a batch queued by the first still waits for the round's wake-up must
// not drop that wake-up: the batch completes after WakeDeferred().
TEST(ShardedDeferredWakeups, OptingInAgainKeepsTheQueuedWakeups) {
  std::unique_ptr<Engine> engine;
  ASSERT_NO_FATAL_FAILURE(MakeSharded(2, HopMode::kBatch, &engine));
  std::atomic<bool> done{false};
  std::thread connection_thread([&] {
    engine->DeferWakeupsOnThisThread();  // the first connection
    Batch batch;
    batch.Add(Set("key", "v"));
    engine->Execute(batch, [&done] { done.store(true, std::memory_order_release); });
    engine->DeferWakeupsOnThisThread();  // a second connection starts on this thread
    engine->WakeDeferred();              // the round's posted wake-up
    // Bounded: a lost wake-up fails here instead of hanging the suite.
    for (int i = 0; i < 5000 && !done.load(std::memory_order_acquire); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  connection_thread.join();
  EXPECT_TRUE(done.load(std::memory_order_acquire));
}

// Info()'s per-shard operation counts add up to the operations executed
// (a keyless operation runs once on every shard).
TEST(ShardedInfo, PerShardOperationCountsAddUp) {
  std::unique_ptr<Engine> engine;
  ASSERT_NO_FATAL_FAILURE(MakeSharded(4, HopMode::kCommand, &engine));
  std::vector<std::string> keys;
  for (int k = 0; k < 100; ++k) keys.push_back("key" + std::to_string(k));
  for (const std::string& key : keys) RunOp(*engine, Set(key, "v"));
  RunOp(*engine, DbSize());
  uint64_t total_ops = 0;
  int shards_with_ops = 0;
  bool saw_hop = false;
  for (const auto& [name, value] : engine->Info()) {
    if (name == "hop") saw_hop = value == "command";
    if (name.size() > 4 && name.ends_with("_ops")) {
      total_ops += std::stoull(value);
      shards_with_ops += value != "0" ? 1 : 0;
    }
  }
  EXPECT_TRUE(saw_hop);
  EXPECT_EQ(total_ops, keys.size() + 4);
  EXPECT_EQ(shards_with_ops, 4);
}

}  // namespace
}  // namespace kvlab::testing
