// RESP request encoding: appends a command as a RESP array of bulk strings.
// Pure functions; thread-safe.
#pragma once

#include <charconv>
#include <initializer_list>
#include <string>
#include <string_view>

namespace kvlab::harness {

// Appends "*<n>\r\n" then "$<len>\r\n<arg>\r\n" for each argument to *out;
// `args` is any sized range of things that convert to std::string_view.
template <typename Args>
inline void AppendCommandOf(std::string* out, const Args& args) {
  char digits[24];
  auto append_length = [&](char marker, size_t length) {
    out->push_back(marker);
    const auto result = std::to_chars(digits, digits + sizeof(digits), length);
    out->append(digits, result.ptr);
    out->append("\r\n");
  };
  append_length('*', args.size());
  for (std::string_view arg : args) {
    append_length('$', arg.size());
    out->append(arg);
    out->append("\r\n");
  }
}

inline void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  AppendCommandOf(out, args);
}

}  // namespace kvlab::harness
