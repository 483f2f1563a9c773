// AtomicGroup on every engine: what a group's guards and carries do (MSETNX,
// RENAME, COPY as the server queues them), the WATCH abort flag, groups
// holding keyless operations, and — the point of groups — atomicity under
// concurrency: threads move amounts between 16 accounts with groups whose
// keys come in random orders while others read all accounts in one group;
// every read must see the same total, and nothing may deadlock (a hang is
// the ctest timeout). Runs under ThreadSanitizer too.
#include <atomic>
#include <random>
#include <thread>

#include "engines/calls/atomic_group.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

class AtomicGroups : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeEngine(GetParam().config, &engine_).ok()); }

  // Runs `ops` as one group (plus `abort_if`), returns the results.
  std::vector<OpResult> RunGroup(const std::vector<Operation>& ops,
                                 const std::atomic<bool>* abort_if = nullptr,
                                 bool* aborted = nullptr) {
    Batch batch;
    for (const Operation& op : ops) batch.Add(op);
    batch.GroupFrom(0, abort_if);
    std::promise<void> completed;
    engine_->Execute(batch, [&completed] { completed.set_value(); });
    completed.get_future().wait();
    if (aborted != nullptr) *aborted = batch.groups[0].aborted;
    return std::move(batch.results);
  }

  std::unique_ptr<Engine> engine_;
};

Operation Guard(OpCode code, std::string_view key, uint32_t span, int64_t integer = 0) {
  Operation op = MakeOp(code, key, {}, integer);
  op.guard_span = span;
  return op;
}

TEST_P(AtomicGroups, MsetNxGuardsSkipTheWholeCommand) {
  RunOp(*engine_, Set("b", "old"));
  // MSETNX a 1 b 2 c 3: b exists, so nothing is written.
  auto r = RunGroup({Guard(OpCode::kRequireAbsent, "a", 5), Guard(OpCode::kRequireAbsent, "b", 4),
                     Guard(OpCode::kRequireAbsent, "c", 3), Set("a", "1"), Set("b", "2"),
                     Set("c", "3")});
  EXPECT_EQ(Describe(r[1]), Int(1));
  for (int i = 2; i < 6; ++i) EXPECT_EQ(Describe(r[i]), Nil()) << i;
  EXPECT_EQ(Describe(RunOp(*engine_, Get("a"))), Nil());
  EXPECT_EQ(Describe(RunOp(*engine_, Get("b"))), Bulk("old"));
  // All absent: all written.
  r = RunGroup({Guard(OpCode::kRequireAbsent, "x", 3), Guard(OpCode::kRequireAbsent, "y", 2),
                Set("x", "1"), Set("y", "2")});
  EXPECT_EQ(Describe(r[2]), Ok());
  EXPECT_EQ(Describe(RunOp(*engine_, Get("y"))), Bulk("2"));
}

TEST_P(AtomicGroups, RenameCarriesValueAndExpiry) {
  const int64_t deadline = 4102444800000;  // 2100-01-01
  SetOptions with_expiry;
  with_expiry.expire_at_ms = deadline;
  RunOp(*engine_, Set("src", "value", with_expiry));
  RunOp(*engine_, Set("dst", "replaced"));
  auto r = RunGroup(
      {Guard(OpCode::kLoadCarry, "src", 1, /*erase=*/1), MakeOp(OpCode::kStoreCarry, "dst")});
  EXPECT_EQ(Describe(r[0]), Int(1));
  EXPECT_EQ(Describe(RunOp(*engine_, Get("src"))), Nil());
  EXPECT_EQ(Describe(RunOp(*engine_, Get("dst"))), Bulk("value"));
  EXPECT_EQ(Describe(RunOp(*engine_, MakeOp(OpCode::kExpireTime, "dst"))), Int(deadline));
  // A missing source stops the command: the destination is untouched.
  r = RunGroup({Guard(OpCode::kLoadCarry, "nosuch", 1, 1), MakeOp(OpCode::kStoreCarry, "dst")});
  EXPECT_EQ(Describe(r[0]), Int(0));
  EXPECT_EQ(Describe(r[1]), Nil());
  EXPECT_EQ(Describe(RunOp(*engine_, Get("dst"))), Bulk("value"));
}

TEST_P(AtomicGroups, CopyWithoutReplaceKeepsAPresentDestination) {
  RunOp(*engine_, Set("from", "v"));
  RunOp(*engine_, Set("to", "kept"));
  auto r = RunGroup({Guard(OpCode::kLoadCarry, "from", 2), Guard(OpCode::kRequireAbsent, "to", 1),
                     MakeOp(OpCode::kStoreCarry, "to")});
  EXPECT_EQ(Describe(r[1]), Int(1));
  EXPECT_EQ(Describe(RunOp(*engine_, Get("to"))), Bulk("kept"));
  EXPECT_EQ(Describe(RunOp(*engine_, Get("from"))), Bulk("v"));
}

TEST_P(AtomicGroups, AbortFlagRunsNothing) {
  std::atomic<bool> touched{true};
  bool aborted = false;
  auto r = RunGroup({Set("k", "1"), IncrBy("n", 1)}, &touched, &aborted);
  EXPECT_TRUE(aborted);
  EXPECT_EQ(Describe(r[0]), Nil());
  EXPECT_EQ(Describe(RunOp(*engine_, Exists("k"))), Int(0));
  touched = false;
  r = RunGroup({Set("k", "1"), IncrBy("n", 1)}, &touched, &aborted);
  EXPECT_FALSE(aborted);
  EXPECT_EQ(Describe(r[1]), Int(1));
}

TEST_P(AtomicGroups, KeylessOperationsInsideAGroup) {
  RunOp(*engine_, Set("a", "1"));
  auto r = RunGroup({Set("b", "2"), DbSize(), FlushAll(), Set("c", "3"), DbSize()});
  EXPECT_EQ(Describe(r[1]), Int(2));
  EXPECT_EQ(Describe(r[4]), Int(1));
  EXPECT_EQ(Describe(RunOp(*engine_, Get("c"))), Bulk("3"));
}

TEST_P(AtomicGroups, RepeatedKeysInOneGroup) {
  auto r = RunGroup(
      {Set("k", "1"), IncrBy("k", 5), Get("k"), Del("k"), Exists("k"), Set("k", "x"), Get("k")});
  EXPECT_EQ(Describe(r[1]), Int(6));
  EXPECT_EQ(Describe(r[2]), Bulk("6"));
  EXPECT_EQ(Describe(r[4]), Int(0));
  EXPECT_EQ(Describe(r[6]), Bulk("x"));
  // A group that leaves a key it only read absent leaves no trace of it.
  r = RunGroup({Get("never"), Exists("never")});
  EXPECT_EQ(Describe(RunOp(*engine_, DbSize())), Int(1));
}

// Bank transfers: 16 accounts of 1000; writers move amounts between random
// accounts in groups (keys in random order, several transfers per group,
// sometimes a DBSIZE that holds the whole keyspace), readers sum all
// accounts in one group. Every sum is 16000.
TEST_P(AtomicGroups, TransfersNeverShowAWrongTotal) {
  constexpr int kAccounts = 16;
  std::vector<std::string> names;
  for (int i = 0; i < kAccounts; ++i) names.push_back("acct" + std::to_string(i));
  for (const std::string& name : names) RunOp(*engine_, Set(name, "1000"));
  const int rounds = 300 * kStressScale;
  std::atomic<long> wrong_totals{0}, reads{0};
  std::atomic<bool> writing{true};
  auto writer = [&](uint64_t seed) {
    std::mt19937_64 random(seed);
    for (int round = 0; round < rounds; ++round) {
      Batch batch;
      const int transfers = 1 + static_cast<int>(random() % 3);
      for (int t = 0; t < transfers; ++t) {
        const int from = static_cast<int>(random() % kAccounts);
        const int to = static_cast<int>(random() % kAccounts);
        const int64_t amount = static_cast<int64_t>(random() % 50);
        batch.Add(IncrBy(names[from], -amount));
        batch.Add(IncrBy(names[to], amount));
      }
      if (round % 50 == 0) batch.Add(DbSize());
      batch.GroupFrom(0);
      std::promise<void> completed;
      engine_->Execute(batch, [&completed] { completed.set_value(); });
      completed.get_future().wait();
    }
  };
  auto reader = [&] {
    while (writing.load()) {
      std::vector<Operation> ops;
      for (const std::string& name : names) ops.push_back(Get(name));
      Batch batch;
      for (const Operation& op : ops) batch.Add(op);
      batch.GroupFrom(0);
      std::promise<void> completed;
      engine_->Execute(batch, [&completed] { completed.set_value(); });
      completed.get_future().wait();
      long total = 0;
      for (const OpResult& result : batch.results) total += std::stol(result.bulk.str());
      ++reads;
      if (total != 1000 * kAccounts) ++wrong_totals;
    }
  };
  std::vector<std::thread> threads;
  for (uint64_t seed = 1; seed <= 3; ++seed) threads.emplace_back(writer, seed);
  std::thread read_thread(reader);
  for (auto& thread : threads) thread.join();
  writing = false;
  read_thread.join();
  EXPECT_EQ(wrong_totals.load(), 0) << "of " << reads.load() << " reads";
  long total = 0;
  for (const std::string& name : names) total += std::stol(RunOp(*engine_, Get(name)).bulk.str());
  EXPECT_EQ(total, 1000 * kAccounts);
}

INSTANTIATE_TEST_SUITE_P(Engines, AtomicGroups, ::testing::ValuesIn(MultithreadedCases()),
                         CaseName);

// single may only be driven from one thread: its group semantics, there.
class SingleEngineGroups : public AtomicGroups {};
TEST_P(SingleEngineGroups, SemanticsOnOneThread) {
  RunOp(*engine_, Set("b", "old"));
  auto r = RunGroup({Guard(OpCode::kRequireAbsent, "a", 3), Guard(OpCode::kRequireAbsent, "b", 2),
                     Set("a", "1"), Set("b", "2")});
  EXPECT_EQ(Describe(r[2]), Nil());
  r = RunGroup({Guard(OpCode::kLoadCarry, "b", 1, 1), MakeOp(OpCode::kStoreCarry, "c")});
  EXPECT_EQ(Describe(RunOp(*engine_, Get("c"))), Bulk("old"));
  std::atomic<bool> touched{true};
  bool aborted = false;
  RunGroup({Set("z", "1")}, &touched, &aborted);
  EXPECT_TRUE(aborted);
  r = RunGroup({Set("q", "2"), DbSize(), FlushAll(), DbSize()});
  EXPECT_EQ(Describe(r[1]), Int(2));  // c (renamed from b) and q
  EXPECT_EQ(Describe(r[3]), Int(0));
}
INSTANTIATE_TEST_SUITE_P(Single, SingleEngineGroups,
                         ::testing::Values(MakeCase("single", "single")), CaseName);

}  // namespace
}  // namespace kvlab::testing
