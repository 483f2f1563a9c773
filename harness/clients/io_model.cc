#include "harness/clients/io_model.h"

#include <string>

#include "harness/clients/client_kind.h"

namespace kvlab::harness {

Status ParseIoModel(std::string_view text, IoModel* out) {
  if (text == "direct")
    *out = IoModel::kDirect;
  else if (text == "event-loop")
    *out = IoModel::kEventLoop;
  else
    return Status::InvalidArgument("bad --io '" + std::string(text) +
                                   "' (allowed: direct, event-loop)");
  return Status::Ok();
}

Status ParseFlushMode(std::string_view text, FlushMode* out) {
  if (text == "command")
    *out = FlushMode::kPerCommand;
  else if (text == "batch")
    *out = FlushMode::kBatch;
  else
    return Status::InvalidArgument("bad --flush '" + std::string(text) +
                                   "' (allowed: command, batch)");
  return Status::Ok();
}

const char* IoModelName(IoModel model) {
  return model == IoModel::kEventLoop ? "event-loop" : "direct";
}

const char* FlushModeName(FlushMode mode) {
  return mode == FlushMode::kBatch ? "batch" : "command";
}

Status ValidateIoOptions(const IoOptions& io) {
  if (io.loop_threads < 0 || io.loop_threads > kMaxLoopThreads) {
    return Status::InvalidArgument("--loop-threads must be in 1.." +
                                   std::to_string(kMaxLoopThreads));
  }
  return Status::Ok();
}

}  // namespace kvlab::harness
