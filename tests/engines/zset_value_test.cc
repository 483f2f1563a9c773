// ZSetValue against a model (std::set of (score, member) + std::map),
// through the listpack -> skiplist conversion: order, ranks, CountBelow,
// walks both ways, Clone(), and the encodings' limits.
#include "engines/containers/zset_value.h"
#include "engines/containers/encoding_limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kvlab {
namespace {

using Model = std::set<std::pair<double, std::string>>;

std::vector<std::pair<double, std::string>> Walked(const ZSetValue& zset, size_t rank,
                                                   bool reverse) {
  std::vector<std::pair<double, std::string>> out;
  if (zset.Size() == 0) return out;
  zset.Walk(rank, reverse, [&](std::string_view member, double score) {
    out.emplace_back(score, std::string(member));
    return true;
  });
  return out;
}

void ExpectMatches(const ZSetValue& zset, const Model& model,
                   const std::map<std::string, double>& scores) {
  ASSERT_EQ(zset.Size(), model.size());
  const std::vector<std::pair<double, std::string>> ordered(model.begin(), model.end());
  ASSERT_EQ(Walked(zset, 0, false), ordered);
  if (!ordered.empty()) {
    std::vector<std::pair<double, std::string>> reversed(ordered.rbegin(), ordered.rend());
    ASSERT_EQ(Walked(zset, ordered.size() - 1, true), reversed);
    const size_t mid = ordered.size() / 2;
    ASSERT_EQ(Walked(zset, mid, false).front(), ordered[mid]);
    ASSERT_EQ(Walked(zset, mid, true).size(), mid + 1);
  }
  for (size_t i = 0; i < ordered.size(); i += 7) {
    ASSERT_EQ(zset.Rank(ordered[i].second), i);
    ASSERT_EQ(zset.Score(ordered[i].second), ordered[i].first);
  }
  ASSERT_FALSE(zset.Rank("absent"));
  for (const double probe : {-4.0, -1.0, 0.0, 0.5, 2.0, 3.0, 9.0}) {
    size_t below = 0, through = 0;
    for (const auto& [score, member] : ordered) {
      below += score < probe;
      through += score <= probe;
    }
    ASSERT_EQ(zset.CountBelow(probe, false), below) << probe;
    ASSERT_EQ(zset.CountBelow(probe, true), through) << probe;
  }
  (void)scores;
}

TEST(ZSetValueTest, MatchesModelThroughConversion) {
  std::mt19937_64 rng(7);
  ZSetValue zset;
  Model model;
  std::map<std::string, double> scores;
  bool converted = false;
  for (int step = 0; step < 3000; ++step) {
    const std::string member = "m" + std::to_string(rng() % 200);
    const double score = static_cast<double>(static_cast<int>(rng() % 9) - 4) / 2;
    const int op = static_cast<int>(rng() % 10);
    const auto found = scores.find(member);
    if (op < 6) {
      if (found == scores.end()) {
        zset.Insert(member, score);
        scores[member] = score;
      } else {
        zset.Update(member, score);
        model.erase({found->second, member});
        found->second = score;
      }
      model.insert({score, member});
    } else if (op < 8) {
      ASSERT_EQ(zset.Remove(member), found != scores.end());
      if (found != scores.end()) {
        model.erase({found->second, member});
        scores.erase(found);
      }
    }
    if (zset.Size() > EncodingLimits::kDefaultZSetEntries) converted = true;
    ASSERT_EQ(zset.Encoding(), converted ? "skiplist" : "listpack") << step;
    if (step % 50 == 0) ExpectMatches(zset, model, scores);
  }
  ASSERT_TRUE(converted);
  ExpectMatches(zset, model, scores);
  const std::unique_ptr<Container> copy = zset.Clone();
  ASSERT_EQ(copy->Encoding(), "skiplist");
  ExpectMatches(static_cast<const ZSetValue&>(*copy), model, scores);
}

TEST(ZSetValueTest, EncodingLimitsAndScoreTexts) {
  ZSetValue zset;
  for (int i = 0; i < 128; ++i) zset.Insert("m" + std::to_string(i), i);
  EXPECT_EQ(zset.Encoding(), "listpack");
  EXPECT_EQ(zset.ScanScoreText(1e17), "100000000000000000");
  EXPECT_EQ(zset.ScanScoreText(9.3e18), "9.3e+18");  // past 2^62: "%.17g"
  EXPECT_EQ(zset.ScanScoreText(0.1), "0.10000000000000001");
  EXPECT_EQ(zset.ScanScoreText(std::numeric_limits<double>::infinity()), "inf");
  zset.Insert("m128", 1);
  EXPECT_EQ(zset.Encoding(), "skiplist");
  EXPECT_EQ(zset.ScanScoreText(1e17), "1e+17");
  for (int i = 0; i <= 128; ++i) zset.Remove("m" + std::to_string(i));
  EXPECT_EQ(zset.Size(), 0u);
  EXPECT_EQ(zset.Encoding(), "skiplist");  // never back

  ZSetValue wide;
  wide.Insert(std::string(65, 'x'), 1);
  EXPECT_EQ(wide.Encoding(), "skiplist");
  ZSetValue narrow;
  narrow.Insert(std::string(64, 'x'), -0.0);
  EXPECT_EQ(narrow.Encoding(), "listpack");
  EXPECT_FALSE(std::signbit(*narrow.Score(std::string(64, 'x'))));  // a listpack: 0
  wide.Insert("z", -0.0);
  EXPECT_TRUE(std::signbit(*wide.Score("z")));  // a skiplist keeps -0
}

TEST(ZSetValueTest, TiesOrderByMemberBytes) {
  ZSetValue zset;
  for (const char* member : {"b", "a", "ab", "", "B"}) zset.Insert(member, 1);
  zset.Insert(std::string("a\0", 2), 1);
  zset.Insert("z", 0);
  std::vector<std::string> order;
  zset.Walk(0, false, [&](std::string_view member, double) {
    order.emplace_back(member);
    return true;
  });
  EXPECT_EQ(order, (std::vector<std::string>{"z", "", "B", "a", std::string("a\0", 2), "ab", "b"}));
  EXPECT_EQ(zset.CountBefore(1, "a", false), 3u);  // z, "", B
  EXPECT_EQ(zset.CountBefore(1, "a", true), 4u);
  EXPECT_EQ(zset.CountBefore(1, "aa", true), 5u);  // not a member
  EXPECT_EQ(zset.CountBefore(0, "zz", true), 1u);
  for (int i = 0; i < 130; ++i) zset.Insert("n" + std::to_string(i), 1);
  ASSERT_EQ(zset.Encoding(), "skiplist");
  EXPECT_EQ(zset.CountBefore(1, "a", false), 3u);
  EXPECT_EQ(zset.CountBefore(1, "a", true), 4u);
  EXPECT_EQ(zset.CountBefore(1, "aa", true), 5u);
  EXPECT_EQ(zset.CountBefore(1, "n0", true), 8u);  // after b
}

}  // namespace
}  // namespace kvlab
