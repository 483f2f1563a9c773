// kvlab-server: a RESP server whose keyspace engine is chosen at start.
//
// Threads: the main thread accepts connections and handles signals; N I/O
// threads (one io_context each) run the connections; the sharded engine adds
// its own shard threads. SIGINT/SIGTERM stop accepting, close every client,
// wait for in-flight engine batches, remove the Unix socket and exit 0.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "engines/engine.h"
#include "server/connection_registry.h"
#include "server/io_thread_pool.h"
#include "server/listener.h"
#include "server/server_context.h"
#include "server/server_options.h"

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
  const kvlab::ServerOptions& options = command_line.options;

  std::string error;
  std::unique_ptr<kvlab::Engine> engine = kvlab::MakeEngine(options.engine, &error);
  if (!engine) {
    std::cerr << "kvlab-server: " << error << "\n";
    return 2;
  }
  // Sockets use MSG_NOSIGNAL, but a stray SIGPIPE must never kill a benchmark.
  std::signal(SIGPIPE, SIG_IGN);
  RaiseDescriptorLimit(options.max_clients);

  kvlab::ServerSettings settings;
  settings.requirepass = options.requirepass;
  settings.max_clients = options.max_clients;
  settings.protected_mode = options.protected_mode;
  settings.max_memory_bytes = options.engine.max_memory_bytes;
  settings.engine = options.engine;
  settings.io_threads = options.io_threads;
  settings.bind = options.bind;
  settings.unix_socket = options.unix_socket;
  settings.executable = argv[0];
  kvlab::ServerContext server_context(*engine, std::move(settings));
  kvlab::ConnectionRegistry registry;
  kvlab::IoThreadPool io_threads(options.io_threads);
  boost::asio::io_context accept_context(1);

  std::unique_ptr<kvlab::Listener> listener = kvlab::Listener::Open(
      options, accept_context, io_threads, server_context, registry, &error);
  if (!listener) {
    std::cerr << "kvlab-server: " << error << "\n";
    return 1;
  }

  // Written before the first Session exists, as ServerContext requires.
  server_context.settings.tcp_port = listener->tcp_port();

  boost::asio::signal_set stop_signals(accept_context, SIGINT, SIGTERM);
  stop_signals.async_wait([&](const boost::system::error_code& signal_error, int) {
    if (signal_error) return;
    listener->Close();
    registry.CloseAll();
    io_threads.ReleaseWhenIdle();
  });

  io_threads.Start();
  listener->StartAccepting();
  std::cout << kvlab::ReadyLine(options, listener->tcp_port(), static_cast<long>(::getpid()))
            << std::endl;

  accept_context.run();  // returns once the signal handler has closed the listeners
  io_threads.Join();     // every connection closed, every engine batch finished
  listener.reset();
  return 0;
}
