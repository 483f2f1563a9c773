#include "server/blocking_registry.h"

#include <algorithm>
#include <utility>

namespace kvlab {

// Every member is guarded by the registry's mutex.
class BlockingRegistry::Waiter {
 public:
  uint64_t client_id = 0;
  std::vector<std::string> keys;  // distinct, as given
  std::optional<Clock::time_point> deadline;
  std::multimap<Clock::time_point, Waiter*>::iterator deadline_at;
  std::function<void()> wake;
  bool registered = true;
  bool armed = false;    // sleeping: the next event calls `wake`
  bool counted = false;  // has slept once: a blocked client
  bool timed_out = false;
  uint64_t service_ticket = 0;  // in service (a key handed, retry not run yet); 0: not
  Event unblock = Event::kNone;
  std::vector<std::string> ready;   // handed since the last Arm(), in order
  std::vector<std::string> handed;  // every key handed since Block()
};

BlockingRegistry::~BlockingRegistry() {
  std::thread timers;
  {
    MutexLock lock(mutex_);
    stopping_ = true;
    timers = std::move(timer_thread_);
  }
  timers_changed_.notify_all();
  if (timers.joinable()) timers.join();
  feed_.SetReady(nullptr);
  MutexLock lock(mutex_);
  for (ServedWait& wait : served_waits_) wait.served();  // nobody is left to serve
  served_waits_.clear();
}

std::shared_ptr<BlockingRegistry::Waiter> BlockingRegistry::Block(
    uint64_t client_id, std::span<const std::string> keys,
    std::optional<Clock::time_point> deadline, std::function<void()> wake) {
  auto waiter = std::make_shared<Waiter>();
  waiter->client_id = client_id;
  for (const std::string& key : keys) {
    if (std::find(waiter->keys.begin(), waiter->keys.end(), key) == waiter->keys.end()) {
      waiter->keys.push_back(key);
    }
  }
  waiter->deadline = deadline;
  waiter->wake = std::move(wake);
  bool earliest = false;
  {
    MutexLock lock(mutex_);
    for (const std::string& key : waiter->keys) queues_[key].push_back(waiter.get());
    clients_[client_id] = waiter.get();
    if (deadline) {
      waiter->deadline_at = deadlines_.emplace(*deadline, waiter.get());
      earliest = waiter->deadline_at == deadlines_.begin();
      if (earliest) ++timer_changes_;
      if (!timer_thread_.joinable()) timer_thread_ = std::thread([this] { RunTimers(); });
    }
    // Before the client's first look at its keys (see the header).
    feed_.SetReady(this);
  }
  if (earliest) timers_changed_.notify_all();
  return waiter;
}

BlockingRegistry::Wake BlockingRegistry::Arm(Waiter& waiter) {
  MutexLock lock(mutex_);
  if (!waiter.counted) {
    waiter.counted = true;
    ++sleeping_;
  }
  Wake wake;
  if (waiter.unblock != Event::kNone) {
    wake.event = std::exchange(waiter.unblock, Event::kNone);
  } else if (!waiter.ready.empty()) {
    wake.event = Event::kReady;
    wake.keys = std::move(waiter.ready);
    waiter.ready.clear();
  } else if (waiter.timed_out) {
    wake.event = Event::kTimeout;
  } else {
    waiter.armed = true;
    LeaveServiceLocked(waiter);  // its retry found nothing: it sleeps again
  }
  return wake;
}

void BlockingRegistry::Unblock(Waiter& waiter) {
  MutexLock lock(mutex_);
  if (!waiter.registered) return;
  waiter.registered = false;
  waiter.armed = false;
  for (const std::string& key : waiter.keys) {
    auto it = queues_.find(key);
    if (it == queues_.end()) continue;
    std::erase(it->second, &waiter);
    if (it->second.empty()) queues_.erase(it);
  }
  auto client = clients_.find(waiter.client_id);
  if (client != clients_.end() && client->second == &waiter) clients_.erase(client);
  if (waiter.deadline) deadlines_.erase(waiter.deadline_at);
  if (waiter.counted) --sleeping_;
  // What it was handed may still be there: the next waiter looks (and is
  // in service before this one leaves it: the next link of a chain).
  for (const std::string& key : waiter.handed) OfferLocked(key);
  LeaveServiceLocked(waiter);
  if (queues_.empty()) feed_.SetReady(nullptr);
}

bool BlockingRegistry::UnblockClient(uint64_t client_id, bool error) {
  MutexLock lock(mutex_);
  auto it = clients_.find(client_id);
  if (it == clients_.end() || !it->second->counted) return false;
  Waiter& waiter = *it->second;
  waiter.unblock = error ? Event::kUnblockError : Event::kUnblockTimeout;
  FireLocked(waiter);
  return true;
}

uint64_t BlockingRegistry::blocked_clients() const {
  MutexLock lock(mutex_);
  return sleeping_;
}

void BlockingRegistry::KeyReady(std::string_view key) {
  MutexLock lock(mutex_);
  OfferLocked(key);
}

void BlockingRegistry::OfferLocked(std::string_view key) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return;
  Waiter& first = *it->second.front();
  if (std::find(first.ready.begin(), first.ready.end(), key) == first.ready.end()) {
    first.ready.emplace_back(key);
  }
  if (std::find(first.handed.begin(), first.handed.end(), key) == first.handed.end()) {
    first.handed.emplace_back(key);
  }
  EnterServiceLocked(first);
  FireLocked(first);
}

void BlockingRegistry::EnterServiceLocked(Waiter& waiter) {
  if (waiter.service_ticket != 0) return;
  waiter.service_ticket = next_ticket_++;
  in_service_.insert(waiter.service_ticket);
  any_in_service_.store(true, std::memory_order_relaxed);
}

void BlockingRegistry::LeaveServiceLocked(Waiter& waiter) {
  if (waiter.service_ticket == 0) return;
  in_service_.erase(waiter.service_ticket);
  waiter.service_ticket = 0;
  if (in_service_.empty()) any_in_service_.store(false, std::memory_order_relaxed);
  AnswerServedLocked();
}

bool BlockingRegistry::AwaitServed(std::function<void()>& served) {
  // Relaxed is enough: a waiter the batch's own writes put in service did
  // so before the engine published the batch's completion to this thread.
  if (!any_in_service_.load(std::memory_order_relaxed)) return false;
  MutexLock lock(mutex_);
  if (in_service_.empty()) return false;
  served_waits_.push_back(ServedWait{next_ticket_ - 1, 1, std::move(served)});
  return true;
}

void BlockingRegistry::AnswerServedLocked() {
  for (size_t i = 0; i < served_waits_.size();) {
    ServedWait& wait = served_waits_[i];
    if (!in_service_.empty() && *in_service_.begin() <= wait.upto) {
      ++i;  // one it waits for is still in service
      continue;
    }
    if (!in_service_.empty() && wait.links < kMaxChain) {
      // Those it waited for are served; the ones in service now entered
      // before that, perhaps woken by them: the chain's next link.
      wait.upto = next_ticket_ - 1;
      ++wait.links;
      ++i;
      continue;
    }
    wait.served();
    served_waits_[i] = std::move(served_waits_.back());
    served_waits_.pop_back();
  }
}

void BlockingRegistry::FireLocked(Waiter& waiter) {
  if (!waiter.armed) return;  // awake: it calls Arm() before it sleeps again
  waiter.armed = false;
  waiter.wake();
}

void BlockingRegistry::RunTimers() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      lock.Wait(timers_changed_);
      continue;
    }
    const Clock::time_point first = deadlines_.begin()->first;
    const Clock::time_point now = Clock::now();
    if (first > now) {
      const uint64_t seen = timer_changes_;
      lock.WaitFor(timers_changed_, first - now,
                   [&]() REQUIRES(mutex_) { return stopping_ || timer_changes_ != seen; });
      continue;
    }
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      Waiter& waiter = *deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      waiter.deadline.reset();
      waiter.timed_out = true;
      FireLocked(waiter);
    }
  }
}

}  // namespace kvlab
