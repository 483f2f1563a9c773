// ParseServerCommandLine: kvlab-server's command line, parsed and validated
// into ServerSettings (server_settings.h).
//
// Every option has a Redis-like spelling (--port, --bind, --unixsocket,
// --requirepass, --maxclients, --maxmemory 100mb, --protected-mode yes|no,
// ...) plus kvlab's own engine selection (--engine, --shards, --stripes,
// --hop, --io-threads). Defaults are resolved here (cores, `single` forcing
// one I/O thread) so the rest of the server sees concrete values.
//
// Plain value types and pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/server_settings.h"

namespace kvlab {

struct ParsedCommandLine {
  enum class Outcome {
    kRun,           // settings are valid: start the server
    kPrintAndExit,  // --help / --version: print `message` to stdout, exit 0
    kBadArguments,  // print `message` to stderr, exit 2
  };
  Outcome outcome = Outcome::kRun;
  ServerSettings settings;
  std::string message;
};

// Parses argv (argv[0] is the program name). Never exits, never prints.
ParsedCommandLine ParseServerCommandLine(int argc, const char* const* argv);

// Redis's memory units, case-insensitive: "123" bytes, "1k" = 1000, "1kb" =
// 1024, "m"/"mb", "g"/"gb" likewise. nullopt when malformed or overflowing.
std::optional<uint64_t> ParseMemorySize(std::string_view text);

// Redis's spelling of a byte count: "64mb", "1gb", "512kb", else plain bytes.
std::string MemorySizeText(uint64_t bytes);

// `kvlab-server --kinds`: the engine table (engines/engine_kind.h) and the
// server's limits as JSON, ending in a newline. Schema (format
// "kvlab-server-kinds/1"):
//   {"format": "kvlab-server-kinds/1",
//    "engines": [{"name": "sharded", "summary": "one line",
//                 "options": [OPTION...],   // the options only this engine takes
//                 "traits": {"single_threaded": bool,  // one thread; --io-threads is 1
//                            "uses_shards": bool,      // --shards and --hop apply
//                            "uses_stripes": bool,     // --stripes applies
//                            "thread_per_core": bool}} // shards = I/O threads; --shard-ports
//                ...],                                 // in --engine's order
//    "default_engine": "sharded",
//    "multikey": OPTION,                     // --multikey, taken by every engine
//    "limits": {NAME: {"default": N, "min": N, "max": N}, ...}}
//      NAME: port, io_threads (default: this machine's cores), maxclients,
//      maxmemory (0 = unlimited), client_output_buffer_limit and
//      client_query_buffer_limit (bytes); a max of 2^64-1 means no cap.
//   OPTION: {"flag": "shards", "default": "TEXT", "min": N, "max": N} or
//           {"flag": "hop", "default": "TEXT", "choices": ["command", "batch"]};
//     "default" is the option's text ("64", "command"), or "cores" (this
//     machine's hardware threads) or "none" (off).
std::string KindsJson();

// The one line printed when the server accepts connections; harnesses wait
// for it. Example: "kvlab-server ready engine=sharded shards=2 hop=command
// io-threads=2 tcp=127.0.0.1:6379 unix=/tmp/k.sock pid=123". "none" stands
// for an absent listener.
std::string ReadyLine(const ServerSettings& settings, long pid);

}  // namespace kvlab
