// PrefetchStage: the two hints a keyspace takes ahead of a lookup in a
// pipelined batch. kSlot starts loading the table slot where the key's
// search begins; kRecord, given a few operations later (when that slot is
// likely cached), reads it and starts loading the record it points to. A
// batch loop gives kSlot further ahead than kRecord (BatchPrefetcher).
#pragma once

#include <cstddef>

namespace kvlab {

enum class PrefetchStage { kSlot, kRecord };

// Walks a batch of `count` operations, calling hint(index, stage) for each
// operation at the right distances ahead of the one about to run:
//   BatchPrefetcher ahead(count, hint);
//   for (size_t i = 0; i < count; ++i) { ahead.Before(i); run(i); }
// Hints nothing for a single operation (there is nothing to overlap).
template <typename Hint>
class BatchPrefetcher {
 public:
  static constexpr size_t kSlotAhead = 8;
  static constexpr size_t kRecordAhead = 4;

  BatchPrefetcher(size_t count, Hint& hint) : count_(count), hint_(hint) {
    if (count_ < 2) return;
    for (size_t i = 0; i < kSlotAhead; ++i) Give(i, PrefetchStage::kSlot);
    for (size_t i = 0; i < kRecordAhead; ++i) Give(i, PrefetchStage::kRecord);
  }
  void Before(size_t index) {
    if (count_ < 2) return;
    Give(index + kSlotAhead, PrefetchStage::kSlot);
    Give(index + kRecordAhead, PrefetchStage::kRecord);
  }

 private:
  void Give(size_t index, PrefetchStage stage) {
    if (index < count_) hint_(index, stage);
  }
  const size_t count_;
  Hint& hint_;
};

}  // namespace kvlab
