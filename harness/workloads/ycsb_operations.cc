#include "harness/workloads/ycsb_operations.h"

#include "harness/clients/resp_encoding.h"

#include <charconv>

#include "harness/workloads/workload.h"

namespace kvlab::harness {
namespace {

// Appends `words` as one RESP array of bulk strings.
void AppendWords(const std::vector<std::string_view>& words, std::string* out) {
  AppendCommandOf(out, words);
}

// "field0" .. "field9": CoreWorkload's field names.
constexpr std::string_view kFieldNames[kYcsbFieldCount] = {"field0", "field1", "field2", "field3",
                                                           "field4", "field5", "field6", "field7",
                                                           "field8", "field9"};

// A failed step ends its operation: an error reply, or a reply of the wrong type.
bool Failed(ReplyVerdict verdict) {
  return verdict == ReplyVerdict::kErrorReply || verdict == ReplyVerdict::kWrongType;
}

}  // namespace

YcsbOperations::YcsbOperations(const YcsbOptions& options, std::shared_ptr<YcsbSequences> sequences,
                               std::mt19937_64* random, std::string_view value_bytes)
    : options_(options),
      sequences_(std::move(sequences)),
      random_(*random),
      value_bytes_(value_bytes),
      chooser_(options.distribution, options.theta, options.records) {
  const YcsbMix mix = MixOf(options_.workload);
  double sum = 0;
  for (int i = 0; i < kYcsbOperationKinds; ++i) {
    sum += mix.proportion[i];
    cumulative_[i] = sum;
  }
}

// DiscreteGenerator: a uniform draw against the running sums.
YcsbOperation YcsbOperations::DrawOperation() {
  const double draw = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  for (int i = 0; i < kYcsbOperationKinds; ++i) {
    if (draw < cumulative_[i]) return static_cast<YcsbOperation>(i);
  }
  // Rounding can leave the last sum a hair under 1: the last operation with a share.
  for (int i = kYcsbOperationKinds - 1; i > 0; --i) {
    if (cumulative_[i] > cumulative_[i - 1]) return static_cast<YcsbOperation>(i);
  }
  return YcsbOperation::kRead;
}

uint64_t YcsbOperations::NextKeynum() { return chooser_.Next(random_, sequences_->LastInserted()); }

std::string_view YcsbOperations::NextFieldValue() {
  size_t length = options_.field_length_min;
  if (options_.field_length_max != options_.field_length_min) {
    length = std::uniform_int_distribution<size_t>(options_.field_length_min,
                                                   options_.field_length_max)(random_);
  }
  return value_bytes_.substr(0, length);
}

void YcsbOperations::AppendRead(std::string_view key, std::string* out) {
  words_.assign({"HGETALL", key});
  AppendWords(words_, out);
}

// writeallfields=false: one field, uniform over the ten.
void YcsbOperations::AppendUpdate(std::string_view key, std::string* out) {
  const int field = std::uniform_int_distribution<int>(0, kYcsbFieldCount - 1)(random_);
  words_.assign({"HMSET", key, kFieldNames[field], NextFieldValue()});
  AppendWords(words_, out);
}

void YcsbOperations::AppendInsertHash(std::string_view key, std::string* out) {
  words_.assign({"HMSET", key});
  for (std::string_view field : kFieldNames) {
    words_.push_back(field);
    words_.push_back(NextFieldValue());
  }
  AppendWords(words_, out);
}

void YcsbOperations::AppendInsertIndex(std::string_view key, std::string* out) {
  const std::string score = std::to_string(JavaStringHash(key));
  words_.assign({"ZADD", kYcsbIndexKey, score, key});
  AppendWords(words_, out);
}

void YcsbOperations::AppendScanIndex(std::string_view start_key, int length, std::string* out) {
  const std::string score = std::to_string(JavaStringHash(start_key));
  const std::string count = std::to_string(length);
  words_.assign({"ZRANGEBYSCORE", kYcsbIndexKey, score, "+inf", "LIMIT", "0", count});
  AppendWords(words_, out);
}

uint32_t YcsbOperations::TakeScanSlot() {
  if (free_scan_slots_.empty()) {
    scan_keys_.emplace_back();
    return static_cast<uint32_t>(scan_keys_.size() - 1);
  }
  const uint32_t slot = free_scan_slots_.back();
  free_scan_slots_.pop_back();
  return slot;
}

RequestInfo YcsbOperations::Start(std::string* out) {
  RequestInfo info{ExpectedReply::kOk, 0};
  if (options_.workload == YcsbWorkload::kLoad) {
    info.ycsb_operation = YcsbOperation::kInsert;
    info.keynum = sequences_->NextLoadKey();
  } else {
    info.ycsb_operation = DrawOperation();
    info.keynum =
        info.ycsb_operation == YcsbOperation::kInsert ? sequences_->NextInsertKey() : NextKeynum();
  }
  key_ = YcsbKeyName(info.keynum);
  switch (info.ycsb_operation) {
    case YcsbOperation::kRead:
      info.ycsb_step = YcsbStep::kRead;
      info.expected = ExpectedReply::kHash;
      AppendRead(key_, out);
      break;
    case YcsbOperation::kUpdate:
      info.ycsb_step = YcsbStep::kUpdate;
      info.expected = ExpectedReply::kOk;
      AppendUpdate(key_, out);
      break;
    case YcsbOperation::kInsert:
      info.ycsb_step = YcsbStep::kInsertHash;
      info.expected = ExpectedReply::kOk;
      AppendInsertHash(key_, out);
      break;
    case YcsbOperation::kScan: {
      info.ycsb_step = YcsbStep::kScanIndex;
      info.expected = ExpectedReply::kArray;
      const int length = std::uniform_int_distribution<int>(1, kYcsbMaxScanLength)(random_);
      AppendScanIndex(key_, length, out);
      break;
    }
    case YcsbOperation::kReadModifyWrite:
      info.ycsb_step = YcsbStep::kRmwRead;
      info.expected = ExpectedReply::kHash;
      AppendRead(key_, out);
      break;
  }
  return info;
}

ReplyOutcome YcsbOperations::Continue(const redisReply& reply, ReplyVerdict verdict,
                                      RequestInfo* info, std::string* out) {
  const YcsbStep step = info->ycsb_step;
  // YCSB acknowledges a run-phase insert whatever its outcome (a finally block).
  const bool run_insert =
      info->ycsb_operation == YcsbOperation::kInsert && info->keynum >= sequences_->records();
  if (step == YcsbStep::kScanRead &&
      (Failed(verdict) || info->scan_next == scan_keys_[info->scan_slot].size())) {
    scan_keys_[info->scan_slot].clear();
    free_scan_slots_.push_back(info->scan_slot);
    // A scan succeeds whatever its reads find (RedisClient.scan returns OK).
    return {true, Failed(verdict) ? verdict : ReplyVerdict::kOk};
  }
  if (Failed(verdict)) {
    if (run_insert) sequences_->AcknowledgeInsert(info->keynum);
    return {true, verdict};
  }
  switch (step) {
    case YcsbStep::kNone:
    case YcsbStep::kRead:
    case YcsbStep::kUpdate:
    case YcsbStep::kRmwWrite:
      return {true, verdict};
    case YcsbStep::kInsertHash:
      key_ = YcsbKeyName(info->keynum);
      info->ycsb_step = YcsbStep::kInsertIndex;
      info->expected = ExpectedReply::kInteger;
      AppendInsertIndex(key_, out);
      return {false, verdict};
    case YcsbStep::kInsertIndex:
      if (run_insert) sequences_->AcknowledgeInsert(info->keynum);
      return {true, verdict};
    case YcsbStep::kRmwRead:
      // RedisClient.read fails on an empty hash; then YCSB does not update.
      if (verdict == ReplyVerdict::kMiss) return {true, verdict};
      key_ = YcsbKeyName(info->keynum);
      info->ycsb_step = YcsbStep::kRmwWrite;
      info->expected = ExpectedReply::kOk;
      AppendUpdate(key_, out);
      return {false, verdict};
    case YcsbStep::kScanIndex: {
      if (reply.elements == 0) return {true, ReplyVerdict::kOk};
      const uint32_t slot = TakeScanSlot();
      std::vector<std::string>& keys = scan_keys_[slot];
      for (size_t i = 0; i < reply.elements; ++i) {
        const redisReply& element = *reply.element[i];
        if (element.type != REDIS_REPLY_STRING) {
          free_scan_slots_.push_back(slot);
          keys.clear();
          return {true, ReplyVerdict::kWrongType};
        }
        keys.emplace_back(element.str, element.len);
      }
      info->ycsb_step = YcsbStep::kScanRead;
      info->expected = ExpectedReply::kHash;
      info->scan_slot = slot;
      info->scan_next = 1;
      AppendRead(keys[0], out);
      return {false, ReplyVerdict::kOk};
    }
    case YcsbStep::kScanRead: {
      const std::vector<std::string>& keys = scan_keys_[info->scan_slot];
      AppendRead(keys[info->scan_next], out);
      ++info->scan_next;
      return {false, ReplyVerdict::kOk};
    }
  }
  return {true, verdict};
}

}  // namespace kvlab::harness
