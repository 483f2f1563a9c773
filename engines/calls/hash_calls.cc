// The hash commands (Redis 7.0's t_hash.c), written once for every engine.
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "engines/calls/call_support.h"
#include "engines/calls/container_tables.h"
#include "engines/containers/hash_value.h"
#include "engines/containers/set_value.h"

namespace kvlab {

namespace {

// HSET and HMSET: key field value [field value ...].
int64_t SetPairs(ContainerCall& call, HashValue& hash) {
  int64_t created = 0;
  for (size_t i = 2; i + 1 < call.args.size(); i += 2) {
    created += hash.Set(call.args[i], call.args[i + 1]) ? 1 : 0;
  }
  call.Changed();
  return created;
}

// HRANDFIELD key [count [WITHVALUES]] (hrandfieldCommand()): a
// negative count picks with repeats, a positive one distinct fields (the
// whole hash, in its order, when count >= its size). The fields are listed
// once per call, O(size), which the reply itself costs anyway.
void HRandField(ContainerCall& call) {
  bool with_values = false;
  std::optional<int64_t> count;
  if (call.args.size() >= 3) {
    count = ParseRedisInt64(call.args[2]);
    if (!count) return call.Error(kContainerNotIntegerError);
    if (*count == INT64_MIN) {
      return call.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    }
    if (call.args.size() > 4 || (call.args.size() == 4 && !OptionIs(call.args[3], "withvalues"))) {
      return call.Error(kContainerSyntaxError);
    }
    with_values = call.args.size() == 4;
    // CVE-2023-22458: count * 2 must not overflow.
    if (with_values && (*count < -INT64_MAX / 2 || *count > INT64_MAX / 2)) {
      return call.Error("ERR value is out of range");
    }
  }
  if (!call.CheckType()) return;
  const HashValue* hash = call.Find<HashValue>();
  if (!count) {
    if (!hash) return call.Nil();
  } else if (!hash || *count == 0) {
    return call.List().Array(0);
  }
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  fields.reserve(hash->Size());
  hash->ForEach(
      [&](std::string_view field, std::string_view value) { fields.emplace_back(field, value); });
  if (!count) return call.Bulk(fields[SetValue::RandomIndex(fields.size())].first);
  ReplyList& reply = call.List();
  // WITHVALUES: [field, value] pairs in RESP3, flat in RESP2, as Redis.
  auto header = [&](size_t n) { with_values ? reply.ArrayOfPairs(n) : reply.Array(n); };
  auto add = [&](const std::pair<std::string_view, std::string_view>& field) {
    if (with_values) reply.Pair();
    reply.Bulk(field.first);
    if (with_values) reply.Bulk(field.second);
  };
  const bool unique = *count > 0;
  const uint64_t wanted = unique ? static_cast<uint64_t>(*count) : static_cast<uint64_t>(-*count);
  if (!unique || wanted == 1) {
    header(wanted);
    for (uint64_t i = 0; i < wanted; ++i) add(fields[SetValue::RandomIndex(fields.size())]);
    return;
  }
  if (wanted >= fields.size()) {
    header(fields.size());
    for (const auto& field : fields) add(field);
    return;
  }
  std::vector<size_t> order(fields.size());
  std::iota(order.begin(), order.end(), size_t{0});
  header(wanted);
  for (size_t i = 0; i < wanted; ++i) {
    std::swap(order[i], order[i + SetValue::RandomIndex(fields.size() - i)]);
    add(fields[order[i]]);
  }
}

void HSet(ContainerCall& call) {
  if (call.args.size() % 2 == 1) return ReplyArityError(call, "hset");
  if (!call.CheckType()) return;
  call.Integer(SetPairs(call, call.FindOrCreate<HashValue>()));
}

void HMSet(ContainerCall& call) {
  if (call.args.size() % 2 == 1) return ReplyArityError(call, "hmset");
  if (!call.CheckType()) return;
  SetPairs(call, call.FindOrCreate<HashValue>());
  call.Ok();
}

void HSetNx(ContainerCall& call) {
  if (!call.CheckType()) return;
  HashValue& hash = call.FindOrCreate<HashValue>();
  if (hash.Get(call.args[2])) return call.Integer(0);
  hash.Set(call.args[2], call.args[3]);
  call.Changed();
  call.Integer(1);
}

void HGet(ContainerCall& call) {
  if (!call.CheckType()) return;
  const HashValue* hash = call.Find<HashValue>();
  const std::optional<std::string_view> value = hash ? hash->Get(call.args[2]) : std::nullopt;
  if (value) return call.Bulk(*value);
  call.Nil();
}

void HMGet(ContainerCall& call) {
  ReplyPerArgument<HashValue>(
      call, [](const HashValue* hash, std::string_view field, ReplyList& reply) {
        const std::optional<std::string_view> value = hash ? hash->Get(field) : std::nullopt;
        if (value) return reply.Bulk(*value);
        reply.Nil();
      });
}

// HGETALL, HKEYS, HVALS.
template <bool kFields, bool kValues>
void HGetAllOf(ContainerCall& call) {
  if (!call.CheckType()) return;
  const HashValue* hash = call.Find<HashValue>();
  ReplyList& reply = call.List();
  // HGETALL answers a map (an empty one for a missing key); HKEYS, HVALS
  // an array.
  const size_t size = hash ? hash->Size() : 0;
  if (kFields && kValues) {
    reply.Map(size);
  } else {
    reply.Array(size);
  }
  if (!hash) return;
  hash->ForEach([&](std::string_view field, std::string_view value) {
    if (kFields) reply.Bulk(field);
    if (kValues) reply.Bulk(value);
  });
}

void HDel(ContainerCall& call) {
  RemoveEach<HashValue>(call,
                        [](HashValue& hash, std::string_view field) { return hash.Delete(field); });
}

void HExists(ContainerCall& call) {
  if (!call.CheckType()) return;
  const HashValue* hash = call.Find<HashValue>();
  call.Integer(hash && hash->Get(call.args[2]) ? 1 : 0);
}

void HStrlen(ContainerCall& call) {
  if (!call.CheckType()) return;
  const HashValue* hash = call.Find<HashValue>();
  const std::optional<std::string_view> value = hash ? hash->Get(call.args[2]) : std::nullopt;
  call.Integer(value ? static_cast<int64_t>(value->size()) : 0);
}

void HIncrBy(ContainerCall& call) {
  int64_t increment = 0;
  if (!ParseInteger(call, call.args[3], &increment)) return;
  if (!call.CheckType()) return;
  HashValue& hash = call.FindOrCreate<HashValue>();
  int64_t current = 0;
  if (const std::optional<std::string_view> value = hash.Get(call.args[2])) {
    const std::optional<int64_t> parsed = ParseRedisInt64(*value);
    if (!parsed) return call.Error("ERR hash value is not an integer");
    current = *parsed;
  }
  const std::optional<int64_t> next = CheckedAdd(current, increment);
  if (!next) return call.Error(kContainerOverflowError);
  hash.Set(call.args[2], std::to_string(*next));
  call.Changed();
  call.Integer(*next);
}

void HIncrByFloat(ContainerCall& call) {
  long double increment = 0;
  if (!ParseLongDouble(call, call.args[3], &increment)) return;
  if (std::isnan(increment) || std::isinf(increment)) {
    return call.Error("ERR value is NaN or Infinity");
  }
  if (!call.CheckType()) return;
  HashValue& hash = call.FindOrCreate<HashValue>();
  long double current = 0;
  if (const std::optional<std::string_view> value = hash.Get(call.args[2])) {
    const std::optional<long double> parsed = ParseRedisLongDouble(*value);
    if (!parsed) return call.Error("ERR hash value is not a float");
    current = *parsed;
  }
  const long double next = current + increment;
  if (std::isnan(next) || std::isinf(next)) {
    return call.Error("ERR increment would produce NaN or Infinity");
  }
  const std::string text = FormatRedisLongDouble(next);
  hash.Set(call.args[2], text);
  call.Changed();
  call.Bulk(text);
}

void HScan(ContainerCall& call) {
  ScanContainer<HashValue>(call, "listpack",
                           [](const HashValue& hash, auto& offer) { hash.ForEach(offer); });
}

using namespace command_flags;
constexpr ValueType kHash = ValueType::kHash;

constexpr ContainerCommand kHashCommands[] = {
    {"hset", -4, kHash, kGrow, HSet},
    {"hmset", -4, kHash, kGrow, HMSet},
    {"hsetnx", 4, kHash, kGrow, HSetNx},
    {"hget", 3, kHash, kRead, HGet},
    {"hmget", -3, kHash, kRead, HMGet},
    {"hgetall", 2, kHash, kRead, HGetAllOf<true, true>},
    {"hkeys", 2, kHash, kRead, HGetAllOf<true, false>},
    {"hvals", 2, kHash, kRead, HGetAllOf<false, true>},
    {"hdel", -3, kHash, kWrite, HDel},
    {"hlen", 2, kHash, kRead, ReplySize<HashValue>},
    {"hexists", 3, kHash, kRead, HExists},
    {"hstrlen", 3, kHash, kRead, HStrlen},
    {"hincrby", 4, kHash, kGrow, HIncrBy},
    {"hincrbyfloat", 4, kHash, kGrow, HIncrByFloat},
    {"hscan", -3, kHash, kRead, HScan},
    {"hrandfield", -2, kHash, kRead, HRandField},
};

}  // namespace

std::span<const ContainerCommand> HashCommands() { return kHashCommands; }

}  // namespace kvlab
