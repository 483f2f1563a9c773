// The I/O-model axis of the pooled and shared strategies (`--io`):
//   direct     — the application thread does its own socket I/O (pooled: a
//                blocking round trip on the borrowed connection; shared: the
//                caller writes, a reader thread hands replies back);
//   event-loop — Lettuce over Netty: `loop_threads` event-loop threads each
//                own their connections on epoll; a caller queues its command
//                to its connection's loop and waits; the loop writes (a flush
//                per command, or everything queued at once), reads, decodes
//                and completes the caller's future (event_loop.h).
//
// Thread safety: plain values and pure functions; thread-safe.
#pragma once

#include <string_view>

#include "harness/status.h"

namespace kvlab::harness {

enum class IoModel { kDirect, kEventLoop };
// When the event loop writes queued commands: one send per command (Lettuce's
// autoFlush, the default) or one send of everything queued for a connection.
enum class FlushMode { kPerCommand, kBatch };

struct IoOptions {
  IoModel model = IoModel::kDirect;
  int loop_threads = 0;  // event loop threads; 0 = the cores the harness may use
  FlushMode flush = FlushMode::kPerCommand;
};

Status ParseIoModel(std::string_view text, IoModel* out);      // direct|event-loop
Status ParseFlushMode(std::string_view text, FlushMode* out);  // command|batch
const char* IoModelName(IoModel model);
const char* FlushModeName(FlushMode mode);

// InvalidArgument when `io`'s counts are out of range. Which client kinds
// take --io event-loop is CheckClientOptions's (client_kind.h).
Status ValidateIoOptions(const IoOptions& io);

}  // namespace kvlab::harness
