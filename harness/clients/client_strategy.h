// ClientStrategy: how application threads' operations reach connections.
// Three strategies implement it (kvlab-load --client, README "kvlab-load"):
//   DedicatedClient — each thread owns its connections and pipelines;
//   PooledClient    — a pool of connections borrowed per operation;
//   SharedClient    — one connection multiplexed by all threads, FIFO replies.
// The sweep runner creates one strategy per point, Connect()s it, runs
// RunThread() on each application thread, then destroys it.
//
// Thread safety: RunThread() is called concurrently, once per thread index;
// Interrupt() may be called from any thread at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "harness/measurement/arrival_schedule.h"
#include "harness/clients/client_kind.h"
#include "harness/clients/connection.h"
#include "harness/clients/io_model.h"
#include "harness/clients/slot_map.h"
#include "harness/status.h"
#include "harness/clients/target.h"
#include "harness/measurement/thread_recorder.h"
#include "harness/workloads/workload.h"

namespace kvlab::harness {

// How a closed-loop pipelined connection refills: `steady` sends a new
// request as soon as a reply frees a slot, keeping `pipeline` in flight (as
// memtier does); `burst` sends `pipeline` requests only once all previous
// ones are answered (as redis-benchmark does).
enum class RefillMode { kSteady, kBurst };
Status ParseRefillMode(std::string_view text, RefillMode* out);  // steady|burst
const char* RefillModeName(RefillMode mode);

struct StrategyOptions {
  Target target;
  ConnectionOptions connection;
  int threads = 1;
  int connections =
      1;  // ConnectionsOf (client_kind.h): dedicated the total, pooled the pool, shared 1
  int pipeline = 1;                         // dedicated only
  RefillMode refill = RefillMode::kSteady;  // dedicated closed loop only
  std::vector<int> cpus;                    // where the strategy's own I/O threads may run
  IoOptions io;                             // pooled and shared: direct or event-loop I/O
  // --route slots: read the cluster's slot map once (at Connect) and send
  // each request to the owner of its first key (slot_map.h); `connections`
  // is then per owner. `slot_map`, when set, is used instead of reading one.
  bool route_slots = false;
  std::shared_ptr<SlotMap> slot_map;
};

// Everything one application thread needs to run its loop.
struct ThreadLoad {
  int thread_index = 0;
  WorkloadGenerator* generator = nullptr;
  ThreadRecorder* recorder = nullptr;
  // Set: finish in-flight requests and return. In open loop the thread first
  // sends every request due by *stop_at_ns (the end of the last measured
  // window, stored before stop is set): the backlog is answered and
  // measured, never dropped.
  const std::atomic<bool>* stop = nullptr;
  const std::atomic<uint64_t>* stop_at_ns = nullptr;  // null: owe nothing at stop
  double rate_per_thread = 0;                         // open loop ops/s; 0 = closed loop
  ArrivalKind arrival = ArrivalKind::kUniform;        // open loop
  uint64_t arrival_seed = 0;                          // open loop: this thread's schedule
};

// Open loop: the time up to which a thread still owes requests — now while
// running, the end of the last window once stop is set.
uint64_t SendDeadline(const ThreadLoad& load, bool stopping, uint64_t now_ns);

// --route slots: options.slot_map when set, else the map read from
// options.target (SlotMap::Fetch).
Status SlotMapOf(const StrategyOptions& options, std::shared_ptr<SlotMap>* out);

class ClientStrategy {
 public:
  virtual ~ClientStrategy() = default;

  // Opens every connection the strategy uses. Called once, before RunThread.
  virtual Status Connect() = 0;

  // Runs one application thread's load until *load.stop is set (then
  // returns Ok once its in-flight requests are answered) or a connection
  // fails (returns the error).
  virtual Status RunThread(ThreadLoad& load) = 0;

  // Makes every blocked RunThread return promptly (shuts the sockets down).
  virtual void Interrupt() = 0;

  // Event-loop strategies: how often a caller woke an idle loop so far
  // (eventfd writes). -1: the strategy has no event loop.
  virtual int64_t loop_wakeups() const { return -1; }

  // --route slots: -MOVED replies followed so far. -1: not routed.
  virtual int64_t moved() const { return -1; }
};

std::unique_ptr<ClientStrategy> MakeClientStrategy(ClientKind kind, const StrategyOptions& options);

}  // namespace kvlab::harness
