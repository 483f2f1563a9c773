// The zset commands (Redis 7.0's t_zset.c), written once for every engine.
//
// Scores follow Redis 7.0: parsed with strtod's rules (string2d() for a
// score, zslParseRange() for a range bound), replied as bulk strings in
// "%.17g" ("inf", "-inf"), never NaN.
#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "engines/calls/call_support.h"
#include "engines/calls/container_tables.h"
#include "engines/containers/set_value.h"
#include "engines/calls/zset_algebra.h"
#include "engines/containers/zset_text.h"
#include "engines/containers/zset_value.h"

namespace kvlab {

namespace {

constexpr std::string_view kNanError = "ERR resulting score is not a number (NaN)";
constexpr std::string_view kRangeNotFloatError = "ERR min or max is not a float";
constexpr std::string_view kLexRangeError = "ERR min or max not valid string range item";
constexpr std::string_view kNotPositiveError = "ERR value is out of range, must be positive";

// One bound of zslParseRange(): a C string (it ends at a NUL), "(" makes it
// exclusive, then strtod must reach the end and not give NaN.
bool ParseScoreBound(std::string_view arg, double* bound, bool* exclusive) {
  const std::string text(arg);
  const char* start = text.c_str();
  *exclusive = start[0] == '(';
  if (*exclusive) ++start;
  char* end = nullptr;
  *bound = std::strtod(start, &end);
  return end[0] == '\0' && !std::isnan(*bound);
}

struct ScoreRange {
  double min = 0, max = 0;
  bool min_exclusive = false, max_exclusive = false;
  bool AtLeastMin(double score) const { return min_exclusive ? score > min : score >= min; }
  bool AtMostMax(double score) const { return max_exclusive ? score < max : score <= max; }
};

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* range) {
  return ParseScoreBound(min, &range->min, &range->min_exclusive) &&
         ParseScoreBound(max, &range->max, &range->max_exclusive);
}

// zslParseLexRangeItem(): "-" and "+" (a C string: "+\0..." counts), or a
// "(" / "[" prefixed member.
struct LexBound {
  enum Kind : uint8_t { kMin, kMember, kMax } kind = kMember;
  std::string_view member;
  bool exclusive = false;
};

bool ParseLexBound(std::string_view arg, LexBound* bound) {
  if (arg.empty()) return false;
  switch (arg[0]) {
    case '+':
    case '-':
      if (arg.size() > 1 && arg[1] != '\0') return false;
      bound->kind = arg[0] == '+' ? LexBound::kMax : LexBound::kMin;
      bound->exclusive = true;
      return true;
    case '(':
    case '[':
      bound->kind = LexBound::kMember;
      bound->member = arg.substr(1);
      bound->exclusive = arg[0] == '(';
      return true;
    default:
      return false;
  }
}

// sdscmplex(): the "-" and "+" strings below and above every member.
int CompareLex(const LexBound& a, const LexBound& b) {
  if (a.kind == b.kind && a.kind != LexBound::kMember) return 0;
  if (a.kind == LexBound::kMin || b.kind == LexBound::kMax) return -1;
  if (a.kind == LexBound::kMax || b.kind == LexBound::kMin) return 1;
  return a.member.compare(b.member);
}

struct LexRange {
  LexBound min, max;
  bool AtLeastMin(std::string_view member) const {
    const int cmp = CompareLex(LexBound{LexBound::kMember, member, false}, min);
    return min.exclusive ? cmp > 0 : cmp >= 0;
  }
  bool AtMostMax(std::string_view member) const {
    const int cmp = CompareLex(LexBound{LexBound::kMember, member, false}, max);
    return max.exclusive ? cmp < 0 : cmp <= 0;
  }
};

// ZADD and ZINCRBY (zaddGenericCommand(): ZINCRBY is ZADD with INCR, so
// its increment is read as an option too).
void ZAddGeneric(ContainerCall& call, bool incr) {
  bool nx = false, xx = false, gt = false, lt = false, ch = false;
  size_t first = 2;
  for (; first < call.args.size(); ++first) {
    const std::string_view option = call.args[first];
    if (OptionIs(option, "nx"))
      nx = true;
    else if (OptionIs(option, "xx"))
      xx = true;
    else if (OptionIs(option, "ch"))
      ch = true;
    else if (OptionIs(option, "incr"))
      incr = true;
    else if (OptionIs(option, "gt"))
      gt = true;
    else if (OptionIs(option, "lt"))
      lt = true;
    else
      break;
  }
  const size_t left = call.args.size() - first;
  if (left % 2 != 0 || left == 0) return call.Error(kContainerSyntaxError);
  const size_t pairs = left / 2;
  if (nx && xx) return call.Error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return call.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && pairs > 1) {
    return call.Error("ERR INCR option supports a single increment-element pair");
  }
  std::vector<double> scores(pairs);
  for (size_t i = 0; i < pairs; ++i) {
    if (!ParseZSetScore(call.args[first + 2 * i], &scores[i])) {
      return call.Error(kContainerNotFloatError);
    }
  }
  if (!call.CheckType()) return;

  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  ZSetValue* zset = call.Find<ZSetValue>();
  if (zset == nullptr && !xx) zset = &call.FindOrCreate<ZSetValue>();
  for (size_t i = 0; zset != nullptr && i < pairs; ++i) {
    const std::string_view member = call.args[first + 2 * i + 1];
    double next = scores[i];
    if (const std::optional<double> current = zset->Score(member)) {
      if (nx) continue;
      if (incr) {
        next += *current;
        if (std::isnan(next)) {
          if (added + updated != 0) call.Changed();
          return call.Error(kNanError);
        }
      }
      if ((lt && next >= *current) || (gt && next <= *current)) continue;
      if (next != *current) {
        zset->Update(member, next);
        ++updated;
      }
    } else {
      if (xx) continue;
      zset->Insert(member, next);
      ++added;
    }
    ++processed;
    score = next;  // INCR's reply: -0 stays -0 even where it is stored as 0
  }
  if (added + updated != 0) call.Changed();
  if (incr) {
    if (processed != 0) return call.List().Double(score);
    return call.Nil();
  }
  call.Integer(ch ? added + updated : added);
}

void ZAdd(ContainerCall& call) { ZAddGeneric(call, false); }
void ZIncrBy(ContainerCall& call) { ZAddGeneric(call, true); }

void ZRem(ContainerCall& call) {
  RemoveEach<ZSetValue>(
      call, [](ZSetValue& zset, std::string_view member) { return zset.Remove(member); });
}

void ZScore(ContainerCall& call) {
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  const std::optional<double> score = zset ? zset->Score(call.args[2]) : std::nullopt;
  if (score) return call.List().Double(*score);
  call.Nil();
}

void ZMScore(ContainerCall& call) {
  ReplyPerArgument<ZSetValue>(
      call, [](const ZSetValue* zset, std::string_view member, ReplyList& reply) {
        const std::optional<double> score = zset ? zset->Score(member) : std::nullopt;
        if (score) return reply.Double(*score);
        reply.Nil();
      });
}

void ZCount(ContainerCall& call) {
  ScoreRange range;
  if (!ParseScoreRange(call.args[2], call.args[3], &range)) return call.Error(kRangeNotFloatError);
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  if (!zset) return call.Integer(0);
  const size_t below_min = zset->CountBelow(range.min, range.min_exclusive);
  const size_t up_to_max = zset->CountBelow(range.max, !range.max_exclusive);
  call.Integer(up_to_max > below_min ? static_cast<int64_t>(up_to_max - below_min) : 0);
}

template <bool kReverse>
void ZRankOf(ContainerCall& call) {
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  const std::optional<size_t> rank = zset ? zset->Rank(call.args[2]) : std::nullopt;
  if (!rank) return call.Nil();
  call.Integer(static_cast<int64_t>(kReverse ? zset->Size() - 1 - *rank : *rank));
}

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

// Emits the members (and scores) a range walk visits: with scores, an
// array of (member, score) pairs (nested in RESP3, as Redis's
// `c->resp > 2` branches do).
class RangeReply {
 public:
  RangeReply(ContainerCall& call, bool with_scores)
      : reply_(call.List()),
        with_scores_(with_scores),
        at_(with_scores ? reply_.BeginArrayOfPairs() : reply_.BeginArray()) {}
  void Add(std::string_view member, double score) {
    if (with_scores_) reply_.Pair();
    reply_.Bulk(member);
    if (with_scores_) reply_.Double(score);
    ++count_;
  }
  ~RangeReply() { reply_.EndArray(at_, count_); }

 private:
  ReplyList& reply_;
  const bool with_scores_;
  const size_t at_;
  size_t count_ = 0;
};

void RangeByRank(ContainerCall& call, const ZSetValue& zset, int64_t start, int64_t end,
                 bool with_scores, bool reverse) {
  const auto size = static_cast<int64_t>(zset.Size());
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  RangeReply reply(call, with_scores);
  if (start > end || start >= size) return;
  if (end >= size) end = size - 1;
  int64_t left = end - start + 1;
  const size_t first = static_cast<size_t>(reverse ? size - 1 - start : start);
  zset.Walk(first, reverse, [&](std::string_view member, double score) {
    reply.Add(member, score);
    return --left > 0;
  });
}

// visit(member, score) -> bool for the members in `range`, ascending
// (descending when `reverse`), past the first `offset`, at most `limit`
// (-1: all), until visit returns false.
template <typename Visit>
void VisitScoreRange(const ZSetValue& zset, const ScoreRange& range, int64_t offset, int64_t limit,
                     bool reverse, Visit&& visit) {
  if (offset < 0 || zset.Size() == 0) return;  // Redis's skip loop runs past the end
  // The first member in range from the walk's side.
  size_t first;
  if (!reverse) {
    first = zset.CountBelow(range.min, range.min_exclusive);
    if (first >= zset.Size()) return;
  } else {
    const size_t through = zset.CountBelow(range.max, !range.max_exclusive);
    if (through == 0) return;
    first = through - 1;
  }
  zset.Walk(first, reverse, [&](std::string_view member, double score) {
    if (offset > 0) {
      --offset;
      return true;
    }
    if (limit == 0) return false;
    if (!(reverse ? range.AtLeastMin(score) : range.AtMostMax(score))) return false;
    if (limit > 0) --limit;  // negative: no limit (and LLONG_MIN must not wrap)
    return visit(member, score);
  });
}

void RangeByScore(ContainerCall& call, const ZSetValue& zset, const ScoreRange& range,
                  int64_t offset, int64_t limit, bool with_scores, bool reverse) {
  RangeReply reply(call, with_scores);
  VisitScoreRange(zset, range, offset, limit, reverse, [&](std::string_view member, double score) {
    reply.Add(member, score);
    return true;
  });
}

// genericZrangebylexCommand() over a listpack: the first member from the
// walk's side that passes the near bound, then members while they pass the
// far one (the same on a skiplist whose members are in lex order, the only
// case Redis defines; its skiplist search differs otherwise).
// visit(member, score) -> bool as VisitScoreRange()'s, for a lex range.
template <typename Visit>
void VisitLexRange(const ZSetValue& zset, const LexRange& range, int64_t offset, int64_t limit,
                   bool reverse, Visit&& visit) {
  if (offset < 0 || zset.Size() == 0) return;
  const int cmp = CompareLex(range.min, range.max);
  if (cmp > 0 || (cmp == 0 && (range.min.exclusive || range.max.exclusive))) return;
  const size_t size = zset.Size();
  bool last_at_least_min = false, first_at_most_max = false;
  zset.Walk(size - 1, false, [&](std::string_view member, double) {
    last_at_least_min = range.AtLeastMin(member);
    return false;
  });
  zset.Walk(0, false, [&](std::string_view member, double) {
    first_at_most_max = range.AtMostMax(member);
    return false;
  });
  if (!last_at_least_min || !first_at_most_max) return;
  // Where every score is equal (the case Redis defines) the members are in
  // lex order: start at the near bound's rank, found in O(log n), instead
  // of scanning to it. The scan below then stops at once, as it would.
  size_t start = reverse ? size - 1 : 0;
  double first_score = 0, last_score = 0;
  zset.Walk(0, false, [&](std::string_view, double score) {
    first_score = score;
    return false;
  });
  zset.Walk(size - 1, false, [&](std::string_view, double score) {
    last_score = score;
    return false;
  });
  const LexBound& near = reverse ? range.max : range.min;
  if (first_score == last_score && near.kind == LexBound::kMember) {
    // Forward: members below [min (or at/below (min) fail; reverse: those
    // above [max (or at/above (max).
    const size_t rank = zset.CountBefore(first_score, near.member, reverse != near.exclusive);
    if (!reverse) {
      if (rank >= size) return;
      start = rank;
    } else {
      if (rank == 0) return;
      start = rank - 1;
    }
  }
  bool found = false;
  zset.Walk(start, reverse, [&](std::string_view member, double score) {
    if (!found) {
      if (!(reverse ? range.AtMostMax(member) : range.AtLeastMin(member))) return true;
      found = true;
      if (!(reverse ? range.AtLeastMin(member) : range.AtMostMax(member))) return false;
    }
    if (offset > 0) {
      --offset;
      return true;
    }
    if (limit == 0) return false;
    if (!(reverse ? range.AtLeastMin(member) : range.AtMostMax(member))) return false;
    if (limit > 0) --limit;  // negative: no limit (and LLONG_MIN must not wrap)
    return visit(member, score);
  });
}

void RangeByLex(ContainerCall& call, const ZSetValue& zset, const LexRange& range, int64_t offset,
                int64_t limit, bool reverse) {
  RangeReply reply(call, false);
  VisitLexRange(zset, range, offset, limit, reverse, [&](std::string_view member, double) {
    reply.Add(member, 0);
    return true;
  });
}

// zrangeGenericCommand(): ZRANGE, ZRANGEBYSCORE and ZREVRANGE.
void ZRangeGeneric(ContainerCall& call, RangeType type, Direction direction) {
  bool with_scores = false;
  int64_t offset = 0, limit = -1;
  for (size_t j = 4; j < call.args.size(); ++j) {
    const size_t left = call.args.size() - j - 1;
    const std::string_view arg = call.args[j];
    if (OptionIs(arg, "withscores")) {
      with_scores = true;
    } else if (OptionIs(arg, "limit") && left >= 2) {
      if (!ParseInteger(call, call.args[j + 1], &offset) ||
          !ParseInteger(call, call.args[j + 2], &limit)) {
        return;
      }
      j += 2;
    } else if (direction == Direction::kAuto && OptionIs(arg, "rev")) {
      direction = Direction::kReverse;
    } else if (type == RangeType::kAuto && OptionIs(arg, "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && OptionIs(arg, "byscore")) {
      type = RangeType::kScore;
    } else {
      return call.Error(kContainerSyntaxError);
    }
  }
  if (direction == Direction::kAuto) direction = Direction::kForward;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (limit != -1 && type == RangeType::kRank) {
    return call.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && type == RangeType::kLex) {
    return call.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  const bool reverse = direction == Direction::kReverse;
  size_t min_index = 2, max_index = 3;
  if (reverse && type != RangeType::kRank) std::swap(min_index, max_index);

  int64_t start = 0, end = 0;
  ScoreRange scores;
  LexRange lex;
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      if (!ParseInteger(call, call.args[min_index], &start) ||
          !ParseInteger(call, call.args[max_index], &end)) {
        return;
      }
      break;
    case RangeType::kScore:
      if (!ParseScoreRange(call.args[min_index], call.args[max_index], &scores)) {
        return call.Error(kRangeNotFloatError);
      }
      break;
    case RangeType::kLex:
      if (!ParseLexBound(call.args[min_index], &lex.min) ||
          !ParseLexBound(call.args[max_index], &lex.max)) {
        return call.Error(kLexRangeError);
      }
      break;
  }
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  if (!zset) return call.List().Array(0);
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      return RangeByRank(call, *zset, start, end, with_scores, reverse);
    case RangeType::kScore:
      return RangeByScore(call, *zset, scores, offset, limit, with_scores, reverse);
    case RangeType::kLex:
      return RangeByLex(call, *zset, lex, offset, limit, reverse);
  }
}

void ZRange(ContainerCall& call) { ZRangeGeneric(call, RangeType::kAuto, Direction::kAuto); }
void ZRangeByScore(ContainerCall& call) {
  ZRangeGeneric(call, RangeType::kScore, Direction::kForward);
}
void ZRevRange(ContainerCall& call) { ZRangeGeneric(call, RangeType::kRank, Direction::kReverse); }

void ZRevRangeByScore(ContainerCall& call) {
  ZRangeGeneric(call, RangeType::kScore, Direction::kReverse);
}
void ZRangeByLex(ContainerCall& call) { ZRangeGeneric(call, RangeType::kLex, Direction::kForward); }
void ZRevRangeByLex(ContainerCall& call) {
  ZRangeGeneric(call, RangeType::kLex, Direction::kReverse);
}

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* range) {
  return ParseLexBound(min, &range->min) && ParseLexBound(max, &range->max);
}

void ZLexCount(ContainerCall& call) {
  LexRange range;
  if (!ParseLexRange(call.args[2], call.args[3], &range)) return call.Error(kLexRangeError);
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  int64_t count = 0;
  if (zset) {
    VisitLexRange(*zset, range, 0, -1, false, [&](std::string_view, double) {
      ++count;
      return true;
    });
  }
  call.Integer(count);
}

// Removes `members` (copies: removing invalidates a walk's views) and
// replies how many went.
void RemoveMembers(ContainerCall& call, ZSetValue& zset, const std::vector<std::string>& members) {
  for (const std::string& member : members) zset.Remove(member);
  if (!members.empty()) call.Changed();
  call.Integer(static_cast<int64_t>(members.size()));
}

// zremrangeGenericCommand(): the range is parsed first, then the type is
// checked; a missing key removes nothing.
template <RangeType kType>
void ZRemRange(ContainerCall& call) {
  int64_t start = 0, end = 0;
  ScoreRange scores;
  LexRange lex;
  if constexpr (kType == RangeType::kRank) {
    if (!ParseInteger(call, call.args[2], &start) || !ParseInteger(call, call.args[3], &end)) {
      return;
    }
  } else if constexpr (kType == RangeType::kScore) {
    if (!ParseScoreRange(call.args[2], call.args[3], &scores)) {
      return call.Error(kRangeNotFloatError);
    }
  } else {
    if (!ParseLexRange(call.args[2], call.args[3], &lex)) return call.Error(kLexRangeError);
  }
  if (!call.CheckType()) return;
  ZSetValue* zset = call.Find<ZSetValue>();
  if (!zset) return call.Integer(0);
  std::vector<std::string> doomed;
  auto collect = [&](std::string_view member, double) {
    doomed.emplace_back(member);
    return true;
  };
  if constexpr (kType == RangeType::kRank) {
    const auto size = static_cast<int64_t>(zset->Size());
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    if (start > end || start >= size) return call.Integer(0);
    if (end >= size) end = size - 1;
    int64_t left = end - start + 1;
    zset->Walk(static_cast<size_t>(start), false, [&](std::string_view member, double score) {
      collect(member, score);
      return --left > 0;
    });
  } else if constexpr (kType == RangeType::kScore) {
    VisitScoreRange(*zset, scores, 0, -1, false, collect);
  } else {
    VisitLexRange(*zset, lex, 0, -1, false, collect);
  }
  RemoveMembers(call, *zset, doomed);
}

// ZRANDMEMBER key [count [WITHSCORES]] (zrandmemberCommand()): a negative
// count may repeat members, a positive one picks distinct members. Which
// members, and their order, are random (Redis's are too).
void ZRandMember(ContainerCall& call) {
  int64_t count = 0;
  bool with_scores = false;
  if (call.args.size() >= 3) {
    if (!ParseInteger(call, call.args[2], &count)) return;
    if (count == INT64_MIN) return call.Error(kContainerCountRangeError);
    if (call.args.size() > 4 || (call.args.size() == 4 && !OptionIs(call.args[3], "withscores"))) {
      return call.Error(kContainerSyntaxError);
    }
    with_scores = call.args.size() == 4;
    // Twice the count must not overflow the reply's length (CVE-2023-22458).
    if (with_scores && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
      return call.Error("ERR value is out of range");
    }
  }
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  if (call.args.size() < 3) {
    if (!zset) return call.Nil();
    std::string member;
    zset->Walk(SetValue::RandomIndex(zset->Size()), false, [&](std::string_view m, double) {
      member.assign(m);
      return false;
    });
    return call.Bulk(member);
  }
  if (!zset || count == 0) return call.List().Array(0);
  const size_t size = zset->Size();
  RangeReply reply(call, with_scores);
  auto add_at = [&](size_t rank) {
    zset->Walk(rank, false, [&](std::string_view member, double score) {
      reply.Add(member, score);
      return false;
    });
  };
  if (count < 0 || count == 1) {
    // `count` independent picks, repeats allowed.
    for (uint64_t left = count < 0 ? -static_cast<uint64_t>(count) : 1; left > 0; --left) {
      add_at(SetValue::RandomIndex(size));
    }
    return;
  }
  if (static_cast<uint64_t>(count) >= size) {
    // The whole sorted set, from the highest as Redis's zuiNext() walks.
    return zset->Walk(size - 1, true, [&](std::string_view member, double score) {
      reply.Add(member, score);
      return true;
    });
  }
  // `count` distinct random members (a partial shuffle).
  std::vector<size_t> order(size);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
    std::swap(order[i], order[i + SetValue::RandomIndex(size - i)]);
    add_at(order[i]);
  }
}

// Removes the `count` lowest members (highest when `max`), handing each to
// emit(member, score) before it goes.
template <typename Emit>
void PopEach(ZSetValue& zset, size_t count, bool max, Emit&& emit) {
  for (size_t i = 0; i < count; ++i) {
    std::string member;
    double score = 0;
    zset.Walk(max ? zset.Size() - 1 : 0, max, [&](std::string_view m, double s) {
      member.assign(m);
      score = s;
      return false;
    });
    emit(member, score);
    zset.Remove(member);
  }
}

// ZPOPMIN and ZPOPMAX: key [count].
template <bool kMax>
void ZPop(ContainerCall& call) {
  if (call.args.size() > 3) return call.Error(kContainerSyntaxError);
  int64_t count = 1;
  if (call.args.size() == 3) {
    const std::optional<int64_t> parsed = ParseRedisInt64(call.args[2]);
    if (!parsed || *parsed < 0) return call.Error(kNotPositiveError);
    count = *parsed;
  }
  if (!call.CheckType()) return;
  ZSetValue* zset = call.Find<ZSetValue>();
  if (!zset || count == 0) return call.List().Array(0);
  const size_t popped = std::min(static_cast<size_t>(count), zset->Size());
  ReplyList& reply = call.List();
  // With a count RESP3 nests each pair (zpopMinMaxCommand()'s
  // use_nested_array); a plain pop stays one flat pair.
  const bool pairs = call.args.size() == 3;
  if (pairs) {
    reply.ArrayOfPairs(popped);
  } else {
    reply.Array(2);
  }
  PopEach(*zset, popped, kMax, [&](std::string_view member, double score) {
    if (pairs) reply.Pair();
    reply.Bulk(member);
    reply.Double(score);
  });
  call.Changed();
}

// ZMPOP's step on one of its keys (zset_algebra.h): the arguments are the
// whole ZMPOP command, which the server validated; a missing key answers
// nil so that the next key's step runs.
void ZMPopStep(ContainerCall& call) {
  if (!call.CheckType()) return;
  ZSetValue* zset = call.Find<ZSetValue>();
  if (!zset) return call.Nil();
  const auto where = static_cast<size_t>(*ParseRedisInt64(call.args[1])) + 2;
  const bool max = OptionIs(call.args[where], "max");
  size_t count = 1;  // ... MIN|MAX [COUNT count]
  if (where + 2 < call.args.size())
    count = static_cast<size_t>(*ParseRedisInt64(call.args[where + 2]));
  const size_t popped = std::min(count, zset->Size());
  ReplyList& reply = call.List();
  reply.Array(popped);
  PopEach(*zset, popped, max, [&](std::string_view member, double score) {
    reply.Array(2);  // nested in RESP2 too (genericZpopCommand's use_nested_array)
    reply.Bulk(member);
    reply.Double(score);
  });
  call.Changed();
}

void ZScan(ContainerCall& call) {
  ScanContainer<ZSetValue>(call, "listpack", [](const ZSetValue& zset, auto& offer) {
    zset.Walk(0, false, [&](std::string_view member, double score) {
      offer(member, zset.ScanScoreText(score));
      return true;
    });
  });
}

using namespace command_flags;
constexpr ValueType kZSet = ValueType::kZSet;

constexpr ContainerCommand kZSetCommands[] = {
    {"zadd", -4, kZSet, kGrow, ZAdd},
    {"zincrby", 4, kZSet, kGrow, ZIncrBy},
    {"zrem", -3, kZSet, kWrite, ZRem},
    {"zscore", 3, kZSet, kRead, ZScore},
    {"zmscore", -3, kZSet, kRead, ZMScore},
    {"zcard", 2, kZSet, kRead, ReplySize<ZSetValue>},
    {"zcount", 4, kZSet, kRead, ZCount},
    {"zrank", 3, kZSet, kRead, ZRankOf<false>},
    {"zrevrank", 3, kZSet, kRead, ZRankOf<true>},
    {"zrange", -4, kZSet, kRead, ZRange},
    {"zrangebyscore", -4, kZSet, kRead, ZRangeByScore},
    {"zrevrange", -4, kZSet, kRead, ZRevRange},
    {"zrevrangebyscore", -4, kZSet, kRead, ZRevRangeByScore},
    {"zrangebylex", -4, kZSet, kRead, ZRangeByLex},
    {"zrevrangebylex", -4, kZSet, kRead, ZRevRangeByLex},
    {"zlexcount", 4, kZSet, kRead, ZLexCount},
    {"zremrangebyscore", 4, kZSet, kWrite, ZRemRange<RangeType::kScore>},
    {"zremrangebyrank", 4, kZSet, kWrite, ZRemRange<RangeType::kRank>},
    {"zremrangebylex", 4, kZSet, kWrite, ZRemRange<RangeType::kLex>},
    {"zrandmember", -2, kZSet, kRead, ZRandMember},
    {"zpopmin", -2, kZSet, kWrite, ZPop<false>},
    {"zpopmax", -2, kZSet, kWrite, ZPop<true>},
    {"zscan", -3, kZSet, kRead, ZScan},
    {kZMPopStep, 2, kZSet, kWrite | kContainerInternal | kContainerGuard, ZMPopStep},
};

}  // namespace

std::span<const ContainerCommand> ZSetCommands() { return kZSetCommands; }

}  // namespace kvlab
