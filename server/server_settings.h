// ServerSettings: everything one kvlab-server runs with — its command line,
// parsed and validated by ParseServerCommandLine (server_options.h), plus the
// few facts main() adds once the server is up (executable, I/O thread ids).
// INFO and CONFIG GET report them; the listener and connections obey them.
//
// A plain value type; thread-compatible. Once in a ServerContext it is
// written only before the first Session exists (see server_context.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engines/engine.h"

namespace kvlab {

// The server's limits, each written here once: ServerSettings' defaults,
// the command line's defaults and ranges (server_options.cc), the
// connections' defaults (connection.h) and `kvlab-server --kinds` read them.
inline constexpr uint16_t kDefaultPort = 6379;
inline constexpr uint64_t kDefaultMaxClients = 10000;  // Redis's maxclients
inline constexpr uint64_t kMaxMaxClients = 1'000'000;  // --maxclients' cap
inline constexpr unsigned kMaxIoThreads = 1024;        // --io-threads' cap
// Bytes of unsent replies / unparsed input past which a client is disconnected.
inline constexpr uint64_t kDefaultClientOutputBufferLimit = 64ull << 20;
inline constexpr uint64_t kDefaultClientQueryBufferLimit = 1ull << 30;

// --appendfsync: when the append-only file is fsynced (append_log.h).
enum class AppendFsync : uint8_t { kAlways, kEverySec, kNo };

struct ServerSettings {
  EngineConfig engine;           // kind, shards, stripes, hop, max_memory_bytes
  unsigned io_threads = 1;       // resolved: >= 1; 1 whenever the engine is single-threaded
  uint16_t port = kDefaultPort;  // 0 = no TCP listener
  std::string bind = "127.0.0.1";
  std::string unix_socket;  // empty = no Unix socket listener
  // --shard-ports BASE (owner): I/O thread i also listens on BASE + i and
  // owns the hash slots CLUSTER SLOTS gives that port. 0 = none.
  uint16_t shard_ports = 0;
  std::string requirepass;  // empty = no password (AUTH is refused)
  uint64_t max_clients = kDefaultMaxClients;
  bool protected_mode = true;
  uint64_t client_output_buffer_limit = kDefaultClientOutputBufferLimit;  // bytes of unsent replies
  uint64_t client_query_buffer_limit = kDefaultClientQueryBufferLimit;    // bytes of unparsed input
  // Redis's persistence options: the append-only file is dir/append_filename.
  bool append_only = false;
  AppendFsync append_fsync = AppendFsync::kEverySec;
  std::string dir;  // absolute; the working directory unless --dir
  std::string append_filename = "appendonly.aof";
  // --stage-sample N: every Nth read of each I/O thread is timed stage by
  // stage (server/stage_stats.h); 0 = off. The command line's default is
  // kDefaultStageSample; a ServerContext built in a test samples nothing.
  uint32_t stage_sample = 0;
  // --stage-spin STAGE=USEC, test-only known answers: microseconds spun
  // inside the parse or execute stage of every sampled request.
  int64_t stage_spin_parse_us = 0;
  int64_t stage_spin_execute_us = 0;

  // Known once the server runs (main()).
  std::string executable;            // argv[0], for INFO server
  std::vector<pid_t> io_thread_ids;  // kernel ids of the I/O threads (INFO cpu)
};

}  // namespace kvlab
