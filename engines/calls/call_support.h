// What the container commands share: Redis's argument parsing with its
// error texts, the SCAN family's cursor, options and reply, the replies
// every type gives alike (a size, a removal), and the command tables' flags.
//
// Pure functions over a ContainerCall; thread-safe.
#pragma once

#include <cerrno>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "engines/calls/container_call.h"
#include "engines/rules/glob.h"
#include "engines/rules/redis_float.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {

// The flags a command table row gives (container.h's ContainerCommand).
namespace command_flags {
inline constexpr uint8_t kRead = 0;
inline constexpr uint8_t kWrite = kContainerWrite;
inline constexpr uint8_t kGrow = kContainerWrite | kContainerDenyOom;
}  // namespace command_flags

inline constexpr std::string_view kContainerSyntaxError = "ERR syntax error";
inline constexpr std::string_view kContainerNotIntegerError =
    "ERR value is not an integer or out of range";
inline constexpr std::string_view kContainerNotFloatError = "ERR value is not a valid float";
inline constexpr std::string_view kContainerOverflowError =
    "ERR increment or decrement would overflow";
// getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)'s error: a random
// pick's count (SRANDMEMBER, ZRANDMEMBER) of LLONG_MIN has no absolute
// value (CVE-2023-25155).
inline constexpr std::string_view kContainerCountRangeError =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

// Redis's addReplyErrorArity(): the command's name as its table spells it.
inline void ReplyArityError(ContainerCall& call, std::string_view name) {
  call.Error("ERR wrong number of arguments for '" + std::string(name) + "' command");
}

// Redis compares options with strcasecmp: the argument ends at a NUL.
inline bool OptionIs(std::string_view arg, std::string_view option) {
  arg = arg.substr(0, arg.find('\0'));
  if (arg.size() != option.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(arg[i])) != option[i]) return false;
  }
  return true;
}

// getLongLongFromObjectOrReply(): false (and the error replied) when `arg`
// is not a 64-bit integer.
inline bool ParseInteger(ContainerCall& call, std::string_view arg, int64_t* value) {
  const std::optional<int64_t> parsed = ParseRedisInt64(arg);
  if (!parsed) {
    call.Error(kContainerNotIntegerError);
    return false;
  }
  *value = *parsed;
  return true;
}

// getLongDoubleFromObjectOrReply().
inline bool ParseLongDouble(ContainerCall& call, std::string_view arg, long double* value) {
  const std::optional<long double> parsed = ParseRedisLongDouble(arg);
  if (!parsed) {
    call.Error(kContainerNotFloatError);
    return false;
  }
  *value = *parsed;
  return true;
}

// parseScanCursorOrReply(): strtoul's rules (a sign is accepted, a leading
// space or any trailing byte is not).
inline bool ParseScanCursor(ContainerCall& call, std::string_view arg, uint64_t* cursor) {
  const std::string text(arg);
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) ||
      end != text.c_str() + text.size() || errno == ERANGE) {
    call.Error("ERR invalid cursor");
    return false;
  }
  *cursor = value;
  return true;
}

// A container scan's MATCH pattern. COUNT is a hint kvlab does not need:
// a scan from cursor 0 returns the whole container at once with cursor 0,
// which Redis's SCAN guarantees allow (its compact encodings do the same,
// whatever the cursor). A non-zero cursor on a large container — one kvlab
// never handed out — ends the scan: no elements, cursor 0.
struct ScanFilter {
  std::optional<std::string_view> pattern;
  bool Matches(std::string_view element) const {
    return !pattern || GlobMatch(*pattern, element, /*nocase=*/false);
  }
};

// scanGenericCommand()'s option loop over args[first, end).
inline bool ParseScanOptions(ContainerCall& call, size_t first, ScanFilter* filter) {
  for (size_t i = first; i < call.args.size();) {
    const size_t left = call.args.size() - i;
    if (OptionIs(call.args[i], "count") && left >= 2) {
      int64_t count = 0;
      if (!ParseInteger(call, call.args[i + 1], &count)) return false;
      if (count < 1) {
        call.Error(kContainerSyntaxError);
        return false;
      }
      i += 2;
    } else if (OptionIs(call.args[i], "match") && left >= 2) {
      const std::string_view pattern = call.args[i + 1];
      if (pattern != "*") filter->pattern = pattern;
      i += 2;
    } else {
      call.Error(kContainerSyntaxError);
      return false;
    }
  }
  return true;
}

// HDEL, SREM, ZREM: removes each of args[2..] with `remove(value, element)`
// (true when it was there) and replies how many went; Redis stops once the
// value is empty (its key is gone).
template <typename T, typename Remove>
void RemoveEach(ContainerCall& call, Remove&& remove) {
  if (!call.CheckType()) return;
  T* value = call.Find<T>();
  if (!value) return call.Integer(0);
  int64_t removed = 0;
  for (size_t i = 2; i < call.args.size(); ++i) {
    if (remove(*value, call.args[i])) {
      ++removed;
      if (value->Size() == 0) break;
    }
  }
  if (removed != 0) call.Changed();
  call.Integer(removed);
}

// The reply of a scan over a missing key: cursor 0, no elements.
inline void ReplyEmptyScan(ContainerCall& call) {
  ReplyList& reply = call.List();
  reply.Array(2);
  reply.Bulk("0");
  reply.Array(0);
}

// HSCAN, SSCAN, ZSCAN over a value of type T: parses the cursor and the
// options, then replies cursor 0 and the elements each(value, offer)
// offers: offer(element, partners...) adds the element and its partners
// (a field's value, a member's score) when the element matches the
// pattern. A value in its compact encoding `whole_encoding` is answered
// whole whatever the cursor, as Redis's is; otherwise a non-zero cursor
// ends the scan (ScanFilter).
template <typename T, typename Each>
void ScanContainer(ContainerCall& call, std::string_view whole_encoding, Each&& each) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(call, call.args[2], &cursor)) return;
  if (!call.CheckType()) return;
  const T* value = call.Find<T>();
  if (!value) return ReplyEmptyScan(call);
  ScanFilter filter;
  if (!ParseScanOptions(call, 3, &filter)) return;
  ReplyList& reply = call.List();
  reply.Array(2);
  reply.Bulk("0");
  const size_t items = reply.BeginArray();
  size_t count = 0;
  if (cursor != 0 && value->Encoding() != whole_encoding) return reply.EndArray(items, 0);
  auto offer = [&](std::string_view element, const auto&... partners) {
    if (!filter.Matches(element)) return;
    reply.Bulk(element);
    (reply.Bulk(partners), ...);
    count += 1 + sizeof...(partners);
  };
  each(*value, offer);
  reply.EndArray(items, count);
}

// HMGET, ZMSCORE, SMISMEMBER: one reply element per args[2..], written by
// each(value, argument, reply) (`value`: nullptr when the key is missing).
template <typename T, typename Each>
void ReplyPerArgument(ContainerCall& call, Each&& each) {
  if (!call.CheckType()) return;
  const T* value = call.Find<T>();
  ReplyList& reply = call.List();
  reply.Array(call.args.size() - 2);
  for (size_t i = 2; i < call.args.size(); ++i) each(value, call.args[i], reply);
}

// HLEN, SCARD, ZCARD, LLEN: the size of the value of type T (0 when missing).
template <typename T>
void ReplySize(ContainerCall& call) {
  if (!call.CheckType()) return;
  const T* value = call.Find<T>();
  call.Integer(value ? static_cast<int64_t>(value->Size()) : 0);
}

}  // namespace kvlab
