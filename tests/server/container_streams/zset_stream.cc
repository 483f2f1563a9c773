// The sorted-set commands' random stream for the container differential
// test: every option of ZADD (NX XX GT LT CH INCR, in any order, with their
// conflicts), ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZRANK,
// ZREVRANK, ZRANGE (ranks, BYSCORE, BYLEX, REV, LIMIT, WITHSCORES),
// ZRANGEBYSCORE, ZREVRANGE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX,
// ZLEXCOUNT, ZREMRANGEBYSCORE/RANK/LEX, ZRANDMEMBER (by shape), ZPOPMIN,
// ZPOPMAX and ZSCAN, with valid and invalid scores and bounds, ties,
// infinities and ZADDs past 128 members; and the multi-key commands
// (ZUNION ZINTER ZDIFF ZINTERCARD, their STORE forms with WEIGHTS and
// AGGREGATE, ZRANGESTORE, ZMPOP, and the blocking BZPOPMIN, BZPOPMAX and
// BZMPOP) over sorted sets, sets, strings and
// missing keys, with their numkeys and option errors.
//
// BYLEX is only sent to "zlex", whose members all score 0: on a skiplist of
// mixed scores Redis's lex search depends on its random node levels.
#include <algorithm>

#include "tests/server/container_streams/container_stream.h"

namespace kvlab::test {
namespace {

// A score argument: mostly small integers (so scores tie), then the
// formats' corners, then what is not a valid float.
std::string Score(StreamSource& s) {
  const int pick = s.Uniform(0, 19);
  if (pick < 13) return std::to_string(s.Uniform(-3, 3));
  if (pick < 19) {
    static const char* const scores[] = {"2.5",
                                         "1.1",
                                         "-0",
                                         "inf",
                                         "-inf",
                                         "+inf",
                                         "0x10",
                                         "1e-310",
                                         "1e17",
                                         "0.1",
                                         "-1e-5",
                                         "3.0e3",
                                         "1e300",
                                         "123456789012345678",
                                         "4611686018427387904",
                                         "9.3e18",
                                         "-4611686018427388928"};
    return scores[s.Uniform(0, 16)];
  }
  static const char* const invalid[] = {"1e400", "nan", "x", "", " 1", "1 ", "1e-400", "(1"};
  return invalid[s.Uniform(0, 7)];
}

// A ZCOUNT / BYSCORE bound.
std::string Bound(StreamSource& s) {
  const int pick = s.Uniform(0, 19);
  if (pick < 10) return (s.OneIn(3) ? "(" : "") + std::to_string(s.Uniform(-3, 3));
  if (pick < 19) {
    static const char* const bounds[] = {"-inf", "+inf",  "inf", "(inf", "(-inf", "2.5",
                                         "(1.1", "1e400", "",    "(",    " 2",    "0x2"};
    return bounds[s.Uniform(0, 11)];
  }
  static const char* const invalid[] = {"x", "nan", "((1", "1x", "(nan"};
  return invalid[s.Uniform(0, 4)];
}

std::string LexBound(StreamSource& s) {
  static const char* const bounds[] = {"-",   "+", "-", "+",     "[e1", "(e5", "[e10", "(e2", "[m5",
                                       "(m9", "[", "(", "[\x01", "[zz", "e1",  "",     "+x",  "-x"};
  return bounds[s.Uniform(0, s.OneIn(8) ? 17 : 13)];  // the last four are invalid
}

// Members for "zlex" and the big ZADDs: "m0".."m139" sort as bytes, not as
// numbers, so ranks and lex ranges mix.
std::string Numbered(int i) { return "m" + std::to_string(i); }

// A min and max that hold something half the time (min <= max), in the
// order the command reads them (max first when reversed).
void AddBounds(StreamSource& s, std::vector<std::string>& cmd, bool reverse) {
  std::string min, max;
  if (s.OneIn(2)) {
    const int lo = s.Uniform(-3, 2);
    min = (s.OneIn(4) ? "(" : "") + std::to_string(lo);
    max = (s.OneIn(4) ? "(" : "") + std::to_string(lo + s.Uniform(0, 3));
    if (s.OneIn(5)) min = "-inf";
    if (s.OneIn(5)) max = "+inf";
  } else {
    min = Bound(s);
    max = Bound(s);
  }
  if (reverse) std::swap(min, max);
  cmd.push_back(min);
  cmd.push_back(max);
}

void AddLimit(StreamSource& s, std::vector<std::string>& cmd) {
  static const char* const limits[][2] = {{"0", "2"},   {"1", "-1"},  {"-1", "3"},
                                          {"0", "0"},   {"2", "100"}, {"0", "-5"},
                                          {"150", "1"}, {"x", "1"},   {"1", "y"}};
  const auto& limit = limits[s.Uniform(0, s.OneIn(6) ? 8 : 6)];  // the last two are invalid
  cmd.push_back(s.Case("limit"));
  cmd.push_back(limit[0]);
  if (!s.OneIn(15)) cmd.push_back(limit[1]);  // LIMIT with one number: a syntax error
}

std::vector<std::string> NextZAdd(StreamSource& s, const std::string& k) {
  std::vector<std::string> cmd = {s.Case("zadd"), k};
  static const char* const options[] = {"nx", "xx", "gt", "lt", "ch", "incr"};
  // Usually no option or one; sometimes several (their conflicts).
  const int count = s.OneIn(2) ? 0 : (s.OneIn(3) ? s.Uniform(2, 3) : 1);
  for (int i = 0; i < count; ++i) cmd.push_back(s.Case(options[s.Uniform(0, 5)]));
  if (s.OneIn(k == "zbig" ? 3 : 12)) {
    // Past 128 members (or just under): the skiplist conversion.
    const int pairs = s.Uniform(120, 140);
    for (int i = 0; i < pairs; ++i) {
      cmd.push_back(s.OneIn(4) ? std::to_string(s.Uniform(-3, 3)) : std::to_string(i % 17));
      cmd.push_back(Numbered(i));
    }
    return cmd;
  }
  const int pairs = s.OneIn(3) ? 1 : s.Uniform(1, 8);
  for (int i = 0; i < pairs; ++i) {
    cmd.push_back(Score(s));
    cmd.push_back(s.Element());
  }
  if (s.OneIn(12)) cmd.pop_back();  // odd: a syntax error
  return cmd;
}

// "zlex": members that all score 0, so BYLEX is defined.
std::vector<std::string> NextLex(StreamSource& s) {
  const std::string k = "zlex";
  const int pick = s.Uniform(0, 9);
  if (pick < 3) {
    std::vector<std::string> cmd = {s.Case("zadd"), k};
    const int pairs = s.OneIn(6) ? s.Uniform(120, 140) : s.Uniform(1, 4);
    for (int i = 0; i < pairs; ++i) {
      cmd.push_back("0");
      cmd.push_back(pairs > 10 ? Numbered(i) : s.Element());
    }
    return cmd;
  }
  if (pick < 4) return {s.Case("zrem"), k, s.Element(), Numbered(s.Uniform(0, 139))};
  if (pick < 5) return {s.Case(s.OneIn(2) ? "zpopmin" : "zpopmax"), k, "3"};
  if (pick < 6) return {s.Case("zcard"), k};
  if (pick < 7) {
    // The lex range commands of their own: ZLEXCOUNT, ZREMRANGEBYLEX (rarely:
    // it empties "zlex"), ZRANGEBYLEX and ZREVRANGEBYLEX (max first).
    switch (s.Uniform(0, 5)) {
      case 0:
      case 1:
        return {s.Case("zlexcount"), k, LexBound(s), LexBound(s)};
      case 2:
        return {s.Case("zremrangebylex"), k, LexBound(s), LexBound(s)};
      default:
        break;
    }
    const bool reverse = s.OneIn(2);
    std::vector<std::string> cmd = {s.Case(reverse ? "zrevrangebylex" : "zrangebylex"), k,
                                    LexBound(s), LexBound(s)};
    if (s.OneIn(2)) AddLimit(s, cmd);
    if (s.OneIn(10)) cmd.push_back(s.Case(s.OneIn(2) ? "withscores" : "bylex"));  // refused
    return cmd;
  }
  std::vector<std::string> cmd = {s.Case("zrange"), k, LexBound(s), LexBound(s), s.Case("bylex")};
  if (s.OneIn(2)) cmd.push_back(s.Case("rev"));
  if (s.OneIn(2)) AddLimit(s, cmd);
  if (s.OneIn(10)) cmd.push_back(s.Case("withscores"));  // refused with BYLEX
  if (s.OneIn(2)) std::swap(cmd[4], cmd.back());         // options in any order
  return cmd;
}

// A third of the commands go to the keys every type's stream shares (WRONGTYPE,
// RENAME, COPY, EXPIRE ... meet them there), the rest to keys only sorted sets
// use, so that they grow past 128 members and stay sorted sets.
std::string ZKey(StreamSource& s) {
  static const char* const keys[] = {"z1", "z1", "z2", "zbig"};
  return s.OneIn(3) ? s.Key() : keys[s.Uniform(0, 3)];
}

// ZREVRANGEBYSCORE, ZREMRANGEBYSCORE, ZREMRANGEBYRANK and ZRANDMEMBER.
std::vector<std::string> NextRangeWrite(StreamSource& s, const std::string& k) {
  const int pick = s.Uniform(0, 9);
  if (pick < 3) {
    std::vector<std::string> cmd = {s.Case("zrevrangebyscore"), k};
    AddBounds(s, cmd, true);
    if (s.OneIn(2)) cmd.push_back(s.Case("withscores"));
    if (s.OneIn(2)) AddLimit(s, cmd);
    if (s.OneIn(15)) cmd.push_back(s.Case(s.OneIn(2) ? "rev" : "bylex"));  // not here
    return cmd;
  }
  if (pick < 5) {
    // Rarely, so that the keys keep growing past 128 members.
    std::vector<std::string> cmd = {s.Case("zremrangebyscore"), k};
    AddBounds(s, cmd, false);
    return cmd;
  }
  if (pick < 6) {
    static const char* const ranks[] = {"0", "-1", "2", "-3", "1", "140", "-200", "x", "1.5"};
    return {s.Case("zremrangebyrank"), k, ranks[s.Uniform(0, s.OneIn(8) ? 8 : 6)],
            ranks[s.Uniform(0, s.OneIn(8) ? 8 : 6)]};
  }
  // ZRANDMEMBER: compared by shape; the range checks of CVE-2023-25155 and
  // CVE-2023-22458 exactly.
  std::vector<std::string> cmd = {s.Case("zrandmember"), k};
  if (s.OneIn(4)) return cmd;
  static const char* const counts[] = {"1",
                                       "3",
                                       "-3",
                                       "0",
                                       "200",
                                       "-5",
                                       "2",
                                       "x",
                                       "-9223372036854775808",
                                       "9223372036854775807",
                                       "4611686018427387904",
                                       "-4611686018427387904",
                                       "4611686018427387903"};
  cmd.push_back(counts[s.Uniform(0, s.OneIn(5) ? 12 : 6)]);
  if (s.OneIn(2)) cmd.push_back(s.Case("withscores"));
  if (s.OneIn(15)) cmd.push_back(s.OneIn(2) ? "withscores" : "x");  // a syntax error
  if (s.OneIn(15)) cmd[2 + (cmd.size() > 3 ? 1 : 0)] = "withscore";
  return cmd;
}

// A source of the multi-key commands: a sorted set, a set or string of the
// shared keys (sets score 1; a string is WRONGTYPE), or a missing key.
std::string SourceKey(StreamSource& s) {
  static const char* const keys[] = {"z1", "z2", "zbig", "zlex", "zdst", "nokey"};
  return s.OneIn(4) ? s.Key() : keys[s.Uniform(0, 5)];
}

// numkeys and the keys, sometimes a numkeys that is not one or too many.
void AddSources(StreamSource& s, std::vector<std::string>& cmd, int* numkeys) {
  *numkeys = s.Uniform(1, 3);
  static const char* const invalid[] = {"0", "-1", "x", "9", "9223372036854775807"};
  cmd.push_back(s.OneIn(15) ? invalid[s.Uniform(0, 4)] : std::to_string(*numkeys));
  for (int i = 0; i < *numkeys; ++i) cmd.push_back(SourceKey(s));
}

std::string ZsetWeight(StreamSource& s) {
  static const char* const weights[] = {"1",     "2", "-1",  "0", "0.5", "inf",  "-inf",
                                        "1e300", "3", "nan", "x", "",    "1e400"};
  return weights[s.Uniform(0, s.OneIn(10) ? 12 : 8)];  // the last four are not floats
}

// ZUNION ZINTER ZDIFF ZINTERCARD and their STORE forms, ZRANGESTORE and
// ZMPOP, then what their destination holds.
std::vector<std::string> NextZsetKeys(StreamSource& s) {
  const std::string dst = s.OneIn(4) ? SourceKey(s) : "zdst";
  const int pick = s.Uniform(0, 19);
  if (pick < 3) {
    return s.OneOf({{"zrange", "zdst", "0", "-1", "withscores"},
                    {"object", "encoding", "zdst"},
                    {"ttl", "zdst"},
                    {"expire", "zdst", "1000"}});
  }
  if (pick < 12) {
    static const char* const names[] = {"zunionstore", "zinterstore", "zdiffstore", "zunion",
                                        "zinter",      "zdiff",       "zintercard"};
    const std::string name = names[s.Uniform(0, 6)];
    const bool store = name.size() > 6 && name.substr(name.size() - 5) == "store";
    std::vector<std::string> cmd = {s.Case(name)};
    if (store) cmd.push_back(dst);
    int numkeys = 0;
    AddSources(s, cmd, &numkeys);
    // Options where they belong and, sometimes, where they do not.
    const bool algebra = name != "zintercard" && name != "zdiff" && name != "zdiffstore";
    if ((algebra || s.OneIn(10)) && s.OneIn(3)) {
      cmd.push_back(s.Case("weights"));
      const int weights = s.OneIn(10) ? numkeys - 1 : numkeys;
      for (int i = 0; i < weights; ++i) cmd.push_back(ZsetWeight(s));
    }
    if ((algebra || s.OneIn(10)) && s.OneIn(3)) {
      static const char* const aggregates[] = {"sum", "min", "max", "bogus"};
      cmd.push_back(s.Case("aggregate"));
      cmd.push_back(s.Case(aggregates[s.Uniform(0, s.OneIn(10) ? 3 : 2)]));
    }
    if ((!store || s.OneIn(10)) && s.OneIn(2)) cmd.push_back(s.Case("withscores"));
    if ((name == "zintercard" || s.OneIn(10)) && s.OneIn(2)) {
      static const char* const limits[] = {"0", "1", "2", "-1", "x"};
      cmd.push_back(s.Case("limit"));
      cmd.push_back(limits[s.Uniform(0, 4)]);
    }
    return cmd;
  }
  if (pick < 16) {
    std::vector<std::string> cmd = {s.Case("zrangestore"), dst};
    const int kind = s.Uniform(0, 2);  // by rank, by score, by lex on "zlex"
    const bool rev = s.OneIn(3);
    if (kind == 2) {
      cmd.push_back("zlex");
      cmd.push_back(LexBound(s));
      cmd.push_back(LexBound(s));
      cmd.push_back(s.Case("bylex"));
    } else {
      cmd.push_back(SourceKey(s));
      if (kind == 1) {
        AddBounds(s, cmd, rev);
        cmd.push_back(s.Case("byscore"));
      } else {
        static const char* const ranks[] = {"0", "-1", "1", "-3", "130", "x"};
        cmd.push_back(ranks[s.Uniform(0, s.OneIn(10) ? 5 : 4)]);
        cmd.push_back(ranks[s.Uniform(0, s.OneIn(10) ? 5 : 4)]);
      }
    }
    if (rev) cmd.push_back(s.Case("rev"));
    if ((kind != 0 || s.OneIn(8)) && s.OneIn(2)) AddLimit(s, cmd);
    if (s.OneIn(12)) cmd.push_back(s.Case("withscores"));  // refused
    return cmd;
  }
  std::vector<std::string> cmd = {s.Case("zmpop")};
  int numkeys = 0;
  AddSources(s, cmd, &numkeys);
  static const char* const wheres[] = {"min", "max", "bogus"};
  if (!s.OneIn(20)) cmd.push_back(s.Case(wheres[s.Uniform(0, s.OneIn(10) ? 2 : 1)]));
  if (s.OneIn(2)) {
    static const char* const counts[] = {"1", "3", "200", "0", "-1", "x"};
    cmd.push_back(s.Case("count"));
    cmd.push_back(counts[s.Uniform(0, s.OneIn(8) ? 5 : 2)]);
  }
  if (s.OneIn(20)) cmd.push_back(s.Case("count"));  // COUNT twice or alone
  if (s.OneIn(5)) {                                 // its blocking twin: BZMPOP timeout numkeys ...
    cmd[0] = s.Case("bzmpop");
    cmd.insert(cmd.begin() + 1, s.BlockingTimeout());
  }
  return cmd;
}

std::vector<std::string> NextZSet(StreamSource& s) {
  if (s.OneIn(6)) return NextZsetKeys(s);
  const std::string k = ZKey(s);
  if (s.OneIn(8)) return NextRangeWrite(s, k);
  if (s.OneIn(12)) {
    // What the keyspace stream asks of the shared keys, for these too: the
    // encoding (the 128-member and 64-byte limits) and emptied keys gone.
    switch (s.Uniform(0, 3)) {
      case 0:
      case 1:
        return {s.Case("object"), s.Case("encoding"), k};
      case 2:
        return {s.Case("exists"), k};
      default:
        return {s.Case("type"), k};
    }
  }
  const int pick = s.Uniform(0, 99);
  if (pick < 30) return NextZAdd(s, k);
  if (pick < 32) {
    std::vector<std::string> cmd = {s.Case("zincrby"), k, Score(s), s.Element()};
    if (s.OneIn(8)) cmd[2] = s.Case(s.OneIn(2) ? "nx" : "incr");  // read as an option
    return cmd;
  }
  if (pick < 35) {
    std::vector<std::string> cmd = {s.Case("zrem"), k};
    for (int i = s.Uniform(1, 3); i > 0; --i) {
      cmd.push_back(s.OneIn(3) ? Numbered(s.Uniform(0, 139)) : s.Element());
    }
    return cmd;
  }
  if (pick < 38) return {s.Case("zscore"), k, s.Element()};
  if (pick < 40) {
    std::vector<std::string> cmd = {s.Case("zmscore"), k};
    for (int i = s.Uniform(1, 4); i > 0; --i) cmd.push_back(s.Element());
    return cmd;
  }
  if (pick < 41) return {s.Case("zcard"), k};
  if (pick < 45) {
    std::vector<std::string> cmd = {s.Case("zcount"), k};
    AddBounds(s, cmd, false);
    return cmd;
  }
  if (pick < 49) {
    return {s.Case(s.OneIn(2) ? "zrank" : "zrevrank"), k,
            s.OneIn(3) ? Numbered(s.Uniform(0, 139)) : s.Element()};
  }
  if (pick < 62) {
    // ZRANGE by rank or BYSCORE (BYLEX: NextLex()).
    std::vector<std::string> cmd = {s.Case("zrange"), k};
    const bool by_score = s.OneIn(2);
    const bool rev = s.OneIn(2);
    if (by_score) {
      AddBounds(s, cmd, rev);
    } else if (s.OneIn(2)) {
      static const char* const ranges[][2] = {{"0", "-1"}, {"1", "-2"}, {"0", "4"}, {"-3", "-1"}};
      const auto& range = ranges[s.Uniform(0, 3)];
      cmd.push_back(range[0]);
      cmd.push_back(range[1]);
    } else {
      static const char* const ranks[] = {"0",
                                          "-1",
                                          "1",
                                          "-2",
                                          "5",
                                          "130",
                                          "-200",
                                          "3",
                                          "9223372036854775807",
                                          "-9223372036854775808",
                                          "x",
                                          "1.5"};
      cmd.push_back(ranks[s.Uniform(0, s.OneIn(10) ? 11 : 9)]);
      cmd.push_back(ranks[s.Uniform(0, s.OneIn(10) ? 11 : 9)]);
    }
    std::vector<std::vector<std::string>> options;
    if (by_score) options.push_back({s.Case("byscore")});
    if (rev) options.push_back({s.Case("rev")});
    if (s.OneIn(2)) options.push_back({s.Case("withscores")});
    if (s.OneIn(by_score ? 2 : 8)) {  // LIMIT without BYSCORE: an error
      std::vector<std::string> limit;
      AddLimit(s, limit);
      options.push_back(limit);
    }
    if (s.OneIn(15)) options.push_back({s.OneIn(2) ? s.Case("bylex") : s.Case("bogus")});
    if (s.OneIn(20)) options.push_back({s.Case("rev")});  // twice: a syntax error
    std::shuffle(options.begin(), options.end(), s.rng());
    for (const auto& option : options) cmd.insert(cmd.end(), option.begin(), option.end());
    return cmd;
  }
  if (pick < 70) {
    std::vector<std::string> cmd = {s.Case("zrangebyscore"), k};
    AddBounds(s, cmd, false);
    if (s.OneIn(2)) cmd.push_back(s.Case("withscores"));
    if (s.OneIn(2)) AddLimit(s, cmd);
    if (s.OneIn(15)) cmd.push_back(s.Case(s.OneIn(2) ? "rev" : "byscore"));  // not here
    return cmd;
  }
  if (pick < 75) {
    static const char* const ranks[] = {"0", "-1", "2", "-3", "140", "x"};
    std::vector<std::string> cmd = {s.Case("zrevrange"), k, ranks[s.Uniform(0, 5)],
                                    ranks[s.Uniform(0, 5)]};
    if (s.OneIn(2)) cmd.push_back(s.Case("withscores"));
    if (s.OneIn(10)) AddLimit(s, cmd);                                       // refused
    if (s.OneIn(15)) cmd.push_back(s.Case(s.OneIn(2) ? "rev" : "byscore"));  // not here
    return cmd;
  }
  if (pick < 80) {
    if (s.OneIn(5)) {  // BZPOPMIN/BZPOPMAX key [key ...] timeout
      std::vector<std::string> cmd = {s.Case(s.OneIn(2) ? "bzpopmin" : "bzpopmax"), k};
      if (s.OneIn(3)) cmd.push_back(ZKey(s));
      if (!s.OneIn(25)) cmd.push_back(s.BlockingTimeout());  // arity, now and then
      return cmd;
    }
    std::vector<std::string> cmd = {s.Case(s.OneIn(2) ? "zpopmin" : "zpopmax"), k};
    static const char* const counts[] = {"1", "3", "0", "-1", "x", "200", "2", "1.5"};
    if (!s.OneIn(3)) cmd.push_back(counts[s.Uniform(0, 7)]);
    if (s.OneIn(12)) cmd.push_back("1");  // one argument too many: a syntax error
    return cmd;
  }
  if (pick < 88) {
    // A non-zero cursor's answer on a skiplist is Redis's bucket order, so
    // only cursor 0 and the invalid ones are compared.
    return s.Scan("zscan", k, "e1*", "m1?");
  }
  if (pick < 96) return NextLex(s);
  // Wrong arities.
  return s.OneOf({{"zadd", k, "1"},
                  {"zincrby", k, "1"},
                  {"zscore", k},
                  {"zcard"},
                  {"zcount", k, "0"},
                  {"zrank", k, "a", "b"},
                  {"zrange", k, "0"},
                  {"zpopmin"}});
}

// Replies are in the sorted set's order, so exact; only ZSCAN's order on a
// skiplist is Redis's hash table's.
ReplyMatch MatchZSet(const std::vector<std::string>& command) {
  if (Lower(command[0]) == "zscan") return ReplyMatch::kScanUnorderedPairs;
  // Random picks; a count of at least the size is the whole set, so shape
  // alone is compared only where members are drawn.
  if (Lower(command[0]) == "zrandmember") return ReplyMatch::kSameShape;
  return ReplyMatch::kExact;
}

}  // namespace

ContainerStream ZSetStream() { return {NextZSet, MatchZSet}; }

}  // namespace kvlab::test
