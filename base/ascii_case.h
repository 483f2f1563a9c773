// ASCII case folding, as Redis does it: only 'A'..'Z' fold, whatever the
// locale, and other bytes (UTF-8 included) are left alone. The one
// lower-casing helper of the server (command names, options, INFO sections,
// command-line values) and of the engines' glob nocase.
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

inline std::string AsciiUppercase(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return upper;
}

}  // namespace kvlab
