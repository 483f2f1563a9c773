// What the container differential test (container_differential_test.cc)
// asks of each container type's command stream: the next random command,
// and how its reply may be compared with Redis's.
//
// One file per type (hash_stream.cc, list_stream.cc, ...) owns its
// commands; they share the keys (so types clash and WRONGTYPE is exercised)
// and the random source below.
//
// Not thread-safe: one test thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab::test {

// How a reply must match Redis's.
enum class ReplyMatch {
  kExact,               // byte for byte
  kUnorderedElements,   // an array whose order is a hash table's: the same elements
  kUnorderedPairs,      // the same, element pairs kept together (HGETALL, ZSCAN)
  kScanUnordered,       // [cursor, [elements]]: cursor exact, elements as kUnorderedElements
  kScanUnorderedPairs,  // [cursor, [pairs]]
  kSameShape,           // random picks (SPOP, SRANDMEMBER): the same kind and length
                        // (an array's length; a bulk string or nil)
};

// A command name in lower case, for the match rules.
inline std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return text;
}

class StreamSource {
 public:
  explicit StreamSource(uint64_t seed) : rng_(seed) {}
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool OneIn(int n) { return Uniform(1, n) == 1; }
  // The command name in a random case (Redis's lookup is case-insensitive).
  std::string Case(std::string name) {
    for (char& c : name) {
      if (OneIn(4)) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    return name;
  }
  // A blocking command's timeout: 1 ms mostly (an empty key answers nil
  // after it on both servers), now and then one Redis refuses.
  std::string BlockingTimeout() {
    static const char* const timeouts[] = {"0.001", "0.0001", "-1", "x", "-0.5", "inf"};
    return timeouts[OneIn(8) ? Uniform(2, 5) : Uniform(0, 1)];
  }
  // One of a few keys every type's stream shares.
  std::string Key() {
    static const char* const keys[] = {"k1", "k2", "k3", "k4", "k5", "big", "str"};
    return keys[Uniform(0, 6)];
  }
  // A field or member: mostly from a small set (so they repeat), sometimes
  // binary, sometimes longer than 64 bytes (the compact-encoding limit).
  std::string Element() {
    const int pick = Uniform(0, 19);
    if (pick < 14) return "e" + std::to_string(Uniform(0, 12));
    if (pick < 16) return std::to_string(Uniform(-5, 300));
    if (pick < 18) return std::string(1, '\0') + "\r\nbin" + std::to_string(Uniform(0, 3));
    return std::string(static_cast<size_t>(Uniform(60, 70)), 'x');
  }
  std::string Value() {
    const int pick = Uniform(0, 9);
    if (pick < 5) return "v" + std::to_string(Uniform(0, 50));
    if (pick < 8) return std::to_string(Uniform(-20, 20));
    if (pick < 9) return std::string(static_cast<size_t>(Uniform(60, 70)), 'y');
    return "";
  }
  // One of `commands` at random, its name (first word) in a random case.
  std::vector<std::string> OneOf(std::initializer_list<std::vector<std::string>> commands) {
    std::vector<std::string> command =
        commands.begin()[Uniform(0, static_cast<int>(commands.size()) - 1)];
    command[0] = Case(command[0]);
    return command;
  }
  // HSCAN, SSCAN, ZSCAN: `name` `key` with a cursor, valid or not, and one
  // option, valid or not; MATCH's pattern is `pattern` or `other_pattern`.
  std::vector<std::string> Scan(const std::string& name, const std::string& key,
                                const char* pattern, const char* other_pattern) {
    std::vector<std::string> cmd = {Case(name), key};
    static const char* const cursors[] = {"0", "0",  "0",  "-0",
                                          "x", " 0", "+0", "18446744073709551616"};
    cmd.push_back(cursors[Uniform(0, 7)]);
    switch (Uniform(0, 6)) {
      case 0:
        cmd.push_back(Case("match"));
        cmd.push_back(OneIn(2) ? pattern : other_pattern);
        break;
      case 1:
        cmd.push_back(Case("count"));
        cmd.push_back(OneIn(3) ? "0" : "10");
        break;
      case 2:
        cmd.push_back(Case("match"));
        break;
      case 3:
        cmd.push_back(Case("bogus"));
        cmd.push_back("1");
        break;
      case 4:
        cmd.push_back(Case("count"));
        cmd.push_back("x");
        break;
      default:
        break;
    }
    return cmd;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// Each type's stream: the next command (name first), and its comparison.
struct ContainerStream {
  std::vector<std::string> (*next)(StreamSource& source);
  ReplyMatch (*match)(const std::vector<std::string>& command);
  // A command sent right after `command` (none when empty or null): one
  // that makes the two servers' states equal again after a random pick
  // changed them differently (SPOP: DEL its key). Compared exactly.
  std::vector<std::string> (*after)(const std::vector<std::string>& command) = nullptr;
  // A command sent right before `command` (none when empty or null), to
  // put both servers in the same state first. Compared exactly.
  std::vector<std::string> (*before)(const std::vector<std::string>& command) = nullptr;
};

ContainerStream HashStream();  // hash_stream.cc
ContainerStream ListStream();  // list_stream.cc
ContainerStream SetStream();   // set_stream.cc
ContainerStream ZSetStream();  // zset_stream.cc
ContainerStream SortStream();  // sort_stream.cc: SORT, SORT_RO and what they read
ContainerStream BitStream();   // bit_stream.cc: the bit commands on strings

}  // namespace kvlab::test
