// ASCII case folding, as Redis does it: only 'A'..'Z' fold, whatever the
// locale, and other bytes (UTF-8 included) are left alone. The server's one
// lower-casing helper (command names, options, INFO sections, glob nocase,
// command-line values).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kvlab {

inline char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = AsciiLower(c);
  return lower;
}

}  // namespace kvlab
