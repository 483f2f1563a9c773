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
  constexpr uint64_t kRecheckNs = 50'000'000;  // how long a wait may last before stop is re-checked
  const size_t pipeline = static_cast<size_t>(options_.pipeline);
  const bool open_loop = load.rate_per_thread > 0;
  const bool burst = options_.refill == RefillMode::kBurst;
  const uint64_t reply_timeout_ns = static_cast<uint64_t>(options_.connection.reply_timeout_s * 1e9);

  const size_t nodes = map_ ? map_->nodes().size() : 1;
  std::vector<ConnectionState> states;
  for (auto& connection : per_thread_[static_cast<size_t>(load.thread_index)]) {
    states.push_back({connection.get(), InFlightQueue(pipeline), {}, states.size() / nodes});
  }
  const size_t groups = states.size() / nodes;
  std::vector<size_t> group_in_flight(groups, 0);
  std::string routed_request;
  // The next request, to group g's socket of its key's owner.
  auto send_next = [&](size_t g, uint64_t start_ns) {
    ++group_in_flight[g];
    if (!map_) {
      ConnectionState& state = states[g];
      state.in_flight.push_back(start_ns, load.generator->AppendNext(&state.outgoing), {});
      return;
    }
    routed_request.clear();
    const RequestInfo info = load.generator->AppendNext(&routed_request);
    ConnectionState& state = states[g * nodes + map_->NodeOf(routed_request)];
    state.outgoing.append(routed_request);
    state.in_flight.push_back(start_ns, info, routed_request);
  };
  std::vector<pollfd> poll_set(states.size());
  std::vector<Completion> completions;
  std::optional<ArrivalSchedule> schedule;
  if (open_loop) {
    schedule.emplace(load.arrival, load.rate_per_thread, load.arrival_seed, NowNs());
    load.recorder->NoteSchedule(schedule->next_ns(), false);
  }
  size_t next_connection = 0;  // open loop: round-robin start
  uint64_t last_progress_ns = NowNs();

  for (;;) {
    const bool stopping = load.stop->load(std::memory_order_acquire);
    // 1. Send.
    bool slot_free = false;  // open loop: some connection could take the next request
    if (!open_loop) {
      if (!stopping) {
        const uint64_t now = NowNs();
        for (size_t g = 0; g < groups; ++g) {
          if (burst && group_in_flight[g] != 0) continue;
          while (group_in_flight[g] < pipeline) send_next(g, now);
        }
      }
    } else {
      // Every request whose intended time has come goes out with that time
      // as its start, however late it is sent (coordinated omission).
      const uint64_t send_until = SendDeadline(load, stopping, NowNs());
      for (;;) {
        size_t free_group = groups;
        for (size_t i = 0; i < groups && free_group == groups; ++i) {
          const size_t candidate = (next_connection + i) % groups;
          if (group_in_flight[candidate] < pipeline) free_group = candidate;
        }
        slot_free = free_group != groups;
        if (!slot_free || schedule->next_ns() > send_until) break;
        next_connection = (next_connection + 1) % groups;
        send_next(free_group, schedule->next_ns());
        schedule->Advance();
        load.recorder->NoteSchedule(schedule->next_ns(), true);
      }
    }
    for (ConnectionState& state : states) {
      if (state.outgoing.empty()) continue;
      Status written = state.connection->Write(state.outgoing);
      if (!written.ok()) return written;
      state.outgoing.clear();
    }
    // 2. Done? (after stop, only once every owed request has its reply)
    bool any_in_flight = false;
    for (const ConnectionState& state : states) any_in_flight |= !state.in_flight.empty();
    const bool owes_more =
        open_loop && stopping && schedule->next_ns() <= SendDeadline(load, true, 0);
    if (stopping && !any_in_flight && !owes_more) return Status::Ok();

    // 3. Wait for replies or, in open loop with a free slot, until the next
    // intended send time — to the nanosecond (ppoll), never spinning.
    uint64_t wait_ns = stopping ? kRecheckNs : reply_timeout_ns;
    if (open_loop && !stopping && slot_free) {
      const uint64_t now = NowNs();
      wait_ns = schedule->next_ns() > now ? schedule->next_ns() - now : 0;
    }
    wait_ns = std::min(wait_ns, kRecheckNs);
    for (size_t i = 0; i < states.size(); ++i) {
      poll_set[i] = {states[i].connection->fd(), POLLIN, 0};
    }
    const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                           static_cast<long>(wait_ns % 1'000'000'000)};
    const int ready = ::ppoll(poll_set.data(), poll_set.size(), &timeout, nullptr);
    if (ready < 0 && errno != EINTR) {
      return Status::IoError(std::string("poll failed: ") + std::strerror(errno));
    }
    if (ready <= 0) {
      if (any_in_flight && NowNs() - last_progress_ns > reply_timeout_ns) {
        return Status::IoError("no reply within " +
                               std::to_string(static_cast<int>(reply_timeout_ns / 1'000'000'000)) + " s");
      }
      continue;
    }
    // 4. Read, match replies to requests in order, record.
    completions.clear();
    for (size_t i = 0; i < states.size(); ++i) {
      if (poll_set[i].revents == 0) continue;
      ConnectionState& state = states[i];
      Status read = state.connection->ReadAvailable();
      if (!read.ok()) return read;
      const uint64_t now = NowNs();
      ReplyPtr reply;
      while (state.connection->PopReply(&reply)) {
        if (state.in_flight.empty()) return Status::IoError("a reply nobody asked for");
        if (map_) {
          if (const std::optional<size_t> node = map_->Follow(*reply)) {
            // Stale map: the same request, to the node the reply named.
            const InFlight moved = state.in_flight.front();
            state.in_flight.pop_front();
            ConnectionState& owner = states[state.group * nodes + *node];
            owner.outgoing.append(moved.request);
            owner.in_flight.push_back(moved.start_ns, moved.info, moved.request);
            continue;
          }
        }
        // Copied out: the slot is reused by the next push.
        const uint64_t start_ns = state.in_flight.front().start_ns;
        RequestInfo info = state.in_flight.front().info;
        state.in_flight.pop_front();
        routed_request.clear();
        const ReplyOutcome outcome =
            load.generator->OnReply(*reply, &info, map_ ? &routed_request : &state.outgoing);
        if (!outcome.done) {
          // The operation's next request takes the slot its last one freed
          // (routed: on its own key's owner), and keeps the operation's start.
          ConnectionState& next =
              map_ ? states[state.group * nodes + map_->NodeOf(routed_request)] : state;
          next.outgoing.append(routed_request);
          next.in_flight.push_back(start_ns, info, routed_request);
          continue;
        }
        --group_in_flight[state.group];
        completions.push_back({now - std::min(now, start_ns), outcome.verdict,
                               info.increment});
      }
    }
    if (!completions.empty()) {
      load.recorder->RecordBatch(completions);
      last_progress_ns = NowNs();
    }
  }
}

}  // namespace kvlab::harness
