#include "engines/rules/glob.h"

#include <utility>

#include "base/ascii_case.h"

namespace kvlab {
namespace {

// stringmatchlen_impl()'s nesting limit.
constexpr int kMaxNestedStars = 1000;

char Fold(char c, bool nocase) { return nocase ? AsciiLower(c) : c; }

// Matches the one pattern token at `*p` (not '*') against the byte `c`, with
// Redis's rules for classes and escapes (an unterminated class runs to the
// end of the pattern; a trailing backslash is a literal). Sets `*next` to the
// token's end either way.
bool TokenMatches(const char* p, const char* p_end, char c, bool nocase, const char** next) {
  switch (*p) {
    case '?':
      *next = p + 1;
      return true;
    case '[': {
      ++p;
      const bool negate = p < p_end && *p == '^';
      if (negate) ++p;
      bool matched = false;
      while (p < p_end && *p != ']') {
        if (*p == '\\' && p + 1 < p_end) {
          ++p;
          if (Fold(*p, nocase) == Fold(c, nocase)) matched = true;
        } else if (p + 2 < p_end && p[1] == '-') {
          char lo = Fold(p[0], nocase), hi = Fold(p[2], nocase);
          const char folded = Fold(c, nocase);
          if (lo > hi) std::swap(lo, hi);
          if (folded >= lo && folded <= hi) matched = true;
          p += 2;
        } else if (Fold(*p, nocase) == Fold(c, nocase)) {
          matched = true;
        }
        ++p;
      }
      *next = p < p_end ? p + 1 : p_end;  // past ']', or the end of an unterminated class
      return negate ? !matched : matched;
    }
    case '\\':
      if (p + 1 < p_end) ++p;
      [[fallthrough]];
    default:
      *next = p + 1;
      return Fold(*p, nocase) == Fold(c, nocase);
  }
}

}  // namespace

// Iterative star backtracking: every token but '*' consumes exactly one byte,
// so when a match fails only the most recent '*' needs to take one more byte;
// earlier stars never need to be revisited (whatever they could absorb, the
// later star can absorb too). Each text position is tried against each
// pattern position at most once per star, so the cost is O(|pattern| x
// |text|) whatever the pattern — Redis's recursive stringmatchlen() was
// exponential in the number of stars (CVE-2022-36021: KEYS "*a*a*...*b"
// against a long run of 'a's). The answers are the recursive matcher's.
bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  const char* p = pattern.data();
  const char* const p_end = p + pattern.size();
  const char* s = text.data();
  const char* const s_end = s + text.size();
  const char* star_p = nullptr;  // the pattern just after the last '*' seen
  const char* star_s = nullptr;  // where that star's absorbed bytes end
  int stars = 0;                 // star runs entered so far
  while (s < s_end) {
    if (p < p_end && *p == '*') {
      while (p < p_end && *p == '*') ++p;
      if (p == p_end) return true;
      // Redis 7.0.15 gives up past 1000 nested stars (its fix for the CVE):
      // a match that needs the 1001st star run is no match there, so none
      // here. Stars are entered in pattern order, so the count only grows.
      if (++stars > kMaxNestedStars) return false;
      star_p = p;
      star_s = s;
      continue;
    }
    const char* next = nullptr;
    if (p < p_end && TokenMatches(p, p_end, *s, nocase, &next)) {
      p = next;
      ++s;
      continue;
    }
    if (star_p == nullptr) return false;
    p = star_p;
    s = ++star_s;
  }
  while (p < p_end && *p == '*') ++p;
  return p == p_end;
}

}  // namespace kvlab
