// ContainerCommand and ContainerCall: how a command on a hash, list, set or
// sorted set is described (one table, owned by engines/containers/) and what
// it sees while it runs (the key's value, the arguments, where its reply goes).
//
// The value semantics of every container command live in its `run`
// function, written once; every engine runs it the same way (through
// keyspace_ops.h's ApplyToKey() or ReadKey()) while holding the key as its
// header says — so an engine decides only who may touch an entry and for
// how long. `run` parses its arguments in Redis's order (syntax errors
// before the type check), then checks the type, then acts.
//
// A step of a multi-key command (SINTERSTORE's, SMOVE's) also sees the
// running AtomicGroup's state, through which the steps pass what they read,
// and may replace the key's value whole.
//
// Not synchronised: a call lives for one operation, with the key held.
// Commands without kContainerWrite run under shared locks on some engines
// and must only read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "engines/container.h"
#include "engines/entry.h"
#include "engines/operation.h"
#include "engines/reply_list.h"

namespace kvlab {

struct GroupState;  // atomic_group.h
class ContainerCall;

enum ContainerCommandFlags : uint8_t {
  kContainerWrite = 1,    // may change the key (else it only reads)
  kContainerDenyOom = 2,  // refused at the memory limit (Redis's denyoom)
  // Not a command by itself: a step a server command queues (e.g. "the
  // members of this set" for SINTER), never registered under its name. It
  // sees the arguments its server command gives it (its own name, or the
  // whole command).
  kContainerInternal = 4,
  // An internal step that needs its AtomicGroup's state (GroupState): it
  // sees its server command's whole arguments. A group holding one always
  // holds a write step too, so every engine runs it through ApplyToKey().
  kContainerGroupStep = 8,
  // A guard step inside an AtomicGroup (ZMPOP's per key): any reply but
  // nil skips the `guard_span` operations after it.
  kContainerGuard = 16,
};

struct ContainerCommand {
  std::string_view name;  // lower case, as the server's table spells it
  int arity;              // Redis's: n exactly, -n at least n (name and key counted)
  ValueType type;         // the type it works on
  uint8_t flags;          // ContainerCommandFlags
  void (*run)(ContainerCall& call);
};

inline constexpr std::string_view kWrongTypeError =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

class ContainerCall {
 public:
  ContainerCall(const ContainerCommand& command, std::span<const std::string_view> args,
                const std::optional<EntryView>& live, int64_t now_ms, OpResult& result,
                GroupState* group = nullptr)
      : args(args), now_ms(now_ms), group(group), command_(command), live_(live), result_(result) {}

  // The whole command: args[0] its name, args[1] its key (a group step's
  // arguments are its server command's).
  const std::span<const std::string_view> args;
  const int64_t now_ms;
  // The running AtomicGroup's state; nullptr unless kContainerGroupStep.
  GroupState* const group;

  // Whether the key is missing or holds the command's type; when not,
  // replies WRONGTYPE. Call it after the arguments are parsed.
  bool CheckType() {
    if (!live_ || (live_->container != nullptr && live_->container->type() == command_.type)) {
      return true;
    }
    result_ = OpResult::Error(EngineError::kWrongType);
    return false;
  }
  // The key's value (nullptr when missing). REQUIRES: CheckType() held and
  // T is the command's type's class.
  template <typename T>
  T* Find() const {
    if (created_) return static_cast<T*>(created_.get());
    return live_ ? static_cast<T*>(live_->container) : nullptr;
  }
  // The key's value, created empty when missing (it is stored only if the
  // command leaves something in it). REQUIRES: as Find(); a write command.
  template <typename T>
  T& FindOrCreate() {
    if (T* found = Find<T>()) return *found;
    created_ = std::make_unique<T>();
    return static_cast<T&>(*created_);
  }
  // The command changed the value (WATCH sees it; an emptied value's key
  // is removed).
  void Changed() { changed_ = true; }
  // Stores `value` in place of whatever the key holds, of any type, as a
  // plain SET does (the TTL is dropped), or removes the key when `value`
  // is empty (SINTERSTORE's destination). REQUIRES: a write command.
  void Replace(std::unique_ptr<Container> value) {
    replaced_ = true;
    created_ = std::move(value);
  }

  // Replies.
  void Integer(int64_t value) { result_ = OpResult::Integer(value); }
  void Bulk(std::string_view bytes) { result_ = OpResult::Bulk(bytes); }
  void Nil() { result_ = OpResult::Nil(); }
  void Ok() { result_ = OpResult::Ok(); }
  void Error(std::string_view text) { result_ = OpResult::ErrorText(text); }
  // A reply of several values, built in place.
  ReplyList& List() { return result_.StartList(); }

  // For the keyspace that runs the call (keyspace_ops.h).
  bool changed() const { return changed_; }
  bool replaced() const { return replaced_; }
  std::unique_ptr<Container> TakeCreated() { return std::move(created_); }

 private:
  const ContainerCommand& command_;
  const std::optional<EntryView>& live_;
  OpResult& result_;
  std::unique_ptr<Container> created_;
  bool changed_ = false;
  bool replaced_ = false;
};

// Every container command, in one table (engines/containers/).
std::span<const ContainerCommand> ContainerCommands();
// The command named `name` (lower case), or nullptr.
const ContainerCommand* FindContainerCommand(std::string_view name);

}  // namespace kvlab
