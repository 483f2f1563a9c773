// The list commands (Redis 7.0's t_list.c), written once for every engine.
#include <algorithm>
#include <string>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/calls/call_support.h"
#include "engines/calls/container_tables.h"
#include "engines/containers/list_value.h"

namespace kvlab {

namespace {

constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";

// getPositiveLongFromObjectOrReply(): a non-integer gets `error` too (Redis
// passes its message to both checks).
bool ParsePositive(ContainerCall& call, std::string_view arg, std::string_view error,
                   int64_t* value) {
  const std::optional<int64_t> parsed = ParseRedisInt64(arg);
  if (!parsed || *parsed < 0) {
    call.Error(error);
    return false;
  }
  *value = *parsed;
  return true;
}

// Redis's long arithmetic wraps (RANK -9223372036854775808 negates to
// itself): the same, without the undefined behaviour.
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// LPUSH, RPUSH, LPUSHX, RPUSHX: pushGenericCommand().
template <bool kFront, bool kOnlyIfExists>
void Push(ContainerCall& call) {
  if (!call.CheckType()) return;
  if (kOnlyIfExists && call.Find<ListValue>() == nullptr) return call.Integer(0);
  ListValue& list = call.FindOrCreate<ListValue>();
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (kFront) {
      list.PushFront(call.args[i]);
    } else {
      list.PushBack(call.args[i]);
    }
  }
  call.Changed();
  call.Integer(static_cast<int64_t>(list.Size()));
}

// LPOP, RPOP: popGenericCommand().
template <bool kFront>
void Pop(ContainerCall& call) {
  if (call.args.size() > 3) return ReplyArityError(call, kFront ? "lpop" : "rpop");
  const bool has_count = call.args.size() == 3;
  int64_t count = 0;
  if (has_count && !ParsePositive(call, call.args[2], kMustBePositive, &count)) return;
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) {
    if (has_count) return call.List().NilArray();
    return call.Nil();
  }
  if (has_count && count == 0) return call.List().Array(0);
  call.Changed();
  if (!has_count) return call.Bulk(kFront ? list->PopFront() : list->PopBack());
  const size_t take = std::min(static_cast<uint64_t>(count), static_cast<uint64_t>(list->Size()));
  ReplyList& reply = call.List();
  reply.Array(take);
  for (size_t i = 0; i < take; ++i) reply.Bulk(kFront ? list->PopFront() : list->PopBack());
}

// A Redis index (negative: from the tail) as a position, or false when out
// of range.
bool ResolveIndex(int64_t index, size_t size, size_t* position) {
  const int64_t length = static_cast<int64_t>(size);
  if (index < 0) index += length;
  if (index < 0 || index >= length) return false;
  *position = static_cast<size_t>(index);
  return true;
}

void LIndex(ContainerCall& call) {
  if (!call.CheckType()) return;
  const ListValue* list = call.Find<ListValue>();
  if (!list) return call.Nil();
  int64_t index = 0;
  if (!ParseInteger(call, call.args[2], &index)) return;
  size_t position = 0;
  if (!ResolveIndex(index, list->Size(), &position)) return call.Nil();
  call.Bulk(list->At(position));
}

void LSet(ContainerCall& call) {
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) return call.Error("ERR no such key");
  int64_t index = 0;
  if (!ParseInteger(call, call.args[2], &index)) return;
  size_t position = 0;
  if (!ResolveIndex(index, list->Size(), &position)) return call.Error("ERR index out of range");
  list->Set(position, call.args[3]);
  call.Changed();
  call.Ok();
}

// addListRangeReply()'s clamping: the first position and the count of a
// [start, end] range, count 0 when empty.
void ClampRange(int64_t start, int64_t end, size_t size, size_t* first, size_t* count) {
  const int64_t length = static_cast<int64_t>(size);
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  *first = 0;
  *count = 0;
  if (start > end || start >= length) return;
  if (end >= length) end = length - 1;
  *first = static_cast<size_t>(start);
  *count = static_cast<size_t>(end - start + 1);
}

void LRange(ContainerCall& call) {
  int64_t start = 0, end = 0;
  if (!ParseInteger(call, call.args[2], &start) || !ParseInteger(call, call.args[3], &end)) return;
  if (!call.CheckType()) return;
  const ListValue* list = call.Find<ListValue>();
  ReplyList& reply = call.List();
  if (!list) return reply.Array(0);
  size_t first = 0, count = 0;
  ClampRange(start, end, list->Size(), &first, &count);
  reply.Array(count);
  if (count == 0) return;
  const size_t last = first + count - 1;
  list->ForEach(false, [&](size_t index, std::string_view element) {
    if (index >= first) reply.Bulk(element);
    return index < last;
  });
}

void LTrim(ContainerCall& call) {
  int64_t start = 0, end = 0;
  if (!ParseInteger(call, call.args[2], &start) || !ParseInteger(call, call.args[3], &end)) return;
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) return call.Ok();
  size_t first = 0, count = 0;
  ClampRange(start, end, list->Size(), &first, &count);
  // Tail first, so `first` still counts from the head.
  list->EraseRange(first + count, list->Size() - first - count);
  list->EraseRange(0, first);
  call.Changed();  // Redis signals the key even when nothing went
  call.Ok();
}

void LRem(ContainerCall& call) {
  int64_t to_remove = 0;
  if (!ParseInteger(call, call.args[2], &to_remove)) return;
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) return call.Integer(0);
  const std::string_view element = call.args[3];
  const bool reverse = to_remove < 0;
  // |to_remove| as unsigned (0: all).
  const uint64_t limit =
      reverse ? 0 - static_cast<uint64_t>(to_remove) : static_cast<uint64_t>(to_remove);
  std::vector<size_t> matched;
  list->ForEach(reverse, [&](size_t index, std::string_view value) {
    if (value == element) matched.push_back(index);
    return limit == 0 || matched.size() < limit;
  });
  if (matched.empty()) return call.Integer(0);
  if (reverse) std::reverse(matched.begin(), matched.end());
  list->EraseIndexes(matched);
  call.Changed();
  call.Integer(static_cast<int64_t>(matched.size()));
}

void LInsert(ContainerCall& call) {
  bool after = false;
  if (OptionIs(call.args[2], "after")) {
    after = true;
  } else if (!OptionIs(call.args[2], "before")) {
    return call.Error(kContainerSyntaxError);
  }
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) return call.Integer(0);
  const std::string_view pivot = call.args[3];
  size_t found = 0;
  bool seen = false;
  list->ForEach(false, [&](size_t index, std::string_view value) {
    if (value != pivot) return true;
    found = index;
    seen = true;
    return false;
  });
  if (!seen) return call.Integer(-1);
  list->Insert(after ? found + 1 : found, call.args[4]);
  call.Changed();
  call.Integer(static_cast<int64_t>(list->Size()));
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
void LPos(ContainerCall& call) {
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: not given
  for (size_t j = 3; j < call.args.size(); ++j) {
    const bool more = j + 1 < call.args.size();
    if (OptionIs(call.args[j], "rank") && more) {
      if (!ParseInteger(call, call.args[++j], &rank)) return;
      if (rank == 0) {
        return call.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      }
    } else if (OptionIs(call.args[j], "count") && more) {
      if (!ParsePositive(call, call.args[++j], "ERR COUNT can't be negative", &count)) return;
    } else if (OptionIs(call.args[j], "maxlen") && more) {
      if (!ParsePositive(call, call.args[++j], "ERR MAXLEN can't be negative", &maxlen)) return;
    } else {
      return call.Error(kContainerSyntaxError);
    }
  }
  bool reverse = false;
  if (rank < 0) {
    rank = WrapNeg(rank);  // stays negative for the smallest long, as Redis's
    reverse = true;
  }
  if (!call.CheckType()) return;
  const ListValue* list = call.Find<ListValue>();
  if (!list) {
    if (count != -1) return call.List().Array(0);
    return call.Nil();
  }
  const std::string_view element = call.args[2];
  const bool as_array = count != -1;
  ReplyList* reply = nullptr;
  size_t array_at = 0;
  if (as_array) {
    reply = &call.List();
    array_at = reply->BeginArray();
  }
  int64_t scanned = 0, matches = 0, match_index = -1;
  size_t array_length = 0;
  list->ForEach(reverse, [&](size_t index, std::string_view value) {
    if (maxlen != 0 && scanned >= maxlen) return false;
    ++scanned;
    if (value != element) return true;
    ++matches;
    if (matches < rank) return true;
    if (!as_array) {
      match_index = static_cast<int64_t>(index);
      return false;
    }
    ++array_length;
    reply->Integer(static_cast<int64_t>(index));
    return !(count != 0 && WrapAdd(WrapAdd(matches, WrapNeg(rank)), 1) >= count);
  });
  if (as_array) return reply->EndArray(array_at, array_length);
  if (match_index != -1) return call.Integer(match_index);
  call.Nil();
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT, and RPOPLPUSH source
// destination (its RIGHT LEFT), as lmoveGenericCommand() in three steps:
// the source is read, the destination takes the element, the source gives
// it up. A missing source answers nil before the destination's type is
// checked; a destination of another type pops nothing. The server
// validated LEFT|RIGHT.
bool FromLeft(const ContainerCall& call) {
  return call.args.size() > 3 && OptionIs(call.args[3], "left");
}
bool ToLeft(const ContainerCall& call) {
  return call.args.size() <= 3 || OptionIs(call.args[4], "left");
}

void ListMoveSource(ContainerCall& call) {
  if (!call.CheckType()) return;
  const ListValue* list = call.Find<ListValue>();
  ListMove& move = call.group->list_move;
  // A fresh start: an earlier LMOVE of the same EXEC shares the group's
  // state, and its `moved` must not pop this source.
  move = ListMove{};
  move.source_exists = list != nullptr;
  if (list) move.element = list->At(FromLeft(call) ? 0 : list->Size() - 1);
  call.Ok();
}

void ListMoveDestination(ContainerCall& call) {
  ListMove& move = call.group->list_move;
  if (!move.source_exists) return call.Nil();
  if (!call.CheckType()) return;
  ListValue& list = call.FindOrCreate<ListValue>();
  if (call.args[1] == call.args[2]) {
    // The same list rotates: pop first, then push, as Redis does (pushing
    // first would briefly hold one element more).
    const std::string element = FromLeft(call) ? list.PopFront() : list.PopBack();
    if (ToLeft(call)) {
      list.PushFront(element);
    } else {
      list.PushBack(element);
    }
  } else {
    if (ToLeft(call)) {
      list.PushFront(move.element);
    } else {
      list.PushBack(move.element);
    }
    move.moved = true;
  }
  call.Changed();
  call.Bulk(move.element);
}

void ListMoveRemove(ContainerCall& call) {
  if (!call.group->list_move.moved) return call.Ok();
  ListValue* list = call.Find<ListValue>();
  if (FromLeft(call)) {
    list->PopFront();
  } else {
    list->PopBack();
  }
  call.Changed();
  call.Ok();
}

// LMPOP's step on one of its keys (list_value.h): the arguments are the
// whole LMPOP command, which the server validated.
void LMPopStep(ContainerCall& call) {
  if (!call.CheckType()) return;
  ListValue* list = call.Find<ListValue>();
  if (!list) return call.Nil();
  const auto where = static_cast<size_t>(*ParseRedisInt64(call.args[1])) + 2;
  const bool front = OptionIs(call.args[where], "left");
  uint64_t count = 1;  // ... LEFT|RIGHT [COUNT count]
  if (where + 2 < call.args.size())
    count = static_cast<uint64_t>(*ParseRedisInt64(call.args[where + 2]));
  const size_t take = static_cast<size_t>(std::min<uint64_t>(count, list->Size()));
  ReplyList& reply = call.List();
  reply.Array(take);
  for (size_t i = 0; i < take; ++i) reply.Bulk(front ? list->PopFront() : list->PopBack());
  call.Changed();
}

using namespace command_flags;
constexpr ValueType kList = ValueType::kList;
constexpr uint8_t kListStep = kContainerInternal | kContainerGroupStep;

constexpr ContainerCommand kListCommands[] = {
    {"lpush", -3, kList, kGrow, Push<true, false>},
    {"rpush", -3, kList, kGrow, Push<false, false>},
    {"lpushx", -3, kList, kGrow, Push<true, true>},
    {"rpushx", -3, kList, kGrow, Push<false, true>},
    {"lpop", -2, kList, kWrite, Pop<true>},
    {"rpop", -2, kList, kWrite, Pop<false>},
    {"llen", 2, kList, kRead, ReplySize<ListValue>},
    {"lrange", 4, kList, kRead, LRange},
    {"lindex", 3, kList, kRead, LIndex},
    {"lset", 4, kList, kGrow, LSet},
    {"lrem", 4, kList, kWrite, LRem},
    {"ltrim", 4, kList, kWrite, LTrim},
    {"linsert", 5, kList, kGrow, LInsert},
    {"lpos", -3, kList, kRead, LPos},
    {kListMoveSourceStep, -1, kList, kRead | kListStep, ListMoveSource},
    {kListMoveDestinationStep, -1, kList, kGrow | kListStep, ListMoveDestination},
    {kListMoveRemoveStep, -1, kList, kWrite | kListStep, ListMoveRemove},
    {kListMPopStep, 2, kList, kWrite | kContainerInternal | kContainerGuard, LMPopStep},
};

}  // namespace

std::span<const ContainerCommand> ListCommands() { return kListCommands; }

}  // namespace kvlab
