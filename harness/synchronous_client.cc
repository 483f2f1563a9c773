#include "harness/synchronous_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "harness/load_clock.h"
#include "harness/reply_check.h"

namespace kvlab::harness {

void SleepUntil(uint64_t deadline_ns, const std::atomic<bool>& stop) {
  constexpr uint64_t kSlice = 50'000'000;  // re-check stop every 50 ms
  for (uint64_t now = NowNs(); now < deadline_ns && !stop.load(std::memory_order_relaxed);
       now = NowNs()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(deadline_ns - now, kSlice)));
  }
}

Status SynchronousClient::RunThread(ThreadLoad& load) {
  const uint64_t interval_ns =
      load.rate_per_thread > 0 ? static_cast<uint64_t>(1e9 / load.rate_per_thread) : 0;
  uint64_t next_intended_ns = NowNs();
  std::string request;
  while (!load.stop->load(std::memory_order_relaxed)) {
    uint64_t start_ns;
    if (interval_ns != 0) {
      SleepUntil(next_intended_ns, *load.stop);
      if (load.stop->load(std::memory_order_relaxed)) break;
      start_ns = next_intended_ns;
      next_intended_ns += interval_ns;
    } else {
      start_ns = NowNs();
    }
    request.clear();
    const RequestInfo info = load.generator->AppendNext(&request);
    ReplyPtr reply;
    Status called = Call(request, &reply);
    if (!called.ok()) return called;
    load.recorder->Record({NowNs() - start_ns, CheckReply(*reply, info.expected), info.increment});
  }
  return Status::Ok();
}

}  // namespace kvlab::harness
