#include "server/key_peek.h"

#include <cstddef>

namespace kvlab {
namespace {

// Reads "<marker><digits>\r\n" at `at`; advances past it. Lengths beyond
// 9 digits are not worth a hint.
std::optional<size_t> ReadHeader(std::string_view input, size_t& at, char marker) {
  if (at >= input.size() || input[at] != marker) return std::nullopt;
  size_t value = 0;
  size_t digits = 0;
  size_t i = at + 1;
  for (; i < input.size() && input[i] >= '0' && input[i] <= '9'; ++i) {
    if (++digits > 9) return std::nullopt;
    value = value * 10 + static_cast<size_t>(input[i] - '0');
  }
  if (digits == 0 || i + 1 >= input.size() || input[i] != '\r' || input[i + 1] != '\n') {
    return std::nullopt;
  }
  at = i + 2;
  return value;
}

// Reads one bulk string at `at`; advances past it and its CRLF.
std::optional<std::string_view> ReadBulk(std::string_view input, size_t& at) {
  const std::optional<size_t> length = ReadHeader(input, at, '$');
  if (!length || input.size() - at < *length + 2) return std::nullopt;
  const std::string_view bytes = input.substr(at, *length);
  at += *length + 2;
  return bytes;
}

}  // namespace

std::optional<std::string_view> PeekFirstKey(std::string_view input) {
  size_t at = 0;
  const std::optional<size_t> elements = ReadHeader(input, at, '*');
  if (!elements || *elements < 2) return std::nullopt;
  if (!ReadBulk(input, at)) return std::nullopt;  // the command's name
  return ReadBulk(input, at);
}

}  // namespace kvlab
