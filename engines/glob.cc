#include "engines/glob.h"

#include "base/ascii_case.h"

namespace kvlab {
namespace {

char Fold(char c, bool nocase) { return nocase ? AsciiLower(c) : c; }

bool Match(const char* p, const char* p_end, const char* s, const char* s_end, bool nocase) {
  while (p < p_end && s < s_end) {
    switch (*p) {
      case '*':
        while (p + 1 < p_end && p[1] == '*') ++p;
        if (p + 1 == p_end) return true;
        for (; s < s_end; ++s) {
          if (Match(p + 1, p_end, s, s_end, nocase)) return true;
        }
        return Match(p + 1, p_end, s, s_end, nocase);
      case '?':
        ++s;
        break;
      case '[': {
        ++p;
        bool negate = p < p_end && *p == '^';
        if (negate) ++p;
        bool matched = false;
        while (p < p_end && *p != ']') {
          if (*p == '\\' && p + 1 < p_end) {
            ++p;
            if (Fold(*p, nocase) == Fold(*s, nocase)) matched = true;
          } else if (p + 2 < p_end && p[1] == '-') {
            char lo = Fold(p[0], nocase), hi = Fold(p[2], nocase), c = Fold(*s, nocase);
            if (lo > hi) std::swap(lo, hi);
            if (c >= lo && c <= hi) matched = true;
            p += 2;
          } else if (Fold(*p, nocase) == Fold(*s, nocase)) {
            matched = true;
          }
          ++p;
        }
        if (p == p_end) --p;  // unterminated class: the outer ++p ends the pattern
        if (negate) matched = !matched;
        if (!matched) return false;
        ++s;
        break;
      }
      case '\\':
        if (p + 1 < p_end) ++p;
        [[fallthrough]];
      default:
        if (Fold(*p, nocase) != Fold(*s, nocase)) return false;
        ++s;
        break;
    }
    ++p;
  }
  while (p < p_end && *p == '*') ++p;
  return p == p_end && s == s_end;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  return Match(pattern.data(), pattern.data() + pattern.size(), text.data(),
               text.data() + text.size(), nocase);
}

}  // namespace kvlab
