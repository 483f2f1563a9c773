// ModificationFeed: where an engine reports every key a write changed
// (Redis's signalModifiedKey()), so that the server's WATCH sees writes at
// the moment they happen, with the key still held by the writer, and every
// expired entry a write reclaims (Redis's deleteExpiredKeyAndPropagate()
// signals those too).
//
// It also counts the expired entries reclaimed, by writes and by the active
// expiry (INFO's expired_keys).
//
// Thread-safe. While no observer is set (nobody WATCHes anything), a
// report costs one atomic load (an expiry's, one relaxed add more).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace kvlab {

class KeyObserver {
 public:
  virtual ~KeyObserver() = default;
  // Called by whichever thread changed `key`, with the key still held.
  virtual void KeyModified(std::string_view key) = 0;
  // An expired entry of `key`, due at unix ms `deadline`, was reclaimed:
  // a change only for whoever saw the key live (before its deadline).
  virtual void KeyExpired(std::string_view key, int64_t deadline) = 0;
};

// Redis's keyspace event classes (notify-keyspace-events), with the bit
// values of its NOTIFY_* flags, so that the server's configuration text
// maps onto them as Redis's does.
enum KeyspaceEventClass : uint32_t {
  kEventKeyspace = 1u << 0,  // K: __keyspace@<db>__:<key> channels
  kEventKeyevent = 1u << 1,  // E: __keyevent@<db>__:<event> channels
  kEventGeneric = 1u << 2,   // g: del, expire, persist, rename_*, copy_to, restore
  kEventString = 1u << 3,    // $
  kEventList = 1u << 4,      // l
  kEventSet = 1u << 5,       // s
  kEventHash = 1u << 6,      // h
  kEventZSet = 1u << 7,      // z
  kEventExpired = 1u << 8,   // x
  kEventEvicted = 1u << 9,   // e (kvlab evicts nothing)
  kEventStream = 1u << 10,   // t (kvlab has no streams)
  kEventKeyMiss = 1u << 11,  // m (not raised by kvlab)
  kEventModule = 1u << 13,   // d (no modules)
  kEventNew = 1u << 14,      // n
};

// Who hears keyspace events (Redis's notifyKeyspaceEvent()): the server's
// publisher of __keyspace@ and __keyevent@ messages.
class KeyEventObserver {
 public:
  virtual ~KeyEventObserver() = default;
  // Called by whichever thread changed `key`, with the key still held, in
  // the order the changes were made, and only for a class that is on.
  virtual void KeyEvent(std::string_view event, std::string_view key) = 0;
};

// Who hears that a key now holds a list or sorted set where it held none
// (Redis's signalKeyAsReady() from dbAdd()): the server's blocked clients.
class ReadyObserver {
 public:
  virtual ~ReadyObserver() = default;
  // Called by whichever thread created the value, with the key still held.
  virtual void KeyReady(std::string_view key) = 0;
};

class ModificationFeed {
 public:
  // seq_cst with Report()'s load: a write that finds no observer is ordered
  // before the Set() that installs one (a WATCH that came after it).
  void Set(KeyObserver* observer) { observer_.store(observer, std::memory_order_seq_cst); }
  bool active() const { return observer_.load(std::memory_order_seq_cst) != nullptr; }
  void Report(std::string_view key) const {
    if (KeyObserver* observer = observer_.load(std::memory_order_seq_cst)) {
      observer->KeyModified(key);
    }
  }
  void ReportExpired(std::string_view key, int64_t deadline) const {
    expired_.fetch_add(1, std::memory_order_relaxed);
    Notify(kEventExpired, "expired", key);
    if (KeyObserver* observer = observer_.load(std::memory_order_seq_cst)) {
      observer->KeyExpired(key, deadline);
    }
  }

  // Set only while some client is blocked on a key (blocking_registry.h), so
  // a write that creates a container pays one load otherwise. A blocker
  // sets it before its first look at the keys; the key's owner orders that
  // look against the write, so the write either is seen by the look or sees
  // the observer.
  void SetReady(ReadyObserver* observer) { ready_.store(observer, std::memory_order_release); }
  void ReportReady(std::string_view key) const {
    if (ReadyObserver* observer = ready_.load(std::memory_order_acquire)) observer->KeyReady(key);
  }

  // Keyspace events: the observer is set once, before any write; the
  // classes (KeyspaceEventClass bits, as notify-keyspace-events says) at any
  // time. While none is on (Redis's default) a write that changed a key
  // pays one relaxed load for them.
  void SetEventObserver(KeyEventObserver* observer) {
    event_observer_.store(observer, std::memory_order_release);
  }
  void SetEventClasses(uint32_t classes) {
    event_classes_.store(classes, std::memory_order_relaxed);
  }
  uint32_t event_classes() const { return event_classes_.load(std::memory_order_relaxed); }
  // Whether any event would reach a channel (a class and K or E are on).
  bool notifying() const {
    const uint32_t classes = event_classes();
    return (classes & (kEventKeyspace | kEventKeyevent)) != 0 &&
           (classes & ~(kEventKeyspace | kEventKeyevent)) != 0;
  }
  void Notify(uint32_t event_class, std::string_view event, std::string_view key) const {
    if ((event_classes() & event_class) == 0) return;
    if (KeyEventObserver* observer = event_observer_.load(std::memory_order_acquire)) {
      observer->KeyEvent(event, key);
    }
  }

  // Whether any write has stored a deadline since the engine started
  // (sticky): until one has, the active expiry has nothing to look for and
  // does not run at all (server/net/expire_cycle.h). Read first, written
  // once, so the flag's line stays shared between threads.
  void NoteDeadlineStored() const {
    if (!deadline_stored_.load(std::memory_order_relaxed)) {
      deadline_stored_.store(true, std::memory_order_relaxed);
    }
  }
  bool deadline_stored() const { return deadline_stored_.load(std::memory_order_relaxed); }

  // Expired entries reclaimed since the engine started (a gauge: no order).
  uint64_t expired() const { return expired_.load(std::memory_order_relaxed); }

 private:
  std::atomic<KeyObserver*> observer_{nullptr};
  mutable std::atomic<uint64_t> expired_{0};
  mutable std::atomic<bool> deadline_stored_{false};
  std::atomic<KeyEventObserver*> event_observer_{nullptr};
  std::atomic<uint32_t> event_classes_{0};
  std::atomic<ReadyObserver*> ready_{nullptr};
};

}  // namespace kvlab
