#include "engines/calls/sort_read.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/containers/hash_value.h"
#include "engines/containers/list_value.h"
#include "engines/containers/partial_quicksort.h"
#include "engines/containers/set_value.h"
#include "engines/calls/sort_options.h"
#include "engines/containers/zset_value.h"

namespace kvlab {

namespace {

constexpr std::string_view kScoreConversionError =
    "ERR One or more scores can't be converted into double";

// One element of the sorting vector (redisSortObject).
struct SortItem {
  std::string element;
  double score = 0;
  std::optional<std::string> by;  // ALPHA with BY: the value sorted by
};

// lookupKeyByPattern(): "#" is the element itself; otherwise the first '*'
// is replaced by the element and the key read, as a string, or with
// "->field" after the '*' as that hash field. nullopt when the pattern has
// no '*', or the key is missing or of another type.
std::optional<std::string> LookupByPattern(KeyReader& keys, std::string_view pattern,
                                           std::string_view element) {
  const std::string_view text = PatternCString(pattern);
  if (text == "#") return std::string(element);
  const size_t star = text.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  const size_t arrow = text.find("->", star + 1);
  size_t field_length = 0;
  if (arrow != std::string_view::npos && arrow + 2 < text.size()) {
    field_length = pattern.size() - arrow - 2;  // sdslen: past any NUL
  }
  const size_t postfix_length = pattern.size() - (star + 1) - (field_length ? field_length + 2 : 0);
  std::string key;
  key.reserve(star + element.size() + postfix_length);
  key.append(pattern.substr(0, star))
      .append(element)
      .append(pattern.substr(star + 1, postfix_length));
  const std::optional<EntryView> live = keys.Live(key);
  if (!live) return std::nullopt;
  if (field_length != 0) {
    if (live->container == nullptr || live->container->type() != ValueType::kHash) {
      return std::nullopt;
    }
    const std::optional<std::string_view> value =
        static_cast<const HashValue*>(live->container)->Get(pattern.substr(arrow + 2));
    if (!value) return std::nullopt;
    return std::string(*value);
  }
  if (live->container != nullptr) return std::nullopt;
  return std::string(live->value);
}

// compareStringObjects(): memcmp, then the shorter first.
int CompareBinary(std::string_view a, std::string_view b) {
  const int cmp = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (cmp != 0) return cmp;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// strcoll() as Redis calls it: on C strings (up to a NUL byte). kvlab
// never sets a locale, so collation is the C locale's, strcmp's byte order
// (Redis collates by its LC_COLLATE environment; under C or C.UTF-8 this).
int Collate(const std::string& a, const std::string& b) {
  return std::strcmp(a.c_str(), b.c_str());
}

struct SortOrder {
  bool desc, alpha, by_pattern, store;

  // sortCompare().
  int operator()(const SortItem& a, const SortItem& b) const {
    int cmp = 0;
    if (!alpha) {
      if (a.score > b.score)
        cmp = 1;
      else if (a.score < b.score)
        cmp = -1;
      else
        cmp = CompareBinary(a.element, b.element);  // a deterministic tie-break
    } else if (by_pattern) {
      if (!a.by || !b.by) {
        cmp = a.by.has_value() == b.by.has_value() ? 0 : (!a.by ? -1 : 1);
      } else {
        cmp = store ? CompareBinary(*a.by, *b.by) : Collate(*a.by, *b.by);
      }
    } else {
      cmp = store ? CompareBinary(a.element, b.element) : Collate(a.element, b.element);
    }
    return desc ? -cmp : cmp;
  }
};

// strtod() as SORT checks it: the whole C string, no overflow, not NaN.
bool ParseScore(const std::string& text, double* score) {
  char* end = nullptr;
  errno = 0;
  *score = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*score);
}

// The output range [start, end] of a vector of `length` elements, clamped
// as Redis 7.0.15 does (its fix for CVE-2022-35977: huge offsets and counts
// are first limited to the length, so start + count cannot overflow).
struct OutputRange {
  int64_t start, end;
};
OutputRange ClampLimit(int64_t limit_start, int64_t limit_count, int64_t length) {
  int64_t start = std::min(std::max<int64_t>(limit_start, 0), length);
  const int64_t count = std::min(std::max<int64_t>(limit_count, -1), length);
  int64_t end = count < 0 ? length - 1 : start + count - 1;
  if (start >= length) {
    start = length - 1;
    end = length - 2;
  }
  if (end >= length) end = length - 1;
  return {start, end};
}

// Loads the elements to sort, in the order Redis loads them; for a list or
// sorted set that is not sorted, only the output range, in output order
// (and `range` is moved to start at 0).
std::vector<SortItem> LoadElements(const Container* value, bool dont_sort, bool desc,
                                   OutputRange& range) {
  std::vector<SortItem> items;
  auto add = [&](std::string_view element) { items.push_back({std::string(element), 0, {}}); };
  const int64_t length = value ? static_cast<int64_t>(value->Size()) : 0;
  if (value == nullptr) return items;  // a missing key sorts as an empty list
  const ValueType type = value->type();
  if (dont_sort && type != ValueType::kSet) {
    const int64_t wanted = range.end - range.start + 1;
    if (wanted <= 0) return items;
    items.reserve(static_cast<size_t>(wanted));
    if (type == ValueType::kList) {
      const auto& list = static_cast<const ListValue&>(*value);
      // From the start-th element of the output order on (the whole list is
      // walked from the same end; the first `start` are skipped).
      int64_t skipped = 0;
      list.ForEach(desc, [&](size_t, std::string_view element) {
        if (skipped++ < range.start) return true;
        add(element);
        return static_cast<int64_t>(items.size()) < wanted;
      });
    } else {
      const auto& zset = static_cast<const ZSetValue&>(*value);
      const size_t first = static_cast<size_t>(desc ? length - 1 - range.start : range.start);
      zset.Walk(first, desc, [&](std::string_view member, double) {
        add(member);
        return static_cast<int64_t>(items.size()) < wanted;
      });
    }
    range.end -= range.start;
    range.start = 0;
    return items;
  }
  items.reserve(static_cast<size_t>(length));
  switch (type) {
    case ValueType::kList:
      static_cast<const ListValue&>(*value).ForEach(false, [&](size_t, std::string_view element) {
        add(element);
        return true;
      });
      break;
    case ValueType::kSet:
      static_cast<const SetValue&>(*value).ForEach(add);
      break;
    default:
      // Redis walks the sorted set's dict here (an order of its own); any
      // order gives the same result when no two elements compare equal.
      static_cast<const ZSetValue&>(*value).Walk(0, false, [&](std::string_view member, double) {
        add(member);
        return true;
      });
  }
  return items;
}

// Fills each item's score (or ALPHA's value to sort by) and sorts; false
// when a score is not a number.
bool SortItems(std::vector<SortItem>& items, const SortOptions& options, bool by_pattern,
               KeyReader& keys, const OutputRange& range) {
  bool scores_valid = true;
  for (SortItem& item : items) {
    std::optional<std::string> by;
    if (by_pattern) {
      by = LookupByPattern(keys, *options.by, item.element);
      if (!by) continue;
    }
    if (options.alpha) {
      if (by_pattern) item.by = std::move(by);
    } else if (!ParseScore(by_pattern ? *by : item.element, &item.score)) {
      scores_valid = false;
    }
  }
  // Redis sorts even so and discards the order; a NaN would leave no
  // consistent order to sort by.
  if (!scores_valid) return false;
  const SortOrder order{options.desc, options.alpha, by_pattern, options.store.has_value()};
  if (by_pattern && (range.start != 0 || range.end != static_cast<int64_t>(items.size()) - 1)) {
    PartialQuicksort(items, static_cast<size_t>(range.start), static_cast<size_t>(range.end),
                     order);
  } else {
    // glibc's qsort() is a stable merge sort for arrays that fit in memory.
    std::stable_sort(items.begin(), items.end(),
                     [&](const SortItem& a, const SortItem& b) { return order(a, b) < 0; });
  }
  return true;
}

}  // namespace

OpResult ReadSorted(const Operation& op, KeyReader& keys, GroupState& group) {
  const std::span<const std::string_view> args(op.arg_pool->data() + op.arg_first, op.arg_count);
  SortOptions options;
  if (const std::optional<std::string_view> error =
          ParseSortOptions(args, op.integer == 1, &options)) {
    return OpResult::ErrorText(*error);
  }
  const std::optional<EntryView> live = keys.Live(options.key, /*zset_as_skiplist=*/true);
  const Container* value = live ? live->container : nullptr;
  if (live && (value == nullptr || value->type() == ValueType::kHash)) {
    return OpResult::Error(EngineError::kWrongType);
  }
  bool dont_sort = options.dont_sort;
  bool alpha = options.alpha;
  bool by_pattern = options.by.has_value();
  // A set is sorted for STORE anyway, so what is stored does not depend on
  // the set's internal order (Redis: "consistent across replication").
  if (dont_sort && value != nullptr && value->type() == ValueType::kSet && options.store) {
    dont_sort = false;
    alpha = true;
    by_pattern = false;
  }
  options.alpha = alpha;
  const int64_t length = value ? static_cast<int64_t>(value->Size()) : 0;
  OutputRange range = ClampLimit(options.limit_start, options.limit_count, length);
  std::vector<SortItem> items = LoadElements(value, dont_sort, options.desc, range);
  if (!dont_sort && !SortItems(items, options, by_pattern, keys, range)) {
    return OpResult::ErrorText(kScoreConversionError);
  }

  const int64_t selected = range.end - range.start + 1;
  const int64_t output_length =
      options.gets.empty() ? selected : static_cast<int64_t>(options.gets.size()) * selected;
  if (!options.store) {
    OpResult result;
    result.kind = OpResult::Kind::kReply;
    result.reply = std::make_shared<ReplyList>();
    ReplyList& reply = *result.reply;
    reply.Array(output_length);
    for (int64_t j = range.start; j <= range.end; ++j) {
      const std::string& element = items[static_cast<size_t>(j)].element;
      if (options.gets.empty()) reply.Bulk(element);
      for (const std::string_view get : options.gets) {
        const std::optional<std::string> found = LookupByPattern(keys, get, element);
        if (found)
          reply.Bulk(*found);
        else
          reply.Nil();
      }
    }
    return result;
  }
  auto stored = std::make_unique<ListValue>();
  for (int64_t j = range.start; j <= range.end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (options.gets.empty()) stored->PushBack(element);
    for (const std::string_view get : options.gets) {
      stored->PushBack(LookupByPattern(keys, get, element).value_or(std::string()));
    }
  }
  group.carried = true;
  group.value.clear();
  group.container = std::move(stored);
  group.expire_at_ms = 0;  // setKey(): the destination keeps no old expiry
  return OpResult::Integer(output_length);
}

}  // namespace kvlab
