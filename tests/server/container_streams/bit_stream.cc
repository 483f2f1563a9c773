// The bit commands' random stream for the container differential test:
// SETBIT GETBIT BITCOUNT BITPOS BITFIELD BITFIELD_RO BITOP with valid and
// invalid arguments, edge offsets and binary values, on their own keys
// ("bits:*", with SET, APPEND, EXPIRE and TTL to meet them) and on the
// shared keys, where the containers make them WRONGTYPE.
//
// Redis makes every string a bit command writes "raw" for OBJECT ENCODING,
// kvlab decides from the bytes; so a write to a shared key (which OBJECT
// ENCODING looks at) is followed by GETDEL of that key, which compares the
// bytes and leaves both servers without it.
#include "tests/server/container_streams/container_stream.h"

namespace kvlab::test {
namespace {

std::string BitKey(StreamSource& s) {
  static const char* const keys[] = {"bits:a", "bits:b", "bits:c"};
  return keys[s.Uniform(0, 2)];
}

// Mostly a bit key; sometimes a shared one (a container: WRONGTYPE) or none.
std::string AnyKey(StreamSource& s) {
  const int pick = s.Uniform(0, 9);
  if (pick < 6) return BitKey(s);
  if (pick < 9) return s.Key();
  return "bits:missing";
}

std::string Pick(StreamSource& s, std::initializer_list<const char*> choices) {
  return choices.begin()[s.Uniform(0, static_cast<int>(choices.size()) - 1)];
}

// Offsets a write may use (no 512MB strings), and those a read may.
std::string WriteOffset(StreamSource& s) {
  return Pick(s,
              {"0", "1", "7", "8", "15", "23", "100", "1000", "-1", "x", "4294967296", "#1", " 1"});
}
std::string ReadOffset(StreamSource& s) {
  return s.OneIn(5) ? Pick(s, {"4294967295", "4294967296", "99999999999"}) : WriteOffset(s);
}

std::string BitIndex(StreamSource& s) {
  return Pick(s, {"0", "1", "2", "-1", "-2", "-3", "5", "100", "-100", "x", "9223372036854775807",
                  "-9223372036854775808"});
}

std::string Unit(StreamSource& s) { return s.Case(Pick(s, {"bit", "byte", "bit", "bits"})); }

std::string FieldType(StreamSource& s) {
  return Pick(
      s, {"u1", "u8", "i8", "u16", "i5", "u63", "i64", "u64", "i65", "i0", "x8", "", "u8x", "i32"});
}
std::string FieldOffset(StreamSource& s) {
  return Pick(s, {"0", "1", "7", "8", "13", "64", "#0", "#1", "#3", "-1", "x", "#", "#-1"});
}
std::string FieldValue(StreamSource& s) {
  return Pick(s, {"1", "-1", "5", "100", "127", "128", "255", "256", "-128", "-129",
                  "9223372036854775807", "-9223372036854775808", "x"});
}

std::vector<std::string> Bitfield(StreamSource& s, const std::string& name, bool gets_only) {
  std::vector<std::string> cmd = {s.Case(name), s.OneIn(3) ? AnyKey(s) : BitKey(s)};
  for (int ops = s.Uniform(0, 4); ops > 0; --ops) {
    const int pick = gets_only ? s.Uniform(0, 4) : s.Uniform(0, 9);
    if (pick < 4) {
      cmd.insert(cmd.end(), {s.Case("get"), FieldType(s), FieldOffset(s)});
    } else if (pick < 5) {
      cmd.insert(cmd.end(),
                 {s.Case("overflow"), s.Case(Pick(s, {"wrap", "sat", "fail", "bogus"}))});
    } else if (pick < 7) {
      cmd.insert(cmd.end(), {s.Case("set"), FieldType(s), FieldOffset(s), FieldValue(s)});
    } else {
      cmd.insert(cmd.end(), {s.Case("incrby"), FieldType(s), FieldOffset(s), FieldValue(s)});
    }
  }
  if (s.OneIn(15) && cmd.size() > 2) cmd.pop_back();  // a subcommand short of arguments
  return cmd;
}

// BITCOUNT's and BITPOS's optional [start [end [unit]]], or one too many.
std::vector<std::string> WithRange(StreamSource& s, std::vector<std::string> cmd) {
  const int args = s.Uniform(0, 4);
  if (args >= 1) cmd.push_back(BitIndex(s));
  if (args >= 2) cmd.push_back(BitIndex(s));
  if (args >= 3) cmd.push_back(Unit(s));
  if (args >= 4) cmd.push_back("extra");
  return cmd;
}

std::vector<std::string> Bitop(StreamSource& s) {
  std::vector<std::string> cmd = {s.Case("bitop"),
                                  s.Case(Pick(s, {"and", "or", "xor", "not", "and", "or", "nand"})),
                                  s.OneIn(5) ? s.Key() : BitKey(s)};
  for (int sources = s.OneIn(4) ? 1 : s.Uniform(1, 4); sources > 0; --sources) {
    cmd.push_back(AnyKey(s));
  }
  return cmd;
}

// A value for a bit key: binary, an integer (Redis keeps it as one), long.
std::string BitValue(StreamSource& s) {
  if (s.OneIn(6)) return std::string("\x00\x01\x80", 3);
  return Pick(s, {"foobar", "\xff\xff\xff", "12345", "-7", "", "\xf0",
                  "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"});
}

std::vector<std::string> NextBit(StreamSource& s) {
  const int pick = s.Uniform(0, 99);
  if (pick < 16) {
    return {s.Case("setbit"), s.OneIn(6) ? AnyKey(s) : BitKey(s), WriteOffset(s),
            Pick(s, {"0", "1", "1", "0", "2", "-1", "x", ""})};
  }
  if (pick < 26) return {s.Case("getbit"), AnyKey(s), ReadOffset(s)};
  if (pick < 38) {
    return WithRange(s, {s.Case("bitcount"), AnyKey(s)});
  }
  if (pick < 50) {
    return WithRange(s, {s.Case("bitpos"), AnyKey(s), Pick(s, {"0", "1", "0", "1", "2", "x"})});
  }
  if (pick < 62) return Bitfield(s, "bitfield", false);
  if (pick < 66) return Bitfield(s, s.OneIn(2) ? "bitfield_ro" : "bitfield", true);
  if (pick < 68) return Bitfield(s, "bitfield_ro", false);
  if (pick < 78) return Bitop(s);
  if (pick < 84) return {s.Case("set"), BitKey(s), BitValue(s)};
  if (pick < 88) return {s.Case("get"), BitKey(s)};
  if (pick < 90) return {s.Case("append"), BitKey(s), BitValue(s)};
  if (pick < 92) return {s.Case("expire"), BitKey(s), "100"};
  if (pick < 94) return {s.Case("ttl"), BitKey(s)};
  if (pick < 96) return {s.Case("del"), BitKey(s)};
  // Wrong arities.
  const std::string k = BitKey(s);
  return s.OneOf({{"setbit", k, "1"},
                  {"getbit", k},
                  {"bitop", "and", k},
                  {"bitfield"},
                  {"bitcount"},
                  {"bitpos", k},
                  {"setbit", k, "1", "1", "1"}});
}

bool Writes(const std::vector<std::string>& command) {
  const std::string name = Lower(command[0]);
  if (name == "setbit" || name == "bitop") return true;
  if (name != "bitfield") return false;
  for (const std::string& arg : command) {
    const std::string lower = Lower(arg);
    if (lower == "set" || lower == "incrby") return true;
  }
  return false;
}

// GETDEL of the shared key a bit command wrote (see the top).
std::vector<std::string> AfterBit(const std::vector<std::string>& command) {
  if (command.size() < 3 || !Writes(command)) return {};
  const std::string& key = Lower(command[0]) == "bitop" ? command[2] : command[1];
  if (key.rfind("bits:", 0) == 0) return {};
  return {"GETDEL", key};
}

ReplyMatch MatchBit(const std::vector<std::string>&) { return ReplyMatch::kExact; }

}  // namespace

ContainerStream BitStream() { return {NextBit, MatchBit, AfterBit}; }

}  // namespace kvlab::test
