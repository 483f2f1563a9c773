#include "harness/workloads/ycsb.h"

namespace kvlab::harness {

Status ParseYcsbWorkload(std::string_view text, YcsbWorkload* out) {
  if (text == "load") {
    *out = YcsbWorkload::kLoad;
    return Status::Ok();
  }
  if (text.size() == 1) {
    const char letter = static_cast<char>(text[0] | 0x20);  // A..F or a..f
    if (letter >= 'a' && letter <= 'f') {
      *out = static_cast<YcsbWorkload>(static_cast<int>(YcsbWorkload::kA) + (letter - 'a'));
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("bad YCSB workload '" + std::string(text) +
                                 "' (allowed: load, A, B, C, D, E, F)");
}

const char* YcsbWorkloadName(YcsbWorkload workload) {
  switch (workload) {
    case YcsbWorkload::kLoad:
      return "load";
    case YcsbWorkload::kA:
      return "A";
    case YcsbWorkload::kB:
      return "B";
    case YcsbWorkload::kC:
      return "C";
    case YcsbWorkload::kD:
      return "D";
    case YcsbWorkload::kE:
      return "E";
    case YcsbWorkload::kF:
      return "F";
  }
  return "?";
}

const char* YcsbOperationName(YcsbOperation operation) {
  switch (operation) {
    case YcsbOperation::kRead:
      return "read";
    case YcsbOperation::kUpdate:
      return "update";
    case YcsbOperation::kInsert:
      return "insert";
    case YcsbOperation::kScan:
      return "scan";
    case YcsbOperation::kReadModifyWrite:
      return "read-modify-write";
  }
  return "?";
}

// The proportions of YCSB's workloads/workloada ... workloadf files.
YcsbMix MixOf(YcsbWorkload workload) {
  YcsbMix mix;
  auto set = [&mix](YcsbOperation operation, double proportion) {
    mix.proportion[static_cast<int>(operation)] = proportion;
  };
  switch (workload) {
    case YcsbWorkload::kLoad:
      set(YcsbOperation::kInsert, 1.0);
      break;
    case YcsbWorkload::kA:
      set(YcsbOperation::kRead, 0.5);
      set(YcsbOperation::kUpdate, 0.5);
      break;
    case YcsbWorkload::kB:
      set(YcsbOperation::kRead, 0.95);
      set(YcsbOperation::kUpdate, 0.05);
      break;
    case YcsbWorkload::kC:
      set(YcsbOperation::kRead, 1.0);
      break;
    case YcsbWorkload::kD:
      set(YcsbOperation::kRead, 0.95);
      set(YcsbOperation::kInsert, 0.05);
      break;
    case YcsbWorkload::kE:
      set(YcsbOperation::kScan, 0.95);
      set(YcsbOperation::kInsert, 0.05);
      break;
    case YcsbWorkload::kF:
      set(YcsbOperation::kRead, 0.5);
      set(YcsbOperation::kReadModifyWrite, 0.5);
      break;
  }
  return mix;
}

bool UsesLatest(YcsbWorkload workload) { return workload == YcsbWorkload::kD; }

uint64_t FnvHash64(uint64_t value) {
  constexpr uint64_t kOffsetBasis = 0xCBF29CE484222325ULL;
  constexpr uint64_t kPrime = 1099511628211ULL;
  uint64_t hash = kOffsetBasis;
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xff;
    hash *= kPrime;
    value >>= 8;  // YCSB's key numbers are non-negative: >> and >>> agree
  }
  // Math.abs of a Java long: the two's-complement negation of a negative
  // value (Long.MIN_VALUE stays itself, as in Java).
  return static_cast<int64_t>(hash) < 0 ? ~hash + 1 : hash;
}

int32_t JavaStringHash(std::string_view text) {
  uint32_t hash = 0;
  for (const char c : text) hash = 31 * hash + static_cast<unsigned char>(c);
  return static_cast<int32_t>(hash);
}

std::string YcsbKeyName(uint64_t keynum) {
  // Long.toString of the Java long: negative only when the hash is
  // Long.MIN_VALUE (which Math.abs leaves as it is).
  const auto hashed = static_cast<int64_t>(FnvHash64(keynum));
  return "user" + std::to_string(hashed);
}

YcsbSequences::YcsbSequences(uint64_t records)
    : records_(records), acknowledged_(new std::atomic<bool>[kWindow]), limit_(records - 1) {
  for (uint64_t i = 0; i < kWindow; ++i) acknowledged_[i].store(false, std::memory_order_relaxed);
}

// As AcknowledgedCounterGenerator.acknowledge: mark the slot, then whoever
// holds the lock moves the limit over every contiguous acknowledged slot.
// A caller that finds the lock taken leaves its slot for the holder or the
// next acknowledger; the limit lags by at most that.
void YcsbSequences::AcknowledgeInsert(uint64_t keynum) {
  acknowledged_[keynum % kWindow].store(true, std::memory_order_release);
  std::unique_lock lock(advancing_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  uint64_t limit = limit_.load(std::memory_order_relaxed);
  for (;;) {
    std::atomic<bool>& next = acknowledged_[(limit + 1) % kWindow];
    if (!next.load(std::memory_order_acquire)) break;
    next.store(false, std::memory_order_relaxed);
    ++limit;
  }
  limit_.store(limit, std::memory_order_release);
}

uint64_t YcsbSequences::NextLoadKey() {
  return load_next_.fetch_add(1, std::memory_order_relaxed) % records_;
}

YcsbKeyChooser::YcsbKeyChooser(YcsbKeyDistribution distribution, double theta, uint64_t records)
    : distribution_(distribution), theta_(theta), records_(records) {
  if (distribution_ == YcsbKeyDistribution::kScrambledZipfian) {
    scrambled_.emplace(kYcsbScrambledItems + 1, theta_);
  }
}

}  // namespace kvlab::harness
