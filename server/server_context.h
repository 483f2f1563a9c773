// ServerContext: the state every connection and Session of one kvlab-server
// shares — the engine, the settings fixed at start (password, limits, where
// the server listens), the counters INFO reports, the WATCH registry and the
// parameters CONFIG SET may change.
//
// Thread-safe: settings are written once before the first Session exists and
// only read afterwards; counters are atomics; the Engine is as thread-safe as
// its Traits() say (the server drives a single_threaded engine from one
// thread only).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engines/engine.h"
#include "server/aof_load_report.h"
#include "server/durable_log.h"
#include "server/monitor_feed.h"
#include "server/pubsub_registry.h"
#include "server/blocking_registry.h"
#include "server/client_directory.h"
#include "server/command_stats.h"
#include "server/config_parameters.h"
#include "server/keyspace_notifier.h"
#include "server/server_settings.h"
#include "server/stage_stats.h"
#include "server/watch_registry.h"

namespace kvlab {

// Counters the connections and Sessions bump; INFO reads them.
struct ServerStats {
  std::atomic<uint64_t> connected_clients{0};
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> total_net_input_bytes{0};
  std::atomic<uint64_t> total_net_output_bytes{0};
};

struct ServerContext {
  ServerContext(Engine& engine_ref, ServerSettings settings_value)
      : engine(engine_ref),
        settings(std::move(settings_value)),
        watches(engine_ref.modifications()),
        blocking(engine_ref.modifications()),
        config(engine_ref, settings, stages),
        keyspace_notifier(pubsub, engine_ref.modifications()) {
    stages.spin_parse_ns = settings.stage_spin_parse_us * 1000;
    stages.spin_execute_ns = settings.stage_spin_execute_us * 1000;
    stages.SetSampleEvery(settings.stage_sample, engine_ref);
  }
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // Client ids start at 1 and never repeat, like Redis's CLIENT ID.
  uint64_t NextClientId() { return next_client_id_.fetch_add(1, std::memory_order_relaxed); }
  // Whole seconds since the context was made (INFO uptime_in_seconds).
  int64_t UptimeSeconds() const {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                            started_)
        .count();
  }

  Engine& engine;
  ServerSettings settings;
  ServerStats stats;
  WatchRegistry watches;      // WATCH across every connection; observes the engine
  BlockingRegistry blocking;  // clients blocked in BLPOP and its kin; observes the engine
  StageStats stages;          // INFO stages; declared before `config`, which sets its rate
  ConfigParameters config;    // CONFIG GET/SET; reads `settings`, changes engine limits
  // What SHUTDOWN does: kvlab-server's main sets it to stop the process as
  // SIGTERM does. Unset (a Session in a test or a fuzzer), SHUTDOWN answers
  // an error instead of ending the process it runs in. Set once, before the
  // first Session exists.
  std::function<void()> shutdown;
  // The append-only file (--appendonly yes), set once it is loaded and open,
  // before the first client is accepted; null otherwise. Its load, for INFO.
  DurableLog* append_log = nullptr;
  std::atomic<bool> loading{false};
  AppendLogLoad append_log_load;
  // Each I/O thread's busy versus waiting time (INFO stages' thread_io<i>),
  // in loop order; set by main() with io_thread_ids, before the first Session.
  std::vector<BusyWaitMeter*> io_thread_meters;
  PubSubRegistry pubsub;       // SUBSCRIBE and PUBLISH across every connection
  ClientDirectory clients;     // CLIENT LIST and CLIENT KILL across every connection
  CommandStats command_stats;  // INFO commandstats and errorstats
  MonitorFeed monitors;        // MONITOR
  // Publishes the engine's keyspace events (notify-keyspace-events); after
  // `pubsub`, which it publishes to.
  KeyspaceNotifier keyspace_notifier;

 private:
  std::atomic<uint64_t> next_client_id_{1};
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace kvlab
