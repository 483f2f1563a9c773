// StageSample: the timestamps of one sampled request on its way through the
// server (StageClockNs(), one clock for every thread). The connection owns
// one, starts it on a sampled read and records it once the reply is sent;
// the Session and the engine fill in the moments only they see:
//
//   wake      the I/O loop's epoll_wait returned with the socket readable
//   received  recv() returned the request's bytes      (Connection)
//   parsed    the read's first command was parsed       (Session)
//   handed    the batch was handed to the engine        (Session)
//   picked_up the executing thread started it           (engine: EngineStageMarks)
//   executed  it had executed every operation           (engine)
//   resumed   the connection's loop took the result back (Session, after a hop)
//   queued    the reply was rendered into the output    (Session)
//   sent      the send() that carried the reply's last byte returned (Connection)
//
// The unit is one read: a pipelined read samples its first batch (a
// per-command hop: its first command), whose reply is queued first. A time
// of 0 is "not taken": a command answered without the engine (PING) has no
// handed, picked_up or executed.
//
// Thread-compatible: the connection's thread only, except `engine`, which
// the engine's threads write as stage_marks.h says.
#pragma once

#include <cstdint>

#include "engines/stage_marks.h"

namespace kvlab {

struct StageSample {
  int64_t wake = 0;
  int64_t received = 0;
  int64_t parsed = 0;
  int64_t handed = 0;
  int64_t resumed = 0;
  int64_t queued = 0;
  int64_t sent = 0;
  // Test-only known answer (--stage-spin parse=USEC): spun before `parsed`.
  int64_t spin_parse_ns = 0;
  EngineStageMarks engine;

  // A new sample: every time forgotten, the injected spins kept.
  void Start(int64_t wake_ns, int64_t received_ns) {
    wake = wake_ns;
    received = received_ns;
    parsed = handed = resumed = queued = sent = 0;
    engine.Clear();
  }
};

}  // namespace kvlab
