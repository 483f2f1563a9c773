// The hash commands' random stream for the container differential test.
#include "tests/server/container_streams/container_stream.h"

namespace kvlab::test {
namespace {

std::vector<std::string> NextHash(StreamSource& s) {
  const std::string k = s.Key();
  const int pick = s.Uniform(0, 99);
  if (pick < 18) {
    std::vector<std::string> cmd = {s.Case(s.OneIn(4) ? "hmset" : "hset"), k};
    const int pairs = s.OneIn(10) ? s.Uniform(100, 140) : s.Uniform(1, 4);  // past 128: hashtable
    for (int i = 0; i < pairs; ++i) {
      cmd.push_back(pairs > 10 ? "f" + std::to_string(i) : s.Element());
      cmd.push_back(s.Value());
    }
    if (s.OneIn(12)) cmd.pop_back();  // odd: the arity error
    return cmd;
  }
  if (pick < 22) return {s.Case("hsetnx"), k, s.Element(), s.Value()};
  if (pick < 32) return {s.Case("hget"), k, s.Element()};
  if (pick < 37) {
    std::vector<std::string> cmd = {s.Case("hmget"), k};
    for (int i = s.Uniform(1, 4); i > 0; --i) cmd.push_back(s.Element());
    return cmd;
  }
  if (pick < 42) return {s.Case("hgetall"), k};
  if (pick < 45) return {s.Case("hkeys"), k};
  if (pick < 48) return {s.Case("hvals"), k};
  if (pick < 56) {
    std::vector<std::string> cmd = {s.Case("hdel"), k};
    for (int i = s.Uniform(1, 3); i > 0; --i) cmd.push_back(s.Element());
    return cmd;
  }
  if (pick < 60) return {s.Case("hlen"), k};
  if (pick < 64) return {s.Case("hexists"), k, s.Element()};
  if (pick < 67) return {s.Case("hstrlen"), k, s.Element()};
  if (pick < 75) {
    static const char* const deltas[] = {
        "1", "-3", "100", "x", "9223372036854775807", "-9223372036854775808", "1.5", ""};
    return {s.Case("hincrby"), k, s.OneIn(2) ? "n" + std::to_string(s.Uniform(0, 2)) : s.Element(),
            deltas[s.Uniform(0, 7)]};
  }
  if (pick < 82) {
    static const char* const deltas[] = {"1.5", "-0.25", "10",    "abc", "1e308",
                                         "inf", "-1e-5", "3.0e3", " 1",  "5"};
    return {s.Case("hincrbyfloat"), k,
            s.OneIn(2) ? "n" + std::to_string(s.Uniform(0, 2)) : s.Element(),
            deltas[s.Uniform(0, 9)]};
  }
  if (pick < 88) {
    // A non-zero cursor's answer on a hashtable is Redis's bucket order,
    // so only cursor 0 and the invalid ones are compared.
    return s.Scan("hscan", k, "e1*", "*");
  }
  if (pick < 92) {
    static const char* const counts[] = {"1",
                                         "3",
                                         "-3",
                                         "0",
                                         "1000",
                                         "-1000",
                                         "x",
                                         "1.5",
                                         "-9223372036854775808",
                                         "4611686018427387904"};
    std::vector<std::string> cmd = {s.Case("hrandfield"), k};
    if (!s.OneIn(4)) cmd.push_back(counts[s.Uniform(0, 9)]);
    if (cmd.size() == 3 && s.OneIn(2)) cmd.push_back(s.OneIn(6) ? "withscores" : "withvalues");
    return cmd;
  }
  // Wrong arities.
  return s.OneOf({{"hset", k}, {"hget", k}, {"hgetall"}, {"hsetnx", k, "f"}, {"hlen", k, "x"}});
}

// Small hashes answer in insertion order, as Redis's listpack does; a
// hashtable's order is its own. Only HGETALL/HKEYS/HVALS/HSCAN vary.
ReplyMatch MatchHash(const std::vector<std::string>& command) {
  const std::string name = Lower(command[0]);
  if (name == "hgetall") return ReplyMatch::kUnorderedPairs;
  if (name == "hkeys" || name == "hvals") return ReplyMatch::kUnorderedElements;
  if (name == "hscan") return ReplyMatch::kScanUnorderedPairs;
  if (name == "hrandfield" && command.size() >= 3) {
    const std::string& count = command[2];
    const bool with_values = command.size() == 4 && Lower(command[3]) == "withvalues";
    if (command.size() == 4 && !with_values) return ReplyMatch::kExact;  // syntax error
    if (count == "x" || count == "1.5" || count == "0" || count == "-9223372036854775808" ||
        (with_values && count == "4611686018427387904")) {
      return ReplyMatch::kExact;  // errors and empty answers
    }
    // Every field once (in the hash's order: a hashtable's is its own).
    if (count == "1000" || count == "4611686018427387904") {
      return with_values ? ReplyMatch::kUnorderedPairs : ReplyMatch::kUnorderedElements;
    }
  }
  if (name == "hrandfield") return ReplyMatch::kSameShape;  // a random pick
  return ReplyMatch::kExact;
}

}  // namespace

ContainerStream HashStream() { return {NextHash, MatchHash}; }

}  // namespace kvlab::test
