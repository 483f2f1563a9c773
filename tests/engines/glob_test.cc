// GlobMatch: Redis's answers (src/util.c's stringmatchlen tests and the
// keyspace unit's patterns), agreement with a recursive reference matcher on
// random short patterns, and bounded work on the patterns of
// CVE-2022-36021 (a recursive matcher needs exponential time on them).
#include "engines/rules/glob.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

namespace kvlab {
namespace {

// The recursive matcher kvlab had (Redis's stringmatchlen() before its
// nesting limit): exponential in the stars, so only for short inputs. The
// oracle for the iterative one.
bool ReferenceMatch(const char* p, const char* p_end, const char* s, const char* s_end) {
  while (p < p_end && s < s_end) {
    switch (*p) {
      case '*':
        while (p + 1 < p_end && p[1] == '*') ++p;
        if (p + 1 == p_end) return true;
        for (; s < s_end; ++s) {
          if (ReferenceMatch(p + 1, p_end, s, s_end)) return true;
        }
        return ReferenceMatch(p + 1, p_end, s, s_end);
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
            if (*p == *s) matched = true;
          } else if (p + 2 < p_end && p[1] == '-') {
            char lo = p[0], hi = p[2];
            if (lo > hi) std::swap(lo, hi);
            if (*s >= lo && *s <= hi) matched = true;
            p += 2;
          } else if (*p == *s) {
            matched = true;
          }
          ++p;
        }
        if (p == p_end) --p;
        if (negate) matched = !matched;
        if (!matched) return false;
        ++s;
        break;
      }
      case '\\':
        if (p + 1 < p_end) ++p;
        [[fallthrough]];
      default:
        if (*p != *s) return false;
        ++s;
        break;
    }
    ++p;
  }
  while (p < p_end && *p == '*') ++p;
  return p == p_end && s == s_end;
}

bool Reference(std::string_view pattern, std::string_view text) {
  return ReferenceMatch(pattern.data(), pattern.data() + pattern.size(), text.data(),
                        text.data() + text.size());
}

TEST(GlobMatch, RedisKnownAnswers) {
  struct Case {
    const char* pattern;
    const char* text;
    bool nocase;
    bool expected;
  };
  const Case cases[] = {
      {"*", "", false, true},
      {"*", "anything", false, true},
      {"", "", false, true},
      {"", "a", false, false},
      {"a", "", false, false},
      {"h?llo", "hello", false, true},
      {"h?llo", "hllo", false, false},
      {"h*llo", "heeeello", false, true},
      {"h*llo", "hllo", false, true},
      {"h[ae]llo", "hallo", false, true},
      {"h[ae]llo", "hillo", false, false},
      {"h[^e]llo", "hallo", false, true},
      {"h[^e]llo", "hello", false, false},
      {"h[a-b]llo", "hbllo", false, true},
      {"h[b-a]llo", "hbllo", false, true},  // a reversed range is swapped
      {"h[a-b]llo", "hcllo", false, false},
      {"h\\*llo", "h*llo", false, true},
      {"h\\*llo", "hello", false, false},
      {"a*b", "ab", false, true},
      {"a*b", "axxxb", false, true},
      {"a*b", "axxxbc", false, false},
      {"*a*", "bab", false, true},
      {"[", "[", false, false},    // unterminated class, nothing in it
      {"[abc", "b", false, true},  // unterminated class runs to the end
      {"[abc", "bc", false, false},
      {"[^", "x", false, true},
      {"ab\\", "ab\\", false, true},  // trailing backslash is a literal
      {"[\\]]", "]", false, true},
      {"HeLLo", "hello", true, true},
      {"H[A-Z]llo", "hello", true, true},
      {"HeLLo", "hello", false, false},
      {"*?", "", false, false},
      {"*?", "x", false, true},
      {"a**b", "ab", false, true},
      // keyspace.tcl's "KEYS with pattern"
      {"foo*", "foo_a", false, true},
      {"foo*", "key_x", false, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.text, c.nocase), c.expected)
        << "pattern '" << c.pattern << "' text '" << c.text << "'";
  }
}

// Random patterns over a small alphabet (so that they match often) against
// random texts: the iterative matcher answers what the recursive one does.
TEST(GlobMatch, AgreesWithRecursiveReference) {
  std::mt19937 random(20221114);
  const std::string pattern_bytes = "ab*?[]^-\\";
  const std::string text_bytes = "ab-]^\\*";
  int matches = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string pattern(random() % 9, ' ');
    for (char& c : pattern) c = pattern_bytes[random() % pattern_bytes.size()];
    std::string text(random() % 8, ' ');
    for (char& c : text) c = text_bytes[random() % text_bytes.size()];
    const bool expected = Reference(pattern, text);
    matches += expected;
    ASSERT_EQ(GlobMatch(pattern, text, false), expected)
        << "pattern '" << pattern << "' text '" << text << "'";
  }
  // The generator is useful only if both answers occur often.
  EXPECT_GT(matches, 5000);
  EXPECT_LT(matches, 190000);
}

// CVE-2022-36021: nested stars against a long run of the same byte. The
// recursive matcher needs about C(len, stars) steps (centuries for these);
// the ctest TIMEOUT turns a regression into a failure, not a hang.
TEST(GlobMatch, NestedStarsAreBounded) {
  const std::string keys_pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
  EXPECT_FALSE(GlobMatch(keys_pattern, std::string(30, 'a') + "1", false));
  EXPECT_TRUE(GlobMatch(keys_pattern, std::string(30, 'a') + "b", false));
  // keyspace.tcl's "Regression for pattern matching long nested loops".
  std::string long_pattern;
  for (int i = 0; i < 1000; ++i) long_pattern += "*a";
  long_pattern += "*b";
  EXPECT_FALSE(GlobMatch(long_pattern, std::string(50000, 'a'), false));
  EXPECT_FALSE(GlobMatch(long_pattern, std::string(50000, 'a'), true));
  // Redis 7.0.15 stops past 1000 nested stars: 1000 star runs (and a
  // trailing one) still match, 1001 do not.
  std::string thousand;
  for (int i = 0; i < 1000; ++i) thousand += "*a";
  EXPECT_TRUE(GlobMatch(thousand + "*", std::string(2000, 'a'), false));
  EXPECT_FALSE(GlobMatch(thousand + "*a", std::string(2000, 'a'), false));
  // A pattern of 1,000 stars and classes against a 100 KB key.
  std::string classes;
  for (int i = 0; i < 1000; ++i) classes += "*[a-c]";
  EXPECT_TRUE(GlobMatch(classes, std::string(100000, 'b'), false));
  EXPECT_FALSE(GlobMatch(classes + "x", std::string(100000, 'b'), false));
}

}  // namespace
}  // namespace kvlab
