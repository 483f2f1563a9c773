// The blocking list and sorted-set commands (BLPOP, BRPOP, BLMPOP, BLMOVE,
// BRPOPLPUSH, BZPOPMIN, BZPOPMAX, BZMPOP) and CLIENT UNBLOCK, with real
// clients over sockets, on every engine and on redis-server 7.0.15 (the
// `redis` case), which must pass the same expectations: who is served, in
// which order, with which reply, and what a client that goes away leaves.
// "Blocked" is read from INFO's blocked_clients, as Redis's own tests do;
// the only waits are that poll and generous liveness bounds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/redis_connection.h"
#include "tests/server/engine_or_redis.h"

namespace kvlab::test {
namespace {

class BlockingTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const Status started = target_.Start(GetParam());
    ASSERT_TRUE(started.ok()) << started.message();
    unix_path_ = target_.unix_path();
    main_ = Connect();
    ASSERT_NE(main_, nullptr);
  }

  std::unique_ptr<RedisConnection> Connect() { return RedisConnection::Unix(unix_path_); }

  // Waits (10 s at most) until INFO reports `count` blocked clients.
  void WaitBlocked(int count) {
    const std::string wanted = "blocked_clients:" + std::to_string(count) + "\r";
    for (int i = 0; i < 1000; ++i) {
      if (main_->Command({"INFO", "clients"}).text.find(wanted) != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "never " << count << " blocked clients";
  }

  // A client that sends `args` (a blocking command) and is blocked by it.
  std::unique_ptr<RedisConnection> Blocked(const std::vector<std::string>& args, int now_blocked) {
    auto client = Connect();
    client->Append(args);
    EXPECT_TRUE(client->Flush());
    WaitBlocked(now_blocked);
    return client;
  }

  static std::vector<std::string> Texts(const Reply& reply) {
    std::vector<std::string> texts;
    for (const Reply& element : reply.elements) texts.push_back(element.text);
    return texts;
  }
  using Strings = std::vector<std::string>;

  EngineOrRedis target_;
  std::string unix_path_;
  std::unique_ptr<RedisConnection> main_;
};

TEST_P(BlockingTest, DataPresentIsPoppedAtOnce) {
  main_->Command({"RPUSH", "l", "a", "b"});
  EXPECT_EQ(Texts(main_->Command({"BLPOP", "missing", "l", "0"})), (Strings{"l", "a"}));
  EXPECT_EQ(Texts(main_->Command({"BRPOP", "l", "0"})), (Strings{"l", "b"}));
  EXPECT_TRUE(main_->Command({"EXISTS", "l"}).IsInteger(0));
  main_->Command({"SET", "s", "x"});
  EXPECT_EQ(main_->Command({"BLPOP", "missing", "s", "0"}).text.substr(0, 9), "WRONGTYPE");
}

TEST_P(BlockingTest, PushServesBlockedClient) {
  auto waiter = Blocked({"BLPOP", "l", "0"}, 1);
  EXPECT_TRUE(main_->Command({"RPUSH", "l", "a"}).IsInteger(1));
  EXPECT_EQ(Texts(waiter->GetReply()), (Strings{"l", "a"}));
  EXPECT_TRUE(main_->Command({"EXISTS", "l"}).IsInteger(0));
  WaitBlocked(0);
}

TEST_P(BlockingTest, TimeoutsAnswerNilAndBadOnesAnError) {
  EXPECT_TRUE(main_->Command({"BLPOP", "l", "0.05"}).IsNil());
  EXPECT_TRUE(main_->Command({"BLMOVE", "l", "d", "LEFT", "RIGHT", "0.01"}).IsNil());
  EXPECT_TRUE(main_->Command({"BZPOPMAX", "z", "0.02"}).IsNil());
  EXPECT_EQ(main_->Command({"BLPOP", "l", "-1"}).text, "ERR timeout is negative");
  EXPECT_EQ(main_->Command({"BRPOP", "l", "abc"}).text,
            "ERR timeout is not a float or out of range");
  EXPECT_EQ(main_->Command({"BLMPOP", "1", "0", "l", "LEFT"}).text,
            "ERR numkeys should be greater than 0");
  EXPECT_EQ(main_->Command({"BLMPOP", "-1", "1", "l", "UP"}).text, "ERR syntax error");
  EXPECT_EQ(main_->Command({"BZMPOP", "x", "1", "z", "MIN", "COUNT", "0"}).text,
            "ERR count should be greater than 0");
  EXPECT_EQ(main_->Command({"BLMOVE", "l", "d", "UP", "LEFT", "-1"}).text, "ERR syntax error");
}

TEST_P(BlockingTest, WaitersAreServedFirstComeFirstServed) {
  auto first = Blocked({"BLPOP", "l", "0"}, 1);
  auto second = Blocked({"BRPOP", "other", "l", "0"}, 2);
  auto third = Blocked({"BLPOP", "l", "0"}, 3);
  EXPECT_TRUE(main_->Command({"RPUSH", "l", "a", "b", "c"}).IsInteger(3));
  EXPECT_EQ(Texts(first->GetReply()), (Strings{"l", "a"}));
  EXPECT_EQ(Texts(second->GetReply()), (Strings{"l", "c"}));
  EXPECT_EQ(Texts(third->GetReply()), (Strings{"l", "b"}));
  WaitBlocked(0);
}

TEST_P(BlockingTest, VariadicPushServesSeveralWaitersInOrder) {
  auto first = Blocked({"BLPOP", "l", "0"}, 1);
  auto second = Blocked({"BLPOP", "l", "0"}, 2);
  EXPECT_TRUE(main_->Command({"LPUSH", "l", "a", "b"}).IsInteger(2));
  EXPECT_EQ(Texts(first->GetReply()), (Strings{"l", "b"}));
  EXPECT_EQ(Texts(second->GetReply()), (Strings{"l", "a"}));
}

TEST_P(BlockingTest, ClientOnSeveralKeysIsServedByTheFirstThatGetsData) {
  auto waiter = Blocked({"BLPOP", "k1", "k2", "0"}, 1);
  main_->Command({"MULTI"});
  main_->Command({"RPUSH", "k2", "x"});
  main_->Command({"RPUSH", "k1", "y"});
  EXPECT_EQ(main_->Command({"EXEC"}).elements.size(), 2u);
  EXPECT_EQ(Texts(waiter->GetReply()), (Strings{"k2", "x"}));
  EXPECT_EQ(Texts(main_->Command({"LRANGE", "k1", "0", "-1"})), (Strings{"y"}));
}

TEST_P(BlockingTest, ExecIsOneStepForTheWaiter) {
  auto waiter = Blocked({"BLPOP", "l", "0"}, 1);
  main_->Command({"MULTI"});
  main_->Command({"LPUSH", "l", "a"});
  main_->Command({"LPUSH", "l", "b"});
  main_->Command({"LPUSH", "l", "c"});
  main_->Command({"EXEC"});
  EXPECT_EQ(Texts(waiter->GetReply()), (Strings{"l", "c"}));
  EXPECT_EQ(Texts(main_->Command({"LRANGE", "l", "0", "-1"})), (Strings{"b", "a"}));
}

TEST_P(BlockingTest, InsideMultiNothingBlocks) {
  main_->Command({"MULTI"});
  main_->Command({"BLPOP", "l", "0"});
  main_->Command({"BLMOVE", "l", "d", "LEFT", "LEFT", "0"});
  main_->Command({"BZPOPMIN", "z", "0"});
  main_->Command({"BLMPOP", "0", "1", "l", "LEFT"});
  const Reply exec = main_->Command({"EXEC"});
  ASSERT_EQ(exec.elements.size(), 4u);
  for (const Reply& element : exec.elements) EXPECT_TRUE(element.IsNil());
}

TEST_P(BlockingTest, KeyDeletedOrRetypedWhileBlockedKeepsTheClientWaiting) {
  auto waiter = Blocked({"BLPOP", "l", "0"}, 1);
  main_->Command({"MULTI"});
  main_->Command({"LPUSH", "l", "a"});
  main_->Command({"DEL", "l"});
  main_->Command({"EXEC"});
  main_->Command({"MULTI"});
  main_->Command({"LPUSH", "l", "a"});
  main_->Command({"DEL", "l"});
  main_->Command({"SET", "l", "string"});
  main_->Command({"EXEC"});
  WaitBlocked(1);
  main_->Command({"DEL", "l"});
  main_->Command({"RPUSH", "l", "b"});
  EXPECT_EQ(Texts(waiter->GetReply()), (Strings{"l", "b"}));
}

TEST_P(BlockingTest, MoveToADestinationWakesItsWaiter) {
  auto mover = Blocked({"BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"}, 1);
  auto popper = Blocked({"BLPOP", "dst", "0"}, 2);
  main_->Command({"RPUSH", "src", "x"});
  EXPECT_TRUE(mover->GetReply().IsBulk("x"));
  EXPECT_EQ(Texts(popper->GetReply()), (Strings{"dst", "x"}));
  EXPECT_TRUE(main_->Command({"EXISTS", "src", "dst"}).IsInteger(0));
}

// Redis serves the clients a write woke before it runs the next command
// (handleClientsBlockedOnKeys after every call), so the writer's next
// command already sees every move the waiters made, however they chain.
// Repeated: a reply that overtakes the waiters shows only now and then.
TEST_P(BlockingTest, WriterSeesTheWaitersItWokeServedAlready) {
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto first = Blocked({"BRPOPLPUSH", "list1", "list2", "0"}, 1);
    auto second = Blocked({"BRPOPLPUSH", "list2", "list1", "0"}, 2);
    EXPECT_TRUE(main_->Command({"RPUSH", "list1", "foo"}).IsInteger(1));
    EXPECT_EQ(Texts(main_->Command({"LRANGE", "list1", "0", "-1"})), (Strings{"foo"}));
    EXPECT_TRUE(main_->Command({"EXISTS", "list2"}).IsInteger(0));
    EXPECT_TRUE(first->GetReply().IsBulk("foo"));
    EXPECT_TRUE(second->GetReply().IsBulk("foo"));
    auto mover = Blocked({"BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"}, 1);
    EXPECT_TRUE(main_->Command({"RPUSH", "src", "x"}).IsInteger(1));
    EXPECT_EQ(Texts(main_->Command({"LRANGE", "dst", "0", "-1"})), (Strings{"x"}));
    EXPECT_TRUE(mover->GetReply().IsBulk("x"));
    main_->Command({"DEL", "list1", "dst"});
    if (HasFailure()) break;
  }
}

TEST_P(BlockingTest, WrongDestinationAnswersErrorAndTheNextWaiterIsServed) {
  main_->Command({"SET", "target1", "nolist"});
  auto first = Blocked({"BRPOPLPUSH", "blist", "target1", "0"}, 1);
  auto second = Blocked({"BRPOPLPUSH", "blist", "target2", "0"}, 2);
  main_->Command({"LPUSH", "blist", "foo"});
  EXPECT_EQ(first->GetReply().text.substr(0, 9), "WRONGTYPE");
  EXPECT_TRUE(second->GetReply().IsBulk("foo"));
  EXPECT_EQ(Texts(main_->Command({"LRANGE", "target2", "0", "-1"})), (Strings{"foo"}));
}

TEST_P(BlockingTest, SortedSetWaitersGetMemberAndScore) {
  auto min = Blocked({"BZPOPMIN", "z", "0"}, 1);
  main_->Command({"ZADD", "z", "1.5", "a"});
  EXPECT_EQ(Texts(min->GetReply()), (Strings{"z", "a", "1.5"}));
  auto multi = Blocked({"BZMPOP", "0", "2", "y", "z", "MAX", "COUNT", "2"}, 1);
  main_->Command({"ZADD", "z", "1", "a", "2", "b", "3", "c"});
  const Reply reply = multi->GetReply();
  ASSERT_EQ(reply.elements.size(), 2u);
  EXPECT_EQ(reply.elements[0].text, "z");
  ASSERT_EQ(reply.elements[1].elements.size(), 2u);
  EXPECT_EQ(Texts(reply.elements[1].elements[0]), (Strings{"c", "3"}));
  EXPECT_EQ(Texts(reply.elements[1].elements[1]), (Strings{"b", "2"}));
  auto list = Blocked({"BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "5"}, 1);
  main_->Command({"RPUSH", "l", "1", "2"});
  const Reply popped = list->GetReply();
  ASSERT_EQ(popped.elements.size(), 2u);
  EXPECT_EQ(Texts(popped.elements[1]), (Strings{"2", "1"}));
}

TEST_P(BlockingTest, ClientUnblockAnswersTimeoutOrError) {
  auto waiter = Connect();
  const long long id = waiter->Command({"CLIENT", "ID"}).integer;
  EXPECT_TRUE(main_->Command({"CLIENT", "UNBLOCK", std::to_string(id)}).IsInteger(0));
  waiter->Append({"BLPOP", "l", "0"});
  waiter->Flush();
  WaitBlocked(1);
  EXPECT_TRUE(main_->Command({"CLIENT", "UNBLOCK", std::to_string(id)}).IsInteger(1));
  EXPECT_TRUE(waiter->GetReply().IsNil());
  waiter->Append({"BZPOPMIN", "z", "0"});
  waiter->Flush();
  WaitBlocked(1);
  EXPECT_TRUE(main_->Command({"CLIENT", "UNBLOCK", std::to_string(id), "ERROR"}).IsInteger(1));
  EXPECT_EQ(waiter->GetReply().text, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
  EXPECT_EQ(main_->Command({"CLIENT", "UNBLOCK", std::to_string(id), "MAYBE"}).text,
            "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
  // Its connection works on.
  EXPECT_TRUE(waiter->Command({"PING"}).IsStatus("PONG"));
}

TEST_P(BlockingTest, CommandsAfterABlockingOneWaitForIt) {
  auto waiter = Connect();
  waiter->Append({"BLPOP", "l", "0"});
  waiter->Append({"RPUSH", "l", "mine"});
  waiter->Flush();
  WaitBlocked(1);
  main_->Command({"RPUSH", "l", "theirs"});
  EXPECT_EQ(Texts(waiter->GetReply()), (Strings{"l", "theirs"}));
  EXPECT_TRUE(waiter->GetReply().IsInteger(1));
}

TEST_P(BlockingTest, ClientThatLeftTakesNothing) {
  auto leaving = Blocked({"BLPOP", "l", "0"}, 1);
  auto staying = Blocked({"BLPOP", "l", "0"}, 2);
  leaving.reset();
  WaitBlocked(1);
  main_->Command({"RPUSH", "l", "a", "b"});
  EXPECT_EQ(Texts(staying->GetReply()), (Strings{"l", "a"}));
  auto gone = Blocked({"BLMOVE", "l", "d", "LEFT", "LEFT", "0"}, 0);  // served at once
  EXPECT_TRUE(gone->GetReply().IsBulk("b"));
  gone = Blocked({"BLMOVE", "l", "d", "LEFT", "LEFT", "0"}, 1);
  gone.reset();
  WaitBlocked(0);
  main_->Command({"RPUSH", "l", "c"});
  EXPECT_EQ(Texts(main_->Command({"LRANGE", "l", "0", "-1"})), (Strings{"c"}));
}

// Writers race blockers: every element pushed is popped exactly once and
// no client sleeps while data waits (each BLPOP's 30 s bound is liveness).
TEST_P(BlockingTest, RacingWritersAndBlockersLoseNothing) {
  constexpr int kConsumers = 6;
  constexpr int kProducers = 3;
  constexpr int kPerProducer = 300;
  std::atomic<int> popped{0};
  std::atomic<int> timeouts{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      auto client = Connect();
      while (popped.load() < kProducers * kPerProducer) {
        const Reply reply = client->Command({"BLPOP", "q1", "q2", "1"});
        if (reply.IsNil()) continue;  // the others took the rest meanwhile
        if (reply.elements.size() == 2) {
          popped.fetch_add(1);
        } else {
          timeouts.fetch_add(1);
          return;
        }
      }
    });
  }
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      auto client = Connect();
      for (int i = 0; i < kPerProducer; ++i) {
        client->Command({p % 2 ? "LPUSH" : "RPUSH", i % 3 ? "q1" : "q2", std::to_string(i)});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(timeouts.load(), 0);
  EXPECT_EQ(popped.load(), kProducers * kPerProducer);
  EXPECT_TRUE(main_->Command({"EXISTS", "q1", "q2"}).IsInteger(0));
}

INSTANTIATE_TEST_SUITE_P(Targets, BlockingTest, ::testing::ValuesIn(EnginesAndRedis()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kvlab::test
