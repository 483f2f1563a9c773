// AofRecord: one write command's record in the append-only log, in RESP —
// what Redis's AOF holds: the command's effect, replayable at any later
// time with the same result.
//
// Built by the Session before the batch runs, from the command's arguments
// and the Operations its handler queued (which hold the absolute deadlines
// the handler computed), so relative times never reach the log: EXPIRE,
// PEXPIRE, EXPIREAT and GETEX EX/PX become PEXPIREAT, GETEX PERSIST becomes
// PERSIST, SET EX/PX/EXAT, SETEX and PSETEX become SET ... PXAT, RESTORE with a
// TTL becomes RESTORE ... ABSTTL. SPOP, the one
// random write, is completed when it is appended: SREM of the members the
// engine actually popped (as Redis propagates it). A transaction is one record
// MULTI, its writes, EXEC; a multi-key command is one command; both are
// appended whole by the engine (write_log.h), so a replay runs all or none.
//
// Between records the log writes a clock annotation, `#kvlab-now-ms:<ms>`,
// wherever the writes' clock changes (append_log.h): a replay runs each
// record at the clock its write decided expiry with (engines/clock.h).
// Redis's loader skips lines that start with '#' (its own `#TS:` annotations),
// so redis-server still loads the file.
//
// Not synchronised: built on the connection's thread, then only read
// (RenderInto) by the engine thread that appends it, before the batch
// completes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engines/operation.h"
#include "engines/write_log.h"

namespace kvlab {

class AofRecord : public LogEntry {
 public:
  explicit AofRecord(WriteLog* target) { log = target; }

  // Adds one command: `args` as received, `ops` the operations it queued,
  // the first of which is the `first_result`-th result Append() will get.
  void AddCommand(std::span<const std::string_view> args, std::span<const Operation> ops,
                  uint32_t first_result);
  // Encloses the commands added so far in MULTI ... EXEC.
  void WrapInTransaction();
  bool empty() const { return pieces_.empty(); }

  // Appends the record's bytes to `out`, given the results of its operations.
  void RenderInto(std::span<const OpResult> results, std::string& out) const;

 private:
  // Fixed bytes, or an SPOP whose members are only known once it has run.
  struct Piece {
    std::string bytes;
    std::string spop_key;  // non-empty: render SREM spop_key <popped>
    uint32_t spop_result = 0;
  };
  std::vector<Piece> pieces_;
};

// `#kvlab-now-ms:<now_ms>` and CRLF, appended to `out`.
void AppendClockAnnotation(int64_t now_ms, std::string& out);
// The clock of an annotation line (without its CRLF): nullopt for another
// annotation (Redis's `#TS:`, which a replay skips); InvalidArgument for a
// kvlab clock that is not a non-negative decimal number.
Status ParseClockAnnotation(std::string_view line, std::optional<int64_t>* now_ms);

// A group of several lanes (lane_log.h): `#kvlab-group:<id>:<lane>,<lane>...`,
// the lanes ascending, written in each of those lanes' files; the first
// lane's is followed by the group's record.
struct GroupMark {
  uint64_t id = 0;
  std::vector<uint32_t> lanes;
};
// The annotation line of `mark`, without its CRLF.
std::string GroupAnnotation(uint64_t id, std::span<const uint32_t> lanes);
// The group of an annotation line (without its CRLF): nullopt for another
// annotation; InvalidArgument for a kvlab group annotation that is malformed
// (no lanes, lanes not ascending, a bad number).
Status ParseGroupAnnotation(std::string_view line, std::optional<GroupMark>* mark);

// The RESP array of `args` (*N, then $len bulks), appended to `out`.
void AppendRespCommand(std::span<const std::string_view> args, std::string& out);

}  // namespace kvlab
