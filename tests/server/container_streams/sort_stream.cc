// SORT and SORT_RO's random stream for the container differential test, with
// the lists, sets, sorted sets, weight strings (w_*) and hashes (h_*) its
// BY and GET patterns read. Every reply is compared exactly, so the stream
// avoids the orders Redis leaves to its hash tables: a set or sorted set is
// sorted only where no two elements compare equal (numerically, ties fall
// back to the elements; ALPHA on "ss"/"sz", whose members hold no NUL byte
// and, with BY, only on the list "sl"), and BY nosort on a set only with
// STORE (which Redis sorts anyway). "sl", "ss" and "sz" keep their types;
// the shared keys hold any type (WRONGTYPE).
#include "tests/server/container_streams/container_stream.h"

namespace kvlab::test {
namespace {

// Elements that sort numerically, fail to, or tie in ALPHA's C-string order.
std::string SortElement(StreamSource& s, bool with_nul) {
  static const char* const words[] = {"a",    "B",   "c10", "c9",  "",   "inf", "1e400", " 7",
                                      "0x1f", "nan", "-0",  "3.5", "10", "9",   "-2",    "1e3"};
  const int pick = s.Uniform(0, 9);
  if (pick < 4) return std::to_string(s.Uniform(-5, 20));
  if (with_nul && pick == 4) return std::string("b\0", 2) + std::to_string(s.Uniform(0, 2));
  return words[s.Uniform(0, 15)];
}

std::string SortWeight(StreamSource& s) {
  static const char* const weights[] = {"1", "2", "2", "-1.5", "10", "x", "1e3", "", " 3"};
  return weights[s.Uniform(0, 8)];
}

std::vector<std::string> NextSetup(StreamSource& s) {
  std::vector<std::string> cmd;
  switch (s.Uniform(0, 5)) {
    case 0:
      cmd = {s.Case("rpush"), "sl"};
      for (int i = s.Uniform(1, 6); i > 0; --i) cmd.push_back(SortElement(s, true));
      return cmd;
    case 1:
      cmd = {s.Case("sadd"), "ss"};
      for (int i = s.Uniform(1, 6); i > 0; --i) cmd.push_back(SortElement(s, false));
      return cmd;
    case 2:
      cmd = {s.Case("zadd"), "sz"};
      for (int i = s.Uniform(1, 4); i > 0; --i) {
        cmd.push_back(std::to_string(s.Uniform(0, 3)));
        cmd.push_back(SortElement(s, false));
      }
      return cmd;
    case 3:
      return {s.Case("set"), "w_" + SortElement(s, true), SortWeight(s)};
    case 4:
      return {s.Case("hset"),     "h_" + SortElement(s, true), "f", SortWeight(s), "g",
              "v" + SortWeight(s)};
    default:
      return {s.Case("del"), s.OneOf({{"sl"}, {"ss"}, {"sz"}, {"dst"}})[0]};
  }
}

std::vector<std::string> NextSortCommand(StreamSource& s) {
  const int which = s.Uniform(0, 4);
  const bool list = which == 0;
  const bool no_nul = which == 1 || which == 2;  // ss, sz
  const std::string key = which == 0 ? "sl" : which == 1 ? "ss" : which == 2 ? "sz" : s.Key();
  const bool read_only = s.OneIn(4);
  const bool store = !read_only && s.OneIn(3);
  const bool alpha = s.OneIn(3) && (list || (no_nul && !store) || store);
  std::vector<std::string> cmd = {s.Case(read_only ? "sort_ro" : "sort"), key};
  // BY: a pattern sorts; nosort keeps the value's order (a set's only with STORE).
  if (s.OneIn(2)) {
    static const char* const sorting[] = {"w_*", "h_*->f", "w_*->", "h_*->missing", "*"};
    const bool nosort = s.OneIn(3) && (list || which == 2 || store);
    if (nosort) {
      cmd.insert(cmd.end(), {s.Case("by"), s.OneIn(2) ? "nosort" : "w_"});
    } else if (!alpha || list) {
      cmd.insert(cmd.end(), {s.Case("by"), sorting[s.Uniform(0, 4)]});
    }
  }
  if (s.OneIn(2)) {
    static const char* const limits[][2] = {{"0", "3"},
                                            {"1", "2"},
                                            {"2", "-1"},
                                            {"-1", "2"},
                                            {"1", "0"},
                                            {"5", "10"},
                                            {"9223372036854775807", "9223372036854775807"},
                                            {"-9223372036854775808", "-9223372036854775808"},
                                            {"1", "9223372036854775807"},
                                            {"x", "1"},
                                            {"0", "1.5"}};
    const auto& limit = limits[s.Uniform(0, 10)];
    cmd.insert(cmd.end(), {s.Case("limit"), limit[0], limit[1]});
  }
  for (int gets = s.OneIn(2) ? s.Uniform(1, 3) : 0; gets > 0; --gets) {
    static const char* const patterns[] = {"#", "w_*", "h_*->g", "h_*->", "w_", "h_*->f"};
    cmd.insert(cmd.end(), {s.Case("get"), patterns[s.Uniform(0, 5)]});
  }
  if (s.OneIn(2)) cmd.push_back(s.Case(s.OneIn(2) ? "desc" : "asc"));
  if (alpha) cmd.push_back(s.Case("alpha"));
  if (store) cmd.insert(cmd.end(), {s.Case("store"), s.OneIn(3) ? s.Key() : "dst"});
  if (s.OneIn(30)) {  // errors: an unknown option, a cut-short one, STORE on SORT_RO
    static const char* const bad[] = {"bogus", "limit", "by", "store"};
    cmd.push_back(bad[s.Uniform(0, 3)]);
  }
  return cmd;
}

std::vector<std::string> NextSort(StreamSource& s) {
  const int pick = s.Uniform(0, 99);
  if (pick < 40) return NextSetup(s);
  if (pick < 45) return {s.Case("lrange"), "dst", "0", "-1"};
  if (pick < 48) return s.OneOf({{"sort"}, {"sort_ro"}});  // arity
  return NextSortCommand(s);
}

ReplyMatch MatchSort(const std::vector<std::string>&) { return ReplyMatch::kExact; }

// Redis's SORT tests strtod()'s errno without clearing it first, so an
// ERANGE left by an earlier command's parse (ZADD k 1e400 m) fails every
// numeric SORT until some parse clears it: a quirk of Redis's thread state,
// not of SORT, which kvlab does not copy. INCRBYFLOAT clears errno
// (string2ld() sets it to 0 and parses "0" cleanly) before each SORT.
std::vector<std::string> BeforeSort(const std::vector<std::string>& command) {
  const std::string name = Lower(command[0]);
  if (name != "sort" && name != "sort_ro") return {};
  return {"incrbyfloat", "sort_errno", "0"};
}

}  // namespace

ContainerStream SortStream() {
  return {.next = NextSort, .match = MatchSort, .after = nullptr, .before = BeforeSort};
}

}  // namespace kvlab::test
