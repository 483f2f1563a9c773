// The owner engine driven as the server drives it: each owner is a thread
// running posted functions (a stand-in for an I/O thread's EventLoop), and
// batches are executed on those threads. Checks which work runs inline and
// which hops, that a hop's result equals the inline one, that one message
// carries a whole round's shares, and that multi-owner groups stay atomic
// while every owner thread issues them at once.
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/hash_slot.h"
#include "engines/calls/atomic_group.h"
#include "engines/threads/function_thread.h"
#include "engines/kinds/owner_engine.h"
#include "tests/engines/engine_test_support.h"

namespace kvlab::testing {
namespace {

// One I/O thread's loop, reduced to its posted-function queue.
class TestLoop : public FunctionThread {
 public:
  // Runs `function` on the loop and waits for it (never from a loop thread).
  void RunAndWait(const std::function<void()>& function) {
    std::promise<void> ran;
    Post([&] {
      function();
      ran.set_value();
    });
    ran.get_future().wait();
  }
};

uint64_t InfoValue(const Engine& engine, const std::string& name) {
  for (const auto& [key, value] : engine.Info()) {
    if (key == name) return std::stoull(value);
  }
  ADD_FAILURE() << "no INFO field " << name;
  return 0;
}

class OwnerEngineOnLoops : public ::testing::Test {
 protected:
  void Build(unsigned owners) {
    EngineConfig config;
    config.kind = "owner";
    config.shards = owners;
    std::unique_ptr<Engine> engine;
    ASSERT_TRUE(MakeEngine(config, &engine).ok());
    engine_.reset(static_cast<OwnerEngine*>(engine.release()));
    for (unsigned i = 0; i < owners; ++i) loops_.push_back(std::make_unique<TestLoop>());
    for (unsigned i = 0; i < owners; ++i) {
      engine_->AttachIoThread(
          i, [loop = loops_[i].get()](std::function<void()> f) { loop->Post(std::move(f)); });
    }
  }
  void TearDown() override {
    loops_.clear();  // every posted function runs first
    engine_.reset();
  }
  // A key that owner `owner` holds: "k<n>" for the first n that lands there.
  std::string KeyOf(unsigned owner, int skip = 0) const {
    for (int n = 0;; ++n) {
      std::string key = "k" + std::to_string(n);
      if (engine_->OwnerOf(key) == owner && skip-- == 0) return key;
    }
  }
  // Executes `batch` on loop `thread` and waits for its completion (which
  // may come from another loop). Reports whether it completed inline.
  bool ExecuteOn(unsigned thread, Batch& batch) {
    std::promise<void> completed;
    bool inline_done = false;
    bool in_execute = false;  // read by `done` only on the caller's thread
    std::thread::id caller;
    loops_[thread]->RunAndWait([&] {
      caller = std::this_thread::get_id();
      in_execute = true;
      engine_->Execute(batch, [&] {
        if (std::this_thread::get_id() == caller) inline_done = in_execute;
        completed.set_value();
      });
      in_execute = false;
    });
    completed.get_future().wait();
    return inline_done;
  }

  std::unique_ptr<OwnerEngine> engine_;
  std::vector<std::unique_ptr<TestLoop>> loops_;
};

TEST_F(OwnerEngineOnLoops, OwnersHoldEvenContiguousSlotRanges) {
  Build(3);
  EXPECT_EQ(engine_->OwnerOf("foo"), OwnerOfSlot(12182, 3));  // CLUSTER KEYSLOT foo = 12182
  EXPECT_EQ(engine_->OwnerOf("{foo}bar"), engine_->OwnerOf("foo"));
  EXPECT_EQ(FirstSlotOf(1, 3), 5461u);
  EXPECT_EQ(OwnerOfSlot(5460, 3), 0u);
  EXPECT_EQ(OwnerOfSlot(5461, 3), 1u);
  EXPECT_EQ(OwnerOfSlot(16383, 3), 2u);
}

TEST_F(OwnerEngineOnLoops, LocalKeysRunInlineAndOtherOwnersKeysHop) {
  Build(2);
  const std::string mine = KeyOf(0), theirs = KeyOf(1);
  Batch local;
  local.Add(Set(mine, "v"));
  local.Add(Get(mine));
  EXPECT_TRUE(ExecuteOn(0, local));
  EXPECT_EQ(Describe(local.results[1]), Bulk("v"));
  EXPECT_EQ(InfoValue(*engine_, "local_ops"), 2u);
  EXPECT_EQ(InfoValue(*engine_, "remote_ops"), 0u);

  // The same three commands from a caller that does not own the key, then
  // from its owner.
  auto set_get_append = [&](Batch& batch) {
    batch.Add(Set(theirs, "v"));
    batch.Add(Get(theirs));
    batch.Add(Append(theirs, "w"));
  };
  Batch remote;
  set_get_append(remote);
  EXPECT_FALSE(ExecuteOn(0, remote));
  EXPECT_EQ(InfoValue(*engine_, "remote_ops"), 3u);
  EXPECT_EQ(InfoValue(*engine_, "hops"), 1u);
  EXPECT_EQ(InfoValue(*engine_, "messages"), 1u);

  // The same commands run by the owner itself give the same results.
  Batch at_home;
  set_get_append(at_home);
  EXPECT_TRUE(ExecuteOn(1, at_home));
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(Describe(remote.results[i]), Describe(at_home.results[i])) << i;
}

TEST_F(OwnerEngineOnLoops, OneOwnerRunsEverythingInline) {
  Build(1);
  Batch batch;
  for (int i = 0; i < 20; ++i) batch.Add(IncrBy(i % 2 == 0 ? "a" : "b", 1));
  batch.Add(DbSize());
  EXPECT_TRUE(ExecuteOn(0, batch));
  EXPECT_EQ(Describe(batch.results.back()), Int(2));
  EXPECT_EQ(InfoValue(*engine_, "hops"), 0u);
  EXPECT_EQ(InfoValue(*engine_, "local_ops"), 21u);
}

TEST_F(OwnerEngineOnLoops, OneMessagePerOwnerCarriesAWholeRound) {
  Build(2);
  constexpr int kBatches = 10;
  std::vector<std::string> keys;
  for (int i = 0; i < kBatches; ++i) keys.push_back(KeyOf(1, i));
  std::vector<Batch> batches(kBatches);
  std::atomic<int> completed{0};
  std::promise<void> all_done;
  loops_[0]->RunAndWait([&] {
    engine_->DeferWakeupsOnThisThread();
    for (int i = 0; i < kBatches; ++i) {
      batches[i].Add(Set(keys[i], "v"));
      engine_->Execute(batches[i], [&] {
        if (completed.fetch_add(1) + 1 == kBatches) all_done.set_value();
      });
    }
    EXPECT_EQ(completed.load(), 0);  // queued, not sent: the round has not ended
    engine_->WakeDeferred();
  });
  all_done.get_future().wait();
  EXPECT_EQ(InfoValue(*engine_, "hops"), static_cast<uint64_t>(kBatches));
  EXPECT_EQ(InfoValue(*engine_, "messages"), 1u);
}

TEST_F(OwnerEngineOnLoops, MultiOwnerGroupsFromEveryThreadStayAtomic) {
  Build(3);
  // Accounts spread over every owner; each transfer is an atomic group.
  constexpr int kAccounts = 6;
  std::vector<std::string> names;
  for (int i = 0; i < kAccounts; ++i) names.push_back(KeyOf(i % 3, i / 3));
  {
    Batch seed;
    for (const std::string& name : names) seed.Add(Set(name, "100"));
    ExecuteOn(0, seed);
  }
  constexpr int kTransfers = 300 * kStressScale;
  // Each loop runs a closed loop of transfers: the next one is issued from
  // the previous one's completion, posted back to the loop, as a
  // connection does. A loop never waits for its own work.
  struct Client {
    Batch batch;
    Batch audit;
    int done = 0;
    uint64_t seed = 0;
    int bad_audits = 0;
  };
  std::vector<Client> clients(3);
  std::atomic<int> finished{0};
  std::promise<void> all_finished;
  std::function<void(unsigned)> next = [&](unsigned t) {
    Client& c = clients[t];
    if (c.done == kTransfers) {
      if (finished.fetch_add(1) + 1 == 3) all_finished.set_value();
      return;
    }
    c.seed = c.seed * 6364136223846793005ull + 1442695040888963407ull;
    const int from = static_cast<int>((c.seed >> 33) % kAccounts);
    const int to = (from + 1 + static_cast<int>((c.seed >> 40) % (kAccounts - 1))) % kAccounts;
    c.batch.Clear();
    if (c.done % 10 == 9) {
      // An audit: every balance read in one group must sum to the total.
      for (const std::string& name : names) c.batch.Add(Get(name));
    } else {
      c.batch.Add(IncrBy(names[from], -1));
      c.batch.Add(IncrBy(names[to], 1));
    }
    c.batch.GroupFrom(0);
    ++c.done;
    engine_->Execute(c.batch, [&, t] {
      loops_[t]->Post([&, t] {
        Client& me = clients[t];
        if (me.batch.ops.size() == static_cast<size_t>(kAccounts)) {
          long total = 0;
          for (const OpResult& r : me.batch.results) total += std::stol(r.bulk.str());
          if (total != 100 * kAccounts) ++me.bad_audits;
        }
        next(t);
      });
    });
  };
  for (unsigned t = 0; t < 3; ++t) {
    clients[t].seed = t + 1;
    loops_[t]->Post([&, t] { next(t); });
  }
  all_finished.get_future().wait();
  for (const Client& c : clients) EXPECT_EQ(c.bad_audits, 0);
  Batch check;
  for (const std::string& name : names) check.Add(Get(name));
  ExecuteOn(1, check);
  long total = 0;
  for (const OpResult& r : check.results) total += std::stol(r.bulk.str());
  EXPECT_EQ(total, 100 * kAccounts);
  EXPECT_GT(InfoValue(*engine_, "multi_owner_groups"), 0u);
}

}  // namespace
}  // namespace kvlab::testing
