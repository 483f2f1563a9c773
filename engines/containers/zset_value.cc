#include "engines/containers/zset_value.h"

#include <cmath>
#include <cstdio>

#include "engines/containers/encoding_limits.h"
#include "engines/containers/string_heap_bytes.h"

namespace kvlab {

namespace {

std::string_view ScoreBytes(const double& score) {
  return {reinterpret_cast<const char*>(&score), sizeof score};
}

// (score, member) order: by score, then memcmp with the shorter first.
bool Before(double score_a, std::string_view a, double score_b, std::string_view b) {
  if (score_a != score_b) return score_a < score_b;
  return a < b;
}

std::string PrintG17(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  char text[64];
  const int length = std::snprintf(text, sizeof text, "%.17g", score);
  return std::string(text, static_cast<size_t>(length));
}

}  // namespace

size_t ZSetValue::Size() const { return large_ ? large_->scores.size() : packed_.size() / 2; }

size_t ZSetValue::Bytes() const {
  size_t bytes = sizeof(ZSetValue);
  if (!large_) return bytes + packed_.capacity();
  // A map node (next pointer, the pair, the cached hash, a malloc header)
  // and a tree node (the key, three pointers, colour, subtree size, header).
  constexpr size_t kMapNode = sizeof(void*) + sizeof(Scores::value_type) + sizeof(size_t) + 16;
  constexpr size_t kTreeNode = sizeof(Key) + 3 * sizeof(void*) + 2 * sizeof(size_t) + 16;
  bytes += sizeof(Large) + large_->scores.bucket_count() * sizeof(void*);
  // O(1): the keyspace asks before and after every write.
  return bytes + large_->scores.size() * (kMapNode + kTreeNode) + large_->member_heap_bytes;
}

std::unique_ptr<Container> ZSetValue::Clone() const {
  auto copy = std::make_unique<ZSetValue>();
  copy->packed_ = packed_;
  if (large_) {
    copy->large_ = std::make_unique<Large>();
    copy->large_->scores.reserve(Size());
    for (const auto& [member, score] : large_->scores) copy->InsertLarge(member, score);
  }
  return copy;
}

std::optional<double> ZSetValue::Score(std::string_view member) const {
  if (large_) {
    const auto found = large_->scores.find(member);
    if (found == large_->scores.end()) return std::nullopt;
    return found->second;
  }
  const PackedList::Position at = packed_.FindPairKey(member);
  if (at == packed_.end()) return std::nullopt;
  return PackedScore(packed_.Next(at));
}

void ZSetValue::InsertLarge(std::string_view member, double score) {
  const auto [node, inserted] = large_->scores.emplace(std::string(member), score);
  large_->tree.insert(Key{score, node->first, 0});
  if (inserted) large_->member_heap_bytes += StringHeapBytes(node->first);
}

void ZSetValue::Insert(std::string_view member, double score) {
  const EncodingLimits& limits = CompactEncodingLimits();
  if (!large_ && (member.size() > EncodingLimits::Read(limits.zset_value_bytes) ||
                  Size() + 1 > EncodingLimits::Read(limits.zset_entries))) {
    ConvertToTree();
  }
  if (large_) return InsertLarge(member, score);
  if (score == 0) score = 0;  // a listpack writes -0 as the integer 0
  PackedList::Position at = packed_.begin();
  while (at != packed_.end()) {
    const PackedList::Position score_at = packed_.Next(at);
    if (Before(score, member, PackedScore(score_at), packed_.At(at))) break;
    at = packed_.Next(score_at);
  }
  packed_.Insert(at, member);
  packed_.Insert(packed_.Next(at), ScoreBytes(score));
}

void ZSetValue::Update(std::string_view member, double score) {
  if (large_) {
    const auto found = large_->scores.find(member);
    large_->tree.erase(Key{found->second, found->first, 0});
    found->second = score;
    large_->tree.insert(Key{found->second, found->first, 0});
    return;
  }
  const std::string copy(member);  // `member` may point into the buffer
  Remove(copy);
  Insert(copy, score);
}

bool ZSetValue::Remove(std::string_view member) {
  if (large_) {
    const auto found = large_->scores.find(member);
    if (found == large_->scores.end()) return false;
    large_->tree.erase(Key{found->second, found->first, 0});
    large_->member_heap_bytes -= StringHeapBytes(found->first);
    large_->scores.erase(found);
    return true;
  }
  return packed_.ErasePair(member);
}

std::optional<size_t> ZSetValue::Rank(std::string_view member) const {
  if (large_) {
    const auto found = large_->scores.find(member);
    if (found == large_->scores.end()) return std::nullopt;
    return large_->tree.order_of_key(Key{found->second, found->first, 0});
  }
  size_t rank = 0;
  for (PackedList::Position at = packed_.begin(); at != packed_.end(); ++rank) {
    if (packed_.At(at) == member) return rank;
    at = packed_.Next(packed_.Next(at));
  }
  return std::nullopt;
}

size_t ZSetValue::CountBelow(double score, bool inclusive) const {
  if (large_) {
    return large_->tree.order_of_key(Key{score, {}, static_cast<int8_t>(inclusive ? 1 : -1)});
  }
  size_t count = 0;
  for (PackedList::Position at = packed_.begin(); at != packed_.end(); ++count) {
    const PackedList::Position score_at = packed_.Next(at);
    const double here = PackedScore(score_at);
    if (inclusive ? here > score : here >= score) break;
    at = packed_.Next(score_at);
  }
  return count;
}

size_t ZSetValue::CountBefore(double score, std::string_view member, bool inclusive) const {
  if (large_) {
    const size_t before = large_->tree.order_of_key(Key{score, member, 0});
    const std::optional<double> found = inclusive ? Score(member) : std::nullopt;
    return before + (found && *found == score ? 1 : 0);
  }
  size_t count = 0;
  for (PackedList::Position at = packed_.begin(); at != packed_.end(); ++count) {
    const PackedList::Position score_at = packed_.Next(at);
    const double here = PackedScore(score_at);
    const std::string_view name = packed_.At(at);
    if (inclusive ? Before(score, member, here, name) : !Before(here, name, score, member)) break;
    at = packed_.Next(score_at);
  }
  return count;
}

std::string ZSetValue::ScanScoreText(double score) const {
  // Redis's d2string(): integers print as integers where a long long
  // surely holds them (|score| <= LLONG_MAX/2).
  constexpr double kIntegerLimit = 4611686018427387904.0;  // 2^62
  if (!large_ && score >= -kIntegerLimit && score <= kIntegerLimit &&
      score == static_cast<double>(static_cast<long long>(score))) {
    return std::to_string(static_cast<long long>(score));
  }
  return PrintG17(score);
}

void ZSetValue::ConvertToTree() {
  const size_t size = Size();
  large_ = std::make_unique<Large>();  // InsertLarge() fills it from packed_
  large_->scores.reserve(size + 1);
  for (PackedList::Position at = packed_.begin(); at != packed_.end();) {
    const std::string_view member = packed_.At(at);
    at = packed_.Next(at);
    const double score = PackedScore(at);
    at = packed_.Next(at);
    InsertLarge(member, score);
  }
  packed_ = PackedList();  // give the buffer back
}

}  // namespace kvlab
