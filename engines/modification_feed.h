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

  // Expired entries reclaimed since the engine started (a gauge: no order).
  uint64_t expired() const { return expired_.load(std::memory_order_relaxed); }

 private:
  std::atomic<KeyObserver*> observer_{nullptr};
  mutable std::atomic<uint64_t> expired_{0};
  std::atomic<ReadyObserver*> ready_{nullptr};
};

}  // namespace kvlab
