#include "harness/clients/synchronous_client.h"

#include <algorithm>
#include <optional>

#include "harness/measurement/arrival_schedule.h"
#include "harness/measurement/load_clock.h"
#include "harness/clients/reply_check.h"

namespace kvlab::harness {

void SleepUntil(uint64_t deadline_ns, const std::atomic<bool>& stop) {
  constexpr uint64_t kSlice = 50'000'000;  // re-check stop every 50 ms
  for (uint64_t now = NowNs(); now < deadline_ns && !stop.load(std::memory_order_relaxed);
       now = NowNs()) {
    SleepUntilNs(std::min(deadline_ns, now + kSlice));
  }
}

Status SynchronousClient::RunThread(ThreadLoad& load) {
  std::optional<ArrivalSchedule> schedule;
  if (load.rate_per_thread > 0) {
    schedule.emplace(load.arrival, load.rate_per_thread, load.arrival_seed, NowNs());
    load.recorder->NoteSchedule(schedule->next_ns(), false);
  }
  std::string request;
  LoadPhaseClock phases(load.recorder, ClientPhase::kBuild);
  for (;;) {
    uint64_t start_ns;
    if (schedule) {
      phases.Enter(ClientPhase::kWait);  // for the next intended send time
      // A call that outlasts the gap makes the next ones late; their
      // latencies still count from their intended times.
      SleepUntil(schedule->next_ns(), *load.stop);
      const bool stopping = load.stop->load(std::memory_order_acquire);
      if (stopping && schedule->next_ns() > SendDeadline(load, true, 0)) break;
      start_ns = schedule->next_ns();
      schedule->Advance();
      load.recorder->NoteSchedule(schedule->next_ns(), true);
    } else {
      if (load.stop->load(std::memory_order_relaxed)) break;
      start_ns = NowNs();
    }
    phases.Enter(ClientPhase::kBuild);
    request.clear();
    RequestInfo info = load.generator->AppendNext(&request);
    ReplyOutcome outcome;
    do {  // an operation of several requests (YCSB): one round trip each
      ReplyPtr reply;
      phases.Enter(ClientPhase::kWait);
      Status called = RoundTrip(request, &reply, &phases);
      if (!called.ok()) return called;
      phases.Enter(ClientPhase::kReceive);
      request.clear();
      outcome = load.generator->OnReply(*reply, &info, &request);
    } while (!outcome.done);
    const uint64_t end_ns = NowNs();
    load.recorder->Record({end_ns - std::min(end_ns, start_ns), outcome.verdict, info.increment});
  }
  return Status::Ok();
}

}  // namespace kvlab::harness
