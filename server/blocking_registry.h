// BlockingRegistry: which clients wait in BLPOP, BLMOVE, BZPOPMIN and their
// kin, on which keys, in which order (Redis's blocking_keys and
// blocked.c), and what woke each one.
//
// A blocked client is served by its own Session: the registry only tells it
// when to look again. The engine reports every key that comes to hold a
// list or sorted set where it held none (ModificationFeed::ReportReady(),
// Redis's signalKeyAsReady()); the registry hands that key to the first
// client that waits on it (FIFO per key, as Redis serves them), which
// retries its pop on that key. One that was served, timed out or went away
// passes every key it was handed on to the next waiter, so data it did not
// take is offered further; a retry that finds nothing leaves the client
// where it was in the queues. A client is registered before its first look
// at the keys, so a write that races that look either is seen by it or
// wakes the client.
//
// The registry is the feed's ready observer only while some client is
// registered: a write that creates a container pays one atomic load
// otherwise, and no other command pays anything.
//
// Redis serves the clients a write woke before it runs the next command
// (handleClientsBlockedOnKeys() after every call), so the writer's next
// command sees what they took, however their moves chain (a BLMOVE whose
// push wakes another waiter). Here a waiter is served on its own thread:
// a key handed to it puts it "in service" until its retry has run (it
// sleeps again, or is done), and a Session whose batch finished while any
// waiter is in service holds its replies back until AwaitServed() says
// they are all served, following a chain up to kMaxChain links; only
// then can the writer's client (or anyone its reply reached) send its
// next command. Commands that run meanwhile on other connections are
// concurrent with the write, as on any multi-threaded server.
//
// Thread-safe: the engine's threads report keys, a timer thread ends
// timeouts, and Sessions block and unblock from their connections' threads.
// A client's `wake` is called with the registry's lock held, at most once
// per Arm(), and must only post work to the client's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "engines/entry.h"
#include "engines/modification_feed.h"

namespace kvlab {

class BlockingRegistry final : public ReadyObserver {
 public:
  using Clock = std::chrono::steady_clock;
  // What woke a client (Arm()'s answer), in the order it is answered.
  enum class Event {
    kNone,            // nothing yet: the client sleeps until `wake` is called
    kUnblockError,    // CLIENT UNBLOCK id ERROR
    kUnblockTimeout,  // CLIENT UNBLOCK id [TIMEOUT]
    kReady,           // `keys` got data since (in the order they got it)
    kTimeout,         // its deadline passed
  };
  struct Wake {
    Event event = Event::kNone;
    std::vector<std::string> keys;  // kReady only
  };
  class Waiter;  // one blocked client's registration

  // `feed` must outlive the registry (the engine's modifications()).
  explicit BlockingRegistry(ModificationFeed& feed) : feed_(feed) {}
  ~BlockingRegistry() override;
  BlockingRegistry(const BlockingRegistry&) = delete;
  BlockingRegistry& operator=(const BlockingRegistry&) = delete;

  // Registers client `client_id` as waiting on `keys` (behind every client
  // already waiting on each) until `deadline` (nullopt: forever). `wake`
  // posts the client's next look to its thread. The client must Unblock()
  // the result before it goes away.
  std::shared_ptr<Waiter> Block(uint64_t client_id, std::span<const std::string> keys,
                                std::optional<Clock::time_point> deadline,
                                std::function<void()> wake);
  // The client is about to sleep: returns (and forgets) what woke it since
  // its last Arm(), or kNone after arranging for `wake` to be called at the
  // next event. The first Arm() counts the client as blocked (INFO's
  // blocked_clients, CLIENT UNBLOCK).
  Wake Arm(Waiter& waiter);
  // The client is done waiting (served, timed out, closed): forgets it and
  // offers every key it was handed to the next waiter on that key.
  void Unblock(Waiter& waiter);
  // CLIENT UNBLOCK: wakes client `client_id` with kUnblockError or
  // kUnblockTimeout. False when it is not blocked.
  bool UnblockClient(uint64_t client_id, bool error);
  // Clients that sleep in a blocking command now (INFO's blocked_clients).
  uint64_t blocked_clients() const;

  // How many links of a chain of waiters (one's move waking the next)
  // AwaitServed() follows before it answers anyway, so that a writer is
  // never held back for good by a stream of other clients' services.
  static constexpr int kMaxChain = 16;
  // A batch just finished. False when no waiter is in service: go on
  // (`served` is left as it was). True when some are: `served` is taken
  // and will be called once (from any thread, with the registry's lock
  // held, so it must only post) when every waiter in service now, and the
  // ones in service by the time those are served (the chain's next link,
  // up to kMaxChain links), have been served. One relaxed atomic load
  // when no waiter is in service.
  bool AwaitServed(std::function<void()>& served);

  // ReadyObserver.
  void KeyReady(std::string_view key) override;

 private:
  void OfferLocked(std::string_view key) REQUIRES(mutex_);
  void FireLocked(Waiter& waiter) REQUIRES(mutex_);
  // A key was handed to `waiter`: it is in service until LeaveServiceLocked().
  void EnterServiceLocked(Waiter& waiter) REQUIRES(mutex_);
  // `waiter`'s retry has run (it sleeps again, or is done waiting).
  void LeaveServiceLocked(Waiter& waiter) REQUIRES(mutex_);
  // Calls the AwaitServed() callbacks whose waiters are all served.
  void AnswerServedLocked() REQUIRES(mutex_);

  // A writer waiting in AwaitServed(): it waits for the waiters whose
  // service tickets are at most `upto`; when those are served and others
  // are in service, they are the next link of the chain.
  struct ServedWait {
    uint64_t upto = 0;
    int links = 1;
    std::function<void()> served;
  };
  void RunTimers();

  ModificationFeed& feed_;
  mutable Mutex mutex_;
  // Each key's waiters, first come first.
  std::unordered_map<std::string, std::vector<Waiter*>, KeyHash, KeyEqual> queues_
      GUARDED_BY(mutex_);
  std::unordered_map<uint64_t, Waiter*> clients_ GUARDED_BY(mutex_);
  std::multimap<Clock::time_point, Waiter*> deadlines_ GUARDED_BY(mutex_);
  uint64_t sleeping_ GUARDED_BY(mutex_) = 0;
  // Service tickets of the waiters in service, in the order they entered.
  std::set<uint64_t> in_service_ GUARDED_BY(mutex_);
  uint64_t next_ticket_ GUARDED_BY(mutex_) = 1;
  std::atomic<bool> any_in_service_{false};  // !in_service_.empty(), for the fast path
  std::vector<ServedWait> served_waits_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  uint64_t timer_changes_ GUARDED_BY(mutex_) = 0;  // a new earliest deadline
  std::condition_variable timers_changed_;
  std::thread timer_thread_ GUARDED_BY(mutex_);  // started by the first Block() with a deadline
};

}  // namespace kvlab
