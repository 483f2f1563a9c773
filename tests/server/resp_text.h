// What the differential tests write and print: a command encoded as a RESP
// array, and bytes escaped so a failure message shows CR, LF and NUL.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab::test {

inline std::string Escape(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\r')
      out += "\\r";
    else if (c == '\n')
      out += "\\n";
    else if (c < 32 || c > 126) {
      char hex[8];
      snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

inline std::string Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

}  // namespace kvlab::test
