// ListValue (engines/containers/list_value.h) against a std::deque model:
// random pushes, pops, sets, inserts and erases in both of its forms, the
// move from the packed form, and Bytes()'s running count.
#include "engines/containers/list_value.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

namespace kvlab {
namespace {

using Model = std::deque<std::string>;

void ExpectSame(const ListValue& list, const Model& model) {
  ASSERT_EQ(list.Size(), model.size());
  std::vector<std::string> forward, backward;
  list.ForEach(false, [&](size_t index, std::string_view element) {
    EXPECT_EQ(element, model[index]);
    forward.emplace_back(element);
    return true;
  });
  list.ForEach(true, [&](size_t index, std::string_view element) {
    EXPECT_EQ(element, model[index]);
    backward.emplace_back(element);
    return true;
  });
  ASSERT_EQ(forward.size(), model.size());
  ASSERT_EQ(backward.size(), model.size());
  for (size_t i = 0; i < model.size(); ++i) {
    EXPECT_EQ(forward[i], model[i]);
    EXPECT_EQ(backward[model.size() - 1 - i], model[i]);
    EXPECT_EQ(list.At(i), model[i]);
  }
}

std::string RandomElement(std::mt19937_64& rng, bool allow_long) {
  const int pick = std::uniform_int_distribution<int>(0, 19)(rng);
  if (pick == 0 && allow_long) return std::string(70, 'x');
  if (pick == 1) return std::string(20 + pick, 'y');  // a heap string
  return "e" + std::to_string(std::uniform_int_distribution<int>(0, 30)(rng));
}

// `prefill` elements first (past 128: the deque form from the start).
void RunRandomOps(uint64_t seed, bool allow_long, int max_size, int prefill) {
  std::mt19937_64 rng(seed);
  ListValue list;
  Model model;
  for (int i = 0; i < prefill; ++i) {
    const std::string element = RandomElement(rng, false);
    list.PushBack(element);
    model.push_back(element);
  }
  const bool was_packed = list.packed();
  auto index_in = [&](size_t size) {
    return std::uniform_int_distribution<size_t>(0, size - 1)(rng);
  };
  for (int step = 0; step < 3000; ++step) {
    const int op = std::uniform_int_distribution<int>(0, 9)(rng);
    const bool grow = static_cast<int>(model.size()) < max_size;
    if (op <= 2 && grow) {
      const std::string element = RandomElement(rng, allow_long);
      if (op == 0) {
        list.PushFront(element);
        model.push_front(element);
      } else {
        list.PushBack(element);
        model.push_back(element);
      }
    } else if (op == 3 && !model.empty()) {
      EXPECT_EQ(list.PopFront(), model.front());
      model.pop_front();
    } else if (op == 4 && !model.empty()) {
      EXPECT_EQ(list.PopBack(), model.back());
      model.pop_back();
    } else if (op == 5 && !model.empty()) {
      const size_t at = index_in(model.size());
      const std::string element = RandomElement(rng, allow_long);
      list.Set(at, element);
      model[at] = element;
    } else if (op == 6 && grow) {
      const size_t at = index_in(model.size() + 1);
      const std::string element = RandomElement(rng, allow_long);
      list.Insert(at, element);
      model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), element);
    } else if (op == 7 && !model.empty()) {
      const size_t first = index_in(model.size());
      const size_t count = std::min<size_t>(index_in(model.size()) % 4, model.size() - first);
      list.EraseRange(first, count);
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(first),
                  model.begin() + static_cast<std::ptrdiff_t>(first + count));
    } else if (op == 8 && !model.empty()) {
      std::vector<size_t> indexes;
      for (size_t i = 0; i < model.size(); ++i) {
        if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) indexes.push_back(i);
      }
      list.EraseIndexes(indexes);
      for (size_t i = indexes.size(); i-- > 0;) {
        model.erase(model.begin() + static_cast<std::ptrdiff_t>(indexes[i]));
      }
    }
    if (step % 50 == 0) ExpectSame(list, model);
    ASSERT_EQ(list.Size(), model.size());
  }
  ExpectSame(list, model);
  if (!was_packed || allow_long) {
    EXPECT_FALSE(list.packed());
  }
  const std::unique_ptr<Container> copy = list.Clone();
  ExpectSame(static_cast<const ListValue&>(*copy), model);
  EXPECT_EQ(copy->Encoding(), "quicklist");
}

TEST(ListValue, StaysPackedWhileSmallAndShort) {
  ListValue list;
  for (int i = 0; i < 128; ++i) list.PushBack("e" + std::to_string(i));
  EXPECT_TRUE(list.packed());
  list.PushFront("one too many");
  EXPECT_FALSE(list.packed());
  ListValue long_element;
  long_element.PushBack(std::string(64, 'x'));
  EXPECT_TRUE(long_element.packed());
  long_element.Set(0, std::string(65, 'x'));
  EXPECT_FALSE(long_element.packed());
  EXPECT_EQ(long_element.At(0), std::string(65, 'x'));
  EXPECT_EQ(list.Encoding(), "quicklist");
  EXPECT_EQ(long_element.Encoding(), "quicklist");
}

TEST(ListValue, MatchesADequeWhilePacked) {
  for (uint64_t seed = 1; seed <= 5; ++seed) RunRandomOps(seed, /*allow_long=*/false, 100, 0);
}

TEST(ListValue, MatchesADequeAcrossTheMove) {
  for (uint64_t seed = 10; seed <= 15; ++seed) RunRandomOps(seed, /*allow_long=*/true, 400, 0);
  for (uint64_t seed = 20; seed <= 23; ++seed) RunRandomOps(seed, /*allow_long=*/false, 400, 200);
}

// The running count comes back to where it started: nothing it added on a
// push is forgotten on a pop, an erase or a set.
TEST(ListValue, BytesFollowTheElements) {
  ListValue list;
  for (int i = 0; i < 200; ++i) list.PushBack("e");
  ASSERT_FALSE(list.packed());
  while (list.Size() > 0) list.PopBack();
  const size_t empty = list.Bytes();
  constexpr int kElements = 100000;
  const std::string heap(40, 'h');
  for (int i = 0; i < kElements; ++i) {
    if (i % 2)
      list.PushFront(heap);
    else
      list.PushBack(heap);
  }
  const size_t full = list.Bytes();
  // At least each element's string object and its heap buffer.
  EXPECT_GE(full - empty, static_cast<size_t>(kElements) * (sizeof(std::string) + heap.size()));
  EXPECT_LE(full - empty,
            static_cast<size_t>(kElements) * (sizeof(std::string) + heap.size() + 64));
  list.Set(5, std::string(1000, 's'));
  EXPECT_GT(list.Bytes(), full);
  list.Set(5, heap);
  list.EraseRange(10, 1000);
  list.EraseIndexes({0, 7, 50, 51});
  list.Insert(3, heap);
  while (list.Size() > 0) {
    if (list.Size() % 2)
      list.PopFront();
    else
      list.PopBack();
  }
  EXPECT_EQ(list.Bytes(), empty);
}

}  // namespace
}  // namespace kvlab
