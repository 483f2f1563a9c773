// NodePool / NodePoolAllocator: slots are distinct, aligned and reused after
// Deallocate(); only single objects of the pool's size go to the pool; many
// threads allocating and freeing at once never get the same slot twice.
#include "engines/node_pool.h"

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

struct ThirtyTwoBytes {
  uint64_t words[4];
};

TEST(NodePool, SlotsAreDistinctAlignedAndReused) {
  NodePool pool(40);  // strides of 48 bytes
  std::set<void*> slots;
  for (int i = 0; i < 5000; ++i) {  // more than one 64 KiB chunk
    void* slot = pool.Allocate();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 16, 0u);
    EXPECT_TRUE(slots.insert(slot).second);
  }
  void* freed = *slots.begin();
  pool.Deallocate(freed);
  EXPECT_EQ(pool.Allocate(), freed);  // same thread, same lane: the free list first
}

TEST(NodePoolAllocator, OnlySingleObjectsOfThePoolSizeArePooled) {
  NodePool pool(sizeof(ThirtyTwoBytes));
  NodePoolAllocator<ThirtyTwoBytes> nodes(pool);
  ThirtyTwoBytes* node = nodes.allocate(1);
  nodes.deallocate(node, 1);
  EXPECT_EQ(pool.Allocate(), static_cast<void*>(node));  // it was the pool's slot

  NodePoolAllocator<uint64_t> other(nodes);  // rebound: a different size goes to std::allocator
  uint64_t* array = other.allocate(4);
  array[3] = 7;
  other.deallocate(array, 4);
  EXPECT_TRUE(other == nodes);
}

TEST(NodePool, ConcurrentAllocateAndFreeNeverShareASlot) {
  NodePool pool(sizeof(ThirtyTwoBytes));
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  constexpr int kPerRound = 64;
  std::vector<std::thread> threads;
  std::vector<int> clobbered(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ThirtyTwoBytes*> held;
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kPerRound; ++i) {
          auto* slot = static_cast<ThirtyTwoBytes*>(pool.Allocate());
          for (uint64_t& word : slot->words) word = static_cast<uint64_t>(t);
          held.push_back(slot);
        }
        for (ThirtyTwoBytes* slot : held) {
          for (uint64_t word : slot->words) clobbered[t] += word != static_cast<uint64_t>(t);
          pool.Deallocate(slot);
        }
        held.clear();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(clobbered[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace kvlab
