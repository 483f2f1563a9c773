// kvlab-server: a RESP server whose keyspace engine is chosen at start.
//
// Threads: the main thread waits for SIGINT/SIGTERM (sigwait; every other
// thread has them blocked), one thread accepts connections (Boost.Asio), N
// I/O threads (one epoll EventLoop each) run the connections, and the
// sharded engine adds its own shard threads (the owner engine's shards are
// the I/O threads). A stop signal stops accepting,
// closes every client, waits for in-flight engine batches, removes the Unix
// socket and exits 0.
#include <sys/resource.h>
#include <unistd.h>

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "engines/engine.h"
#include "server/net/aof_loader.h"
#include "server/net/aof_auto_rewrite.h"
#include "server/net/expire_cycle.h"
#include "server/append_log.h"
#include "server/lane_log.h"
#include "server/net/connection_registry.h"
#include "server/net/io_thread_pool.h"
#include "server/net/listener.h"
#include "server/server_context.h"
#include "server/net/server_options.h"

namespace {

// Like Redis: make room for maxclients descriptors plus a few for ourselves.
void RaiseDescriptorLimit(uint64_t max_clients) {
  constexpr uint64_t kReserved = 32;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = static_cast<rlim_t>(max_clients + kReserved);
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < wanted) {
    std::cerr << "kvlab-server: warning: open-file limit " << limit.rlim_cur
              << " is below maxclients + " << kReserved << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const kvlab::ParsedCommandLine command_line = kvlab::ParseServerCommandLine(argc, argv);
  switch (command_line.outcome) {
    case kvlab::ParsedCommandLine::Outcome::kPrintAndExit:
      std::cout << command_line.message;
      return 0;
    case kvlab::ParsedCommandLine::Outcome::kBadArguments:
      std::cerr << command_line.message;
      return 2;
    case kvlab::ParsedCommandLine::Outcome::kRun:
      break;
  }
  kvlab::ServerSettings settings = command_line.settings;
  settings.executable = argv[0];

  // Block the stop signals before any thread exists (engine threads included)
  // so that they are only ever taken by sigwait() below: no handler runs on
  // an arbitrary thread, and no signal can arrive before we wait for it.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<kvlab::Engine> engine;
  if (const kvlab::Status made = kvlab::MakeEngine(settings.engine, &engine); !made.ok()) {
    std::cerr << "kvlab-server: " << made.message() << "\n";
    return 2;
  }
  // Sockets use MSG_NOSIGNAL, but a stray SIGPIPE must never kill a benchmark.
  std::signal(SIGPIPE, SIG_IGN);
  RaiseDescriptorLimit(settings.max_clients);

  kvlab::ServerContext server_context(*engine, std::move(settings));
  // SHUTDOWN: every thread but this one blocks SIGTERM, so sigwait() below
  // takes it and the server stops as it does on the signal.
  server_context.shutdown = [] { ::kill(::getpid(), SIGTERM); };
  const kvlab::ServerSettings& running = server_context.settings;
  kvlab::ConnectionRegistry registry;
  kvlab::IoThreadPool io_threads(running.io_threads);
  boost::asio::io_context accept_context(1);

  std::unique_ptr<kvlab::Listener> listener;
  if (const kvlab::Status opened = kvlab::Listener::Open(running, accept_context, io_threads,
                                                         server_context, registry, &listener);
      !opened.ok()) {
    std::cerr << "kvlab-server: " << opened.message() << "\n";
    return 1;
  }

  const bool thread_per_core = engine->Traits().runs_on_io_threads;
  if (thread_per_core) {
    // Owner i is I/O thread i; its set-up is posted ahead of every connection.
    for (size_t i = 0; i < io_threads.size(); ++i) {
      engine->AttachIoThread(static_cast<unsigned>(i),
                             [&loop = io_threads.loop(i)](std::function<void()> function) {
                               loop.Post(std::move(function));
                             });
    }
  }
  // Each loop times its rounds while stage sampling is on (INFO stages).
  for (size_t i = 0; i < io_threads.size(); ++i) {
    kvlab::EventLoop& loop = io_threads.loop(i);
    loop.TimeRoundsWhile(&server_context.stages.sample_every);
    server_context.io_thread_meters.push_back(&loop.busy_wait());
  }
  io_threads.Start();
  // Written before the first Session exists, as ServerContext requires.
  server_context.settings.io_thread_ids = io_threads.ThreadIds();
  std::unique_ptr<kvlab::DurableLog> append_log;
  std::unique_ptr<kvlab::AutoRewrite> auto_rewrite;  // stopped before the I/O threads
  if (running.append_only) {
    // Loaded on an I/O thread (the owner engine's shards are those threads)
    // before a single client is accepted; then the log opens for appending.
    const std::string path = running.dir + "/" + running.append_filename;
    server_context.loading.store(true);
    kvlab::AppendLogLoad& load = server_context.append_log_load;
    if (const kvlab::Status loaded =
            kvlab::ReplayAppendLog(path, server_context, io_threads.loop(0), &load);
        !loaded.ok()) {
      std::cerr << "kvlab-server: " << loaded.message() << "\n";
      std::_Exit(1);
    }
    server_context.loading.store(false);
    std::cerr << "kvlab-server: loaded " << load.commands << " commands (" << load.loaded_bytes
              << " bytes) from " << path << " in " << load.seconds << " s\n";
    if (load.dropped_bytes != 0) {
      std::cerr << "kvlab-server: warning: the append-only file ended in a truncated record"
                << (load.incomplete_groups != 0 ? " or a group some lane never reached" : "")
                << ": " << load.dropped_bytes << " bytes dropped (aof-load-truncated)\n";
    }
    // One file, as Redis's, for an engine of one lane; a file per lane
    // (lane_log.h) for one whose threads each own part of the keyspace, or
    // where such a log was left (its manifest).
    const unsigned lanes = engine->LogLanes();
    kvlab::Status opened;
    if (lanes == 1 && !load.has_manifest) {
      std::unique_ptr<kvlab::AppendLog> one_file;
      opened = kvlab::AppendLog::Open(path, load.loaded_bytes, running.append_fsync, &one_file);
      append_log = std::move(one_file);
    } else {
      std::unique_ptr<kvlab::LaneLog> lane_log;
      opened = kvlab::LaneLog::Open(path, load, running.engine.kind + "/" + std::to_string(lanes),
                                    lanes, running.append_fsync, &lane_log);
      append_log = std::move(lane_log);
    }
    if (!opened.ok()) {
      std::cerr << "kvlab-server: " << opened.message() << "\n";
      std::_Exit(1);
    }
    server_context.append_log = append_log.get();
    auto_rewrite =
        std::make_unique<kvlab::AutoRewrite>(server_context, io_threads.loop(0), *append_log);
  }
  // After the append-only file's replay (Redis expires nothing while it
  // loads); stopped before the I/O threads.
  auto expire_cycle = std::make_unique<kvlab::ExpireCycle>(*engine, io_threads.loop(0));
  auto keep_accepting = boost::asio::make_work_guard(accept_context);
  listener->StartAccepting();
  std::thread accept_thread([&accept_context] { accept_context.run(); });
  std::cout << kvlab::ReadyLine(running, static_cast<long>(::getpid())) << std::endl;

  int stop_signal = 0;
  while (sigwait(&stop_signals, &stop_signal) != 0) {
  }
  auto_rewrite.reset();  // its Session runs on an I/O thread
  expire_cycle.reset();  // its batches run there too
  boost::asio::post(accept_context, [&] {
    listener->Close();
    registry.CloseAll();
    if (thread_per_core) {
      // One loop's connection may still hand work to another loop: none may
      // stop before every connection has closed and every hop has returned.
      while (registry.size() != 0 || engine->HasWorkInFlight()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    io_threads.ReleaseWhenIdle();
    keep_accepting.reset();
  });
  accept_thread.join();  // returns once the listeners are closed
  io_threads.Join();     // every connection closed, every engine batch finished
  listener.reset();
  return 0;
}
