#include "harness/clients/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"

namespace kvlab::harness {
namespace {

constexpr int kTickMs = 100;  // an idle loop re-checks reply timeouts this often
constexpr int kMaxEvents = 64;

Status Errno(const char* what) {
  return Status::IoError(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

EventLoop::EventLoop(FlushMode flush, std::vector<int> cpus)
    : flush_(flush), cpus_(std::move(cpus)) {}

EventLoop::~EventLoop() {
  Stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status EventLoop::Open() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Errno("epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Errno("eventfd");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;  // nullptr marks the wake-up descriptor
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0)
    return Errno("epoll_ctl(eventfd)");
  return Status::Ok();
}

Status EventLoop::Adopt(EventLoopChannel* channel) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = channel;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, channel->fd(), &event) != 0) return Errno("epoll_ctl");
  channels_.push_back(channel);
  watching_writes_.push_back(false);
  return Status::Ok();
}

void EventLoop::Start() {
  thread_ = std::thread([this] {
    (void)PinCurrentThread(cpus_);  // best effort: the app threads report bad --cpus
    Run();
  });
}

void EventLoop::Submit(EventLoopChannel* channel, std::string_view request, ReplyWaiter* waiter) {
  bool wake = false;
  {
    MutexLock lock(mutex_);
    if (stopping_) {
      waiter->Complete(Status::Cancelled("event loop stopped"), nullptr);
      return;
    }
    tasks_.push_back({channel, waiter, queued_bytes_.size(), request.size()});
    queued_bytes_.append(request);
    wake = idle_;  // a loop that is not idle takes the task on its next turn
    idle_ = false;
  }
  if (wake) Wake();
}

void EventLoop::Wake() {
  const uint64_t one = 1;
  wakeups_.fetch_add(1, std::memory_order_relaxed);
  // The eventfd counter cannot overflow here (the loop reads it on each
  // wake-up), so this write does not fail.
  (void)!::write(wake_fd_, &one, sizeof one);
}

void EventLoop::Interrupt(const Status& status) {
  {
    MutexLock lock(mutex_);
    if (interrupted_.ok()) interrupted_ = status;
    idle_ = false;
  }
  Wake();
}

void EventLoop::Stop() {
  {
    MutexLock lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    idle_ = false;
  }
  if (thread_.joinable()) {
    Wake();
    thread_.join();
  }
}

void EventLoop::FailChannel(EventLoopChannel* channel, const Status& status) {
  channel->Fail(status);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, channel->fd(), nullptr);  // a dead socket stays readable
}

void EventLoop::WatchWrites(EventLoopChannel* channel) {
  const size_t index = static_cast<size_t>(std::find(channels_.begin(), channels_.end(), channel) -
                                           channels_.begin());
  const bool wanted = channel->wants_write() && !channel->failed();
  if (channel->failed() || watching_writes_[index] == wanted) return;
  epoll_event event{};
  event.events = EPOLLIN | (wanted ? EPOLLOUT : 0u);
  event.data.ptr = channel;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, channel->fd(), &event);
  watching_writes_[index] = wanted;
}

void EventLoop::RunTasks(const std::vector<Task>& tasks, const std::string& bytes) {
  const uint64_t now = NowNs();
  std::vector<EventLoopChannel*> touched;
  for (const Task& task : tasks) {
    task.channel->Queue(std::string_view(bytes).substr(task.offset, task.length), task.waiter, now);
    if (flush_ == FlushMode::kPerCommand) {
      // A failed send fails the channel and its waiters (EventLoopChannel::Fail).
      (void)task.channel->Flush();
      WatchWrites(task.channel);
    } else if (std::find(touched.begin(), touched.end(), task.channel) == touched.end()) {
      touched.push_back(task.channel);
    }
  }
  for (EventLoopChannel* channel : touched) {
    (void)channel->Flush();  // as above: a failure fails the channel's waiters
    WatchWrites(channel);
  }
}

void EventLoop::Run() {
  std::vector<Task> tasks;
  std::string bytes;
  bool interrupted = false;
  epoll_event events[kMaxEvents];
  uint64_t next_timeout_check = NowNs() + kTickMs * 1'000'000ull;
  for (;;) {
    Status interrupt;
    bool stopping = false;
    {
      MutexLock lock(mutex_);
      tasks.swap(tasks_);
      bytes.swap(queued_bytes_);
      stopping = stopping_;
      interrupt = interrupted_;
      // Nothing queued: from here until epoll_wait returns, a Submit must wake us.
      idle_ = tasks.empty() && !stopping;
    }
    if (!interrupt.ok() && !interrupted) {
      for (EventLoopChannel* channel : channels_) FailChannel(channel, interrupt);
      interrupted = true;
    }
    const bool had_tasks = !tasks.empty();
    RunTasks(tasks, bytes);  // on a failed channel, Queue fails the waiter at once
    tasks.clear();
    bytes.clear();
    if (stopping) break;

    // After running tasks, only poll: more may have been queued meanwhile
    // (without a wake-up, since we were not idle).
    const int ready = ::epoll_wait(epoll_fd_, events, kMaxEvents, had_tasks ? 0 : kTickMs);
    if (!had_tasks) {
      MutexLock lock(mutex_);
      idle_ = false;
    }
    const uint64_t now = NowNs();
    for (int i = 0; i < ready; ++i) {
      auto* channel = static_cast<EventLoopChannel*>(events[i].data.ptr);
      if (channel == nullptr) {
        uint64_t count;
        (void)!::read(wake_fd_, &count, sizeof count);
        continue;
      }
      if (events[i].events & EPOLLOUT) {
        (void)channel->Flush();  // a failure fails the channel's waiters
        WatchWrites(channel);
      }
      if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        Status read = channel->OnReadable(now);
        if (!read.ok()) FailChannel(channel, read.WithContext("event-loop connection"));
      }
    }
    if (now >= next_timeout_check) {
      next_timeout_check = now + kTickMs * 1'000'000ull;
      for (EventLoopChannel* channel : channels_) {
        if (channel->Overdue(now))
          FailChannel(channel, Status::IoError("event-loop connection: no reply in time"));
      }
    }
  }
  // Stopping: whatever still waits gets an answer.
  for (EventLoopChannel* channel : channels_)
    channel->Fail(Status::Cancelled("event loop stopped"));
}

EventLoopGroup::EventLoopGroup(int threads, FlushMode flush, const std::vector<int>& cpus) {
  for (int i = 0; i < std::max(threads, 1); ++i)
    loops_.push_back(std::make_unique<EventLoop>(flush, cpus));
}

Status EventLoopGroup::Open() {
  for (auto& loop : loops_) {
    Status opened = loop->Open();
    if (!opened.ok()) return opened;
  }
  return Status::Ok();
}

EventLoop* EventLoopGroup::Next() { return loops_[next_++ % loops_.size()].get(); }

void EventLoopGroup::Start() {
  for (auto& loop : loops_) loop->Start();
}

void EventLoopGroup::Interrupt(const Status& status) {
  for (auto& loop : loops_) loop->Interrupt(status);
}

void EventLoopGroup::Stop() {
  for (auto& loop : loops_) loop->Stop();
}

uint64_t EventLoopGroup::wakeups() const {
  uint64_t total = 0;
  for (const auto& loop : loops_) total += loop->wakeups();
  return total;
}

int EffectiveLoopThreads(int requested, const std::vector<int>& cpus) {
  return requested > 0 ? requested : std::max(1, UsableCoreCount(cpus));
}

}  // namespace kvlab::harness
