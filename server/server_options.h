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
    kRun,          // settings are valid: start the server
    kPrintAndExit, // --help / --version: print `message` to stdout, exit 0
    kBadArguments, // print `message` to stderr, exit 2
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

// The one line printed when the server accepts connections; harnesses wait
// for it. Example: "kvlab-server ready engine=sharded shards=2 hop=command
// io-threads=2 tcp=127.0.0.1:6379 unix=/tmp/k.sock pid=123". "none" stands
// for an absent listener.
std::string ReadyLine(const ServerSettings& settings, long pid);

}  // namespace kvlab
