// TrailingRoomAllocator: a request's bytes go to exactly one one-object
// allocation, in the same malloc chunk right after the object, and nothing
// is left behind for a later allocation once the request closes.
#include "engines/keyspace/trailing_room_allocator.h"

#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <list>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

struct Node {
  uint64_t words[4];
};

// `count` Nodes from the allocator, given back when the holder ends.
class Allocation {
 public:
  explicit Allocation(size_t count = 1)
      : count_(count), nodes_(TrailingRoomAllocator<Node>().allocate(count)) {}
  ~Allocation() { TrailingRoomAllocator<Node>().deallocate(nodes_, count_); }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  Node* nodes() const { return nodes_; }
  size_t usable_bytes() const { return malloc_usable_size(nodes_); }

 private:
  size_t count_;
  Node* nodes_;
};

bool RoomWasGranted() { return TakeTrailingRoom().bytes != nullptr; }

TEST(TrailingRoomAllocator, AnObjectAllocatedWithoutARequestHasNoRoom) {
  Allocation node;
  const TrailingRoom room = TakeTrailingRoom();
  EXPECT_EQ(room.bytes, nullptr);
  EXPECT_EQ(room.size, 0u);
}

TEST(TrailingRoomAllocator, TheRequestedRoomFollowsTheObjectInItsChunk) {
  TrailingRoomRequest request(45);
  Allocation node;
  const TrailingRoom room = TakeTrailingRoom();
  ASSERT_EQ(room.bytes, reinterpret_cast<char*>(node.nodes()) + sizeof(Node));
  EXPECT_GE(room.size, 45u);
  // The whole chunk's usable bytes past the object are the room.
  EXPECT_EQ(room.size, node.usable_bytes() - sizeof(Node));
  EXPECT_EQ(TrailingRoomSize(room.bytes, sizeof(Node)), room.size);
  // Every byte of object and room is writable (ASan would report otherwise).
  std::memset(node.nodes(), 0xab, sizeof(Node));
  std::memset(room.bytes, 0xcd, room.size);
}

TEST(TrailingRoomAllocator, TheRoomIsTakenOnceAndGoesToOneAllocation) {
  TrailingRoomRequest request(64);
  Allocation first;
  EXPECT_TRUE(RoomWasGranted());
  EXPECT_FALSE(RoomWasGranted()) << "a room handed out twice";
  Allocation second;
  EXPECT_FALSE(RoomWasGranted()) << "one request made room twice";
}

TEST(TrailingRoomAllocator, ArraysNeitherGetNorConsumeRoom) {
  TrailingRoomRequest request(64);
  Allocation array(8);
  EXPECT_FALSE(RoomWasGranted());
  Allocation node;
  EXPECT_TRUE(RoomWasGranted()) << "the array used up the node's request";
}

TEST(TrailingRoomAllocator, ClosingARequestWithdrawsWhatNobodyTook) {
  std::optional<Allocation> granted;
  {
    TrailingRoomRequest request(64);
    granted.emplace();  // room granted, never taken
  }
  EXPECT_FALSE(RoomWasGranted());
  {
    TrailingRoomRequest unused(64);  // no allocation happens under it
  }
  Allocation later;
  EXPECT_FALSE(RoomWasGranted());
  EXPECT_LT(later.usable_bytes(), sizeof(Node) + 64) << "a closed request still made room";
}

TEST(TrailingRoomAllocator, RequestsArePerThread) {
  TrailingRoomRequest request(64);
  std::optional<Allocation> other_threads;
  std::thread([&] { other_threads.emplace(); }).join();
  Allocation mine;
  EXPECT_TRUE(RoomWasGranted());
  EXPECT_LT(other_threads->usable_bytes(), sizeof(Node) + 64);
}

TEST(TrailingRoomAllocator, ServesAStandardContainer) {
  std::list<std::string, TrailingRoomAllocator<std::string>> strings;
  for (int i = 0; i < 100; ++i) strings.push_back(std::string(40, static_cast<char>('a' + i % 26)));
  EXPECT_EQ(strings.size(), 100u);
  EXPECT_EQ(strings.back(), std::string(40, 'a' + 99 % 26));
  EXPECT_TRUE(TrailingRoomAllocator<int>() == TrailingRoomAllocator<std::string>());
}

}  // namespace
}  // namespace kvlab
