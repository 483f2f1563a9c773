// EventLoop: level-triggered readiness, posting from other threads, the
// after-round callbacks, forgetting a descriptor mid-round, and when Run()
// returns.
#include "server/net/event_loop.h"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

// A connected pair of Unix stream sockets, closed on destruction.
struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds.data()), 0); }
  ~SocketPair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int ours() const { return fds[0]; }
  int theirs() const { return fds[1]; }
  std::array<int, 2> fds{-1, -1};
};

// A watcher that runs a function per report.
class FunctionWatcher : public EventLoop::Watcher {
 public:
  explicit FunctionWatcher(std::function<void(uint32_t)> on_ready)
      : on_ready_(std::move(on_ready)) {}
  void OnReady(uint32_t events) override { on_ready_(events); }

 private:
  std::function<void(uint32_t)> on_ready_;
};

// Runs the loop on its own thread; Join() waits (bounded) for Run() to return.
class LoopThread {
 public:
  explicit LoopThread(EventLoop& loop) : finished_(done_.get_future()) {
    thread_ = std::thread([&loop, this] {
      loop.Run();
      done_.set_value();
    });
  }
  ~LoopThread() {
    if (thread_.joinable()) thread_.join();
  }
  // A liveness bound, not a speed: a loop that never returns fails the test
  // instead of hanging the suite.
  bool Join() {
    const bool returned = finished_.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    if (returned) thread_.join();
    return returned;
  }

 private:
  std::promise<void> done_;
  std::future<void> finished_;
  std::thread thread_;
};

TEST(EventLoop, ReturnsOnceReleasedAndIdle) {
  EventLoop loop;
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  EXPECT_TRUE(thread.Join());
}

TEST(EventLoop, PostFromAnotherThreadWakesTheSleepingLoop) {
  EventLoop loop;
  LoopThread thread(loop);
  std::promise<bool> ran;
  // The loop is asleep in epoll_wait (nothing posted, nothing watched) or
  // about to be: either way the function must run.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  loop.Post([&] { ran.set_value(loop.OnLoopThread()); });
  auto result = ran.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(result.get());  // on the loop's thread
  EXPECT_FALSE(loop.OnLoopThread());
  loop.ReleaseWhenIdle();
  EXPECT_TRUE(thread.Join());
}

TEST(EventLoop, PostedFunctionsRunInPostingOrder) {
  EventLoop loop;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) loop.Post([&order, i] { order.push_back(i); });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

// Level-triggered: input left in the socket is reported again, one report per
// round, until it is read; a watcher that reads one byte per report sees one
// report per byte.
TEST(EventLoop, ReportsAReadableSocketUntilItIsDrained) {
  EventLoop loop;
  SocketPair pair;
  ASSERT_EQ(::write(pair.theirs(), "abc", 3), 3);
  std::string received;
  int reports = 0;
  loop.Post([&] {
    auto watcher = std::make_shared<FunctionWatcher>([&](uint32_t events) {
      ++reports;
      EXPECT_TRUE(events & EPOLLIN);
      char byte = 0;
      ASSERT_EQ(::recv(pair.ours(), &byte, 1, 0), 1);
      received.push_back(byte);
      if (received.size() == 3) loop.Forget(pair.ours());
    });
    ASSERT_TRUE(loop.Watch(pair.ours(), watcher, EPOLLIN));
  });
  loop.ReleaseWhenIdle();  // returns once the watcher has forgotten its socket
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  EXPECT_EQ(received, "abc");
  EXPECT_EQ(reports, 3);
}

TEST(EventLoop, WatchingNoEventsTakesTheSocketOutOfTheSetButKeepsTheLoopRunning) {
  EventLoop loop;
  SocketPair pair;
  ASSERT_EQ(::write(pair.theirs(), "x", 1), 1);
  int reports = 0;
  std::promise<void> reported;
  std::shared_ptr<FunctionWatcher> watcher;
  loop.Post([&] {
    watcher = std::make_shared<FunctionWatcher>([&](uint32_t) {
      // Not read: level-triggered, it would be reported every round. Watching
      // nothing stops the reports (and a peer's hang-up's too).
      ASSERT_TRUE(loop.Change(pair.ours(), 0));
      if (++reports == 1) reported.set_value();
    });
    ASSERT_TRUE(loop.Watch(pair.ours(), watcher, EPOLLIN));
  });
  loop.ReleaseWhenIdle();  // still watched (with no events): Run() must go on
  LoopThread thread(loop);
  ASSERT_EQ(reported.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // The loop now sleeps. Were the socket still in the set, its unread byte,
  // and then the hang-up, would wake it and be reported again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::shutdown(pair.theirs(), SHUT_RDWR);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  loop.Post([&] { loop.Forget(pair.ours()); });
  ASSERT_TRUE(thread.Join());
  EXPECT_EQ(reports, 1);
}

TEST(EventLoop, ReportsWritabilityEveryRoundWhileWatched) {
  EventLoop loop;
  SocketPair pair;
  int reports = 0;
  std::shared_ptr<FunctionWatcher> watcher;
  loop.Post([&] {
    watcher = std::make_shared<FunctionWatcher>([&](uint32_t events) {
      EXPECT_TRUE(events & EPOLLOUT);
      if (++reports == 2) {
        loop.Forget(pair.ours());
      }
    });
    ASSERT_TRUE(loop.Watch(pair.ours(), watcher, EPOLLOUT));  // an empty socket: writable
  });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  EXPECT_EQ(reports, 2);  // reported each round while watched, level-triggered
}

// The callback asked for by the first ready socket runs after every socket
// that was ready in the same round has been reported.
TEST(EventLoop, AfterRoundRunsAfterEveryReadySocketOfTheRound) {
  EventLoop loop;
  SocketPair first;
  SocketPair second;
  ASSERT_EQ(::write(first.theirs(), "1", 1), 1);
  ASSERT_EQ(::write(second.theirs(), "2", 1), 1);
  int reported = 0;
  int reported_when_callback_ran = -1;
  int callbacks = 0;
  auto on_ready = [&](int fd) {
    char byte = 0;
    ASSERT_EQ(::recv(fd, &byte, 1, 0), 1);
    if (++reported == 1) {
      loop.AfterRound([&] {
        ++callbacks;
        reported_when_callback_ran = reported;
        loop.Forget(first.ours());
        loop.Forget(second.ours());
      });
    }
  };
  loop.Post([&] {
    ASSERT_TRUE(loop.Watch(
        first.ours(), std::make_shared<FunctionWatcher>([&](uint32_t) { on_ready(first.ours()); }),
        EPOLLIN));
    ASSERT_TRUE(loop.Watch(
        second.ours(),
        std::make_shared<FunctionWatcher>([&](uint32_t) { on_ready(second.ours()); }), EPOLLIN));
  });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  EXPECT_EQ(callbacks, 1);
  EXPECT_EQ(reported_when_callback_ran, 2);
}

// A watcher forgotten during a round is not called for the events of that
// round it still had queued, and lives until the round ends.
TEST(EventLoop, ForgottenWatcherIsNotReportedLaterInTheRound) {
  EventLoop loop;
  SocketPair first;
  SocketPair second;
  ASSERT_EQ(::write(first.theirs(), "1", 1), 1);
  ASSERT_EQ(::write(second.theirs(), "2", 1), 1);
  int reports = 0;
  std::weak_ptr<FunctionWatcher> forgotten;
  auto forget_both = [&](uint32_t) {
    ++reports;
    loop.Forget(first.ours());
    loop.Forget(second.ours());
    loop.AfterRound([&] { EXPECT_FALSE(forgotten.expired()); });  // until the round ends
  };
  loop.Post([&] {
    auto a = std::make_shared<FunctionWatcher>(forget_both);
    auto b = std::make_shared<FunctionWatcher>(forget_both);
    forgotten = b;
    ASSERT_TRUE(loop.Watch(first.ours(), a, EPOLLIN));
    ASSERT_TRUE(loop.Watch(second.ours(), b, EPOLLIN));
  });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  EXPECT_EQ(reports, 1);  // both were ready; whichever ran first forgot the other
  EXPECT_TRUE(forgotten.expired());
}

TEST(EventLoop, HeldWorkKeepsRunGoingUntilReleased) {
  EventLoop loop;
  loop.Post([&] { loop.HoldWork(); });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  std::promise<void> held;
  loop.Post([&] { held.set_value(); });
  ASSERT_EQ(held.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // An engine batch finishing on another thread posts the release.
  std::thread([&] { loop.Post([&] { loop.ReleaseWork(); }); }).join();
  EXPECT_TRUE(thread.Join());
}

TEST(EventLoop, WatchingAClosedDescriptorOrChangingAnUnwatchedOneFails) {
  EventLoop loop;
  SocketPair pair;
  bool watched = true;
  bool changed = true;
  loop.Post([&] {
    watched = loop.Watch(-1, std::make_shared<FunctionWatcher>([](uint32_t) {}), EPOLLIN);
    changed = loop.Change(pair.ours(), EPOLLIN);  // never watched
  });
  loop.ReleaseWhenIdle();
  LoopThread thread(loop);
  ASSERT_TRUE(thread.Join());
  EXPECT_FALSE(watched);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace kvlab
