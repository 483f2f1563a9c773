// BlockingRegistry's answer to "are the clients this write woke served
// yet?" (AwaitServed()), driven by hand without a server: which waiters a
// writer waits for, that a chain of waiters (one's move waking the next)
// is followed, that the chain is followed only so far, and that a writer is
// never left waiting when the registry goes away.
#include "server/blocking_registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engines/modification_feed.h"

namespace kvlab {
namespace {

class BlockingRegistryTest : public ::testing::Test {
 protected:
  // A client blocked on `keys`, asleep (armed), counting its wake-ups.
  std::shared_ptr<BlockingRegistry::Waiter> Sleeper(uint64_t id, std::vector<std::string> keys,
                                                    int* wakes) {
    auto waiter = registry_->Block(id, keys, std::nullopt, [wakes] { ++*wakes; });
    EXPECT_EQ(registry_->Arm(*waiter).event, BlockingRegistry::Event::kNone);
    return waiter;
  }

  // A writer's AwaitServed(): true when it must wait; `answered` counts calls.
  bool Await(int* answered) {
    std::function<void()> served = [answered] { ++*answered; };
    const bool waits = registry_->AwaitServed(served);
    EXPECT_EQ(waits, served == nullptr) << "taken exactly when it waits";
    return waits;
  }

  ModificationFeed feed_;
  std::unique_ptr<BlockingRegistry> registry_ = std::make_unique<BlockingRegistry>(feed_);
};

TEST_F(BlockingRegistryTest, NothingToWaitForWithoutAWaiterInService) {
  int answered = 0;
  EXPECT_FALSE(Await(&answered));
  int wakes = 0;
  auto sleeper = Sleeper(1, {"k"}, &wakes);
  EXPECT_FALSE(Await(&answered)) << "asleep, not in service";
  registry_->KeyReady("other");
  EXPECT_FALSE(Await(&answered)) << "a key nobody waits on serves nobody";
  registry_->Unblock(*sleeper);
  EXPECT_EQ(answered, 0);
}

TEST_F(BlockingRegistryTest, WriterWaitsUntilTheWokenClientsRetryHasRun) {
  int wakes = 0;
  int answered = 0;
  auto waiter = Sleeper(1, {"k"}, &wakes);
  registry_->KeyReady("k");
  EXPECT_EQ(wakes, 1);
  ASSERT_TRUE(Await(&answered));
  BlockingRegistry::Wake wake = registry_->Arm(*waiter);  // it wakes up to retry
  EXPECT_EQ(wake.event, BlockingRegistry::Event::kReady);
  EXPECT_EQ(answered, 0) << "retrying, not served yet";
  // The retry found nothing (someone else took it): it sleeps again.
  EXPECT_EQ(registry_->Arm(*waiter).event, BlockingRegistry::Event::kNone);
  EXPECT_EQ(answered, 1);
  EXPECT_FALSE(Await(&answered));
  registry_->Unblock(*waiter);
  EXPECT_EQ(answered, 1) << "called once";
}

TEST_F(BlockingRegistryTest, ChainOfMovesIsFollowedToItsEnd) {
  int wakes_a = 0;
  int wakes_b = 0;
  int answered = 0;
  auto a = Sleeper(1, {"list1"}, &wakes_a);  // BRPOPLPUSH list1 list2
  auto b = Sleeper(2, {"list2"}, &wakes_b);  // BRPOPLPUSH list2 list1
  registry_->KeyReady("list1");              // RPUSH list1 foo
  ASSERT_TRUE(Await(&answered));
  EXPECT_EQ(registry_->Arm(*a).event, BlockingRegistry::Event::kReady);
  registry_->KeyReady("list2");  // a's move pushes onto list2: b is woken
  registry_->Unblock(*a);        // a is served
  EXPECT_EQ(answered, 0) << "b, woken by a, is the chain's next link";
  EXPECT_EQ(wakes_b, 1);
  EXPECT_EQ(registry_->Arm(*b).event, BlockingRegistry::Event::kReady);
  registry_->Unblock(*b);
  EXPECT_EQ(answered, 1);
}

TEST_F(BlockingRegistryTest, KeyPassedOnByAServedClientKeepsTheWriterWaiting) {
  int wakes_first = 0;
  int wakes_second = 0;
  int answered = 0;
  auto first = Sleeper(1, {"k"}, &wakes_first);
  auto second = Sleeper(2, {"k"}, &wakes_second);
  registry_->KeyReady("k");  // RPUSH k a b: first is handed k
  ASSERT_TRUE(Await(&answered));
  EXPECT_EQ(registry_->Arm(*first).event, BlockingRegistry::Event::kReady);
  registry_->Unblock(*first);  // served; k may hold more: second looks
  EXPECT_EQ(wakes_second, 1);
  EXPECT_EQ(answered, 0);
  EXPECT_EQ(registry_->Arm(*second).event, BlockingRegistry::Event::kReady);
  registry_->Unblock(*second);
  EXPECT_EQ(answered, 1);
}

TEST_F(BlockingRegistryTest, EndlessStreamOfServicesHoldsAWriterOnlyKMaxChainLinks) {
  int wakes = 0;
  int answered = 0;
  std::vector<std::shared_ptr<BlockingRegistry::Waiter>> waiters;
  const int kLinks = BlockingRegistry::kMaxChain + 5;
  for (int i = 0; i <= kLinks; ++i) {
    waiters.push_back(Sleeper(i + 1, {"k" + std::to_string(i)}, &wakes));
  }
  registry_->KeyReady("k0");
  ASSERT_TRUE(Await(&answered));
  int served = 0;
  for (int i = 0; i < kLinks && answered == 0; ++i) {
    registry_->KeyReady("k" + std::to_string(i + 1));  // the next one enters service first
    registry_->Unblock(*waiters[i]);
    ++served;
  }
  EXPECT_EQ(answered, 1);
  EXPECT_EQ(served, BlockingRegistry::kMaxChain);
  for (auto& waiter : waiters) registry_->Unblock(*waiter);
  EXPECT_EQ(answered, 1);
}

TEST_F(BlockingRegistryTest, ClientUnblockAndTimeoutsPutNobodyInService) {
  int wakes = 0;
  int answered = 0;
  auto waiter = Sleeper(7, {"k"}, &wakes);
  EXPECT_TRUE(registry_->UnblockClient(7, /*error=*/false));
  EXPECT_EQ(wakes, 1);
  EXPECT_FALSE(Await(&answered));
  registry_->Unblock(*waiter);
}

TEST_F(BlockingRegistryTest, RegistryGoingAwayAnswersWaitingWriters) {
  int wakes = 0;
  int answered = 0;
  auto waiter = Sleeper(1, {"k"}, &wakes);
  registry_->KeyReady("k");
  ASSERT_TRUE(Await(&answered));
  registry_.reset();
  EXPECT_EQ(answered, 1);
}

}  // namespace
}  // namespace kvlab
