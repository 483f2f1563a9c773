#include "engines/calls/bit_calls.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/rules/bit_arithmetic.h"
#include "engines/rules/proto_max_bulk_len.h"
#include "engines/calls/call_support.h"
#include "engines/calls/keyspace_ops.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {

namespace {

constexpr std::string_view kBitOffsetError = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kBitValueError = "ERR bit is not an integer or out of range";
constexpr std::string_view kFieldTypeError =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

// getBitOffsetFromArgument(): a bit offset below proto-max-bulk-len * 8; with
// `field_bits`, "#N" means N fields of that width.
bool ParseBitOffset(StringCall& call, std::string_view arg, int field_bits, uint64_t* offset) {
  const bool in_fields = field_bits > 0 && !arg.empty() && arg[0] == '#';
  std::optional<int64_t> parsed = ParseRedisInt64(in_fields ? arg.substr(1) : arg);
  if (parsed && in_fields) {
    // Redis multiplies in C (wrapping); so does this, without the UB.
    parsed =
        static_cast<int64_t>(static_cast<uint64_t>(*parsed) * static_cast<uint64_t>(field_bits));
  }
  if (!parsed || *parsed < 0 || (*parsed >> 3) >= ProtoMaxBulkLen()) {
    call.Error(kBitOffsetError);
    return false;
  }
  *offset = static_cast<uint64_t>(*parsed);
  return true;
}

bool ParseInteger(StringCall& call, std::string_view arg, int64_t* value) {
  const std::optional<int64_t> parsed = ParseRedisInt64(arg);
  if (!parsed) {
    call.Error(kContainerNotIntegerError);
    return false;
  }
  *value = *parsed;
  return true;
}

// lookupStringForBitCommand(): the value to write, zero-padded to hold
// `highest_bit`.
std::string& GrowToHold(StringCall& call, uint64_t highest_bit) {
  std::string& bytes = call.Edit();
  const uint64_t needed = (highest_bit >> 3) + 1;
  if (bytes.size() < needed) bytes.resize(needed, '\0');
  return bytes;
}

void SetBitCommand(StringCall& call) {
  uint64_t offset = 0;
  if (!ParseBitOffset(call, call.args[2], 0, &offset)) return;
  const std::optional<int64_t> on = ParseRedisInt64(call.args[3]);
  if (!on || (*on & ~int64_t{1}) != 0) {
    call.Error(kBitValueError);
    return;
  }
  if (!call.CheckType()) return;
  std::string& bytes = GrowToHold(call, offset);
  const bool was_on = GetBit(bytes, offset);
  SetBit(bytes, offset, *on == 1);
  call.Integer(was_on ? 1 : 0);
}

void GetBitCommand(StringCall& call) {
  uint64_t offset = 0;
  if (!ParseBitOffset(call, call.args[2], 0, &offset)) return;
  if (!call.exists()) return call.Integer(0);
  if (!call.CheckType()) return;
  call.Integer(GetBit(call.value(), offset) ? 1 : 0);
}

// "BYTE" or "BIT" into *bit_units; else a syntax error.
bool ParseUnit(StringCall& call, std::string_view arg, bool* bit_units) {
  if (OptionIs(arg, "bit")) {
    *bit_units = true;
  } else if (OptionIs(arg, "byte")) {
    *bit_units = false;
  } else {
    call.Error(kContainerSyntaxError);
    return false;
  }
  return true;
}

// BITCOUNT key [start end [BYTE|BIT]]: a missing key is 0 before anything
// else is looked at.
void BitCountCommand(StringCall& call) {
  if (!call.exists()) return call.Integer(0);
  if (!call.CheckType()) return;
  const size_t argc = call.args.size();
  if (argc == 2) return call.Integer(CountBits(call.value()));
  if (argc != 4 && argc != 5) return call.Error(kContainerSyntaxError);
  int64_t start = 0, end = 0;
  if (!ParseInteger(call, call.args[2], &start) || !ParseInteger(call, call.args[3], &end)) return;
  // Redis answers 0 for this empty range before it reads the unit.
  if (start < 0 && end < 0 && start > end) return call.Integer(0);
  bool bit_units = false;
  if (argc == 5 && !ParseUnit(call, call.args[4], &bit_units)) return;
  call.Integer(CountBits(call.value(), start, end, bit_units));
}

// BITPOS key bit [start [end [BYTE|BIT]]].
void BitPosCommand(StringCall& call) {
  int64_t bit = 0;
  if (!ParseInteger(call, call.args[2], &bit)) return;
  if (bit != 0 && bit != 1) return call.Error("ERR The bit argument must be 1 or 0.");
  // A missing key is an endless run of zeros.
  if (!call.exists()) return call.Integer(bit ? -1 : 0);
  if (!call.CheckType()) return;
  const size_t argc = call.args.size();
  if (argc == 3) return call.Integer(FindBit(call.value(), bit == 1));
  if (argc > 6) return call.Error(kContainerSyntaxError);
  int64_t start = 0;
  if (!ParseInteger(call, call.args[3], &start)) return;
  bool bit_units = false;
  if (argc == 6 && !ParseUnit(call, call.args[5], &bit_units)) return;
  std::optional<int64_t> end;
  if (argc >= 5) {
    int64_t given = 0;
    if (!ParseInteger(call, call.args[4], &given)) return;
    end = given;
  }
  call.Integer(FindBit(call.value(), bit == 1, start, end, bit_units));
}

// One BITFIELD subcommand, parsed.
struct FieldOp {
  enum class Kind : uint8_t { kGet, kSet, kIncrBy };
  Kind kind = Kind::kGet;
  uint64_t offset = 0;
  int64_t value = 0;  // SET's value, INCRBY's increment
  FieldOverflow overflow = FieldOverflow::kWrap;
  int bits = 0;
  bool is_signed = false;
};

// getBitfieldTypeFromArgument(): i1..i64 or u1..u63 (the width read as a
// C string, so it ends at a NUL).
bool ParseFieldType(StringCall& call, std::string_view arg, FieldOp* op) {
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u')) {
    call.Error(kFieldTypeError);
    return false;
  }
  op->is_signed = arg[0] == 'i';
  std::string_view width = arg.substr(1);
  width = width.substr(0, width.find('\0'));
  const std::optional<int64_t> bits = ParseRedisInt64(width);
  if (!bits || *bits < 1 || *bits > (op->is_signed ? 64 : 63)) {
    call.Error(kFieldTypeError);
    return false;
  }
  op->bits = static_cast<int>(*bits);
  return true;
}

// bitfieldGeneric()'s parse: every subcommand, in order, before the key is
// looked at. *highest_write is the last bit a SET or INCRBY touches.
bool ParseFieldOps(StringCall& call, std::vector<FieldOp>* ops, bool* writes,
                   uint64_t* highest_write) {
  FieldOverflow overflow = FieldOverflow::kWrap;
  const size_t argc = call.args.size();
  for (size_t j = 2; j < argc; ++j) {
    const size_t remaining = argc - j - 1;
    const std::string_view name = call.args[j];
    FieldOp op;
    if (OptionIs(name, "get") && remaining >= 2) {
      op.kind = FieldOp::Kind::kGet;
    } else if (OptionIs(name, "set") && remaining >= 3) {
      op.kind = FieldOp::Kind::kSet;
    } else if (OptionIs(name, "incrby") && remaining >= 3) {
      op.kind = FieldOp::Kind::kIncrBy;
    } else if (OptionIs(name, "overflow") && remaining >= 1) {
      const std::string_view type = call.args[++j];
      if (OptionIs(type, "wrap")) {
        overflow = FieldOverflow::kWrap;
      } else if (OptionIs(type, "sat")) {
        overflow = FieldOverflow::kSat;
      } else if (OptionIs(type, "fail")) {
        overflow = FieldOverflow::kFail;
      } else {
        call.Error("ERR Invalid OVERFLOW type specified");
        return false;
      }
      continue;
    } else {
      call.Error(kContainerSyntaxError);
      return false;
    }
    if (!ParseFieldType(call, call.args[j + 1], &op)) return false;
    if (!ParseBitOffset(call, call.args[j + 2], op.bits, &op.offset)) return false;
    if (op.kind != FieldOp::Kind::kGet) {
      *writes = true;
      *highest_write = std::max(*highest_write, op.offset + op.bits - 1);
      if (!ParseInteger(call, call.args[j + 3], &op.value)) return false;
    }
    op.overflow = overflow;
    ops->push_back(op);
    j += op.kind == FieldOp::Kind::kGet ? 2 : 3;
  }
  return true;
}

void ReadField(const FieldOp& op, std::string_view bytes, ReplyList& reply) {
  if (op.is_signed) {
    reply.Integer(ReadSignedField(bytes, op.offset, op.bits));
  } else {
    reply.Integer(static_cast<int64_t>(ReadUnsignedField(bytes, op.offset, op.bits)));
  }
}

// SET or INCRBY on a field of `bytes` (grown to hold it): replies the old
// value (SET) or the new one (INCRBY), or nil when OVERFLOW FAIL refuses.
void WriteField(const FieldOp& op, std::string& bytes, ReplyList& reply) {
  unsigned char* data = reinterpret_cast<unsigned char*>(bytes.data());
  const bool increment = op.kind == FieldOp::Kind::kIncrBy;
  uint64_t stored = 0;
  int64_t answer = 0;
  int overflowed = 0;
  if (op.is_signed) {
    const int64_t old = GetSignedField(data, op.offset, op.bits);
    const int64_t next =
        increment
            ? static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value))
            : op.value;
    int64_t limit = 0;
    overflowed = CheckSignedFieldOverflow(increment ? old : next, increment ? op.value : 0, op.bits,
                                          op.overflow, &limit);
    const int64_t result = overflowed ? limit : next;
    stored = static_cast<uint64_t>(result);
    answer = increment ? result : old;
  } else {
    const uint64_t old = GetUnsignedField(data, op.offset, op.bits);
    const uint64_t next =
        increment ? old + static_cast<uint64_t>(op.value) : static_cast<uint64_t>(op.value);
    uint64_t limit = 0;
    overflowed = CheckUnsignedFieldOverflow(increment ? old : next, increment ? op.value : 0,
                                            op.bits, op.overflow, &limit);
    stored = overflowed ? limit : next;
    answer = static_cast<int64_t>(increment ? stored : old);
  }
  if (overflowed && op.overflow == FieldOverflow::kFail) return reply.Nil();
  reply.Integer(answer);
  SetUnsignedField(data, op.offset, op.bits, stored);
}

// BITFIELD and BITFIELD_RO (`read_only`): a command of GETs only reads the
// key; any SET or INCRBY first grows the value to its farthest bit (a
// missing key is created even if every write then fails).
void RunBitfield(StringCall& call, bool read_only) {
  std::vector<FieldOp> ops;
  bool writes = false;
  uint64_t highest_write = 0;
  if (!ParseFieldOps(call, &ops, &writes, &highest_write)) return;
  if (writes && read_only) return call.Error("ERR BITFIELD_RO only supports the GET subcommand");
  if (!call.CheckType()) return;
  if (!writes) {
    ReplyList& reply = call.List();
    reply.Array(ops.size());
    for (const FieldOp& op : ops) ReadField(op, call.value(), reply);
    return;
  }
  std::string& bytes = GrowToHold(call, highest_write);
  ReplyList& reply = call.List();
  reply.Array(ops.size());
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOp::Kind::kGet) {
      ReadField(op, bytes, reply);
    } else {
      WriteField(op, bytes, reply);
    }
  }
}

void BitfieldCommand(StringCall& call) { RunBitfield(call, false); }
void BitfieldReadOnlyCommand(StringCall& call) { RunBitfield(call, true); }

// BITOP's steps (bit_calls.h): a source of another type is WRONGTYPE; a
// missing one is an empty string.
void FoldSource(StringCall& call, bool first) {
  if (!call.CheckType()) return;
  FoldBitOperand(static_cast<BitOperator>(call.parameter), first, call.value(),
                 call.group->bit_result);
}
void BitopFirstSourceStep(StringCall& call) { FoldSource(call, true); }
void BitopSourceStep(StringCall& call) { FoldSource(call, false); }

void BitopStoreStep(StringCall& call) {
  std::string result = std::move(call.group->bit_result);
  call.group->bit_result.clear();
  call.Integer(static_cast<int64_t>(result.size()));
  call.Replace(std::move(result));
}

constexpr uint8_t kRead = 0;
constexpr uint8_t kGrow = kStringWrite | kStringDenyOom;

const StringCommand kBitCommands[] = {
    {"setbit", kGrow, SetBitCommand},
    {"getbit", kRead, GetBitCommand},
    {"bitcount", kRead, BitCountCommand},
    {"bitpos", kRead, BitPosCommand},
    {"bitfield", kGrow, BitfieldCommand},
    {kBitfieldReadOnly, kRead, BitfieldReadOnlyCommand},
    {kBitopFirstSource, kRead | kStringGroupStep, BitopFirstSourceStep},
    {kBitopSource, kRead | kStringGroupStep, BitopSourceStep},
    {kBitopStore, kGrow | kStringGroupStep, BitopStoreStep},
};

}  // namespace

std::span<const StringCommand> BitStringCommands() { return kBitCommands; }

}  // namespace kvlab
