// ValueBytes: the bytes survive copies, moves and reassignment on both sides
// of the inline limit; and a batch of GETs of short values allocates nothing
// (this binary counts every operator new).
#include "engines/value_bytes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "engines/engine.h"

namespace {
std::atomic<long> allocations{0};
}  // namespace

// GCC inlines this operator new into callers and then sees free() on what it
// takes for new's memory (-Wmismatched-new-delete); both sides here are
// malloc and free, so the pair matches.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t bytes) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}
void* operator new[](size_t bytes) { return operator new(bytes); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, size_t) noexcept { std::free(memory); }

namespace kvlab {
namespace {

const std::string kShort(ValueBytes::kInlineBytes, 's');
const std::string kLong(ValueBytes::kInlineBytes + 1, 'L');

TEST(ValueBytes, HoldsEmptyShortAndLongValues) {
  EXPECT_TRUE(ValueBytes().empty());
  EXPECT_EQ(ValueBytes(std::string("a\0b", 3)).view(), std::string_view("a\0b", 3));
  EXPECT_EQ(ValueBytes(kShort), kShort);
  EXPECT_EQ(ValueBytes(kLong), kLong);
  EXPECT_EQ(ValueBytes(kLong).str(), kLong);
}

TEST(ValueBytes, CopiesAndMovesLeaveTheRightBytesOnBothSides) {
  for (const std::string& value : {kShort, kLong}) {
    ValueBytes original(value);
    ValueBytes copy(original);
    EXPECT_EQ(copy, value);
    EXPECT_EQ(original, value);
    ValueBytes moved(std::move(original));
    EXPECT_EQ(moved, value);
    EXPECT_TRUE(original.empty());  // NOLINT: a moved-from value is empty
    ValueBytes assigned;
    assigned = moved;
    EXPECT_EQ(assigned, value);
    ValueBytes move_assigned("x");
    move_assigned = std::move(moved);
    EXPECT_EQ(move_assigned, value);
  }
}

TEST(ValueBytes, ReassignmentCrossesTheInlineLimitBothWays) {
  ValueBytes bytes(kLong);
  bytes.assign("tiny");
  EXPECT_EQ(bytes, "tiny");
  bytes.assign(kLong + kLong);
  EXPECT_EQ(bytes, kLong + kLong);
  const char* heap = bytes.data();
  bytes.assign(kLong);  // fits the heap buffer it has: no new one
  EXPECT_EQ(bytes.data(), heap);
  EXPECT_EQ(bytes, kLong);
  ValueBytes long_one(kLong + "!");
  bytes = std::move(long_one);  // takes the other's heap buffer
  EXPECT_EQ(bytes, kLong + "!");
  bytes = ValueBytes("short again");
  EXPECT_EQ(bytes, "short again");
}

// The P16 GET path of an inline engine: 16 reads of 64-byte values, their
// batch reused as a session reuses its own. Before ValueBytes each read's
// reply value was a std::string: 16 allocations per batch.
TEST(ValueBytes, PipelinedGetsOfShortValuesAllocateNothing) {
  for (const char* kind : {"single", "concurrent", "striped"}) {
    EngineConfig config;
    config.kind = kind;
    std::unique_ptr<Engine> engine;
    ASSERT_TRUE(MakeEngine(config, &engine).ok()) << kind;
    const std::string value(64, 'v');
    std::vector<std::string> keys;
    for (int i = 0; i < 16; ++i) keys.push_back("key:" + std::to_string(i));
    Batch batch;
    auto run = [&](OpCode code) {
      batch.Clear();
      for (const std::string& key : keys) {
        Operation op;
        op.code = code;
        op.key = key;
        op.value = value;
        batch.Add(op);
      }
      engine->Execute(batch, [] {});
    };
    run(OpCode::kSet);
    run(OpCode::kGet);  // warms the batch's vectors
    const long before = allocations.load();
    run(OpCode::kGet);
    EXPECT_EQ(allocations.load() - before, 0) << kind;
    ASSERT_EQ(batch.results.size(), 16u);
    for (const OpResult& result : batch.results) EXPECT_EQ(result.bulk, value) << kind;
  }
}

}  // namespace
}  // namespace kvlab
