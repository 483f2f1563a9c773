// StringCommand and StringCall: a command that works on a key's string value
// with the whole command's arguments (the bit commands: SETBIT, BITFIELD,
// ...), the string-valued counterpart of container_call.h.
//
// Strings are stored inline in the entry, not as Container objects, so a
// string command sees the value's bytes, and a write hands back the new
// bytes: the keyspace (keyspace_ops.h) stores them keeping the key's TTL,
// or removes the key, once `run` returns. Every engine runs it the same way
// (ApplyToKey() or ReadKey()) while holding the key. `run` parses its
// arguments in Redis's order, checks the type where Redis does, then acts.
//
// A step of a multi-key command (BITOP's) also sees the running
// AtomicGroup's state, through which the steps pass what they read.
//
// Not synchronised: a call lives for one operation, with the key held.
// Commands without kStringWrite run under shared locks on some engines and
// must only read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engines/entry.h"
#include "engines/operation.h"
#include "engines/reply_list.h"

namespace kvlab {

struct GroupState;  // atomic_group.h
class StringCall;

enum StringCommandFlags : uint8_t {
  kStringWrite = 1,    // may change the key (else it only reads)
  kStringDenyOom = 2,  // refused at the memory limit (Redis's denyoom)
  // A step a server command queues inside an AtomicGroup, never registered
  // under its name; it needs the group's state.
  kStringGroupStep = 4,
};

struct StringCommand {
  std::string_view name;  // lower case, as the server's table spells it
  uint8_t flags;          // StringCommandFlags
  void (*run)(StringCall& call);
};

class StringCall {
 public:
  StringCall(std::span<const std::string_view> args, int64_t parameter,
             const std::optional<EntryView>& live, GroupState* group, OpResult& result)
      : args(args), parameter(parameter), group(group), live_(live), result_(result) {}

  // The whole command: args[0] its name, args[1] its key (a group step's
  // arguments are what its server command gave it).
  const std::span<const std::string_view> args;
  // What the server already parsed for the command (Operation::integer).
  const int64_t parameter;
  // The running AtomicGroup's state; nullptr unless kStringGroupStep.
  GroupState* const group;

  // Whether the key is missing or holds a string; when not, replies
  // WRONGTYPE. Call it where Redis checks the type.
  bool CheckType() {
    if (!live_ || live_->container == nullptr) return true;
    result_ = OpResult::Error(EngineError::kWrongType);
    return false;
  }
  bool exists() const { return live_.has_value(); }
  // The key's bytes ("" when missing). REQUIRES: CheckType() held.
  std::string_view value() const { return live_ ? live_->value : std::string_view(); }

  // The value to write, a copy of the stored one ("" when missing) made on
  // first use; the keyspace stores it, keeping the TTL, unless the bytes
  // are unchanged on an existing key. REQUIRES: a write command, CheckType().
  std::string& Edit() {
    if (!edited_) edited_.emplace(value());
    return *edited_;
  }
  // Stores `bytes` as a plain SET does (the TTL is dropped), or removes
  // the key when `bytes` is empty (BITOP's destination).
  void Replace(std::string bytes) {
    edited_ = std::move(bytes);
    drop_ttl_ = true;
  }

  // Replies.
  void Integer(int64_t value) { result_ = OpResult::Integer(value); }
  void Ok() { result_ = OpResult::Ok(); }
  void Error(std::string_view text) { result_ = OpResult::ErrorText(text); }
  // A reply of several values, built in place.
  ReplyList& List() { return result_.StartList(); }

  // For the keyspace that runs the call (keyspace_ops.h).
  const std::optional<std::string>& edited() const { return edited_; }
  bool drop_ttl() const { return drop_ttl_; }

 private:
  const std::optional<EntryView>& live_;
  OpResult& result_;
  std::optional<std::string> edited_;
  bool drop_ttl_ = false;
};

// The string command named `name` (lower case; bit_calls.h and
// hll_calls.h name the internal ones), or nullptr.
const StringCommand* FindStringCommand(std::string_view name);

}  // namespace kvlab
