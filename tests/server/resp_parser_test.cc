// RespParser: every command form split at every byte, byte-at-a-time input,
// pipelines, inline quoting, and each malformed form with Redis's error text.
#include "server/resp_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvlab {
namespace {

using Args = std::vector<std::string>;
using Result = RespParser::Result;

// Parses `chunks` fed one after another into one buffer, compacting between
// chunks as the Session does; returns every command parsed.
struct Parsed {
  std::vector<Args> commands;
  Result last = Result::kInputPending;
  std::string error;
};

Parsed ParseChunks(const std::vector<std::string>& chunks, RespParser::Limits limits = {},
                   bool auth_required = false) {
  RespParser parser(limits);
  std::string buffer;
  std::vector<std::string_view> args;
  Parsed parsed;
  for (const std::string& chunk : chunks) {
    buffer += chunk;
    while (true) {
      Result result = parser.Parse(buffer, &args, auth_required);
      parsed.last = result;
      if (result == Result::kOk) {
        if (!args.empty()) parsed.commands.emplace_back(args.begin(), args.end());
        continue;
      }
      if (result != Result::kInputPending) {
        parsed.error = parser.error();
        return parsed;
      }
      break;
    }
    parser.Compact(buffer);
  }
  return parsed;
}

struct Form {
  std::string bytes;
  std::vector<Args> commands;
};

const std::vector<Form>& ValidForms() {
  static const std::vector<Form> forms = {
      {"*1\r\n$4\r\nPING\r\n", {{"PING"}}},
      {"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nva\r\nl\r\n", {{"SET", "k", "va\r\nl"}}},
      {std::string("*2\r\n$3\r\nGET\r\n$3\r\na\0b\r\n", 23), {{"GET", std::string("a\0b", 3)}}},
      {"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {{"ECHO", ""}}},
      {"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", {{"PING"}}},
      {"PING\r\n", {{"PING"}}},
      {"PING\n", {{"PING"}}},
      {"  SET  k   v \r\n", {{"SET", "k", "v"}}},
      {"\r\n\r\nGET k\r\n", {{"GET", "k"}}},
      {"SET k \"a b\\x41\\n\\\"\"\r\n", {{"SET", "k", "a bA\n\""}}},
      {"SET k 'it\\'s' \"\"\r\n", {{"SET", "k", "it's", ""}}},
      // Single quotes take only \' as an escape; each quote is plain inside the other.
      {"SET k 'a\\nb\\x41' 'x\"y' \"p'q\"\r\n", {{"SET", "k", "a\\nb\\x41", "x\"y", "p'q"}}},
      {"GET k\r\n*2\r\n$3\r\nGET\r\n$1\r\nj\r\nPING\r\n", {{"GET", "k"}, {"GET", "j"}, {"PING"}}},
  };
  return forms;
}

// Whether `command` (RESP bytes) is one the parser flags as far larger than
// usual, and what ReleaseLargeBuffers() then leaves of a buffer it grew.
TEST(RespParser, FlagsACommandFarLargerThanUsualAndGivesItsMemoryBack) {
  auto command_of = [](size_t argc, size_t arg_bytes) {
    std::string bytes = "*" + std::to_string(argc) + "\r\n";
    for (size_t i = 0; i < argc; ++i) {
      bytes += "$" + std::to_string(arg_bytes) + "\r\n" + std::string(arg_bytes, 'x') + "\r\n";
    }
    return bytes;
  };
  struct Case {
    size_t argc, arg_bytes;
    bool large;
  };
  for (const Case& c :
       {Case{RespParser::kKeptArguments, 1, false}, Case{RespParser::kKeptArguments + 1, 1, true},
        Case{2, RespParser::kLargeArgumentBytes, false},
        Case{2, RespParser::kLargeArgumentBytes + 1, true}}) {
    RespParser parser(RespParser::Limits{});
    std::string buffer = command_of(c.argc, c.arg_bytes);
    std::vector<std::string_view> args;
    ASSERT_EQ(parser.Parse(buffer, &args, false), Result::kOk);
    EXPECT_EQ(args.size(), c.argc);
    EXPECT_EQ(parser.saw_large_command(), c.large) << c.argc << " x " << c.arg_bytes;
    EXPECT_EQ(parser.Parse(buffer, &args, false), Result::kInputPending);
    parser.Compact(buffer);
    EXPECT_TRUE(buffer.empty());
    parser.ReleaseLargeBuffers(buffer);
    EXPECT_FALSE(parser.saw_large_command());
    EXPECT_LE(buffer.capacity(), RespParser::kKeptBufferBytes);
    // The parser still parses after it.
    buffer = "PING\r\n";
    ASSERT_EQ(parser.Parse(buffer, &args, false), Result::kOk);
    EXPECT_EQ(args.size(), 1u);
  }
}

TEST(RespParser, ParsesEveryFormInOnePiece) {
  for (const Form& form : ValidForms()) {
    Parsed parsed = ParseChunks({form.bytes});
    EXPECT_EQ(parsed.last, Result::kInputPending) << form.bytes;
    EXPECT_EQ(parsed.commands, form.commands) << form.bytes;
  }
}

TEST(RespParser, ParsesEveryFormSplitAtEveryOffset) {
  for (const Form& form : ValidForms()) {
    for (size_t cut = 1; cut < form.bytes.size(); ++cut) {
      Parsed parsed = ParseChunks({form.bytes.substr(0, cut), form.bytes.substr(cut)});
      EXPECT_EQ(parsed.commands, form.commands) << "cut at " << cut << " of " << form.bytes;
    }
  }
}

TEST(RespParser, ParsesEveryFormByteAtATime) {
  for (const Form& form : ValidForms()) {
    std::vector<std::string> bytes;
    for (char c : form.bytes) bytes.emplace_back(1, c);
    Parsed parsed = ParseChunks(bytes);
    EXPECT_EQ(parsed.commands, form.commands) << form.bytes;
  }
}

TEST(RespParser, ParsesALongPipeline) {
  std::string bytes;
  std::vector<Args> expected;
  for (int i = 0; i < 2000; ++i) {
    std::string key = "key:" + std::to_string(i);
    bytes += "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$1\r\nv\r\n";
    expected.push_back({"SET", key, "v"});
    if (i % 7 == 0) {
      bytes += "GET " + key + "\r\n";
      expected.push_back({"GET", key});
    }
  }
  EXPECT_EQ(ParseChunks({bytes}).commands, expected);
  // The same stream in uneven reads.
  std::vector<std::string> reads;
  for (size_t pos = 0; pos < bytes.size(); pos += 37) reads.push_back(bytes.substr(pos, 37));
  EXPECT_EQ(ParseChunks(reads).commands, expected);
}

TEST(RespParser, BulkPayloadIsAViewIntoTheBuffer) {
  RespParser parser;
  std::string buffer = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse(buffer, &args), Result::kOk);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1].data(), buffer.data() + 18);
  EXPECT_EQ(parser.consumed(), buffer.size());
}

struct Malformed {
  std::string bytes;
  Result result;
  std::string error;
};

TEST(RespParser, RejectsEachMalformedFormWithRedisText) {
  const std::vector<Malformed> cases = {
      {"*abc\r\n", Result::kBadArrayLen, "ERR Protocol error: invalid multibulk length"},
      {"*01\r\n", Result::kBadArrayLen, "ERR Protocol error: invalid multibulk length"},
      {"*1\r\n$abc\r\n", Result::kBadBulkLen, "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$-5\r\n", Result::kBadBulkLen, "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$536870913\r\n", Result::kBadBulkLen, "ERR Protocol error: invalid bulk length"},
      {"*1\r\nx3\r\n", Result::kExpectedBulk, "ERR Protocol error: expected '$', got 'x'"},
      {"\"unbalanced\r\n", Result::kBadInlineQuoting,
       "ERR Protocol error: unbalanced quotes in request"},
      {"GET \"a\"b\r\n", Result::kBadInlineQuoting,
       "ERR Protocol error: unbalanced quotes in request"},
      {"'unbalanced\r\n", Result::kBadInlineQuoting,
       "ERR Protocol error: unbalanced quotes in request"},
      {"GET 'a'b\r\n", Result::kBadInlineQuoting,
       "ERR Protocol error: unbalanced quotes in request"},
      {std::string(65 * 1024 + 1, 'A'), Result::kInlineTooBig,
       "ERR Protocol error: too big inline request"},
      {"*" + std::string(65 * 1024, '1'), Result::kArrayLenTooLong,
       "ERR Protocol error: too big mbulk count string"},
      {"*1\r\n$" + std::string(65 * 1024, '1'), Result::kBulkLenTooLong,
       "ERR Protocol error: too big bulk count string"},
  };
  for (const Malformed& c : cases) {
    Parsed whole = ParseChunks({c.bytes});
    EXPECT_EQ(whole.last, c.result) << c.bytes.substr(0, 40);
    EXPECT_EQ(whole.error, c.error) << c.bytes.substr(0, 40);
    // The same error however the bytes are split.
    for (size_t cut = 1; cut < std::min<size_t>(c.bytes.size(), 24); ++cut) {
      Parsed split = ParseChunks({c.bytes.substr(0, cut), c.bytes.substr(cut)});
      EXPECT_EQ(split.error, c.error) << "cut " << cut << ": " << c.bytes.substr(0, 40);
    }
  }
}

TEST(RespParser, LongLengthLineByteAtATimeStillHitsTheLimit) {
  std::vector<std::string> bytes = {"*1\r\n$"};
  for (int i = 0; i < 65 * 1024 + 1; ++i) bytes.emplace_back("1");
  Parsed parsed = ParseChunks(bytes);
  EXPECT_EQ(parsed.error, "ERR Protocol error: too big bulk count string");
  // ... and a CR arriving as the very last byte is still found.
  Parsed split = ParseChunks({"*1\r\n$4", "\r", "\nPING\r\n"});
  EXPECT_EQ(split.commands, std::vector<Args>{{"PING"}});
}

TEST(RespParser, HonoursConfiguredLimits) {
  RespParser::Limits limits;
  limits.max_bulk_len = 4;
  limits.max_args = 2;
  EXPECT_EQ(ParseChunks({"*1\r\n$5\r\n"}, limits).error, "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseChunks({"*1\r\n$4\r\nPING\r\n"}, limits).commands, std::vector<Args>{{"PING"}});
  EXPECT_EQ(ParseChunks({"*3\r\n"}, limits).error, "ERR Protocol error: invalid multibulk length");
}

// Without a limit of its own, a parser reads the process's proto-max-bulk-len
// at every bulk header: a CONFIG SET reaches a connection already open.
TEST(RespParser, FollowsTheProcessProtoMaxBulkLen) {
  RespParser before{RespParser::Limits{}};
  RespParser after{RespParser::Limits{}};  // opened before the CONFIG SET too
  std::vector<std::string_view> args;
  const std::string header = "*1\r\n$" + std::to_string(kMinProtoMaxBulkLen + 1) + "\r\n";
  EXPECT_EQ(before.Parse(header, &args), RespParser::Result::kInputPending);
  ProtoMaxBulkLenSetting().store(kMinProtoMaxBulkLen, std::memory_order_relaxed);
  EXPECT_EQ(after.Parse(header, &args), RespParser::Result::kBadBulkLen);
  EXPECT_EQ(after.error(), "ERR Protocol error: invalid bulk length");
  ProtoMaxBulkLenSetting().store(kDefaultProtoMaxBulkLen, std::memory_order_relaxed);
}

TEST(RespParser, AppliesRedisUnauthenticatedLimits) {
  EXPECT_EQ(ParseChunks({"*11\r\n"}, {}, true).error,
            "ERR Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(ParseChunks({"*10\r\n"}, {}, true).last, Result::kInputPending);
  EXPECT_EQ(ParseChunks({"*2\r\n$16385\r\n"}, {}, true).error,
            "ERR Protocol error: unauthenticated bulk length");
  EXPECT_EQ(ParseChunks({"*2\r\n$16384\r\n"}, {}, true).last, Result::kInputPending);
  EXPECT_EQ(ParseChunks({"*11\r\n"}, {}, false).last, Result::kInputPending);
}

TEST(RespParser, NulHidesTheLineEndLikeRedisStrchr) {
  // Redis never sees the line end after a NUL: it waits for more input.
  EXPECT_EQ(ParseChunks({std::string("GET a\0b\r\n", 9)}).last, Result::kInputPending);
  EXPECT_EQ(ParseChunks({std::string("*1\r\n\0abc\r\n", 10)}).last, Result::kInputPending);
}

}  // namespace
}  // namespace kvlab
