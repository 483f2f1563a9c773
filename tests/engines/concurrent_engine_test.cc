// The concurrent engine keeps each key's record in its map node's own
// chunk: every way a value changes (overwrite, growth past the node's room
// into the spill and back, append, expiry, deletion, FLUSHALL) must keep the
// key and value intact and the memory meter exact, also when several threads
// insert the same keys at once (the losers' speculatively allocated nodes,
// records included, are discarded by TBB). Run under ThreadSanitizer too,
// and under AddressSanitizer, whose leak check covers the discarded nodes.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/allocated_bytes.h"
#include "engines/clock.h"
#include "engines/engine.h"
#include "engines/entry.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

class ConcurrentEngineRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineConfig config;
    config.kind = "concurrent";
    const Status made = MakeEngine(config, &engine_);
    ASSERT_TRUE(made.ok()) << made.message();
  }

  std::string Do(const Operation& op) { return Describe(RunOp(*engine_, op)); }

  int64_t DatasetBytes() const {
    for (const auto& [name, value] : engine_->Info()) {
      if (name == "dataset_bytes") return std::stoll(value);
    }
    ADD_FAILURE() << "Info() has no dataset_bytes";
    return -1;
  }

  std::unique_ptr<Engine> engine_;
};

// Keys of several shapes: empty, binary, short, and long enough that the
// node's room is mostly key.
std::vector<std::string> TestKeys() {
  return {"", std::string("bin\0ary", 7), "key:000000123456", std::string(1000, 'k')};
}

TEST_F(ConcurrentEngineRecords, ValuesGrowShrinkAndAppendWithTheKeyIntact) {
  const std::vector<std::string> keys = TestKeys();
  int64_t expected_bytes = 0;
  for (const std::string& key : keys) {
    // Each step's value is sized to land somewhere else: the node's room,
    // its malloc slack, the spill, and back into the node.
    for (const size_t size : {16u, 17u, 31u, 4u, 300u, 5000u, 0u, 16u}) {
      const std::string value(size, static_cast<char>('a' + size % 26));
      ASSERT_EQ(Do(Set(key, value)), Ok()) << size;
      ASSERT_EQ(Do(Get(key)), Bulk(value)) << size;
    }
    std::string appended = std::string(16, 'a' + 16 % 26);
    for (int i = 0; i < 40; ++i) {
      const std::string tail(static_cast<size_t>(i * 7), static_cast<char>('A' + i % 26));
      appended += tail;
      ASSERT_EQ(Do(Append(key, tail)), Int(static_cast<int64_t>(appended.size()))) << i;
    }
    EXPECT_EQ(Do(Get(key)), Bulk(appended));
    EXPECT_EQ(Do(GetSet(key, "short")), Bulk(appended));
    EXPECT_EQ(Do(Get(key)), Bulk("short"));
    expected_bytes += Footprint(key, "short");
  }
  EXPECT_EQ(Do(DbSize()), Int(static_cast<int64_t>(keys.size())));
  EXPECT_EQ(DatasetBytes(), expected_bytes);
}

TEST_F(ConcurrentEngineRecords, NewKeysOfEveryCreatingCommandHoldTheirValue) {
  EXPECT_EQ(Do(Append("appended", "tail")), Int(4));
  EXPECT_EQ(Do(IncrBy("counter", 41)), Int(41));
  EXPECT_EQ(Do(IncrBy("counter", 1)), Int(42));
  EXPECT_EQ(Do(GetSet("swapped", "new")), Nil());
  EXPECT_EQ(Do(Get("appended")), Bulk("tail"));
  EXPECT_EQ(Do(Get("counter")), Bulk("42"));
  EXPECT_EQ(Do(Get("swapped")), Bulk("new"));
  // Created and dropped in the same operation: nothing stays.
  EXPECT_EQ(Do(Set("absent", "v", {.condition = SetOptions::Condition::kIfPresent})), Nil());
  EXPECT_EQ(Do(Exists("absent")), Int(0));
  EXPECT_EQ(Do(Set("text", "not a number")), Ok());
  EXPECT_EQ(Do(IncrBy("text", 1)), Err(EngineError::kNotInteger));
  EXPECT_EQ(Do(Get("text")), Bulk("not a number"));
  EXPECT_EQ(Do(DbSize()), Int(4));
  EXPECT_EQ(DatasetBytes(), Footprint("appended", "tail") + Footprint("counter", "42") +
                                Footprint("swapped", "new") + Footprint("text", "not a number"));
}

TEST_F(ConcurrentEngineRecords, ExpiriesLiveInTheNodeOrTheSpill) {
  const int64_t later = UnixNowMs() + 1'000'000;
  // Made with an expiry: the node's record has an expiry slot.
  ASSERT_EQ(Do(Set("with", "value", {.expire_at_ms = later})), Ok());
  EXPECT_EQ(Do(Get("with")), Bulk("value"));
  EXPECT_EQ(Do(Persist("with")), Int(1));
  EXPECT_EQ(Do(Pttl("with")), Int(-1));
  EXPECT_EQ(Do(ExpireAt("with", later)), Int(1));
  EXPECT_EQ(Do(Set("with", std::string(500, 'w'), {.keep_ttl = true})), Ok());
  EXPECT_EQ(Do(Get("with")), Bulk(std::string(500, 'w')));
  EXPECT_GT(RunOp(*engine_, Pttl("with")).integer, 0);
  // Made without one: an expiry moves the value to the spill.
  ASSERT_EQ(Do(Set("without", "value")), Ok());
  EXPECT_EQ(Do(ExpireAt("without", later)), Int(1));
  EXPECT_GT(RunOp(*engine_, Pttl("without")).integer, 0);
  EXPECT_EQ(Do(Get("without")), Bulk("value"));
  EXPECT_EQ(Do(Set("without", "back")), Ok());  // no expiry: into the node again
  EXPECT_EQ(Do(Pttl("without")), Int(-1));
  EXPECT_EQ(Do(Get("without")), Bulk("back"));
  // A deadline in the past deletes the key; the key can be made again.
  EXPECT_EQ(Do(ExpireAt("with", 1)), Int(1));
  EXPECT_EQ(Do(Get("with")), Nil());
  ASSERT_EQ(Do(Set("with", "again")), Ok());
  EXPECT_EQ(Do(Get("with")), Bulk("again"));
  EXPECT_EQ(DatasetBytes(), Footprint("with", "again") + Footprint("without", "back"));
}

TEST_F(ConcurrentEngineRecords, DeletedAndFlushedKeysCanBeMadeAgain) {
  const std::vector<std::string> keys = TestKeys();
  for (int round = 0; round < 3; ++round) {
    for (const std::string& key : keys) {
      ASSERT_EQ(Do(Set(key, std::string(100, 'v'))), Ok());
      ASSERT_EQ(Do(Append(key, std::string(2000, 's'))), Int(2100));  // spilled
    }
    for (const std::string& key : keys) ASSERT_EQ(Do(Del(key)), Int(1));
    EXPECT_EQ(Do(DbSize()), Int(0));
    EXPECT_EQ(DatasetBytes(), 0);
    for (const std::string& key : keys) ASSERT_EQ(Do(Set(key, key + "!")), Ok());
    for (const std::string& key : keys) ASSERT_EQ(Do(Get(key)), Bulk(key + "!"));
    EXPECT_EQ(Do(FlushAll()), Ok());
    EXPECT_EQ(Do(DbSize()), Int(0));
    EXPECT_EQ(DatasetBytes(), 0);
    for (const std::string& key : keys) EXPECT_EQ(Do(Get(key)), Nil());
  }
}

// The point of in-node records: a new key costs one malloc chunk holding the
// map node (next pointer, lock, RecordKey, Spill: four words) and the record
// (8-byte header, key, value), not a node chunk plus a record chunk, which
// would cost another chunk header and rounding. The known answer is what the
// same allocator charges for as many blocks of that size. The values are
// large enough that their chunks bypass glibc's per-thread cache (whose
// chunks count as in use), so the count moves by exactly what the new keys
// hold; the map stays between two bucket-array growths while it is measured.
TEST_F(ConcurrentEngineRecords, ANewKeyCostsOneChunkForNodeAndRecord) {
  const std::string value(2000, 'v');
  auto key_of = [](int i) {
    char key[32];
    std::snprintf(key, sizeof key, "key:%012d", i);
    return std::string(key);
  };
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Do(Set(key_of(i), value)), Ok());
  constexpr int kMeasured = 200;
  const uint64_t before_keys = AllocatedBytes();
  for (int i = 10; i < 10 + kMeasured; ++i) ASSERT_EQ(Do(Set(key_of(i), value)), Ok());
  const uint64_t per_key = (AllocatedBytes() - before_keys) / kMeasured;

  const size_t node_and_record = 4 * sizeof(void*) + 8 + key_of(0).size() + value.size();
  std::vector<void*> blocks;
  blocks.reserve(kMeasured);
  const uint64_t before_blocks = AllocatedBytes();
  for (int i = 0; i < kMeasured; ++i) blocks.push_back(std::malloc(node_and_record));
  const uint64_t per_block = (AllocatedBytes() - before_blocks) / kMeasured;
  for (void* block : blocks) std::free(block);
  EXPECT_GE(per_key, node_and_record);
  EXPECT_LE(per_key, per_block);
}

constexpr int kWriters = 4;

// A value names its key and writer and has a writer-specific length (some in
// the node's room, some spilled), so a torn or misplaced one cannot pass.
std::string WriterValue(const std::string& key, int writer) {
  return key + "#" + std::to_string(writer) + "#" +
         std::string(static_cast<size_t>(writer * 37), static_cast<char>('a' + writer));
}

// Runs body(writer) on kWriters threads released together, and joins them.
template <typename Body>
void OnWritersTogether(Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&, writer] {
      ready.fetch_add(1);
      while (ready.load() < kWriters) std::this_thread::yield();
      body(writer);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// What the writers left: how many of `keys` exist and the footprint they
// should add up to. Every existing key must hold a value a writer wrote.
struct WrittenKeys {
  int64_t live = 0;
  int64_t bytes = 0;
};
WrittenKeys ReadWrittenKeys(Engine& engine, const std::vector<std::string>& keys) {
  WrittenKeys found;
  for (const std::string& key : keys) {
    const OpResult read = RunOp(engine, Get(key));
    if (read.kind == OpResult::Kind::kNil) continue;
    bool from_a_writer = false;
    for (int writer = 0; writer < kWriters; ++writer) {
      from_a_writer |= read.kind == OpResult::Kind::kBulk && read.bulk == WriterValue(key, writer);
    }
    EXPECT_TRUE(from_a_writer) << key << " holds " << Describe(read);
    ++found.live;
    found.bytes += Footprint(key, read.bulk);
  }
  return found;
}

TEST_F(ConcurrentEngineRecords, ThreadsInsertingTheSameKeysAtOnceLeaveOneRecordEach) {
  const int rounds = 4 * kStressScale;
  std::vector<std::string> keys;
  for (int k = 0; k < 256; ++k) keys.push_back("race:" + std::to_string(k));
  for (int round = 0; round < rounds; ++round) {
    // The writers walk the keys in different orders, so most inserts race
    // another writer's insert of the same key.
    OnWritersTogether([&](int writer) {
      for (size_t i = 0; i < keys.size(); ++i) {
        const size_t stride = 2 * static_cast<size_t>(writer) + 1;  // odd: every key once
        const size_t start = static_cast<size_t>(writer) * 64;
        const std::string& key = keys[(start + i * stride) % keys.size()];
        if ((round + writer) % 2 == 0) {
          RunOp(*engine_, Set(key, WriterValue(key, writer)));
        } else {
          RunOp(*engine_, GetSet(key, WriterValue(key, writer)));
        }
      }
    });
    ASSERT_EQ(Do(DbSize()), Int(static_cast<int64_t>(keys.size()))) << "round " << round;
    const WrittenKeys written = ReadWrittenKeys(*engine_, keys);
    EXPECT_EQ(written.live, static_cast<int64_t>(keys.size())) << "round " << round;
    EXPECT_EQ(DatasetBytes(), written.bytes) << "round " << round;
    // Deletions race each other too; every key is removed exactly once.
    std::atomic<int> removed{0};
    OnWritersTogether([&](int) {
      for (const std::string& key : keys) removed += RunOp(*engine_, Del(key)).integer > 0;
    });
    ASSERT_EQ(removed.load(), static_cast<int>(keys.size())) << "round " << round;
    ASSERT_EQ(DatasetBytes(), 0) << "round " << round;
  }
}

// Churn on a few keys: every SET races other threads' SETs and DELs of the
// same key, so inserts often find the key gone or just made, and TBB
// discards the node (with its record) an insert allocated in vain.
TEST_F(ConcurrentEngineRecords, InsertAndDeleteChurnOnFewKeysLeavesAConsistentKeyspace) {
  const int per_writer = 500 * kStressScale;
  const std::vector<std::string> keys = {"churn:a", "churn:b", "churn:c"};
  OnWritersTogether([&](int writer) {
    for (int i = 0; i < per_writer; ++i) {
      const std::string& key = keys[static_cast<size_t>(i + writer) % keys.size()];
      RunOp(*engine_, Set(key, WriterValue(key, writer)));
      if (i % 2 == writer % 2) RunOp(*engine_, Del(key));
    }
  });
  const WrittenKeys written = ReadWrittenKeys(*engine_, keys);
  EXPECT_EQ(Do(DbSize()), Int(written.live));
  EXPECT_EQ(DatasetBytes(), written.bytes);
}

}  // namespace
}  // namespace kvlab::testing
