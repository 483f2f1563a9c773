// Helpers shared by command handlers: Redis's option matching, the error
// texts and render functions several commands use.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/ascii_case.h"
#include "engines/operation.h"
#include "engines/rules/redis_integer.h"
#include "server/command.h"

namespace kvlab {

inline Operation MakeOp(OpCode code, std::string_view key, std::string_view value = {},
                        int64_t integer = 0, SetOptions set = {}) {
  Operation op;
  op.code = code;
  op.key = key;
  op.value = value;
  op.integer = integer;
  op.set = set;
  return op;
}

inline constexpr std::string_view kSyntaxError = "ERR syntax error";
inline constexpr std::string_view kNotIntegerError = "ERR value is not an integer or out of range";
inline constexpr std::string_view kOverflowError = "ERR increment or decrement would overflow";

// Redis compares options with strcasecmp on C strings: the argument ends at
// its first NUL byte.
inline std::string_view AsCString(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

inline bool EqualsIgnoreCase(std::string_view arg, std::string_view option) {
  arg = AsCString(arg);
  if (arg.size() != option.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i) {
    if (AsciiLower(arg[i]) != AsciiLower(option[i])) return false;
  }
  return true;
}

inline std::string InvalidExpireTimeError(std::string_view command) {
  return "ERR invalid expire time in '" + std::string(command) + "' command";
}

// Render functions several commands share.

// The reply of one container operation, whatever its kind
// (container_commands.cc).
void RenderContainerResult(const OpResult& result, ReplyWriter& writer);

inline void RenderInteger(const DeferredReply&, std::span<const OpResult> results,
                          ReplyWriter& writer, ServerContext&) {
  writer.Integer(results[0].integer);
}

// A value, or nil when the key was missing.
inline void RenderBulkOrNil(const DeferredReply&, std::span<const OpResult> results,
                            ReplyWriter& writer, ServerContext&) {
  if (results[0].kind == OpResult::Kind::kBulk) {
    writer.Bulk(results[0].bulk);
  } else {
    writer.Nil();
  }
}

// A count, or nil when the key was missing (OBJECT REFCOUNT, MEMORY USAGE).
inline void RenderIntegerOrNil(const DeferredReply&, std::span<const OpResult> results,
                               ReplyWriter& writer, ServerContext&) {
  if (results[0].kind == OpResult::Kind::kInteger) {
    writer.Integer(results[0].integer);
  } else {
    writer.Nil();
  }
}

// A command that is one operation on its key, args[1] (GET, STRLEN, TTL,
// TYPE, ...), its reply rendered by `kRender`.
template <OpCode kCode, RenderFn kRender>
void KeyCommand(CommandCall& call) {
  call.Add(MakeOp(kCode, call.args[1]));
  call.Defer(kRender);
}

inline void RenderOk(const DeferredReply&, std::span<const OpResult>, ReplyWriter& writer,
                     ServerContext&) {
  writer.Ok();
}

}  // namespace kvlab
