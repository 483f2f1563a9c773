#include "server/net/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/stage_clock.h"

namespace kvlab {
namespace {

// Events taken per epoll_wait; more wait for the next round (level-triggered).
constexpr int kMaxEventsPerRound = 256;
// epoll_event.data.u64 of the wake-up eventfd: no descriptor number reaches it.
constexpr uint64_t kWakeToken = ~uint64_t{0};

thread_local const EventLoop* loop_of_this_thread = nullptr;

int CreateOrDie(int fd, const char* what) {
  if (fd < 0) {
    std::fprintf(stderr, "kvlab-server: cannot create %s: %s\n", what, std::strerror(errno));
    std::abort();
  }
  return fd;
}

}  // namespace

EventLoop::EventLoop()
    : epoll_fd_(CreateOrDie(::epoll_create1(EPOLL_CLOEXEC), "epoll instance")),
      wake_fd_(CreateOrDie(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "eventfd")) {
  // Edge-triggered and never read: each write is a new edge that ends one
  // epoll_wait (Asio's interrupter does the same). The counter cannot
  // overflow in any realistic run (2^64 writes).
  epoll_event event{};
  event.events = EPOLLIN | EPOLLET;
  event.data.u64 = kWakeToken;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0) {
    CreateOrDie(-1, "the loop's wake-up registration");
  }
}

EventLoop::~EventLoop() {
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

bool EventLoop::OnLoopThread() const { return loop_of_this_thread == this; }

void EventLoop::Post(std::function<void()> function) {
  MutexLock lock(mutex_);
  posted_.push_back(std::move(function));
  // Written under the lock: once the lock is released the loop may run the
  // function, go idle, return and be destroyed, eventfd and all.
  if (sleeping_ && !wake_written_) {
    wake_written_ = true;
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
  }
}

void EventLoop::ReleaseWhenIdle() {
  Post([this] {
    MutexLock lock(mutex_);
    release_when_idle_ = true;
  });
}

bool EventLoop::Watch(int fd, std::shared_ptr<Watcher> watcher, uint32_t events) {
  if (fd < 0) {
    errno = EBADF;
    return false;
  }
  if (static_cast<size_t>(fd) >= slots_.size()) slots_.resize(static_cast<size_t>(fd) + 1);
  Slot& slot = slots_[static_cast<size_t>(fd)];
  if (slot.watcher == nullptr) ++watched_;
  slot.watcher = std::move(watcher);
  return Change(fd, events);
}

bool EventLoop::ChangeWatchedEvents(int fd, uint32_t events) {
  if (fd < 0 || static_cast<size_t>(fd) >= slots_.size() ||
      slots_[static_cast<size_t>(fd)].watcher == nullptr) {
    errno = EBADF;
    return false;
  }
  Slot& slot = slots_[static_cast<size_t>(fd)];
  if (events == slot.events) return true;
  epoll_event event{};
  event.events = events;
  event.data.u64 = static_cast<uint64_t>(fd);
  const int operation = slot.events == 0 ? EPOLL_CTL_ADD
                        : events == 0    ? EPOLL_CTL_DEL
                                         : EPOLL_CTL_MOD;
  if (::epoll_ctl(epoll_fd_, operation, fd, &event) != 0) return false;
  slot.events = events;
  return true;
}

void EventLoop::Forget(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= slots_.size()) return;
  Slot& slot = slots_[static_cast<size_t>(fd)];
  if (slot.watcher == nullptr) return;
  if (slot.events != 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  slot.events = 0;
  // The watcher may be the caller: it lives until the round ends.
  retired_.push_back(std::move(slot.watcher));
  --watched_;
}

void EventLoop::AfterRound(std::function<void()> callback) {
  after_round_.push_back(std::move(callback));
}

void EventLoop::Dispatch(const epoll_event& event) {
  if (event.data.u64 == kWakeToken) return;  // its work is in posted_
  const size_t fd = static_cast<size_t>(event.data.u64);
  // Forgotten earlier in this round (its events were already taken): skip.
  if (fd >= slots_.size() || slots_[fd].watcher == nullptr) return;
  // A copy: OnReady may Forget() this descriptor.
  std::shared_ptr<Watcher> watcher = slots_[fd].watcher;
  watcher->OnReady(event.events);
}

bool EventLoop::RunPosted() {
  std::vector<std::function<void()>> batch;
  {
    MutexLock lock(mutex_);
    batch.swap(posted_);
  }
  for (auto& function : batch) function();
  return !batch.empty();
}

bool EventLoop::Idle() {
  MutexLock lock(mutex_);
  return release_when_idle_ && posted_.empty() && watched_ == 0 && held_work_ == 0;
}

void EventLoop::Run() {
  loop_of_this_thread = this;
  epoll_event events[kMaxEventsPerRound];
  for (;;) {
    // A round: the posted functions, then the callbacks they and the ready
    // sockets asked for, then the sockets forgotten meanwhile are released.
    while (RunPosted()) {
    }
    while (!after_round_.empty()) {
      std::vector<std::function<void()>> callbacks;
      callbacks.swap(after_round_);
      for (auto& callback : callbacks) callback();
    }
    retired_.clear();
    if (Idle()) break;

    int timeout_ms = -1;
    {
      MutexLock lock(mutex_);
      if (posted_.empty()) {
        sleeping_ = true;
      } else {
        timeout_ms = 0;  // posted while the after-round callbacks ran
      }
    }
    const bool timed =
        timing_switch_ != nullptr && timing_switch_->load(std::memory_order_relaxed) != 0;
    if (timed) {
      busy_wait_.WaitBegins(StageClockNs());
    } else {
      busy_wait_.Pause();
      round_woke_ns_ = 0;
    }
    const int ready = ::epoll_wait(epoll_fd_, events, kMaxEventsPerRound, timeout_ms);
    if (timed) {
      round_woke_ns_ = StageClockNs();
      busy_wait_.WaitEnds(round_woke_ns_);
    }
    {
      MutexLock lock(mutex_);
      sleeping_ = false;
      wake_written_ = false;
    }
    if (ready < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "kvlab-server: epoll_wait failed: %s\n", std::strerror(errno));
      std::abort();
    }
    for (int i = 0; i < ready; ++i) Dispatch(events[i]);
  }
  loop_of_this_thread = nullptr;
}

}  // namespace kvlab
