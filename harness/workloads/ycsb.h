// YCSB's core workloads (Cooper et al., "Benchmarking Cloud Serving Systems
// with YCSB", SoCC 2010), as YCSB's CoreWorkload drives its Redis binding
// (site.ycsb.db.RedisClient):
//
//   a record       a hash "user<fnvhash64(keynum)>" with fields field0..field9,
//                  each a value of the field length (YCSB's default 100 bytes)
//   read           HGETALL key (readallfields=true)
//   update         HMSET key fieldN value (one field, uniform over the ten)
//   insert         HMSET key field0 v0 ... field9 v9, then
//                  ZADD _indices <String.hashCode(key)> key
//   scan           ZRANGEBYSCORE _indices <hashCode(start)> +inf LIMIT 0 <len>,
//                  then HGETALL of each key answered, one after the other
//   read-modify-   HGETALL key, then (if the record was found) HMSET key
//   write          fieldN value
//
// Each request of an operation is sent after the previous one's reply, as
// YCSB's synchronous Jedis client does; an operation's latency runs from its
// first request to its last reply, and it counts as one op.
//
//   workload  mix                                   keys
//   load      100% insert, keys 0..records-1 in order
//   A         50% read, 50% update                  zipfian
//   B         95% read, 5% update                   zipfian
//   C         100% read                             zipfian
//   D         95% read, 5% insert                   latest
//   E         95% scan, 5% insert; scan length      zipfian (scan start)
//             uniform 1..100
//   F         50% read, 50% read-modify-write       zipfian
//
// "zipfian" is YCSB's scrambled zipfian: a Zipf rank (constant 0.99) over
// 10^10 items, hashed (FNV-1a 64) modulo the key space, so the hot keys are
// scattered; the key number is then hashed again into the key's name
// (insertorder=hashed). YCSB draws the rank with Gray et al.'s approximate
// inversion; kvlab draws it exactly (zipf_distribution.h) — the first two
// ranks' probabilities are the same in both, the others differ by the
// approximation's error. "latest" is YCSB's SkewedLatestGenerator: the most
// recently inserted record is the most popular, Zipf over the records
// inserted so far. YCSB widens the scrambled key space by twice the inserts
// it expects (operationcount x insertproportion x 2) so that new records
// can become popular; kvlab-load runs for a duration, not a count, so it
// draws over the loaded records (plus one, as YCSB's inclusive bound does)
// and, like YCSB, draws again when a key number is not inserted yet.
//
// Thread safety: the free functions are pure. YcsbSequences is thread-safe
// (shared by a point's threads). YcsbKeyChooser is const after construction
// apart from its own state; one per thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "harness/status.h"
#include "harness/workloads/zipf_distribution.h"

namespace kvlab::harness {

enum class YcsbWorkload { kLoad, kA, kB, kC, kD, kE, kF };
enum class YcsbOperation { kRead, kUpdate, kInsert, kScan, kReadModifyWrite };
inline constexpr int kYcsbOperationKinds = 5;

// "load" or "A".."F" (a..f accepted).
Status ParseYcsbWorkload(std::string_view text, YcsbWorkload* out);
const char* YcsbWorkloadName(YcsbWorkload workload);     // "load", "A", ...
const char* YcsbOperationName(YcsbOperation operation);  // "read", "update", ...

// A workload's operation proportions, indexed by YcsbOperation; they sum to 1.
struct YcsbMix {
  double proportion[kYcsbOperationKinds] = {};
};
YcsbMix MixOf(YcsbWorkload workload);
// Whether a workload's request distribution is YCSB's "latest" (D) rather
// than its "zipfian" (the others; load writes keys in order).
bool UsesLatest(YcsbWorkload workload);

inline constexpr int kYcsbFieldCount = 10;
inline constexpr size_t kYcsbFieldLength = 100;
inline constexpr int kYcsbMaxScanLength = 100;
inline constexpr std::string_view kYcsbIndexKey = "_indices";
inline constexpr double kYcsbZipfianConstant = 0.99;
// ScrambledZipfianGenerator.ITEM_COUNT: the ranks it draws before hashing.
inline constexpr uint64_t kYcsbScrambledItems = 10'000'000'000ULL;

// YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of `value`, low byte
// first, made non-negative with Java's Math.abs.
uint64_t FnvHash64(uint64_t value);
// Java's String.hashCode (s[0]*31^(n-1) + ... in 32-bit arithmetic), for
// ASCII text: the score YCSB's Redis binding gives a key in _indices.
int32_t JavaStringHash(std::string_view text);
// "user" + the decimal hashed key number (CoreWorkload.buildKeyName with
// insertorder=hashed and zeropadding=1).
std::string YcsbKeyName(uint64_t keynum);

// YCSB's key counters, shared by a point's threads: the load phase's key
// sequence (0..records-1, wrapping so a run longer than one pass goes on
// overwriting) and the run phase's insert sequence (records, records+1, ...)
// with YCSB's AcknowledgedCounterGenerator: the last insertable key is the
// highest below which every insert is acknowledged, so a read never picks
// a record whose insert is still in flight.
class YcsbSequences {
 public:
  explicit YcsbSequences(uint64_t records);
  YcsbSequences(const YcsbSequences&) = delete;
  YcsbSequences& operator=(const YcsbSequences&) = delete;

  uint64_t records() const { return records_; }
  // The load phase's next key number.
  uint64_t NextLoadKey();
  // Whether the load phase has handed out every key number at least once.
  bool LoadedAll() const { return load_next_.load(std::memory_order_relaxed) >= records_; }
  // The run phase's next insert key number.
  uint64_t NextInsertKey() {
    return records_ + insert_next_.fetch_add(1, std::memory_order_relaxed);
  }
  // The insert of `keynum` (from NextInsertKey) is answered, whatever its outcome.
  void AcknowledgeInsert(uint64_t keynum);
  // The highest key number that may be read: records - 1 at first.
  uint64_t LastInserted() const { return limit_.load(std::memory_order_acquire); }

 private:
  // AcknowledgedCounterGenerator.WINDOW_SIZE: inserts that may be in flight
  // beyond the acknowledged limit.
  static constexpr uint64_t kWindow = uint64_t{1} << 20;

  const uint64_t records_;
  std::atomic<uint64_t> load_next_{0};
  std::atomic<uint64_t> insert_next_{0};
  std::unique_ptr<std::atomic<bool>[]> acknowledged_;  // by keynum mod kWindow
  std::mutex advancing_;                               // who moves limit_
  std::atomic<uint64_t> limit_;
};

// Which key numbers a run draws: YCSB's request distributions.
enum class YcsbKeyDistribution { kScrambledZipfian, kLatest, kUniform };

// Draws key numbers as CoreWorkload.nextKeynum does.
class YcsbKeyChooser {
 public:
  // REQUIRES: records >= 1, theta > 0.
  YcsbKeyChooser(YcsbKeyDistribution distribution, double theta, uint64_t records);

  // A key number in [0, last_inserted]. REQUIRES: last_inserted >= records - 1.
  template <typename Generator>
  uint64_t Next(Generator& generator, uint64_t last_inserted) {
    switch (distribution_) {
      case YcsbKeyDistribution::kUniform:
        return std::uniform_int_distribution<uint64_t>(0, records_ - 1)(generator);
      case YcsbKeyDistribution::kLatest: {
        // SkewedLatestGenerator: last - zipf over the records so far (rank 1: the last).
        if (!latest_ || latest_->n() != last_inserted + 1) {
          latest_.emplace(last_inserted + 1, theta_);
        }
        return last_inserted - ((*latest_)(generator)-1);
      }
      case YcsbKeyDistribution::kScrambledZipfian:
        for (;;) {
          const uint64_t keynum = ScrambledRankToKey((*scrambled_)(generator)-1);
          if (keynum <= last_inserted) return keynum;
        }
    }
    return 0;
  }

  // ScrambledZipfianGenerator: FnvHash64(rank) modulo the key space, which is
  // the loaded records plus one (its upper bound is inclusive).
  uint64_t ScrambledRankToKey(uint64_t zero_based_rank) const {
    return FnvHash64(zero_based_rank) % (records_ + 1);
  }

 private:
  const YcsbKeyDistribution distribution_;
  const double theta_;
  const uint64_t records_;
  std::optional<ZipfDistribution> scrambled_;  // ranks over kYcsbScrambledItems + 1
  std::optional<ZipfDistribution> latest_;     // over the records inserted so far
};

}  // namespace kvlab::harness
