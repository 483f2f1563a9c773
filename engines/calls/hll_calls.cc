#include "engines/calls/hll_calls.h"

#include <cctype>
#include <memory>
#include <string>

#include "engines/calls/atomic_group.h"
#include "engines/rules/hyperloglog.h"

namespace kvlab {

namespace {

// isHLLObjectOrReply(): the key's type first (WRONGTYPE for a container),
// then whether its bytes are an HLL. REQUIRES: the key exists.
bool CheckHll(StringCall& call) {
  if (!call.CheckType()) return false;
  if (LooksLikeHll(call.value())) return true;
  call.Error(kHllWrongTypeError);
  return false;
}

void PfaddCommand(StringCall& call) {
  if (call.exists() && !CheckHll(call)) return;
  int updated = 0;
  if (!call.exists()) {
    call.Edit() = NewHll();
    updated = 1;
  }
  std::string& hll = call.Edit();
  for (size_t i = 2; i < call.args.size(); ++i) {
    const int added = HllAdd(hll, call.args[i]);
    if (added < 0) {
      call.Error(kHllInvalidError);
      return;
    }
    updated += added;
  }
  if (updated) HllInvalidateCount(hll);
  call.Integer(updated ? 1 : 0);
}

// PFCOUNT of one key: the cached estimate, or a new one, then cached.
void PfcountCommand(StringCall& call) {
  if (!call.exists()) {
    call.Integer(0);
    return;
  }
  if (!CheckHll(call)) return;
  if (const std::optional<uint64_t> cached = HllCachedCount(call.value())) {
    call.Integer(static_cast<int64_t>(*cached));
    return;
  }
  const std::optional<uint64_t> estimate = HllEstimate(call.value());
  if (!estimate) {
    call.Error(kHllInvalidError);
    return;
  }
  HllStoreCount(call.Edit(), *estimate);
  call.Integer(static_cast<int64_t>(*estimate));
}

// A source's registers into the group's maximum; false (and the error
// answered) when it is not a valid HLL. A missing key is an empty HLL.
bool FoldRegisters(StringCall& call) {
  GroupState& group = *call.group;
  if (!group.hll_registers) group.hll_registers = std::make_unique<HllRegisters>();
  if (!call.exists()) return true;
  if (!CheckHll(call)) return false;
  if (!HllMergeInto(*group.hll_registers, call.value())) {
    call.Error(kHllInvalidError);
    return false;
  }
  group.hll_dense_source |= IsDenseHll(call.value());
  return true;
}

void PfcountSourceStep(StringCall& call) {
  if (FoldRegisters(call) && call.parameter == 1) {
    call.Integer(static_cast<int64_t>(HllEstimate(*call.group->hll_registers)));
  }
}

void PfmergeSourceStep(StringCall& call) { FoldRegisters(call); }

// The destination, already read as the first source, takes the maximum:
// dense when any source was, as Redis writes it.
void PfmergeStoreStep(StringCall& call) {
  if (!call.exists()) call.Edit() = NewHll();
  std::string& hll = call.Edit();
  if (call.group->hll_dense_source && !HllToDense(hll)) {
    call.Error(kHllInvalidError);
    return;
  }
  if (call.group->hll_registers) {
    const HllRegisters& max = *call.group->hll_registers;
    for (int i = 0; i < kHllRegisters; ++i) {
      if (max[i] != 0) HllSet(hll, i, max[i]);
    }
  }
  HllInvalidateCount(hll);
  call.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key (args[1] the subcommand).
void PfdebugCommand(StringCall& call) {
  if (!call.exists()) {
    call.Error("ERR The specified key does not exist");
    return;
  }
  if (!CheckHll(call)) return;
  std::string& hll = call.Edit();  // Redis unshares the value whatever the subcommand
  const std::string_view subcommand = call.args[1];
  auto is = [&](std::string_view name) {
    if (subcommand.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(subcommand[i])) != name[i]) return false;
    }
    return true;
  };
  if (is("getreg")) {
    if (!HllToDense(hll)) {
      call.Error(kHllInvalidError);
      return;
    }
    const HllRegisters registers = HllDenseRegisters(hll);
    ReplyList& reply = call.List();
    reply.Array(registers.size());
    for (uint8_t value : registers) reply.Integer(value);
  } else if (is("decode")) {
    if (IsDenseHll(hll)) {
      call.Error("ERR HLL encoding is not sparse");
      return;
    }
    call.List().Bulk(HllDecodeSparse(hll));
  } else if (is("encoding")) {
    call.List().Status(IsDenseHll(hll) ? "dense" : "sparse");
  } else if (is("todense")) {
    const bool was_sparse = !IsDenseHll(hll);
    if (!HllToDense(hll)) {
      call.Error(kHllInvalidError);
      return;
    }
    call.Integer(was_sparse ? 1 : 0);
  } else {
    call.Error("ERR Unknown PFDEBUG subcommand '" + std::string(subcommand) + "'");
  }
}

constexpr uint8_t kHllRead = 0;
constexpr uint8_t kHllGrow = kStringWrite | kStringDenyOom;

const StringCommand kHllCommands[] = {
    {"pfadd", kHllGrow, PfaddCommand},
    {"pfcount", kStringWrite, PfcountCommand},  // the cache: see hll_calls.h
    {"pfdebug", kHllGrow, PfdebugCommand},
    {kPfcountSource, kHllRead | kStringGroupStep, PfcountSourceStep},
    {kPfmergeSource, kHllRead | kStringGroupStep, PfmergeSourceStep},
    {kPfmergeStore, kHllGrow | kStringGroupStep, PfmergeStoreStep},
};

}  // namespace

std::span<const StringCommand> HllStringCommands() { return kHllCommands; }

}  // namespace kvlab
