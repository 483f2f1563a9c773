// The list commands' random stream for the container differential test.
// Every list reply is ordered, so every reply is compared byte for byte.
#include <cctype>

#include "tests/server/container_streams/container_stream.h"

namespace kvlab::test {
namespace {

// An index or a count: mostly small and of either sign, sometimes past a
// big list's end, sometimes the extremes or not an integer at all.
std::string ListIndex(StreamSource& s) {
  const int pick = s.Uniform(0, 19);
  if (pick < 12) return std::to_string(s.Uniform(-6, 6));
  if (pick < 16) return std::to_string(s.Uniform(-180, 180));
  static const char* const odd[] = {
      "9223372036854775807", "-9223372036854775808", "x", "1.5", "", " 1", "+1",
      "9223372036854775808"};
  return odd[s.Uniform(0, 7)];
}

// POP's and LPOS's counts: non-negative mostly, and the invalid ones.
std::string Count(StreamSource& s) {
  static const char* const counts[] = {
      "0", "1", "2", "3", "5", "200", "-1", "x", "9223372036854775807", "-9223372036854775808",
      "1"};
  return counts[s.Uniform(0, 10)];
}

// LEFT or RIGHT in any case, now and then neither (a syntax error) or
// with a NUL (strcasecmp stops there, so "left\0x" is LEFT to Redis).
std::string End(StreamSource& s) {
  const int pick = s.Uniform(0, 19);
  if (pick == 0) return "middle";
  if (pick == 1) return std::string("left\0x", 6);
  return s.Case(pick % 2 == 0 ? "left" : "right");
}

// The blocking twin of an LMOVE, RPOPLPUSH or LMPOP (BLMOVE, BRPOPLPUSH,
// BLMPOP), or BLPOP/BRPOP on its keys; a client that would wait times out.
std::vector<std::string> Blocking(StreamSource& s, std::vector<std::string> cmd) {
  std::string name = cmd[0];
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "lmove" || name == "rpoplpush") {
    cmd[0] = s.Case("b" + name);
    cmd.push_back(s.BlockingTimeout());
  } else if (s.OneIn(2)) {  // lmpop
    cmd[0] = s.Case("blmpop");
    cmd.insert(cmd.begin() + 1, s.BlockingTimeout());
  } else {
    std::vector<std::string> pop = {s.Case(s.OneIn(2) ? "blpop" : "brpop")};
    const int keys = s.Uniform(1, 3);
    for (int i = 0; i < keys; ++i) pop.push_back(s.Key());
    if (!s.OneIn(25)) pop.push_back(s.BlockingTimeout());  // arity, now and then
    return pop;
  }
  return cmd;
}

// LMOVE, RPOPLPUSH and LMPOP over the shared keys: source and destination
// often the same key (the rotation), often another type's (WRONGTYPE on
// either side) or missing.
std::vector<std::string> NextNonBlocking(StreamSource& s) {
  const int pick = s.Uniform(0, 9);
  const std::string source = s.Key();
  const std::string destination = s.OneIn(4) ? source : s.Key();
  if (pick < 4) {
    std::vector<std::string> cmd = {s.Case("lmove"), source, destination, End(s), End(s)};
    if (s.OneIn(25)) cmd.pop_back();  // arity
    return cmd;
  }
  if (pick < 6) {
    std::vector<std::string> cmd = {s.Case("rpoplpush"), source, destination};
    if (s.OneIn(25)) cmd.push_back("left");  // arity
    return cmd;
  }
  std::vector<std::string> cmd = {s.Case("lmpop")};
  static const char* const numkeys[] = {"0", "-1", "x", "9223372036854775807", "5"};
  const int keys = s.Uniform(1, 3);
  cmd.push_back(s.OneIn(12) ? numkeys[s.Uniform(0, 4)] : std::to_string(keys));
  for (int i = 0; i < keys; ++i) cmd.push_back(s.Key());
  if (!s.OneIn(20)) cmd.push_back(End(s));
  if (s.OneIn(2)) {
    static const char* const counts[] = {"1", "2",  "3", "200",
                                         "0", "-1", "x", "9223372036854775807"};
    cmd.push_back(s.Case("count"));
    cmd.push_back(counts[s.Uniform(0, s.OneIn(6) ? 7 : 3)]);
  }
  if (s.OneIn(20)) cmd.push_back(s.Case(s.OneIn(2) ? "count" : "bogus"));  // twice, alone
  return cmd;
}

// One in five multi-key list commands is a blocking one.
std::vector<std::string> NextListKeys(StreamSource& s) {
  std::vector<std::string> cmd = NextNonBlocking(s);
  return s.OneIn(5) ? Blocking(s, std::move(cmd)) : cmd;
}

std::vector<std::string> NextList(StreamSource& s) {
  if (s.OneIn(7)) return NextListKeys(s);
  const std::string k = s.Key();
  const int pick = s.Uniform(0, 99);
  if (pick < 20) {
    static const char* const pushes[] = {"lpush", "rpush", "lpushx", "rpushx"};
    const char* push = pushes[s.OneIn(4) ? s.Uniform(2, 3) : s.Uniform(0, 1)];
    std::vector<std::string> cmd = {s.Case(push), k};
    // Now and then past 128 elements (kvlab's compact form's limit).
    const bool many = s.OneIn(k == "big" ? 3 : 12);
    const int count = many ? s.Uniform(100, 160) : s.Uniform(1, 4);
    for (int i = 0; i < count; ++i) {
      cmd.push_back(many && !s.OneIn(8) ? "i" + std::to_string(s.Uniform(0, 40)) : s.Element());
    }
    return cmd;
  }
  if (pick < 32) {
    std::vector<std::string> cmd = {s.Case(s.OneIn(2) ? "lpop" : "rpop"), k};
    if (s.OneIn(2)) cmd.push_back(Count(s));
    if (s.OneIn(15)) cmd.push_back("1");  // too many: the arity error
    return cmd;
  }
  if (pick < 36) return {s.Case("llen"), k};
  if (pick < 48) return {s.Case("lrange"), k, ListIndex(s), s.OneIn(3) ? "-1" : ListIndex(s)};
  if (pick < 55) return {s.Case("lindex"), k, ListIndex(s)};
  if (pick < 61) return {s.Case("lset"), k, ListIndex(s), s.Element()};
  if (pick < 67) return {s.Case("lrem"), k, ListIndex(s), s.Element()};
  if (pick < 70) {
    // Mostly gentle (keep most of the list), sometimes anything.
    if (s.OneIn(3)) return {s.Case("ltrim"), k, ListIndex(s), ListIndex(s)};
    return {s.Case("ltrim"), k, std::to_string(s.Uniform(0, 2)), std::to_string(s.Uniform(-3, -1))};
  }
  if (pick < 78) {
    static const char* const wheres[] = {"before", "after", "BEFORE", "After", "middle"};
    const int where = s.Uniform(0, 5);
    // strcasecmp stops at a NUL: "before\0x" is BEFORE to Redis.
    const std::string w = where == 5 ? std::string("before\0x", 8) : wheres[where];
    return {s.Case("linsert"), k, w, s.Element(), s.Element()};
  }
  if (pick < 92) {
    std::vector<std::string> cmd = {s.Case("lpos"), k, s.Element()};
    for (int i = s.Uniform(0, 3); i > 0; --i) {
      switch (s.Uniform(0, 7)) {
        case 0:
        case 1: {
          static const char* const ranks[] = {
              "1", "2", "-1", "-2", "3", "0", "x", "-9223372036854775808", "9223372036854775807",
              "-3"};
          cmd.push_back(s.Case("rank"));
          cmd.push_back(ranks[s.Uniform(0, 9)]);
          break;
        }
        case 2:
        case 3:
          cmd.push_back(s.Case("count"));
          cmd.push_back(Count(s));
          break;
        case 4:
        case 5:
          cmd.push_back(s.Case("maxlen"));
          cmd.push_back(Count(s));
          break;
        case 6:
          cmd.push_back(s.Case("rank"));
          break;  // no value: syntax error
        default:
          cmd.push_back(s.Case("bogus"));
          cmd.push_back("1");
          break;
      }
    }
    return cmd;
  }
  // Wrong arities.
  return s.OneOf({{"lpush", k},
                  {"rpushx", k},
                  {"lpop"},
                  {"llen", k, "x"},
                  {"lrange", k, "0"},
                  {"lindex", k},
                  {"lset", k, "0"},
                  {"lrem", k, "0"},
                  {"linsert", k, "before", "x"},
                  {"lpos", k},
                  {"lmove", k, k, "left"},
                  {"rpoplpush", k},
                  {"lmpop", "1", k}});
}

ReplyMatch MatchList(const std::vector<std::string>&) { return ReplyMatch::kExact; }

}  // namespace

ContainerStream ListStream() { return {NextList, MatchList}; }

}  // namespace kvlab::test
