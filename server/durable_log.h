// DurableLog: what the server asks of its append-only log, whichever form it
// takes — one file (AppendLog, Redis's AOF) or one file per engine lane
// (LaneLog, for engines whose threads each own part of the keyspace).
//
// Engines append through WriteLog (engines/write_log.h); connections hold
// their replies until WaitForAppended() says every write they may show is
// releasable under the fsync policy; BGREWRITEAOF compacts it in the steps
// below; INFO persistence reads counters().
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/write_log.h"
#include "server/server_settings.h"

namespace kvlab {

class DurableLog : public WriteLog {
 public:
  struct Counters {
    uint64_t appended_bytes = 0;  // handed to the log since the start
    uint64_t written_bytes = 0;   // of which write() has taken
    uint64_t durable_bytes = 0;   // of which an fsync has covered
    uint64_t fsyncs = 0;
    uint64_t write_errors = 0;
    bool last_write_ok = true;
    uint64_t file_bytes = 0;  // the files' size, once written_bytes are in them
    uint64_t base_bytes = 0;  // their size at the open or the last rewrite
    uint64_t lanes = 1;       // files appended to at once
    // BGREWRITEAOF
    bool rewrite_in_progress = false;
    uint64_t rewrites = 0;
    bool last_rewrite_ok = true;
    double last_rewrite_seconds = -1;     // -1: none yet (Redis's aof_last_rewrite_time_sec)
    uint64_t last_rewrite_hold_us = 0;    // every write held for the snapshot
    uint64_t last_rewrite_switch_us = 0;  // appenders held for the switch
  };

  virtual AppendFsync policy() const = 0;
  // Blocks until every record appended before the call is fsynced (always)
  // or written to the kernel (everysec, no).
  virtual void WaitForAppended() = 0;
  virtual Counters counters() const = 0;

  // BGREWRITEAOF, in order:
  // Claims the one rewrite that may run at a time: false if one is running.
  virtual bool TryBeginRewrite() = 0;
  // Called with the whole keyspace held (no record can be appended
  // meanwhile): where the records after the snapshot begin (its meaning is
  // the log's own; FinishRewrite() gets it back).
  virtual uint64_t MarkRewriteStart() = 0;
  // Finishes in the background with `head` (the keyspace at the mark, as
  // records, in pieces). Ends the rewrite TryBeginRewrite() claimed,
  // however it ends.
  virtual void FinishRewrite(std::vector<std::string> head, uint64_t start) = 0;
  // Ends a claimed rewrite that never took its snapshot.
  virtual void AbandonRewrite() = 0;
  // How long the snapshot held the keyspace (INFO aof_last_rewrite_hold_us).
  virtual void NoteRewriteHold(uint64_t micros) = 0;
};

}  // namespace kvlab
