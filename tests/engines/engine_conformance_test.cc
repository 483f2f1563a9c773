// One conformance suite, run against every engine: each Operation's reply
// and effect must match Redis 7.0's string commands, whichever engine runs it.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "engines/clock.h"
#include "engines/engine.h"
#include "engines/engine_kind.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

using Condition = SetOptions::Condition;

class EngineConformance : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override { engine_ = Make(0); }

  std::unique_ptr<Engine> Make(uint64_t max_memory_bytes) const {
    EngineConfig config = GetParam().config;
    config.max_memory_bytes = max_memory_bytes;
    std::unique_ptr<Engine> engine;
    const Status made = MakeEngine(config, &engine);
    EXPECT_TRUE(made.ok()) << made.message();
    return engine;
  }

  std::string Do(const Operation& op) { return Describe(RunOp(*engine_, op)); }
  std::string Do(Engine& engine, const Operation& op) { return Describe(RunOp(engine, op)); }

  // Waits (bounded) until the clock has passed `deadline_ms`, so every key
  // with that deadline is expired without asserting anything about timing.
  static void WaitPast(int64_t deadline_ms) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (UnixNowMs() <= deadline_ms) {
      ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "clock did not advance";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::unique_ptr<Engine> engine_;
};

TEST_P(EngineConformance, GetOfMissingKeyIsNil) { EXPECT_EQ(Do(Get("nope")), Nil()); }

TEST_P(EngineConformance, SetThenGetAndOverwrite) {
  EXPECT_EQ(Do(Set("k", "v1")), Ok());
  EXPECT_EQ(Do(Get("k")), Bulk("v1"));
  EXPECT_EQ(Do(Set("k", "second")), Ok());
  EXPECT_EQ(Do(Get("k")), Bulk("second"));
  EXPECT_EQ(Do(Set("empty", "")), Ok());
  EXPECT_EQ(Do(Get("empty")), Bulk(""));
  EXPECT_EQ(Do(Exists("empty")), Int(1));
}

TEST_P(EngineConformance, SetNxOnlyCreates) {
  EXPECT_EQ(Do(Set("k", "a", {.condition = Condition::kIfAbsent})), Ok());
  EXPECT_EQ(Do(Set("k", "b", {.condition = Condition::kIfAbsent})), Nil());
  EXPECT_EQ(Do(Get("k")), Bulk("a"));
}

TEST_P(EngineConformance, SetXxOnlyReplaces) {
  EXPECT_EQ(Do(Set("k", "a", {.condition = Condition::kIfPresent})), Nil());
  EXPECT_EQ(Do(Exists("k")), Int(0));
  EXPECT_EQ(Do(DbSize()), Int(0));
  EXPECT_EQ(Do(Set("k", "a")), Ok());
  EXPECT_EQ(Do(Set("k", "b", {.condition = Condition::kIfPresent})), Ok());
  EXPECT_EQ(Do(Get("k")), Bulk("b"));
}

TEST_P(EngineConformance, SetGetReturnsOldValueWhetherOrNotItSets) {
  EXPECT_EQ(Do(Set("k", "a", {.return_old = true})), Nil());
  EXPECT_EQ(Do(Set("k", "b", {.return_old = true})), Bulk("a"));
  EXPECT_EQ(Do(Get("k")), Bulk("b"));
  // NX + GET on a present key: the old value, and no write.
  EXPECT_EQ(Do(Set("k", "c", {.condition = Condition::kIfAbsent, .return_old = true})), Bulk("b"));
  EXPECT_EQ(Do(Get("k")), Bulk("b"));
  // XX + GET on a missing key: nil, and no key.
  EXPECT_EQ(Do(Set("m", "c", {.condition = Condition::kIfPresent, .return_old = true})), Nil());
  EXPECT_EQ(Do(Exists("m")), Int(0));
}

TEST_P(EngineConformance, SetExpiryKeepTtlAndClear) {
  const int64_t deadline = UnixNowMs() + 100'000;
  EXPECT_EQ(Do(Set("k", "v", {.expire_at_ms = deadline})), Ok());
  const OpResult ttl = RunOp(*engine_, Pttl("k"));
  EXPECT_GT(ttl.integer, 0);
  EXPECT_LE(ttl.integer, 100'000);
  // KEEPTTL leaves the deadline in place.
  EXPECT_EQ(Do(Set("k", "v2", {.keep_ttl = true})), Ok());
  EXPECT_GT(RunOp(*engine_, Pttl("k")).integer, 0);
  EXPECT_EQ(Do(Get("k")), Bulk("v2"));
  // A plain SET clears it.
  EXPECT_EQ(Do(Set("k", "v3")), Ok());
  EXPECT_EQ(Do(Pttl("k")), Int(-1));
  // KEEPTTL on a new key: no expiry.
  EXPECT_EQ(Do(Set("fresh", "v", {.keep_ttl = true})), Ok());
  EXPECT_EQ(Do(Pttl("fresh")), Int(-1));
}

TEST_P(EngineConformance, SetWithDeadlineInThePastLeavesNoKey) {
  EXPECT_EQ(Do(Set("k", "old")), Ok());
  EXPECT_EQ(Do(Set("k", "v", {.expire_at_ms = UnixNowMs() - 1000})), Ok());
  EXPECT_EQ(Do(Get("k")), Nil());
  EXPECT_EQ(Do(Exists("k")), Int(0));
  EXPECT_EQ(Do(DbSize()), Int(0));
}

TEST_P(EngineConformance, GetSetReturnsOldValueAndDropsTtl) {
  EXPECT_EQ(Do(GetSet("k", "a")), Nil());
  EXPECT_EQ(Do(Get("k")), Bulk("a"));
  EXPECT_EQ(Do(ExpireAt("k", UnixNowMs() + 100'000)), Int(1));
  EXPECT_EQ(Do(GetSet("k", "b")), Bulk("a"));
  EXPECT_EQ(Do(Get("k")), Bulk("b"));
  EXPECT_EQ(Do(Pttl("k")), Int(-1));
}

TEST_P(EngineConformance, DelAndExists) {
  EXPECT_EQ(Do(Del("k")), Int(0));
  EXPECT_EQ(Do(Set("k", "v")), Ok());
  EXPECT_EQ(Do(Exists("k")), Int(1));
  EXPECT_EQ(Do(Del("k")), Int(1));
  EXPECT_EQ(Do(Del("k")), Int(0));
  EXPECT_EQ(Do(Exists("k")), Int(0));
  EXPECT_EQ(Do(Get("k")), Nil());
}

TEST_P(EngineConformance, IncrByCountsFromZeroAndStoresDecimal) {
  EXPECT_EQ(Do(IncrBy("n", 1)), Int(1));
  EXPECT_EQ(Do(IncrBy("n", 41)), Int(42));
  EXPECT_EQ(Do(IncrBy("n", -50)), Int(-8));
  EXPECT_EQ(Do(Get("n")), Bulk("-8"));
  EXPECT_EQ(Do(Set("s", "10")), Ok());
  EXPECT_EQ(Do(IncrBy("s", 5)), Int(15));
  EXPECT_EQ(Do(Strlen("s")), Int(2));
  EXPECT_EQ(Do(Set("z", "0")), Ok());
  EXPECT_EQ(Do(IncrBy("z", 0)), Int(0));
}

TEST_P(EngineConformance, IncrByRejectsWhatRedisString2llRejects) {
  const std::vector<std::string> not_integers = {"",
                                                 " 1",
                                                 "1 ",
                                                 "+1",
                                                 "01",
                                                 "-0",
                                                 "-",
                                                 "1.5",
                                                 "1e3",
                                                 "abc",
                                                 "0x10",
                                                 std::string("1\0", 2),
                                                 "9223372036854775808",
                                                 "-9223372036854775809",
                                                 "000000000000000000001",
                                                 "123456789012345678901"};
  for (const std::string& value : not_integers) {
    SCOPED_TRACE("value '" + value + "'");
    ASSERT_EQ(Do(Set("k", value)), Ok());
    EXPECT_EQ(Do(IncrBy("k", 1)), Err(EngineError::kNotInteger));
    EXPECT_EQ(Do(Get("k")), Bulk(value));  // unchanged
  }
}

TEST_P(EngineConformance, IncrByOverflowIsAnErrorAndChangesNothing) {
  EXPECT_EQ(Do(Set("max", "9223372036854775807")), Ok());
  EXPECT_EQ(Do(IncrBy("max", 1)), Err(EngineError::kOverflow));
  EXPECT_EQ(Do(Get("max")), Bulk("9223372036854775807"));
  EXPECT_EQ(Do(IncrBy("max", -1)), Int(9223372036854775806));
  EXPECT_EQ(Do(Set("min", "-9223372036854775808")), Ok());
  EXPECT_EQ(Do(IncrBy("min", -1)), Err(EngineError::kOverflow));
  EXPECT_EQ(Do(IncrBy("min", 1)), Int(-9223372036854775807));
  EXPECT_EQ(Do(IncrBy("fresh", INT64_MIN)), Int(INT64_MIN));
  EXPECT_EQ(Do(IncrBy("fresh", -1)), Err(EngineError::kOverflow));
}

TEST_P(EngineConformance, IncrByAppendKeepTtl) {
  const int64_t deadline = UnixNowMs() + 100'000;
  EXPECT_EQ(Do(Set("n", "1", {.expire_at_ms = deadline})), Ok());
  EXPECT_EQ(Do(IncrBy("n", 1)), Int(2));
  EXPECT_GT(RunOp(*engine_, Pttl("n")).integer, 0);
  EXPECT_EQ(Do(Append("n", "0")), Int(2));
  EXPECT_GT(RunOp(*engine_, Pttl("n")).integer, 0);
  EXPECT_EQ(Do(Get("n")), Bulk("20"));
}

TEST_P(EngineConformance, AppendAndStrlen) {
  EXPECT_EQ(Do(Strlen("k")), Int(0));
  EXPECT_EQ(Do(Append("k", "hello")), Int(5));
  EXPECT_EQ(Do(Append("k", " world")), Int(11));
  EXPECT_EQ(Do(Get("k")), Bulk("hello world"));
  EXPECT_EQ(Do(Strlen("k")), Int(11));
  EXPECT_EQ(Do(Append("k", "")), Int(11));
}

TEST_P(EngineConformance, BinaryKeysAndValuesKeepEveryByte) {
  const std::string key_a("a\0b", 3), key_c("a\0c", 3), key_nul(1, '\0');
  const std::string value("\0\r\n\xff\0x", 6);
  EXPECT_EQ(Do(Set(key_a, value)), Ok());
  EXPECT_EQ(Do(Set(key_c, "other")), Ok());
  EXPECT_EQ(Do(Set(key_nul, "nul")), Ok());
  EXPECT_EQ(Do(Get(key_a)), Bulk(value));
  EXPECT_EQ(Do(Get(key_c)), Bulk("other"));
  EXPECT_EQ(Do(Get(key_nul)), Bulk("nul"));
  EXPECT_EQ(Do(Get(std::string_view("a", 1))), Nil());
  EXPECT_EQ(Do(Strlen(key_a)), Int(6));
  EXPECT_EQ(Do(Append(key_a, std::string_view("\0", 1))), Int(7));
  EXPECT_EQ(Do(Get(key_a)), Bulk(value + std::string(1, '\0')));
  EXPECT_EQ(Do(DbSize()), Int(3));
}

TEST_P(EngineConformance, ExpireAtPttlPersist) {
  EXPECT_EQ(Do(Pttl("k")), Int(-2));
  EXPECT_EQ(Do(ExpireAt("k", UnixNowMs() + 100'000)), Int(0));
  EXPECT_EQ(Do(Persist("k")), Int(0));
  EXPECT_EQ(Do(Set("k", "v")), Ok());
  EXPECT_EQ(Do(Pttl("k")), Int(-1));
  EXPECT_EQ(Do(Persist("k")), Int(0));
  const int64_t before = UnixNowMs();
  EXPECT_EQ(Do(ExpireAt("k", before + 100'000)), Int(1));
  const int64_t ttl = RunOp(*engine_, Pttl("k")).integer;
  const int64_t after = UnixNowMs();
  // pttl = deadline - now for some `now` between the two clock readings.
  EXPECT_LE(ttl, 100'000);
  EXPECT_GE(ttl, before + 100'000 - after);
  EXPECT_EQ(Do(Persist("k")), Int(1));
  EXPECT_EQ(Do(Pttl("k")), Int(-1));
  EXPECT_EQ(Do(Get("k")), Bulk("v"));
}

TEST_P(EngineConformance, ExpireAtNotInTheFutureDeletes) {
  EXPECT_EQ(Do(Set("past", "v")), Ok());
  EXPECT_EQ(Do(ExpireAt("past", UnixNowMs() - 1)), Int(1));
  EXPECT_EQ(Do(Exists("past")), Int(0));
  EXPECT_EQ(Do(Set("zero", "v")), Ok());
  EXPECT_EQ(Do(ExpireAt("zero", 0)), Int(1));
  EXPECT_EQ(Do(Exists("zero")), Int(0));
  EXPECT_EQ(Do(ExpireAt("missing", -5)), Int(0));
  EXPECT_EQ(Do(DbSize()), Int(0));
}

// Every operation sees an expired key as missing, whether or not the engine
// has reclaimed it yet. Each operation gets its own key so that no earlier
// lazy deletion hides the case being checked.
TEST_P(EngineConformance, ExpiredKeysAreMissingForEveryOperation) {
  const int64_t deadline = UnixNowMs() + 50;
  const std::vector<std::string> keys = {"get",   "exists", "strlen",  "pttl",    "del",
                                         "incr",  "append", "expire",  "persist", "setnx",
                                         "setxx", "getset", "sentinel"};
  for (const std::string& key : keys)
    ASSERT_EQ(Do(Set(key, "7", {.expire_at_ms = deadline})), Ok());
  EXPECT_EQ(Do(Set("forever", "x")), Ok());
  WaitPast(deadline);

  EXPECT_EQ(Do(DbSize()), Int(1));
  EXPECT_EQ(Do(Get("get")), Nil());
  EXPECT_EQ(Do(Exists("exists")), Int(0));
  EXPECT_EQ(Do(Strlen("strlen")), Int(0));
  EXPECT_EQ(Do(Pttl("pttl")), Int(-2));
  EXPECT_EQ(Do(Del("del")), Int(0));
  EXPECT_EQ(Do(IncrBy("incr", 1)), Int(1));
  EXPECT_EQ(Do(Pttl("incr")), Int(-1));
  EXPECT_EQ(Do(Append("append", "ab")), Int(2));
  EXPECT_EQ(Do(ExpireAt("expire", UnixNowMs() + 100'000)), Int(0));
  EXPECT_EQ(Do(Persist("persist")), Int(0));
  EXPECT_EQ(Do(Set("setnx", "new", {.condition = Condition::kIfAbsent})), Ok());
  EXPECT_EQ(Do(Set("setxx", "new", {.condition = Condition::kIfPresent})), Nil());
  EXPECT_EQ(Do(GetSet("getset", "new")), Nil());
  EXPECT_EQ(Do(Pttl("getset")), Int(-1));
  // forever, incr, append, setnx, getset
  EXPECT_EQ(Do(DbSize()), Int(5));
}

TEST_P(EngineConformance, DbSizeCountsLiveKeysAndFlushAllEmpties) {
  EXPECT_EQ(Do(DbSize()), Int(0));
  const std::vector<std::string> keys = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  for (const std::string& key : keys) ASSERT_EQ(Do(Set(key, key)), Ok());
  EXPECT_EQ(Do(DbSize()), Int(10));
  EXPECT_EQ(Do(Del("a")), Int(1));
  EXPECT_EQ(Do(DbSize()), Int(9));
  EXPECT_EQ(Do(FlushAll()), Ok());
  EXPECT_EQ(Do(DbSize()), Int(0));
  for (const std::string& key : keys) EXPECT_EQ(Do(Exists(key)), Int(0)) << key;
  EXPECT_EQ(Do(FlushAll()), Ok());
}

TEST_P(EngineConformance, BatchRunsInOrderWithOneResultPerOperation) {
  const std::vector<std::string> keys = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
  std::vector<Operation> writes;
  for (const std::string& key : keys) writes.push_back(Set(key, key));
  writes.push_back(DbSize());
  std::vector<OpResult> results = RunBatch(*engine_, writes);
  ASSERT_EQ(results.size(), keys.size() + 1);
  EXPECT_EQ(Describe(results.back()), Int(8));

  // MGET-style: many reads in one batch, replies in request order.
  std::vector<Operation> reads;
  for (const std::string& key : keys) reads.push_back(Get(key));
  reads.push_back(Get("missing"));
  results = RunBatch(*engine_, reads);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(Describe(results[i]), Bulk(keys[i]));
  EXPECT_EQ(Describe(results.back()), Nil());

  // Later operations of a batch see the effect of earlier ones, keyless included.
  results = RunBatch(*engine_, {Set("x", "1"), IncrBy("x", 2), FlushAll(), Get("k0"), Set("y", "2"),
                                DbSize(), Get("x"), Get("y")});
  EXPECT_EQ(Describe(results[1]), Int(3));
  EXPECT_EQ(Describe(results[2]), Ok());
  EXPECT_EQ(Describe(results[3]), Nil());
  EXPECT_EQ(Describe(results[5]), Int(1));
  EXPECT_EQ(Describe(results[6]), Nil());
  EXPECT_EQ(Describe(results[7]), Bulk("2"));
}

TEST_P(EngineConformance, EmptyBatchCompletes) {
  EXPECT_TRUE(RunBatch(*engine_, std::vector<Operation>{}).empty());
}

TEST_P(EngineConformance, MemoryLimitRefusesGrowthButAllowsDeletes) {
  std::unique_ptr<Engine> engine = Make(4096);
  const std::string value(100, 'v');
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) {
    std::string key = "key" + std::to_string(i);
    if (Describe(RunOp(*engine, Set(key, value))) != Ok()) break;
    keys.push_back(std::move(key));
  }
  ASSERT_LT(keys.size(), 200u) << "the limit never refused a write";
  ASSERT_GT(keys.size(), 5u);
  // Every write that may grow memory is refused; reads and deletions work.
  EXPECT_EQ(Do(*engine, Set("more", "v")), Err(EngineError::kOutOfMemory));
  EXPECT_EQ(Do(*engine, Set(keys[0], "small")), Err(EngineError::kOutOfMemory));
  EXPECT_EQ(Do(*engine, GetSet("more", "v")), Err(EngineError::kOutOfMemory));
  EXPECT_EQ(Do(*engine, IncrBy("more", 1)), Err(EngineError::kOutOfMemory));
  EXPECT_EQ(Do(*engine, Append("more", "v")), Err(EngineError::kOutOfMemory));
  EXPECT_EQ(Do(*engine, Get(keys[0])), Bulk(value));
  EXPECT_EQ(Do(*engine, ExpireAt(keys[1], UnixNowMs() + 100'000)), Int(1));
  EXPECT_EQ(Do(*engine, Persist(keys[1])), Int(1));
  EXPECT_EQ(Do(*engine, DbSize()), Int(static_cast<int64_t>(keys.size())));

  auto used_memory = [&engine] {
    for (const auto& [name, value] : engine->Info()) {
      if (name == "dataset_bytes") return std::stoll(value);
    }
    ADD_FAILURE() << "Info() has no dataset_bytes";
    return -1LL;
  };
  const long long full = used_memory();
  EXPECT_GE(full, 4096);
  EXPECT_EQ(Do(*engine, Del(keys[0])), Int(1));
  EXPECT_EQ(Do(*engine, Del(keys[1])), Int(1));
  EXPECT_LT(used_memory(), full);
  EXPECT_EQ(Do(*engine, Set("more", "v")), Ok());  // room again
  EXPECT_EQ(Do(*engine, FlushAll()), Ok());
  EXPECT_EQ(used_memory(), 0);
  EXPECT_EQ(Do(*engine, Set(keys[0], value)), Ok());
}

// Sets the engines' clock (engines/clock.h) for one test, so that a deadline
// passes when the test says, however slowly the writes before it ran (a
// ThreadSanitizer build); the real clock is back when it goes.
class FixedClock {
 public:
  explicit FixedClock(int64_t now_ms) { SetReplayClock(now_ms); }
  ~FixedClock() { SetReplayClock(std::nullopt); }
  FixedClock(const FixedClock&) = delete;
  FixedClock& operator=(const FixedClock&) = delete;
  void Set(int64_t now_ms) { SetReplayClock(now_ms); }
};

Operation ReclaimExpired(int64_t places) {
  Operation op = MakeOp(OpCode::kReclaimExpired);
  op.integer = places;
  return op;
}

// The active expiry (OpCode::kReclaimExpired): expired entries no command
// touches again give their memory back, and nothing else is touched.
TEST_P(EngineConformance, ReclaimExpiredFreesExpiredEntriesNoCommandTouches) {
  auto dataset_bytes = [this] {
    for (const auto& [name, value] : engine_->Info()) {
      if (name == "dataset_bytes") return std::stoll(value);
    }
    ADD_FAILURE() << "Info() has no dataset_bytes";
    return -1LL;
  };
  const int64_t start = UnixNowMs();
  FixedClock clock(start);
  const std::string value(40, 'v');
  std::vector<std::string> forever, later, soon;
  for (int i = 0; i < 100; ++i) forever.push_back("forever" + std::to_string(i));
  for (int i = 0; i < 100; ++i) later.push_back("later" + std::to_string(i));
  for (int i = 0; i < 3000; ++i) soon.push_back("soon" + std::to_string(i));
  std::vector<Operation> writes;
  for (const std::string& key : forever) writes.push_back(Set(key, value));
  for (const std::string& key : later)
    writes.push_back(Set(key, value, {.expire_at_ms = start + 600'000}));
  RunBatch(*engine_, writes);
  const long long without_soon = dataset_bytes();
  const int64_t deadline = start + 50;
  writes.clear();
  for (const std::string& key : soon) writes.push_back(Set(key, value, {.expire_at_ms = deadline}));
  RunBatch(*engine_, writes);
  ASSERT_GT(dataset_bytes(), without_soon);
  clock.Set(deadline + 1);

  // Small steps: each call looks at 64 places per table (more while over a
  // tenth of what it meets has expired; striped has 64 tables).
  int64_t reclaimed = 0;
  int calls = 0;
  while (reclaimed < 3000 && calls < 100'000) {
    const OpResult step = RunOp(*engine_, ReclaimExpired(64));
    ASSERT_EQ(step.kind, OpResult::Kind::kInteger);
    reclaimed += step.integer;
    ++calls;
  }
  EXPECT_EQ(reclaimed, 3000);
  EXPECT_EQ(Do(ReclaimExpired(1 << 20)), Int(0));
  EXPECT_EQ(dataset_bytes(), without_soon);
  EXPECT_EQ(engine_->modifications().expired(), 3000u);
  EXPECT_EQ(Do(DbSize()), Int(200));
  for (const std::string& key : forever) EXPECT_EQ(Do(Get(key)), Bulk(value)) << key;
  for (const std::string& key : later) {
    const OpResult left = RunOp(*engine_, Pttl(key));
    EXPECT_EQ(left.integer, 600'000 - 51) << key;
  }
}

TEST_P(EngineConformance, ReclaimExpiredLeavesLiveAndPersistedKeys) {
  const int64_t start = UnixNowMs();
  FixedClock clock(start);
  const int64_t deadline = start + 50;
  ASSERT_EQ(Do(Set("persisted", "p", {.expire_at_ms = deadline})), Ok());
  ASSERT_EQ(Do(Persist("persisted")), Int(1));
  ASSERT_EQ(Do(Set("plain", "x")), Ok());
  ASSERT_EQ(Do(Set("overwritten", "o", {.expire_at_ms = deadline})), Ok());
  ASSERT_EQ(Do(Set("overwritten", "o2")), Ok());  // a plain SET drops the deadline
  clock.Set(deadline + 1);
  EXPECT_EQ(Do(ReclaimExpired(1 << 20)), Int(0));
  EXPECT_EQ(Do(DbSize()), Int(3));
  EXPECT_EQ(Do(Get("persisted")), Bulk("p"));
  EXPECT_EQ(Do(Get("overwritten")), Bulk("o2"));
  EXPECT_EQ(engine_->modifications().expired(), 0u);
  // A deadline stored now is found (the concurrent engine's hint is set again).
  const int64_t soon = deadline + 20;
  ASSERT_EQ(Do(ExpireAt("plain", soon)), Int(1));
  clock.Set(soon + 1);
  EXPECT_EQ(Do(ReclaimExpired(1 << 20)), Int(1));
  EXPECT_EQ(Do(Exists("plain")), Int(0));
  EXPECT_EQ(Do(DbSize()), Int(2));
}

// A key given a deadline while a pass over the table is under way, in a
// part the pass has already walked, must still be reclaimed: a pass that
// met no deadline may stop the active expiry only if no write stored one
// meanwhile. Forty tries, each with its key wherever its hash puts it.
TEST_P(EngineConformance, ReclaimExpiredFindsADeadlineStoredBehindAPass) {
  const int64_t start = UnixNowMs();
  FixedClock clock(start);
  std::vector<std::string> plain;
  for (int i = 0; i < 1000; ++i) plain.push_back("plain" + std::to_string(i));
  std::vector<Operation> writes;
  for (const std::string& key : plain) writes.push_back(Set(key, "x"));
  RunBatch(*engine_, writes);
  int64_t now = start;
  for (int trial = 0; trial < 40; ++trial) {
    const std::string key = "late" + std::to_string(trial);
    // Some deadline, so that a pass starts; then a quarter of the table.
    ASSERT_EQ(Do(Set("hint", "h", {.expire_at_ms = now + 600'000})), Ok());
    ASSERT_EQ(Do(Del("hint")), Int(1));
    ASSERT_EQ(Do(ReclaimExpired(256)), Int(0));
    ASSERT_EQ(Do(Set(key, "v", {.expire_at_ms = now + 10})), Ok());
    int64_t reclaimed = RunOp(*engine_, ReclaimExpired(1 << 20)).integer;  // the pass ends
    now += 11;
    clock.Set(now);
    for (int call = 0; call < 3; ++call)
      reclaimed += RunOp(*engine_, ReclaimExpired(1 << 20)).integer;
    EXPECT_EQ(reclaimed, 1) << key;
  }
  EXPECT_EQ(Do(DbSize()), Int(1000));
}

TEST_P(EngineConformance, InfoNamesTheEngine) {
  const EngineInfo info = engine_->Info();
  ASSERT_FALSE(info.empty());
  EXPECT_EQ(info.front().first, "engine");
  EXPECT_EQ(info.front().second, GetParam().config.kind);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineConformance, ::testing::ValuesIn(AllCases()), CaseName);

TEST(EngineFactory, KnowsEveryKindAndRejectsOthers) {
  EXPECT_EQ(EngineKinds(),
            (std::vector<std::string>{"single", "sharded", "concurrent", "striped", "owner"}));
  for (const std::string& kind : EngineKinds()) {
    EngineConfig config;
    config.kind = kind;
    config.shards = 2;
    std::unique_ptr<Engine> engine;
    const Status made = MakeEngine(config, &engine);
    EXPECT_TRUE(made.ok()) << kind << ": " << made.message();
    EXPECT_NE(engine, nullptr) << kind;
  }
  EngineConfig config;
  config.kind = "dashmap";
  std::unique_ptr<Engine> engine;
  Status made = MakeEngine(config, &engine);
  EXPECT_EQ(made.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(made.message().find("unknown engine 'dashmap'"), std::string::npos) << made.message();
  EXPECT_EQ(engine, nullptr);
  config.kind = "sharded";
  config.shards = 1'000'000;
  made = MakeEngine(config, &engine);
  EXPECT_EQ(made.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(made.message().find("shards"), std::string::npos) << made.message();
  EXPECT_EQ(engine, nullptr);
}

TEST(EngineTraits, OnlySingleIsSingleThreadedAndHopModeSetsBatching) {
  auto traits_of = [](std::string kind, HopMode hop) {
    EngineConfig config;
    config.kind = std::move(kind);
    config.shards = 1;
    config.hop = hop;
    std::unique_ptr<Engine> engine;
    EXPECT_TRUE(MakeEngine(config, &engine).ok());
    return engine->Traits();
  };
  EXPECT_TRUE(traits_of("single", HopMode::kCommand).single_threaded);
  EXPECT_FALSE(traits_of("concurrent", HopMode::kCommand).single_threaded);
  EXPECT_FALSE(traits_of("striped", HopMode::kCommand).single_threaded);
  EXPECT_FALSE(traits_of("sharded", HopMode::kCommand).single_threaded);
  EXPECT_FALSE(traits_of("sharded", HopMode::kCommand).batch_per_read);
  EXPECT_TRUE(traits_of("sharded", HopMode::kBatch).batch_per_read);
  EXPECT_TRUE(traits_of("owner", HopMode::kCommand).runs_on_io_threads);
  EXPECT_TRUE(traits_of("owner", HopMode::kCommand).batch_per_read);
  EXPECT_FALSE(traits_of("sharded", HopMode::kBatch).runs_on_io_threads);
}

// The server decides how to drive an engine from the kind table before the
// engine exists (one I/O thread for a single-threaded kind): what the built
// engine says must be what the table said.
TEST(EngineTraits, EveryEngineReportsTheTraitsItsKindTableEntryGives) {
  for (const EngineKind& kind : AllEngineKinds()) {
    for (HopMode hop : {HopMode::kCommand, HopMode::kBatch}) {
      EngineConfig config;
      config.kind = std::string(kind.name);
      config.shards = 1;
      config.hop = hop;
      std::unique_ptr<Engine> engine;
      const Status made = MakeEngine(config, &engine);
      ASSERT_TRUE(made.ok()) << kind.name << ": " << made.message();
      EXPECT_EQ(engine->Traits().single_threaded, TraitsOf(config).single_threaded) << kind.name;
      EXPECT_EQ(engine->Traits().batch_per_read, TraitsOf(config).batch_per_read) << kind.name;
      EXPECT_EQ(engine->Traits().runs_on_io_threads, kind.thread_per_core) << kind.name;
    }
  }
}

TEST(EngineKindTable, FindsEveryKindByNameAndResolvesDefaults) {
  for (const std::string& name : EngineKinds()) {
    const EngineKind* kind = FindEngineKind(name);
    ASSERT_NE(kind, nullptr) << name;
    EXPECT_EQ(kind->name, name);
  }
  EXPECT_EQ(FindEngineKind("dashmap"), nullptr);
  EngineConfig config;
  EXPECT_EQ(ResolvedStripes(config), kDefaultStripes);
  EXPECT_EQ(ResolvedShards(config), HardwareThreads());
  config.stripes = 3;
  config.shards = 5;
  EXPECT_EQ(ResolvedStripes(config), 3u);
  EXPECT_EQ(ResolvedShards(config), 5u);
}

}  // namespace
}  // namespace kvlab::testing
