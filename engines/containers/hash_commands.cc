// The hash commands (Redis 7.0's t_hash.c), written once for every engine.
#include <cmath>
#include <string>

#include "engines/containers/command_support.h"
#include "engines/containers/container_tables.h"
#include "engines/containers/hash_value.h"

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
  const std::optional<std::string_view> value =
      hash ? hash->Get(call.args[2]) : std::nullopt;
  if (value) return call.Bulk(*value);
  call.Nil();
}

void HMGet(ContainerCall& call) {
  ReplyPerArgument<HashValue>(call, [](const HashValue* hash, std::string_view field, ReplyList& reply) {
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
  RemoveEach<HashValue>(call, [](HashValue& hash, std::string_view field) { return hash.Delete(field); });
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
};

}  // namespace

std::span<const ContainerCommand> HashCommands() { return kHashCommands; }

}  // namespace kvlab
