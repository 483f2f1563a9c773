// Bytes written as hexadecimal text in a test ("0a00ff" -> "\x0a\x00\xff"),
// for payloads captured from another program and pinned in a test.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kvlab::test {

inline std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return bytes;
}

}  // namespace kvlab::test
