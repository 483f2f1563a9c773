// Fuzz target: raw client bytes through RespParser, command dispatch and the
// `single` engine, the way a connection drives a Session.
//
// Each input runs twice on fresh engines: once fed in chunks whose sizes are
// derived from the input (so parser resumption across reads is exercised),
// once in a single read. Invariants checked (abort() on violation, which
// libFuzzer and the replay driver both report as a crash):
//   1. The output is a sequence of complete, well-formed RESP2 (or, after
//      HELLO 3, RESP3) replies
//      (checked by an independent validator, resp_reply_validator.h).
//   2. One reply per command: an independent RespParser over the whole input
//      says which commands are complete; the Session answers exactly those,
//      plus one error reply if the bytes end in a protocol error, and stops
//      after QUIT. It closes exactly when a protocol error or QUIT says so.
//   3. Chunked and whole-input runs give byte-identical replies, except for
//      replies that legitimately depend on time, chance or buffer sizes
//      (INFO, CLIENT, TTL/PTTL, EXPIRETIME, TIME, RANDOMKEY, an EXEC that
//      queued one, and everything after a command that sets an expiry).
//   4. The `single` engine completes every batch inline (no kPending).
// Crashes, ASan/UBSan reports and leaks come from the sanitizers.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine.h"
#include "server/resp_parser.h"
#include "server/server_context.h"
#include "server/session.h"
#include "tests/fuzz/resp_reply_validator.h"

namespace kvlab::fuzz {
namespace {

[[noreturn]] void Violation(const std::string& what, std::string_view detail = {}) {
  std::fprintf(stderr, "resp_session_fuzzer: invariant violated: %s\n", what.c_str());
  if (!detail.empty()) {
    std::fprintf(stderr, "  detail (%zu bytes): ", detail.size());
    for (unsigned char c : detail.substr(0, 400)) {
      if (c >= 0x20 && c < 0x7f)
        std::fputc(c, stderr);
      else
        std::fprintf(stderr, "\\x%02x", c);
    }
    std::fputc('\n', stderr);
  }
  std::abort();
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// What the server must do with the input, according to a parser that sees
// the whole input at once.
struct ExpectedConversation {
  size_t replies = 0;
  bool closes = false;
  // Per reply: may chunked and whole-input runs legitimately differ?
  std::vector<bool> time_or_buffer_dependent;
};

bool SetsExpiry(const std::vector<std::string_view>& args, const std::string& name) {
  if (name == "expire" || name == "pexpire" || name == "expireat" || name == "pexpireat" ||
      name == "setex" || name == "psetex") {
    return true;
  }
  if (name != "set" && name != "getex") return false;
  for (size_t i = name == "set" ? 3 : 2; i < args.size(); ++i) {
    std::string option = Lower(args[i]);
    if (option == "ex" || option == "px" || option == "exat" || option == "pxat") return true;
  }
  return false;
}

ExpectedConversation Expect(std::string_view input) {
  ExpectedConversation expected;
  RespParser parser;
  std::vector<std::string_view> args;
  bool after_expiry = false;
  bool queued_dependent = false;  // since the last MULTI
  while (true) {
    RespParser::Result result = parser.Parse(input, &args);
    if (result == RespParser::Result::kInputPending) return expected;
    if (result != RespParser::Result::kOk) {  // answered with one error, then closed
      ++expected.replies;
      expected.time_or_buffer_dependent.push_back(after_expiry);
      expected.closes = true;
      return expected;
    }
    if (args.empty()) continue;  // "*0", "*-1", blank inline line: no reply
    std::string name = Lower(args[0]);
    after_expiry = after_expiry || SetsExpiry(args, name);
    ++expected.replies;
    // The clock, chance, buffer sizes; and an EXEC whose queue held one.
    const bool dependent = name == "info" || name == "client" || name == "ttl" || name == "pttl" ||
                           name == "expiretime" || name == "pexpiretime" || name == "time" ||
                           name == "randomkey";
    if (name == "multi") queued_dependent = false;
    queued_dependent = queued_dependent || dependent;
    expected.time_or_buffer_dependent.push_back(after_expiry || dependent ||
                                                (name == "exec" && queued_dependent));
    if (name == "quit") {
      expected.closes = true;
      return expected;
    }
  }
}

struct Conversation {
  std::string replies;
  bool closed = false;
};

// A fresh `single` engine and server context per run, so runs are
// independent and an input always behaves the same.
Conversation Converse(std::string_view input, const std::vector<size_t>& chunk_sizes) {
  EngineConfig config;
  config.kind = "single";
  std::unique_ptr<Engine> engine;
  const Status made = MakeEngine(config, &engine);
  if (!made.ok()) Violation("MakeEngine(single) failed: " + made.message());
  ServerSettings settings;
  settings.engine = config;
  ServerContext context(*engine, settings);
  Session session(context, ClientInfo{1, "127.0.0.1:40000", "127.0.0.1:6379", false, 7});

  Conversation conversation;
  size_t fed = 0;
  for (size_t chunk : chunk_sizes) {
    session.input().append(input.substr(fed, chunk));
    fed += chunk;
    Session::Progress status = session.Process(conversation.replies, [] {
      Violation("the single engine resumed a session asynchronously");
    });
    if (status == Session::Progress::kPending) Violation("single engine returned kPending");
    if (status == Session::Progress::kClose) {
      conversation.closed = true;
      break;
    }
  }
  return conversation;
}

// Chunk sizes from the input's own bytes (FNV-1a seeds a xorshift), so a
// crash reproduces from the input file alone. Byte-at-a-time plans are kept
// for every size: they found the parser's O(n^2) rescan of unfinished length
// lines (fixed in 9939e69; corpus/regress-count-line-byte-at-a-time).
std::vector<size_t> ChunkPlan(std::string_view input) {
  uint64_t state = 14695981039346656037ull;
  for (unsigned char c : input) state = (state ^ c) * 1099511628211ull;
  state |= 1;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  static constexpr size_t kLargestChunk[] = {1, 2, 3, 7, 16, 64, 512};
  size_t largest = kLargestChunk[next() % std::size(kLargestChunk)];
  std::vector<size_t> sizes;
  for (size_t left = input.size(); left > 0;) {
    size_t chunk = 1 + next() % largest;
    if (chunk > left) chunk = left;
    sizes.push_back(chunk);
    left -= chunk;
  }
  return sizes;
}

void CheckReplies(const char* run, const Conversation& conversation,
                  const ExpectedConversation& expected) {
  ReplyCheck check = RespReplyValidator::CheckAll(conversation.replies);
  if (!check.ok) {
    Violation(std::string(run) + ": malformed RESP output: " + check.error, conversation.replies);
  }
  if (check.replies != expected.replies) {
    Violation(std::string(run) + ": " + std::to_string(check.replies) + " replies for " +
                  std::to_string(expected.replies) + " commands",
              conversation.replies);
  }
  if (conversation.closed != expected.closes) {
    Violation(
        std::string(run) + (conversation.closed ? ": closed unexpectedly"
                                                : ": did not close after QUIT/protocol error"),
        conversation.replies);
  }
}

// Top-level replies of a validated output, one string each.
std::vector<std::string_view> SplitValidated(std::string_view replies) {
  std::vector<std::string_view> split;
  size_t start = 0;
  for (size_t end : RespReplyValidator::CheckAll(replies).reply_ends) {
    split.push_back(replies.substr(start, end - start));
    start = end;
  }
  return split;
}

void CompareRuns(const Conversation& chunked, const Conversation& whole,
                 const ExpectedConversation& expected) {
  if (chunked.replies == whole.replies) return;
  std::vector<std::string_view> a = SplitValidated(chunked.replies);
  std::vector<std::string_view> b = SplitValidated(whole.replies);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i] && !expected.time_or_buffer_dependent[i]) {
      Violation("reply " + std::to_string(i) +
                    " differs between chunked and whole input: " + std::string(a[i].substr(0, 200)),
                b[i]);
    }
  }
}

}  // namespace
}  // namespace kvlab::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kvlab::fuzz;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ExpectedConversation expected = Expect(input);
  Conversation chunked = Converse(input, ChunkPlan(input));
  CheckReplies("chunked", chunked, expected);
  Conversation whole = Converse(input, {input.size()});
  CheckReplies("whole", whole, expected);
  CompareRuns(chunked, whole, expected);
  return 0;
}
