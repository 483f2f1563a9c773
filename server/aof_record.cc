#include "server/aof_record.h"

#include <charconv>
#include <limits>
#include <string>

#include "engines/calls/container_call.h"
#include "server/commands/arguments.h"

namespace kvlab {
namespace {

// The EXPIRE condition flags of kExpireAt's integer2, as arguments.
void AddExpireConditions(int64_t bits, std::vector<std::string>& words) {
  if (bits & kExpireIfNoExpiry) words.push_back("NX");
  if (bits & kExpireIfHasExpiry) words.push_back("XX");
  if (bits & kExpireIfGreater) words.push_back("GT");
  if (bits & kExpireIfLess) words.push_back("LT");
}

// The effect of a one-operation command whose arguments hold a relative
// time, as absolute-time arguments; empty when the arguments can stand.
// Returns false when the command has no effect to log at all.
bool AbsoluteForm(const Operation& op, std::vector<std::string>& words) {
  switch (op.code) {
    case OpCode::kExpireAt:
      words = {"PEXPIREAT", std::string(op.key), std::to_string(op.integer)};
      AddExpireConditions(op.integer2, words);
      return true;
    case OpCode::kGetEx:
      if (op.integer == 0) return false;  // GETEX without options: a read
      if (op.integer == kPersistDeadline) {
        words = {"PERSIST", std::string(op.key)};
      } else {
        words = {"PEXPIREAT", std::string(op.key), std::to_string(op.integer)};
      }
      return true;
    case OpCode::kSet:
      words = {"SET", std::string(op.key), std::string(op.value)};
      if (op.set.expire_at_ms != 0) {
        words.push_back("PXAT");
        words.push_back(std::to_string(op.set.expire_at_ms));
      } else if (op.set.keep_ttl) {
        words.push_back("KEEPTTL");
      }
      if (op.set.condition == SetOptions::Condition::kIfAbsent) words.push_back("NX");
      if (op.set.condition == SetOptions::Condition::kIfPresent) words.push_back("XX");
      return true;
    case OpCode::kRestore:
      // As Redis propagates it: the TTL as an absolute deadline.
      words = {"RESTORE", std::string(op.key), std::to_string(op.integer), std::string(op.value)};
      if (op.integer != 0) words.push_back("ABSTTL");
      if (op.integer2 != 0) words.push_back("REPLACE");
      return true;
    default:
      return true;
  }
}

}  // namespace

namespace {
constexpr std::string_view kClockAnnotation = "#kvlab-now-ms:";
}  // namespace

void AppendClockAnnotation(int64_t now_ms, std::string& out) {
  out.append(kClockAnnotation);
  out += std::to_string(now_ms);
  out += "\r\n";
}

Status ParseClockAnnotation(std::string_view line, std::optional<int64_t>* now_ms) {
  *now_ms = std::nullopt;
  if (!line.starts_with(kClockAnnotation)) return Status::Ok();
  const std::string_view digits = line.substr(kClockAnnotation.size());
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 0) {
    return Status::InvalidArgument("a malformed clock annotation");
  }
  *now_ms = value;
  return Status::Ok();
}

namespace {
constexpr std::string_view kGroupAnnotation = "#kvlab-group:";

bool ParseDecimal(std::string_view digits, uint64_t* value) {
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
}
}  // namespace

std::string GroupAnnotation(uint64_t id, std::span<const uint32_t> lanes) {
  std::string line(kGroupAnnotation);
  line += std::to_string(id);
  char separator = ':';
  for (uint32_t lane : lanes) {
    line += separator;
    line += std::to_string(lane);
    separator = ',';
  }
  return line;
}

Status ParseGroupAnnotation(std::string_view line, std::optional<GroupMark>* mark) {
  *mark = std::nullopt;
  if (!line.starts_with(kGroupAnnotation)) return Status::Ok();
  std::string_view rest = line.substr(kGroupAnnotation.size());
  const size_t colon = rest.find(':');
  GroupMark parsed;
  if (colon == std::string_view::npos || !ParseDecimal(rest.substr(0, colon), &parsed.id) ||
      parsed.id == 0) {
    return Status::InvalidArgument("a malformed group annotation");
  }
  rest = rest.substr(colon + 1);
  while (true) {
    const size_t comma = rest.find(',');
    uint64_t lane = 0;
    if (!ParseDecimal(rest.substr(0, comma), &lane) ||
        lane > std::numeric_limits<uint32_t>::max() ||
        (!parsed.lanes.empty() && lane <= parsed.lanes.back())) {
      return Status::InvalidArgument("a malformed group annotation");
    }
    parsed.lanes.push_back(static_cast<uint32_t>(lane));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (parsed.lanes.size() < 2) return Status::InvalidArgument("a group annotation of one lane");
  *mark = std::move(parsed);
  return Status::Ok();
}

void AppendRespCommand(std::span<const std::string_view> args, std::string& out) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (std::string_view arg : args) {
    out += '$';
    out += std::to_string(arg.size());
    out += "\r\n";
    out.append(arg);
    out += "\r\n";
  }
}

void AofRecord::AddCommand(std::span<const std::string_view> args, std::span<const Operation> ops,
                           uint32_t first_result) {
  Piece piece;
  if (ops.size() == 1 && ops[0].code == OpCode::kContainer && EqualsIgnoreCase(args[0], "spop")) {
    piece.spop_key = std::string(ops[0].key);
    piece.spop_result = first_result;
    pieces_.push_back(std::move(piece));
    return;
  }
  std::vector<std::string> words;
  if (ops.size() == 1 && !AbsoluteForm(ops[0], words)) return;
  if (words.empty()) {
    AppendRespCommand(args, piece.bytes);
  } else {
    std::vector<std::string_view> views(words.begin(), words.end());
    AppendRespCommand(views, piece.bytes);
  }
  pieces_.push_back(std::move(piece));
}

void AofRecord::WrapInTransaction() {
  if (pieces_.empty()) return;
  Piece multi, exec;
  multi.bytes = "*1\r\n$5\r\nMULTI\r\n";
  exec.bytes = "*1\r\n$4\r\nEXEC\r\n";
  pieces_.insert(pieces_.begin(), std::move(multi));
  pieces_.push_back(std::move(exec));
}

void AofRecord::RenderInto(std::span<const OpResult> results, std::string& out) const {
  for (const Piece& piece : pieces_) {
    if (piece.spop_key.empty()) {
      out.append(piece.bytes);
      continue;
    }
    const OpResult& popped = results[piece.spop_result];
    std::vector<std::string_view> words = {"SREM", piece.spop_key};
    if (popped.kind == OpResult::Kind::kBulk) {
      words.push_back(popped.bulk.view());
    } else if (popped.kind == OpResult::Kind::kReply) {
      popped.reply->ForEach([&](ReplyList::Item item, int64_t, std::string_view bytes) {
        if (item == ReplyList::Item::kBulk) words.push_back(bytes);
      });
    }
    if (words.size() > 2) AppendRespCommand(words, out);
  }
}

}  // namespace kvlab
