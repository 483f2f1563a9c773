// The per-key semantics of every Operation, written once (Redis 7.0's string
// commands) and shared by every engine.
//
// An engine locates the slot for op.key in whatever map it owns — a plain
// hash map, one stripe, one shard, or a tbb accessor — and hands it to
// ApplyToKey() through a small handle (the EntryHandle concept below). Read
// paths that hold only a shared lock use ReadKey() instead, which never
// modifies the map.
//
// Expiry is lazy, as in Redis: an entry whose deadline has passed is treated
// as missing by every operation, and writable handles erase it on contact.
//
// Not synchronised: the caller holds whatever lock makes the slot its own.
#pragma once

#include <cassert>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engines/calls/atomic_group.h"
#include "engines/container.h"
#include "engines/calls/container_call.h"
#include "engines/containers/zset_value.h"
#include "engines/containers/dump_payload.h"
#include "engines/entry.h"
#include "engines/memory_meter.h"
#include "engines/calls/keyspace_events.h"
#include "engines/modification_feed.h"
#include "engines/operation.h"
#include "engines/rules/redis_float.h"
#include "engines/rules/redis_integer.h"
#include "engines/rules/proto_max_bulk_len.h"
#include "engines/calls/string_call.h"

namespace kvlab {

// A handle on the slot for one key in some map.
//   Find():       the stored entry (possibly expired), or nullopt.
//   Store(v, t, f): sets the value and expiry (0 = none), creating the entry
//                 when absent; `f`: its ValueForm (kContainer: v is a
//                 container's address bytes).
//   Append(v):    appends to the value, creating an entry with no expiry
//                 when absent (a kString then, else a kEditedString).
//   SetExpiry(t): REQUIRES Find().
//   Erase():      removes the stored entry. REQUIRES Find().
// A view returned by Find() is invalid after any of the others.
template <typename H>
concept EntryHandle = requires(H handle, std::string_view value, int64_t deadline) {
  { handle.Find() } -> std::same_as<std::optional<EntryView>>;
  handle.Store(value, deadline, ValueForm::kContainer);
  handle.Append(value);
  handle.SetExpiry(deadline);
  handle.Erase();
};

// DBSIZE and FLUSHALL address the whole engine, not one key; each engine
// implements them over all of its maps.
// KEYS/SCAN/RANDOMKEY's kCollectKeys too, SORT's kHoldKeyspace, and the
// active expiry's kReclaimExpired.
inline bool IsKeyless(OpCode code) {
  return code == OpCode::kDbSize || code == OpCode::kFlushAll || code == OpCode::kCollectKeys ||
         code == OpCode::kHoldKeyspace || code == OpCode::kReclaimExpired;
}

// Operations that never modify the keyspace; engines may run them under a
// shared (reader) lock with ReadKey().
inline bool IsReadOnly(const Operation& op) {
  switch (op.code) {
    case OpCode::kGet:
    case OpCode::kExists:
    case OpCode::kStrlen:
    case OpCode::kPttl:
    case OpCode::kGetRange:
    case OpCode::kType:
    case OpCode::kObjectEncoding:
    case OpCode::kObjectRefcount:
    case OpCode::kMemoryUsage:
    case OpCode::kExpireTime:
    case OpCode::kDump:
      return true;
    case OpCode::kVisit:
      return op.integer == 0;
    case OpCode::kContainer:
      return (op.container_command->flags & kContainerWrite) == 0;
    case OpCode::kString:
      return (op.string_command->flags & kStringWrite) == 0;
    default:
      return false;
  }
}

// Redis's "denyoom" commands: refused while memory is at its limit. DEL,
// EXPIRE, PERSIST and FLUSHALL stay allowed so a full server can be emptied.
inline bool MayGrowMemory(const Operation& op) {
  switch (op.code) {
    case OpCode::kSet:
    case OpCode::kGetSet:
    case OpCode::kIncrBy:
    case OpCode::kAppend:
    case OpCode::kIncrByFloat:
    case OpCode::kSetRange:
    case OpCode::kStoreCarry:
    case OpCode::kRestore:
      return true;
    case OpCode::kContainer:
      return (op.container_command->flags & kContainerDenyOom) != 0;
    case OpCode::kString:
      return (op.string_command->flags & kStringDenyOom) != 0;
    default:
      return false;
  }
}

// The one type check: TYPE's name for a stored value.
inline std::string_view TypeName(const EntryView& entry) {
  return entry.container == nullptr ? "string" : TypeNameOf(entry.container->type());
}

// String commands that read a value: on a key holding a container they
// answer WRONGTYPE (or, for MGET's and LCS's kGet, what `integer2` says).
// A plain SET overwrites any type, as Redis's does.
inline bool ReadsString(const Operation& op) {
  switch (op.code) {
    case OpCode::kGet:
    case OpCode::kGetSet:
    case OpCode::kIncrBy:
    case OpCode::kAppend:
    case OpCode::kStrlen:
    case OpCode::kGetDel:
    case OpCode::kGetEx:
    case OpCode::kIncrByFloat:
    case OpCode::kSetRange:
    case OpCode::kGetRange:
      return true;
    case OpCode::kSet:
      return op.set.return_old;
    default:
      return false;
  }
}

inline OpResult WrongTypeResult(const Operation& op) {
  if (op.code == OpCode::kGet && op.integer2 == kGetWrongTypeNil) return OpResult::Nil();
  if (op.code == OpCode::kGet && op.integer2 == kGetWrongTypeNotString) {
    return OpResult::Error(EngineError::kNotString);
  }
  return OpResult::Error(EngineError::kWrongType);
}

// OBJECT ENCODING of a string: Redis's tryObjectEncoding() rules for a value
// written whole ("int" for an integer of at most 20 bytes, "embstr" up to
// 44 bytes, else "raw"), "raw" for one edited in place (APPEND, SETRANGE,
// the bit commands) and never "int" for INCRBYFLOAT's (ValueForm).
inline std::string_view StringEncoding(std::string_view value,
                                       ValueForm form = ValueForm::kString) {
  if (form == ValueForm::kEditedString) return "raw";
  if (form == ValueForm::kString && value.size() <= 20 && ParseRedisInt64(value)) return "int";
  return value.size() <= 44 ? "embstr" : "raw";
}

// OBJECT REFCOUNT: Redis shares one object among every string holding an
// integer in [0, 10000) (OBJ_SHARED_INTEGERS, with kvlab's only policy,
// noeviction) and reports it as OBJ_SHARED_REFCOUNT; anything else is 1.
inline int64_t RedisRefcount(const EntryView& entry) {
  constexpr int64_t kSharedRefcount = 2147483647;
  if (entry.container != nullptr || StringEncoding(entry.value, entry.form) != "int") return 1;
  const int64_t value = *ParseRedisInt64(entry.value);
  return value >= 0 && value < 10000 ? kSharedRefcount : 1;
}

// The error for a string SETRANGE or APPEND would build past
// proto-max-bulk-len (checkStringLength(); engines/rules/proto_max_bulk_len.h).
inline constexpr std::string_view kStringTooLongError =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

namespace keyspace_detail {

// A read-only container command (REQUIRES: !kContainerWrite). `group` is
// the running AtomicGroup's state, for its steps.
inline OpResult ReadContainer(const Operation& op, const std::optional<EntryView>& live,
                              int64_t now_ms, GroupState* group = nullptr) {
  OpResult result;
  ContainerCall call(*op.container_command, op.container_args(), live, now_ms, result, group);
  op.container_command->run(call);
  return result;
}

// A string command that only reads (REQUIRES: !kStringWrite). `group` is
// the running AtomicGroup's state, for its steps.
inline OpResult ReadString(const Operation& op, const std::optional<EntryView>& live,
                           GroupState* group) {
  OpResult result;
  StringCall call(op.container_args(), op.integer, live, group, result);
  op.string_command->run(call);
  return result;
}

// REQUIRES: IsReadOnly(op); `live` is nullopt or an unexpired entry.
inline OpResult ReadLive(const Operation& op, const std::optional<EntryView>& live,
                         int64_t now_ms) {
  if (live && live->container != nullptr && ReadsString(op)) return WrongTypeResult(op);
  switch (op.code) {
    case OpCode::kContainer:
      return ReadContainer(op, live, now_ms);
    case OpCode::kVisit:
      *op.visit_into = live;
      return OpResult::Ok();
    case OpCode::kString:
      return ReadString(op, live, nullptr);
    case OpCode::kGet:
      return live ? OpResult::Bulk(live->value) : OpResult::Nil();
    case OpCode::kExists:
      return OpResult::Integer(live ? 1 : 0);
    case OpCode::kStrlen:
      return OpResult::Integer(live ? static_cast<int64_t>(live->value.size()) : 0);
    case OpCode::kPttl:
      if (!live) return OpResult::Integer(-2);
      if (live->expire_at_ms == 0) return OpResult::Integer(-1);
      // Redis: ttl = expire - now, clamped at 0 (the key lives until now > expire).
      return OpResult::Integer(live->expire_at_ms > now_ms ? live->expire_at_ms - now_ms : 0);
    case OpCode::kExpireTime:
      if (!live) return OpResult::Integer(-2);
      return OpResult::Integer(live->expire_at_ms == 0 ? -1 : live->expire_at_ms);
    case OpCode::kType:
      return live ? OpResult::Bulk(TypeName(*live)) : OpResult::Nil();
    case OpCode::kObjectRefcount:
      return live ? OpResult::Integer(RedisRefcount(*live)) : OpResult::Nil();
    case OpCode::kMemoryUsage:
      return live ? OpResult::Integer(Footprint(op.key, *live)) : OpResult::Nil();
    case OpCode::kDump:
      return live ? OpResult::Bulk(DumpPayload(*live)) : OpResult::Nil();
    case OpCode::kObjectEncoding:
      if (!live) return OpResult::Nil();
      return OpResult::Bulk(live->container ? live->container->Encoding()
                                            : StringEncoding(live->value, live->form));
    case OpCode::kGetRange: {
      // getrangeCommand(): a missing key reads as "".
      const std::string_view value = live ? live->value : std::string_view();
      const int64_t length = static_cast<int64_t>(value.size());
      int64_t start = op.integer;
      int64_t end = op.integer2;
      if (start < 0 && end < 0 && start > end) return OpResult::Bulk({});
      if (start < 0) start += length;
      if (end < 0) end += length;
      if (start < 0) start = 0;
      if (end < 0) end = 0;
      if (end >= length) end = length - 1;
      if (start > end || length == 0) return OpResult::Bulk({});
      return OpResult::Bulk(
          value.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
    }
    default:
      assert(false && "ReadLive: not a read-only operation");
      return OpResult::Nil();
  }
}

// REQUIRES: `live` == handle.Find() with any expired entry already erased.
// `live` is read before the handle changes the entry, never after.
// EXPIRE's NX/XX/GT/LT (expireGenericCommand()): whether they refuse the
// new deadline for a key whose current one is `current` (0: none).
inline bool ExpireRefused(int64_t conditions, int64_t current, int64_t deadline) {
  const bool has_expiry = current != 0;
  return ((conditions & kExpireIfNoExpiry) && has_expiry) ||
         ((conditions & kExpireIfHasExpiry) && !has_expiry) ||
         ((conditions & kExpireIfGreater) && (!has_expiry || deadline <= current)) ||
         ((conditions & kExpireIfLess) && has_expiry && deadline >= current);
}

// A container command that may write: runs it, then stores a value it
// created or replaced the key's with, or removes the key of a value it
// emptied (Redis never keeps an empty container).
template <EntryHandle H>
OpResult WriteContainer(const Operation& op, H& handle, const std::optional<EntryView>& live,
                        int64_t now_ms, GroupState* group) {
  OpResult result;
  ContainerCall call(*op.container_command, op.container_args(), live, now_ms, result, group);
  op.container_command->run(call);
  if (call.replaced()) {
    std::unique_ptr<Container> value = call.TakeCreated();
    if (value && value->Size() != 0) {
      Container* address = value.release();
      handle.Store(AddressBytes(&address), 0, ValueForm::kContainer);
    } else if (live) {
      handle.Erase();
    }
  } else if (std::unique_ptr<Container> created = call.TakeCreated()) {
    if (created->Size() != 0) {
      Container* address = created.release();
      handle.Store(AddressBytes(&address), 0, ValueForm::kContainer);
    }
  } else if (call.changed()) {
    if (live && live->container != nullptr && live->container->Size() == 0) {
      handle.Erase();
    } else {
      handle.MarkChanged();
    }
  }
  return result;
}

// A string command that may write: its new bytes are stored keeping the
// TTL, or as a plain SET stores them (Replace()), an empty replacement
// removing the key. A bit write that changes no bit still leaves the value
// edited in place (Redis's lookupStringForBitCommand() unshares it, so
// OBJECT ENCODING says raw) but is no modification: redis-server 7.0.15
// lets a WATCH on the key pass after SETBIT or BITFIELD SET of the same bit.
template <EntryHandle H>
OpResult WriteString(const Operation& op, H& handle, const std::optional<EntryView>& live,
                     GroupState* group) {
  OpResult result;
  StringCall call(op.container_args(), op.integer, live, group, result);
  op.string_command->run(call);
  const std::optional<std::string>& edited = call.edited();
  if (!edited) return result;
  if (call.drop_ttl()) {
    if (!edited->empty()) {
      handle.Store(*edited, 0, ValueForm::kEditedString);
    } else if (live) {
      handle.Erase();
    }
  } else if (!live || *edited != live->value) {
    handle.Store(*edited, live ? live->expire_at_ms : 0, ValueForm::kEditedString);
  } else if (live->form != ValueForm::kEditedString) {
    handle.StoreUnchanged(*edited, live->expire_at_ms, ValueForm::kEditedString);
  }
  return result;
}

template <EntryHandle H>
OpResult WriteLive(const Operation& op, H& handle, const std::optional<EntryView>& live,
                   int64_t now_ms, GroupState* group) {
  if (live && live->container != nullptr && ReadsString(op)) return WrongTypeResult(op);
  switch (op.code) {
    case OpCode::kContainer:
      if (IsReadOnly(op)) return ReadContainer(op, live, now_ms, group);
      return WriteContainer(op, handle, live, now_ms, group);
    case OpCode::kString:
      if (IsReadOnly(op)) return ReadString(op, live, group);
      return WriteString(op, handle, live, group);
    case OpCode::kSet: {
      // SET ... GET replies with the old value whether or not the condition
      // holds (Redis 7.0 setGenericCommand).
      OpResult reply = OpResult::Ok();
      if (op.set.return_old) reply = live ? OpResult::Bulk(live->value) : OpResult::Nil();
      const bool condition_holds =
          op.set.condition == SetOptions::Condition::kAlways ||
          (op.set.condition == SetOptions::Condition::kIfAbsent && !live) ||
          (op.set.condition == SetOptions::Condition::kIfPresent && live);
      if (!condition_holds) return op.set.return_old ? reply : OpResult::Nil();
      const int64_t deadline = op.set.keep_ttl && op.set.expire_at_ms == 0 && live
                                   ? live->expire_at_ms
                                   : op.set.expire_at_ms;
      handle.Store(op.value, deadline, ValueForm::kString);
      // SET ... PXAT <past>: the key is born expired; reclaim it at once.
      if (IsExpired(deadline, now_ms)) handle.Erase();
      return reply;
    }
    case OpCode::kGetSet: {
      OpResult reply = live ? OpResult::Bulk(live->value) : OpResult::Nil();
      handle.Store(op.value, 0, ValueForm::kString);  // GETSET is a plain SET: it drops the TTL
      return reply;
    }
    case OpCode::kDel:
      if (!live) return OpResult::Integer(0);
      handle.Erase();
      return OpResult::Integer(1);
    case OpCode::kRestore: {
      // restoreCommand(): an existing key is BUSYKEY unless REPLACE; a
      // deadline already passed (checkAlreadyExpired()) only removes it.
      if (live && op.integer2 == 0) return OpResult::Integer(1);
      if (op.integer != 0 && op.integer <= now_ms) {
        if (live) handle.Erase();
        return OpResult::Ok();
      }
      RestoredValue value;
      if (ReadPayload(op.value, &value) != PayloadStatus::kOk) {
        return OpResult::ErrorText("ERR Bad data format");  // the server checked it first
      }
      if (value.container) {
        Container* address = value.container.release();
        handle.Store(AddressBytes(&address), op.integer, ValueForm::kContainer);
      } else {
        handle.Store(value.string_value, op.integer, ValueForm::kString);
      }
      return OpResult::Ok();
    }
    case OpCode::kIncrBy: {
      int64_t current = 0;  // a missing key counts as 0
      if (live) {
        const std::optional<int64_t> parsed = ParseRedisInt64(live->value);
        if (!parsed) return OpResult::Error(EngineError::kNotInteger);
        current = *parsed;
      }
      const std::optional<int64_t> next = CheckedAdd(current, op.integer);
      if (!next) return OpResult::Error(EngineError::kOverflow);
      // Keeps any TTL; Redis makes an integer object ("int") whatever the old one.
      handle.Store(std::to_string(*next), live ? live->expire_at_ms : 0, ValueForm::kString);
      return OpResult::Integer(*next);
    }
    case OpCode::kAppend: {
      const size_t length = (live ? live->value.size() : 0) + op.value.size();
      // CVE-2022-35977's family: refused, not grown past proto-max-bulk-len.
      if (live && length > static_cast<size_t>(ProtoMaxBulkLen())) {
        return OpResult::ErrorText(kStringTooLongError);
      }
      handle.Append(op.value);
      return OpResult::Integer(static_cast<int64_t>(length));
    }
    case OpCode::kExpireAt:
      if (!live) return OpResult::Integer(0);
      if (op.integer2 != 0 && ExpireRefused(op.integer2, live->expire_at_ms, op.integer)) {
        return OpResult::Integer(0);
      }
      // Redis's checkAlreadyExpired(): a deadline not in the future deletes.
      if (op.integer <= now_ms) {
        handle.Erase();
      } else {
        handle.SetExpiry(op.integer);
      }
      return OpResult::Integer(1);
    case OpCode::kPersist:
      if (!live || live->expire_at_ms == 0) return OpResult::Integer(0);
      handle.SetExpiry(0);
      return OpResult::Integer(1);
    case OpCode::kGetDel: {
      if (!live) return OpResult::Nil();
      OpResult reply = OpResult::Bulk(live->value);
      handle.Erase();
      return reply;
    }
    case OpCode::kGetEx: {
      if (!live) return OpResult::Nil();
      OpResult reply = OpResult::Bulk(live->value);
      if (op.integer == kPersistDeadline) {
        if (live->expire_at_ms != 0) handle.SetExpiry(0);
      } else if (op.integer > 0) {
        if (op.integer <= now_ms) {
          handle.Erase();
        } else {
          handle.SetExpiry(op.integer);
        }
      }
      return reply;
    }
    case OpCode::kIncrByFloat: {
      long double current = 0;
      if (live) {
        const std::optional<long double> parsed = ParseRedisLongDouble(live->value);
        if (!parsed) return OpResult::Error(EngineError::kNotFloat);
        current = *parsed;
      }
      const std::optional<long double> increment = ParseRedisLongDouble(op.value);
      if (!increment) return OpResult::Error(EngineError::kNotFloat);
      const long double next = current + *increment;
      if (std::isnan(next) || std::isinf(next)) return OpResult::Error(EngineError::kNanOrInfinity);
      const std::string text = FormatRedisLongDouble(next);
      // Keeps any TTL, as Redis; its object is never "int" (an embstr/raw).
      handle.Store(text, live ? live->expire_at_ms : 0, ValueForm::kFloatString);
      return OpResult::Bulk(text);
    }
    case OpCode::kSetRange: {
      const size_t old_length = live ? live->value.size() : 0;
      if (op.value.empty()) return OpResult::Integer(static_cast<int64_t>(old_length));
      const size_t offset = static_cast<size_t>(op.integer);
      std::string next(live ? live->value : std::string_view());
      if (next.size() < offset + op.value.size()) next.resize(offset + op.value.size(), '\0');
      next.replace(offset, op.value.size(), op.value);
      // Redis edits the string in place: "raw" from now on.
      handle.Store(next, live ? live->expire_at_ms : 0, ValueForm::kEditedString);
      return OpResult::Integer(static_cast<int64_t>(next.size()));
    }
    case OpCode::kVisit:
      // An encoding change is no change WATCH sees; the footprint is
      // re-measured after the operation like any other.
      if (op.integer == 1 && live && live->container != nullptr &&
          live->container->type() == ValueType::kZSet) {
        static_cast<ZSetValue*>(live->container)->UseSkiplist();
      }
      return keyspace_detail::ReadLive(op, live, now_ms);
    case OpCode::kRequireAbsent:
    case OpCode::kWatchedKey:  // ApplyToKey() reclaimed it if it had expired
      return OpResult::Integer(live ? 1 : 0);
    case OpCode::kLoadCarry:
      assert(group != nullptr);
      if (!live) return OpResult::Integer(0);
      group->carried = true;
      group->expire_at_ms = live->expire_at_ms;
      if (live->container != nullptr) {
        // RENAME moves the object itself; COPY carries a deep copy.
        if (op.integer == 1) {
          group->container.reset(live->container);
          handle.Detach();
        } else {
          group->container = live->container->Clone();
        }
      } else {
        group->value.assign(live->value);
        group->value_form = live->form;  // COPY keeps the encoding (dupStringObject())
      }
      if (op.integer == 1) handle.Erase();
      return OpResult::Integer(1);
    case OpCode::kStoreCarry:
      assert(group != nullptr && group->carried);
      // SORT ... STORE of nothing: Redis keeps no empty list, it deletes.
      if (group->container && group->container->Size() == 0) {
        group->container.reset();
        if (live) handle.Erase();
        return OpResult::Ok();
      }
      if (group->container) {
        Container* address = group->container.release();
        handle.Store(AddressBytes(&address), group->expire_at_ms, ValueForm::kContainer);
      } else {
        handle.Store(group->value, group->expire_at_ms, group->value_form);
      }
      if (IsExpired(group->expire_at_ms, now_ms)) handle.Erase();
      return OpResult::Ok();
    default:
      return ReadLive(op, live, now_ms);
  }
}

}  // namespace keyspace_detail

namespace keyspace_detail {

// An EntryHandle that remembers whether the operation changed the entry and
// owns the entry's container: it deletes the object when the entry is
// erased or overwritten, unless Detach() handed it to someone else first.
template <EntryHandle H>
class ChangeTracking {
 public:
  ChangeTracking(H& inner, Container* held) : inner_(inner), held_(held) {}
  std::optional<EntryView> Find() { return inner_.Find(); }
  void Store(std::string_view value, int64_t deadline, ValueForm form) {
    changed_ = true;
    Container* next = form == ValueForm::kContainer ? AddressFrom(value) : nullptr;
    created_container_ = held_ == nullptr && next != nullptr;
    if (held_ != next) ReleaseContainer(held_);
    held_ = next;
    inner_.Store(value, deadline, form);
  }
  // The same bytes in another form (a bit write that changed no bit): not
  // a change, so the feed (WATCH) never hears of it.
  void StoreUnchanged(std::string_view value, int64_t deadline, ValueForm form) {
    inner_.Store(value, deadline, form);
  }
  void Append(std::string_view tail) {
    changed_ = true;
    inner_.Append(tail);
  }
  void SetExpiry(int64_t deadline) {
    changed_ = true;
    inner_.SetExpiry(deadline);
  }
  void Erase() {
    changed_ = true;
    ReleaseContainer(held_);
    held_ = nullptr;
    inner_.Erase();
  }
  // The entry's container now belongs to someone else (RENAME's carry).
  void Detach() { held_ = nullptr; }
  // A container changed in place.
  void MarkChanged() { changed_ = true; }
  bool changed() const { return changed_; }
  // The last store put a container where the key held none (blocked
  // clients may be served).
  bool created_container() const { return created_container_; }

 private:
  H& inner_;
  Container* held_;
  bool changed_ = false;
  bool created_container_ = false;
};

}  // namespace keyspace_detail

// Applies a keyed operation to its slot with exclusive access: lazily erases
// an expired entry (reported to `feed` as an expiry, which only watchers
// that saw the key live count as a change, as in Redis), enforces the
// memory limit, reports the change in the entry's footprint to `meter` and a
// changed key to `feed`. REQUIRES: !IsKeyless(op.code).
// `group` is the running AtomicGroup's state (required by guards and carries).
template <EntryHandle H>
OpResult ApplyToKey(const Operation& op, H& handle, int64_t now_ms, MemoryMeter& meter,
                    const ModificationFeed& feed, GroupState* group = nullptr) {
  assert(!IsKeyless(op.code));
  if (MayGrowMemory(op) && !op.memory_admitted && meter.OverLimit()) {
    return OpResult::Error(EngineError::kOutOfMemory);
  }

  std::optional<EntryView> stored = handle.Find();
  const int64_t bytes_before = stored ? Footprint(op.key, *stored) : 0;
  // A handle that keeps count of the keys with a deadline (PlainKeyspace's,
  // for the active expiry) hears of each change, from the entries read here
  // anyway, and only on the paths that change something.
  constexpr bool kCountsDeadlines = requires { handle.DeadlinesChanged(int64_t{1}); };
  if (stored && IsExpired(*stored, now_ms)) {
    const int64_t deadline = stored->expire_at_ms;
    ReleaseContainer(stored->container);
    handle.Erase();
    stored.reset();
    feed.ReportExpired(op.key, deadline);
    if constexpr (kCountsDeadlines) handle.DeadlinesChanged(-1);
  }
  keyspace_detail::ChangeTracking<H> tracked(handle, stored ? stored->container : nullptr);
  OpResult result = keyspace_detail::WriteLive(op, tracked, stored, now_ms, group);

  const std::optional<EntryView> after = handle.Find();
  meter.Add((after ? Footprint(op.key, *after) : 0) - bytes_before);
  if (tracked.changed()) {
    // Every change of a deadline goes through `tracked` (StoreUnchanged()
    // keeps the deadline it found); `stored` is the entry as the operation
    // found it (a copy).
    const bool deadline_before = stored && stored->expire_at_ms != 0;
    const bool deadline_after = after && after->expire_at_ms != 0;
    if (deadline_after != deadline_before) [[unlikely]] {
      if constexpr (kCountsDeadlines) handle.DeadlinesChanged(deadline_after ? 1 : -1);
      if (deadline_after) feed.NoteDeadlineStored();
    }
    if (feed.notifying()) [[unlikely]] {
      NotifyKeyEvents(op, stored.has_value(), after.has_value(), feed);
    }
    feed.Report(op.key);
    if (tracked.created_container()) feed.ReportReady(op.key);
  }
  return result;
}

// Answers a read-only operation from the stored entry (nullopt if absent)
// without modifying anything: an expired entry reads as missing and is left
// for a later writer to reclaim. REQUIRES: IsReadOnly(op).
inline OpResult ReadKey(const Operation& op, const std::optional<EntryView>& stored,
                        int64_t now_ms) {
  if (stored && IsExpired(*stored, now_ms)) return keyspace_detail::ReadLive(op, {}, now_ms);
  return keyspace_detail::ReadLive(op, stored, now_ms);
}

}  // namespace kvlab
