// Loading the append-only file at start: ScanAppendLog() checks its framing
// (and finds where a replay may stop), ReplayAppendLog() runs its commands
// through a Session on an I/O thread before any client is accepted.
//
// What a log may end with, as Redis's aof-load-truncated yes treats it: a
// last record cut short by a crash, or a MULTI whose EXEC never reached the
// disk, is dropped (the replay loads everything before it, reports how many
// bytes it dropped, and AppendLog::Open cuts them off). Anything else that is
// not a well-formed RESP command array is corruption: the server refuses to
// start, with the byte offset, rather than load a log it cannot trust.
// Annotation lines (`#...` CRLF) between records are skipped, as Redis's
// loader does; kvlab's clock annotations (aof_record.h) set the clock the
// records after them replay at (engines/clock.h). A log without them (an
// older kvlab's, or Redis's) replays at the current time.
//
// Not thread-safe; ReplayAppendLog blocks its caller until the replay ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/aof_load_report.h"
#include "server/net/event_loop.h"
#include "server/server_context.h"

namespace kvlab {

// A whole unit of the log: one command, or MULTI ... EXEC.
struct AppendLogUnit {
  uint64_t begin = 0;               // its first command's first byte
  uint64_t end = 0;                 // one past its last byte
  std::optional<int64_t> clock_ms;  // the clock it replays at (none: the current time)
  // Where the file is cut to leave this unit out: `begin`, or its group
  // annotation's first byte.
  uint64_t cut = 0;
  // A part of a group of several lanes (lane_log.h): its id (0: none) and
  // lanes. The first lane's part holds the record; the others' are markers
  // (begin == end), which replay nothing.
  uint64_t group = 0;
  std::vector<uint32_t> group_lanes;
  bool marker = false;
  uint64_t commands = 0;  // RESP commands in it (MULTI and EXEC included)
};

struct AppendLogScan {
  uint64_t valid_bytes = 0;          // the prefix of whole units and annotations
  uint64_t dropped_bytes = 0;        // the truncated tail after it
  uint64_t commands = 0;             // commands in the valid prefix
  std::vector<AppendLogUnit> units;  // in file order
  std::string corruption;            // non-empty: what is wrong, and where
};

// `lane`: which lane of its segment the file is (a group annotation is the
// record's own in the group's first lane, a marker in the others).
AppendLogScan ScanAppendLog(std::string_view bytes, uint32_t lane = 0);

// Consecutive whole commands that run at one clock.
struct ReplayPiece {
  std::string bytes;
  std::optional<int64_t> clock_ms;  // none: the current time
};

// Runs `pieces` in order through one Session of the server's own (logged in
// when the server has a password) on `loop`, which must be running, each
// piece at its clock; blocks its caller until they have run. Their replies
// go nowhere. InvalidArgument if the Session stops on one.
Status RunCommandsOnLoop(ServerContext& server, EventLoop& loop, std::vector<ReplayPiece> pieces);

// Reads `path` (a missing file is an empty log), replays its valid prefix
// through a Session run on `loop` (which must be running), and says what it
// loaded. InvalidArgument on corruption or an unreadable file.
Status ReplayAppendLog(const std::string& path, ServerContext& server, EventLoop& loop,
                       AppendLogLoad* load);

}  // namespace kvlab
