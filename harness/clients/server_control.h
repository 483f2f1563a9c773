// ServerControl: the harness's own side channel to the server under test,
// separate from the measured connections: INFO for the results' metadata
// and for server CPU time, FLUSHALL (--flush), and --prefill.
//
// Thread safety: not thread-safe; one owner (the sweep runner's thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "harness/clients/connection.h"
#include "harness/clients/slot_map.h"
#include "harness/workloads/workload.h"

namespace kvlab::harness {

// Parses an INFO reply ("# Section" headers, "key:value" lines) into a map.
std::map<std::string, std::string> ParseInfo(std::string_view text);

class ServerControl {
 public:
  // Connects (with AUTH when `options` has a password) and sends ECHO:
  // ConnectionFailed naming AUTH when the server answers -NOAUTH.
  static Status Open(const Target& target, const ConnectionOptions& options,
                     std::unique_ptr<ServerControl>* out);

  // --route slots: from now on FLUSHALL and CPU time cover every process of
  // the cluster, and --prefill sends each key to its owner (slot_map.h).
  Status RouteBySlots(const Target& entry, const ConnectionOptions& options);

  // The text of `INFO <section>` (of the node this control was opened on).
  Status Info(std::string_view section, std::string* text);
  Status FlushAll();
  // Writes every key of the spec's key space once, pipelined: a value of the
  // spec's size, or "0" when the command is INCRBY (so increments apply); a
  // YCSB command loads its records as YCSB's load phase does (harness/workloads/ycsb.h);
  // a container shape (spec.shape) stores that container under each key.
  Status Prefill(const WorkloadSpec& spec, uint64_t* keys_written);
  // Server CPU seconds (used_cpu_user + used_cpu_sys of INFO cpu), or a
  // negative number when the server does not report them.
  double CpuSeconds();
  // The integer value of `key` (GET), for checking INCRBY sums.
  Status GetInteger(std::string_view key, int64_t* value);

 private:
  explicit ServerControl(std::unique_ptr<Connection> connection);
  Status Command(std::initializer_list<std::string_view> args, ReplyPtr* reply);
  Status LoadYcsbRecords(const WorkloadSpec& spec, uint64_t* records_written);
  Status PrefillContainers(const WorkloadSpec& spec, uint64_t* keys_written);

  // One CPU figure per process: INFO cpu of each node with its own process_id.
  double NodesCpuSeconds();

  std::unique_ptr<Connection> connection_;
  // RouteBySlots(): a connection per node, and which of them are the first
  // of their process (CPU and FLUSHALL are counted once per process).
  std::unique_ptr<SlotMap> map_;
  std::vector<std::unique_ptr<Connection>> nodes_;
  std::vector<bool> first_of_process_;
};

// The server's process id (INFO server process_id) when that process runs
// on this machine: a process with that id exists here and started when the
// server says it did (uptime_in_seconds, whole seconds). 0 otherwise (a
// server elsewhere, or one that does not say).
pid_t LocalServerPid(ServerControl& control);

}  // namespace kvlab::harness
