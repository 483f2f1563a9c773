#include "harness/clients/dedicated_client.h"

#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "harness/measurement/arrival_schedule.h"
#include "harness/measurement/client_phases.h"
#include "harness/measurement/load_clock.h"
#include "harness/clients/reply_check.h"

namespace kvlab::harness {
namespace {

// A request written and not yet answered.
struct InFlight {
  uint64_t start_ns;  // actual send time (closed loop) or intended time (open loop)
  RequestInfo info;
  std::string request;  // --route slots only: sent again after a -MOVED
};

// The requests in flight on one connection, oldest first. At most
// `pipeline` are ever in flight, so a fixed ring needs no allocation.
class InFlightQueue {
 public:
  explicit InFlightQueue(size_t capacity) : slots_(capacity) {}
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Assigns into the slot, so a routed request's bytes reuse its capacity.
  void push_back(uint64_t start_ns, const RequestInfo& info, std::string_view request) {
    InFlight& slot = slots_[(head_ + size_++) % slots_.size()];
    slot.start_ns = start_ns;
    slot.info = info;
    slot.request.assign(request);
  }
  const InFlight& front() const { return slots_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }

 private:
  std::vector<InFlight> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

struct ConnectionState {
  Connection* connection;
  InFlightQueue in_flight;
  std::string outgoing;
  size_t group;  // which of the thread's connections (routed: a socket per node) it is
};

constexpr uint64_t kRecheckNs = 50'000'000;  // how long a wait may last before stop is re-checked

// One application thread's loop over its connections: send what is due,
// write, stop once nothing is owed, wait for replies (or the next intended
// send time), read them and record. Each round is these steps in order.
class DedicatedThread {
 public:
  DedicatedThread(const StrategyOptions& options, SlotMap* map,
                  std::vector<std::unique_ptr<Connection>>& connections, ThreadLoad& load)
      : load_(load),
        map_(map),
        pipeline_(static_cast<size_t>(options.pipeline)),
        open_loop_(load.rate_per_thread > 0),
        burst_(options.refill == RefillMode::kBurst),
        reply_timeout_ns_(static_cast<uint64_t>(options.connection.reply_timeout_s * 1e9)),
        nodes_(map ? map->nodes().size() : 1) {
    for (auto& connection : connections) {
      states_.push_back({connection.get(), InFlightQueue(pipeline_), {}, states_.size() / nodes_});
    }
    groups_ = states_.size() / nodes_;
    group_in_flight_.assign(groups_, 0);
    poll_set_.resize(states_.size());
    if (open_loop_) {
      schedule_.emplace(load.arrival, load.rate_per_thread, load.arrival_seed, NowNs());
      load.recorder->NoteSchedule(schedule_->next_ns(), false);
    }
  }

  Status Run() {
    // Each step of a round is charged to its phase (client_phases.h).
    PhaseClock phases(load_.recorder, ClientPhase::kBuild);
    for (;;) {
      phases.Enter(ClientPhase::kBuild);
      const bool stopping = load_.stop->load(std::memory_order_acquire);
      const bool slot_free = open_loop_ ? SendDue(stopping) : (Refill(stopping), false);
      phases.Enter(ClientPhase::kSend);
      Status written = WriteOutgoing();
      if (!written.ok()) return written;
      const bool in_flight = AnyInFlight();
      if (stopping && !in_flight && !OwesMore()) return Status::Ok();
      int ready = 0;
      phases.Enter(ClientPhase::kWait);
      Status waited = Wait(WaitNs(stopping, slot_free), &ready);
      phases.Enter(ClientPhase::kReceive);
      if (!waited.ok()) return waited;
      if (ready <= 0) {
        if (in_flight && NowNs() - last_progress_ns_ > reply_timeout_ns_) {
          return Status::IoError(
              "no reply within " +
              std::to_string(static_cast<int>(reply_timeout_ns_ / 1'000'000'000)) + " s");
        }
        continue;
      }
      Status read = ReadReplies();
      if (!read.ok()) return read;
    }
  }

 private:
  // `request` goes out on `state` and waits there for its reply.
  void Requeue(ConnectionState& state, uint64_t start_ns, const RequestInfo& info,
               std::string_view request) {
    state.outgoing.append(request);
    state.in_flight.push_back(start_ns, info, request);
  }

  // The next request, to group g's socket of its key's owner.
  void SendNext(size_t g, uint64_t start_ns) {
    ++group_in_flight_[g];
    if (map_ == nullptr) {
      ConnectionState& state = states_[g];
      state.in_flight.push_back(start_ns, load_.generator->AppendNext(&state.outgoing), {});
      return;
    }
    routed_request_.clear();
    const RequestInfo info = load_.generator->AppendNext(&routed_request_);
    Requeue(states_[g * nodes_ + map_->NodeOf(routed_request_)], start_ns, info, routed_request_);
  }

  // Closed loop: fill every group to `pipeline` (burst: only empty ones).
  void Refill(bool stopping) {
    if (stopping) return;
    const uint64_t now = NowNs();
    for (size_t g = 0; g < groups_; ++g) {
      if (burst_ && group_in_flight_[g] != 0) continue;
      while (group_in_flight_[g] < pipeline_) SendNext(g, now);
    }
  }

  // Open loop: every request whose intended time has come goes out with that
  // time as its start, however late it is sent (coordinated omission).
  // Returns whether some group could still take the next request.
  bool SendDue(bool stopping) {
    const uint64_t send_until = SendDeadline(load_, stopping, NowNs());
    for (;;) {
      size_t free_group = groups_;
      for (size_t i = 0; i < groups_ && free_group == groups_; ++i) {
        const size_t candidate = (next_connection_ + i) % groups_;
        if (group_in_flight_[candidate] < pipeline_) free_group = candidate;
      }
      if (free_group == groups_) return false;
      if (schedule_->next_ns() > send_until) return true;
      next_connection_ = (next_connection_ + 1) % groups_;
      SendNext(free_group, schedule_->next_ns());
      schedule_->Advance();
      load_.recorder->NoteSchedule(schedule_->next_ns(), true);
    }
  }

  Status WriteOutgoing() {
    for (ConnectionState& state : states_) {
      if (state.outgoing.empty()) continue;
      Status written = state.connection->Write(state.outgoing);
      if (!written.ok()) return written;
      state.outgoing.clear();
    }
    return Status::Ok();
  }

  bool AnyInFlight() const {
    for (const ConnectionState& state : states_) {
      if (!state.in_flight.empty()) return true;
    }
    return false;
  }

  // Open loop after stop: requests due by the last window's end not sent yet.
  bool OwesMore() const {
    return open_loop_ && schedule_->next_ns() <= SendDeadline(load_, true, 0);
  }

  // Until replies may have come or, in open loop with a free slot, until the
  // next intended send time — to the nanosecond (ppoll), never spinning.
  uint64_t WaitNs(bool stopping, bool slot_free) const {
    uint64_t wait_ns = stopping ? kRecheckNs : reply_timeout_ns_;
    if (open_loop_ && !stopping && slot_free) {
      const uint64_t now = NowNs();
      wait_ns = schedule_->next_ns() > now ? schedule_->next_ns() - now : 0;
    }
    return std::min(wait_ns, kRecheckNs);
  }

  Status Wait(uint64_t wait_ns, int* ready) {
    for (size_t i = 0; i < states_.size(); ++i) {
      poll_set_[i] = {states_[i].connection->fd(), POLLIN, 0};
    }
    const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                           static_cast<long>(wait_ns % 1'000'000'000)};
    *ready = ::ppoll(poll_set_.data(), poll_set_.size(), &timeout, nullptr);
    if (*ready < 0 && errno != EINTR) {
      return Status::IoError(std::string("poll failed: ") + std::strerror(errno));
    }
    return Status::Ok();
  }

  // Reads every ready connection, matches replies to requests in order and
  // records the finished operations.
  Status ReadReplies() {
    completions_.clear();
    for (size_t i = 0; i < states_.size(); ++i) {
      if (poll_set_[i].revents == 0) continue;
      Status read = ReadConnection(states_[i]);
      if (!read.ok()) return read;
    }
    if (!completions_.empty()) {
      load_.recorder->RecordBatch(completions_);
      last_progress_ns_ = NowNs();
    }
    return Status::Ok();
  }

  Status ReadConnection(ConnectionState& state) {
    Status read = state.connection->ReadAvailable();
    if (!read.ok()) return read;
    const uint64_t now = NowNs();
    ReplyPtr reply;
    while (state.connection->PopReply(&reply)) {
      if (state.in_flight.empty()) return Status::IoError("a reply nobody asked for");
      if (map_ != nullptr) {
        if (const std::optional<size_t> node = map_->Follow(*reply)) {
          // Stale map: the same request, to the node the reply named.
          const InFlight moved = state.in_flight.front();
          state.in_flight.pop_front();
          Requeue(states_[state.group * nodes_ + *node], moved.start_ns, moved.info, moved.request);
          continue;
        }
      }
      OnReply(state, *reply, now);
    }
    return Status::Ok();
  }

  // The reply to the oldest request of `state`: the operation goes on or is done.
  void OnReply(ConnectionState& state, const redisReply& reply, uint64_t now) {
    // Copied out: the slot is reused by the next push.
    const uint64_t start_ns = state.in_flight.front().start_ns;
    RequestInfo info = state.in_flight.front().info;
    state.in_flight.pop_front();
    routed_request_.clear();
    const ReplyOutcome outcome =
        load_.generator->OnReply(reply, &info, map_ ? &routed_request_ : &state.outgoing);
    if (!outcome.done) {
      // The operation's next request takes the slot its last one freed
      // (routed: on its own key's owner), and keeps the operation's start.
      Requeue(map_ ? states_[state.group * nodes_ + map_->NodeOf(routed_request_)] : state,
              start_ns, info, routed_request_);
      return;
    }
    --group_in_flight_[state.group];
    completions_.push_back({now - std::min(now, start_ns), outcome.verdict, info.increment});
  }

  ThreadLoad& load_;
  SlotMap* const map_;  // --route slots; null: one node
  const size_t pipeline_;
  const bool open_loop_;
  const bool burst_;
  const uint64_t reply_timeout_ns_;
  const size_t nodes_;
  size_t groups_ = 0;
  std::vector<ConnectionState> states_;
  std::vector<size_t> group_in_flight_;
  std::string routed_request_;
  std::vector<pollfd> poll_set_;
  std::vector<Completion> completions_;
  std::optional<ArrivalSchedule> schedule_;
  size_t next_connection_ = 0;  // open loop: round-robin start
  uint64_t last_progress_ns_ = NowNs();
};

}  // namespace

DedicatedClient::DedicatedClient(const StrategyOptions& options) : options_(options) {
  per_thread_.resize(static_cast<size_t>(options_.threads));
}

int DedicatedClient::ConnectionsOf(int thread_index) const {
  const int threads = options_.threads;
  const int total = std::max(options_.connections, threads);  // every thread needs one
  return total / threads + (thread_index < total % threads ? 1 : 0);
}

Status DedicatedClient::Connect() {
  std::vector<Target> nodes = {options_.target};
  if (options_.route_slots || options_.slot_map) {
    Status mapped = SlotMapOf(options_, &map_);
    if (!mapped.ok()) return mapped;
    nodes = map_->nodes();
  }
  for (int thread = 0; thread < options_.threads; ++thread) {
    for (int i = 0; i < ConnectionsOf(thread); ++i) {
      for (const Target& node : nodes) {
        std::unique_ptr<Connection> connection;
        Status opened = Connection::Open(node, options_.connection, &connection);
        if (!opened.ok()) return opened;
        per_thread_[static_cast<size_t>(thread)].push_back(std::move(connection));
      }
    }
  }
  return Status::Ok();
}

void DedicatedClient::Interrupt() {
  for (auto& connections : per_thread_) {
    for (auto& connection : connections) connection->Shutdown();
  }
}

Status DedicatedClient::RunThread(ThreadLoad& load) {
  DedicatedThread thread(options_, map_.get(), per_thread_[static_cast<size_t>(load.thread_index)],
                         load);
  return thread.Run();
}

}  // namespace kvlab::harness
