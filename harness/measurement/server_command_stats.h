// ServerCommandStats: a Redis server's own account of the time its commands
// took — `INFO commandstats` ("cmdstat_<name>:calls=N,usec=U,..."; Redis
// times each command's execution on its main thread, src/server.c call())
// — read at each window boundary and turned into the window's calls and
// microseconds per call. It is the figure redis-server gives for where its
// time goes, put beside kvlab-server's INFO stages (server_stages.h).
//
// Every command counts except INFO, which the harness's own control
// connection sends at each boundary. A server without the section
// (kvlab-server) reports nothing: the figures are absent (NaN), not zero.
//
// Thread safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvlab::harness {

// The running totals INFO commandstats gave at one instant.
struct CommandStatTotals {
  bool reported = false;  // the reply had cmdstat_ lines
  uint64_t calls = 0;
  double usec = 0;
  uint64_t failed_calls = 0;  // replied with an error (Redis 7's failed_calls)
  // When the reply came back; its window boundary was taken earlier, and the
  // commands the server ran in between count here but not in that window.
  uint64_t read_at_ns = 0;
};

// Sums INFO commandstats' text over every command but INFO.
CommandStatTotals ParseCommandStatTotals(std::string_view info);

// One window's figures: the commands the server ran and its microseconds
// per command; calls 0 and usec_per_call NaN when either edge was not
// reported, nothing ran, or the totals went back (CONFIG RESETSTAT or a
// restart inside the window).
struct CommandStatFigures {
  uint64_t calls = 0;
  double usec_per_call;
  uint64_t failed_calls = 0;
  // Seconds from each edge's boundary to its INFO reply, summed over the two
  // edges: calls can differ from the window's answered commands by what the
  // server ran in these seconds (plus the requests in flight), a time and
  // not a count. NaN when calls is not reported.
  double boundary_lag_s;
  CommandStatFigures();
};

// `start_at_ns` and `end_at_ns`: the window's boundaries (its client
// counters' instants), from which each edge's lag to read_at_ns is taken.
CommandStatFigures CommandStatsBetween(const CommandStatTotals& start, uint64_t start_at_ns,
                                       const CommandStatTotals& end, uint64_t end_at_ns);

}  // namespace kvlab::harness
