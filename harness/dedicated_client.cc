#include "harness/dedicated_client.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "harness/load_clock.h"
#include "harness/reply_check.h"

namespace kvlab::harness {
namespace {

// A request written and not yet answered.
struct InFlight {
  uint64_t start_ns;  // actual send time (closed loop) or intended time (open loop)
  RequestInfo info;
};

// The requests in flight on one connection, oldest first. At most
// `pipeline` are ever in flight, so a fixed ring needs no allocation.
class InFlightQueue {
 public:
  explicit InFlightQueue(size_t capacity) : slots_(capacity) {}
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push_back(const InFlight& request) { slots_[(head_ + size_++) % slots_.size()] = request; }
  InFlight pop_front() {
    const InFlight oldest = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return oldest;
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
  for (int thread = 0; thread < options_.threads; ++thread) {
    for (int i = 0; i < ConnectionsOf(thread); ++i) {
      std::unique_ptr<Connection> connection;
      Status opened = Connection::Open(options_.target, options_.connection, &connection);
      if (!opened.ok()) return opened;
      per_thread_[static_cast<size_t>(thread)].push_back(std::move(connection));
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
  const size_t pipeline = static_cast<size_t>(options_.pipeline);
  const bool open_loop = load.rate_per_thread > 0;
  const uint64_t interval_ns = open_loop ? static_cast<uint64_t>(1e9 / load.rate_per_thread) : 0;
  const int reply_timeout_ms = static_cast<int>(options_.connection.reply_timeout_s * 1000);

  std::vector<ConnectionState> states;
  for (auto& connection : per_thread_[static_cast<size_t>(load.thread_index)]) {
    states.push_back({connection.get(), InFlightQueue(pipeline), {}});
  }
  std::vector<pollfd> poll_set(states.size());
  std::vector<Completion> completions;
  uint64_t next_intended_ns = NowNs();
  size_t next_connection = 0;  // open loop: round-robin start
  uint64_t last_progress_ns = NowNs();

  for (;;) {
    const bool stopping = load.stop->load(std::memory_order_relaxed);
    // 1. Send.
    if (!stopping) {
      if (!open_loop) {
        const uint64_t now = NowNs();
        for (ConnectionState& state : states) {
          if (!state.in_flight.empty()) continue;
          for (size_t i = 0; i < pipeline; ++i) {
            state.in_flight.push_back({now, load.generator->AppendNext(&state.outgoing)});
          }
        }
      } else {
        const uint64_t now = NowNs();
        while (next_intended_ns <= now) {
          ConnectionState* free_state = nullptr;
          for (size_t i = 0; i < states.size() && free_state == nullptr; ++i) {
            ConnectionState& candidate = states[(next_connection + i) % states.size()];
            if (candidate.in_flight.size() < pipeline) free_state = &candidate;
          }
          if (free_state == nullptr) break;  // all windows full: the backlog shows in latency
          next_connection = (next_connection + 1) % states.size();
          free_state->in_flight.push_back(
              {next_intended_ns, load.generator->AppendNext(&free_state->outgoing)});
          next_intended_ns += interval_ns;
        }
      }
      for (ConnectionState& state : states) {
        if (state.outgoing.empty()) continue;
        Status written = state.connection->Write(state.outgoing);
        if (!written.ok()) return written;
        state.outgoing.clear();
      }
    }
    // 2. Done? (after stop, only once every request has its reply)
    bool any_in_flight = false;
    for (const ConnectionState& state : states) any_in_flight |= !state.in_flight.empty();
    if (stopping && !any_in_flight) return Status::Ok();

    // 3. Wait for replies (or, in open loop, for the next intended send time).
    int timeout_ms = reply_timeout_ms;
    if (open_loop && !stopping) {
      const uint64_t now = NowNs();
      timeout_ms = next_intended_ns > now
                       ? static_cast<int>(std::min<uint64_t>((next_intended_ns - now) / 1'000'000, 50))
                       : 0;
    } else if (stopping) {
      timeout_ms = std::min(timeout_ms, 50);  // re-check promptly, keep draining
    }
    for (size_t i = 0; i < states.size(); ++i) {
      poll_set[i] = {states[i].connection->fd(), POLLIN, 0};
    }
    const int ready = ::poll(poll_set.data(), poll_set.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      return Status::IoError(std::string("poll failed: ") + std::strerror(errno));
    }
    if (ready <= 0) {
      if (any_in_flight && NowNs() - last_progress_ns > uint64_t(reply_timeout_ms) * 1'000'000) {
        return Status::IoError("no reply within " + std::to_string(reply_timeout_ms / 1000) + " s");
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
        const InFlight request = state.in_flight.pop_front();
        completions.push_back({now - std::min(now, request.start_ns),
                               CheckReply(*reply, request.info.expected),
                               request.info.increment});
      }
    }
    if (!completions.empty()) {
      load.recorder->RecordBatch(completions);
      last_progress_ns = NowNs();
    }
  }
}

}  // namespace kvlab::harness
