// MpscChannel: every message from every producer arrives exactly once, in
// each producer's order; closing drains what was sent and refuses the rest.
#include "engines/threads/channel.h"

#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

TEST(MpscChannel, ManyProducersOneConsumerKeepPerProducerOrder) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 5000;
  MpscChannel<std::pair<int, int>> channel;  // (producer, sequence)

  std::vector<int> next_expected(kProducers, 0);
  int received = 0, out_of_order = 0;
  std::thread consumer([&] {
    std::vector<std::pair<int, int>> burst;
    while (channel.ReceiveAll(&burst)) {
      for (const auto& [producer, seq] : burst) {
        out_of_order += seq != next_expected[producer] ? 1 : 0;
        next_expected[producer] = seq + 1;
        ++received;
      }
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&channel, p] {
      for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(channel.Send({p, i}));
    });
  }
  for (std::thread& producer : producers) producer.join();
  channel.Close();
  consumer.join();

  EXPECT_EQ(received, kProducers * kPerProducer);
  EXPECT_EQ(out_of_order, 0);
  EXPECT_GE(channel.MaxDepth(), 1u);
  EXPECT_EQ(channel.Depth(), 0u);
}

TEST(MpscChannel, CloseDeliversQueuedMessagesThenEnds) {
  MpscChannel<int> channel;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(channel.Send(i));
  EXPECT_EQ(channel.Depth(), 10u);
  channel.Close();
  EXPECT_FALSE(channel.Send(99));

  std::vector<int> burst;
  ASSERT_TRUE(channel.ReceiveAll(&burst));
  EXPECT_EQ(burst, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(channel.MaxDepth(), 10u);
  EXPECT_FALSE(channel.ReceiveAll(&burst));
  EXPECT_TRUE(burst.empty());
}

TEST(MpscChannel, IdleConsumerWakesForASend) {
  MpscChannel<int> channel;
  std::vector<int> burst;
  std::thread consumer([&] { ASSERT_TRUE(channel.ReceiveAll(&burst)); });
  std::this_thread::yield();  // usually lets the consumer fall asleep first; either order must work
  ASSERT_TRUE(channel.Send(42));
  consumer.join();
  EXPECT_EQ(burst, std::vector<int>{42});
}

// A producer that queues without waking must not lose the consumer: Wake()
// after the sends delivers all of them, whether the consumer was asleep or not.
TEST(MpscChannel, SendsWithoutWakeArriveAfterOneWake) {
  MpscChannel<int> channel;
  std::vector<int> received;
  std::thread consumer([&] {
    std::vector<int> burst;
    while (received.size() < 3 && channel.ReceiveAll(&burst)) {
      received.insert(received.end(), burst.begin(), burst.end());
    }
  });
  std::this_thread::yield();  // usually lets the consumer fall asleep first; either order must work
  ASSERT_TRUE(channel.SendWithoutWake(1));
  ASSERT_TRUE(channel.SendWithoutWake(2));
  ASSERT_TRUE(channel.SendWithoutWake(3));
  channel.Wake();
  consumer.join();
  EXPECT_EQ(received, (std::vector<int>{1, 2, 3}));
  channel.Close();
  EXPECT_FALSE(channel.SendWithoutWake(4));
}

}  // namespace
}  // namespace kvlab
