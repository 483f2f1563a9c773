// ClientKind: the table of kvlab-load's client strategies (modelled on
// engines/engine_kind.h) — each one's name, its default connection count,
// whether it pipelines, which of the strategy options apply to it — and the
// one checker of those options (CheckClientOptions). The command line, the
// sweep, the redis-benchmark adapter, the front end and `kvlab-load --kinds`
// all read it, so a strategy's facts are written down once.
//
// `kvlab-load --kinds` prints KindsJson() (command_line.h). Schema (format "kvlab-load-kinds/1"):
//   {"format": "kvlab-load-kinds/1",
//    "clients": [{"name": "pooled", "summary": "one line",
//                 "default_connections": 8,      // without --connections
//                 "connections_per_thread": bool, // true: the default is one per
//                                                 //   thread, and --connections (a
//                                                 //   total) never gives fewer
//                 "max_connections": 1 | 100000,
//                 "pipelines": bool,       // --pipeline N > 1 and --refill apply
//                 "event_loop": bool,      // --io event-loop (--loop-threads, --io-flush) applies
//                 "transactions": bool,    // can send multi-incr:N (MULTI ... EXEC)
//                 "redis_benchmark": bool, // --loadgen redis-benchmark can play it
//                 "options": ["pipeline", ...]}  // the options only some kinds take
//                ...],                            // in --client's order; the first is the default
//    "default_client": "dedicated",
//    "choices": {"loadgen": ["kvlab-load", "redis-benchmark"], "io": [...],
//                "io_flush": [...], "refill": [...], "route": [...], "arrival": [...]},
//                                   // each option's spellings, its default first
//    "commands": {"single": ["get", "set", "incrby", "ping", "mix"],
//                 "multi_key": ["mset", "mget", "multi-incr"],  // NAME:N
//                 "max_keys_per_command": 1000,                  // N in 1..this
//                 "own_connection": ["multi-incr"],  // needs transactions, --io direct,
//                                                    //   --connections <= threads
//                 "ycsb": ["load", "A", ...],         // ycsb:W
//                 "redis_benchmark_tests": [...]},    // rb:TEST, --loadgen redis-benchmark
//    "limits": {NAME: {"min": N, "max": N}, ...}}  // threads, connections, pipeline,
//                                                  //   repeat, loop_threads
//
// Constants and pure functions over a table built at compile time;
// thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "harness/status.h"

namespace kvlab::harness {

enum class ClientKind { kDedicated, kPooled, kShared };

// Ranges of kvlab-load's counts, checked by the command line and the sweep.
inline constexpr int kMaxThreads = 4096;
inline constexpr int kMaxConnections = 100000;
inline constexpr int kMaxPipeline = 100000;
inline constexpr int kMaxRepetitions = 1000;
inline constexpr int kMaxLoopThreads = 1024;

struct ClientKindInfo {
  ClientKind kind;
  std::string_view name;
  std::string_view summary;  // one line, for `kvlab-load --kinds`
  // Without --connections. connections_per_thread: one per thread, and a
  // --connections total below the thread count is raised to it.
  int default_connections = 1;
  bool connections_per_thread = false;
  int max_connections = kMaxConnections;
  bool pipelines = false;        // --pipeline > 1 and --refill apply
  bool event_loop = false;       // --io event-loop applies (pooled, shared)
  bool transactions = false;     // each thread owns its connection: MULTI ... EXEC stays in order
  bool redis_benchmark = false;  // redis-benchmark's own strategy
};

// Every kind, in --client's order; the first is the default.
std::span<const ClientKindInfo> AllClientKinds();
const ClientKindInfo& InfoOf(ClientKind kind);
// nullptr when no kind has that name.
const ClientKindInfo* FindClientKind(std::string_view name);

Status ParseClientKind(std::string_view text, ClientKind* out);  // dedicated|pooled|shared
const char* ClientKindName(ClientKind kind);

// The connections a point of `threads` threads opens with --connections
// `connections` (0: not given).
int ConnectionsOf(ClientKind kind, int connections, int threads);

// What a run asks of its client kind: everything CheckClientOptions judges.
struct ClientOptionUse {
  ClientKind client = ClientKind::kDedicated;
  int connections = 0;     // --connections; 0: the kind's default
  int fewest_threads = 1;  // the smallest --threads value
  int pipeline = 1;
  bool refill = false;      // --refill given (or not steady)
  bool event_loop = false;  // --io event-loop
  // Set: the command (as --command spells it) must reach the server in order
  // on one connection per thread (MULTI ... EXEC).
  std::string own_connection_command;
  bool redis_benchmark = false;  // --loadgen redis-benchmark plays the client
};

// The one check of which options apply to which client kind, by the table;
// InvalidArgument names the option and the kinds it applies to.
Status CheckClientOptions(const ClientOptionUse& use);

}  // namespace kvlab::harness
