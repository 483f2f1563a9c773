// SlotMap: kvlab-load's `--route slots` — which node owns which key, read
// once from a Redis Cluster (or kvlab-server --shard-ports) with CLUSTER
// SLOTS, so a client sends every request straight to the owner of its first
// key. A -MOVED reply (the map went stale) re-points its slot at the node it
// names, and the client sends the request again there; Moved() counts them.
//
// Slots and their owners come from base/hash_slot.h (CRC16, {hash tags}),
// the same functions the server places keys with.
//
// Thread-safe after Fetch(): NodeOf(), Follow() and moved() may be called
// from every application thread at once (each slot is one relaxed atomic).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/clients/connection.h"
#include "harness/status.h"
#include "harness/clients/target.h"

namespace kvlab::harness {

class SlotMap {
 public:
  // Reads CLUSTER SLOTS from `entry` into *out. REQUIRES: a tcp:// target.
  // Fails when the server is no cluster or leaves a slot unowned.
  static Status Fetch(const Target& entry, const ConnectionOptions& options,
                      std::unique_ptr<SlotMap>* out);

  // Builds the map from a CLUSTER SLOTS reply (`entry`: whose host a node
  // with an empty address has). Fetch() uses it; so do tests, with a map
  // that is wrong on purpose.
  static Status FromReply(const redisReply& reply, const Target& entry,
                          std::unique_ptr<SlotMap>* out);

  // The nodes, in the order CLUSTER SLOTS first names them.
  const std::vector<Target>& nodes() const { return nodes_; }
  // The node that owns the first key of `request` (one RESP command); slot
  // 0's owner for a command without a key (PING).
  size_t NodeOf(std::string_view request) const;
  // If `reply` is "-MOVED <slot> <host>:<port>" for a known node: points
  // the slot there, counts it, and returns the node. nullopt otherwise.
  std::optional<size_t> Follow(const redisReply& reply);
  uint64_t moved() const { return moved_.load(std::memory_order_relaxed); }

 private:
  SlotMap() = default;

  std::vector<Target> nodes_;
  std::unique_ptr<std::atomic<uint16_t>[]> owner_of_slot_;
  std::atomic<uint64_t> moved_{0};
};

// The first key of a RESP request "*n $len cmd $len key ...", or "" when it
// has none (or is not a RESP array).
std::string_view FirstKeyOf(std::string_view request);

}  // namespace kvlab::harness
