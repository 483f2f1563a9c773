#include "harness/clients/client_kind.h"

#include <algorithm>
#include <vector>

namespace kvlab::harness {
namespace {

constexpr ClientKindInfo kKinds[] = {
    {.kind = ClientKind::kDedicated,
     .name = "dedicated",
     .summary = "each thread owns its connections and may pipeline (redis-benchmark, memtier)",
     .default_connections = 1,
     .connections_per_thread = true,
     .pipelines = true,
     .transactions = true,
     .redis_benchmark = true},
    {.kind = ClientKind::kPooled,
     .name = "pooled",
     .summary = "a pool of connections, one borrowed per synchronous round trip (Lettuce + "
                "commons-pool2)",
     .default_connections = 8,  // commons-pool2's GenericObjectPool maxTotal
     .event_loop = true},
    {.kind = ClientKind::kShared,
     .name = "shared",
     .summary = "one connection multiplexed by every thread, replies matched in FIFO order "
                "(Lettuce's shared connection)",
     .default_connections = 1,
     .max_connections = 1,
     .event_loop = true},
};

// "pooled and shared", "dedicated": the kinds for which `applies` holds.
template <typename Predicate>
std::string KindsWhere(Predicate applies, std::string_view last_separator) {
  std::vector<std::string_view> names;
  for (const ClientKindInfo& info : kKinds) {
    if (applies(info)) names.push_back(info.name);
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_separator : ", ";
    text += names[i];
  }
  return text;
}

Status AppliesOnly(const std::string& option, const std::string& kinds,
                   const std::string& why = "") {
  return Status::InvalidArgument(option + " applies to --client " + kinds + " only" + why);
}

}  // namespace

std::span<const ClientKindInfo> AllClientKinds() { return kKinds; }

const ClientKindInfo& InfoOf(ClientKind kind) {
  for (const ClientKindInfo& info : kKinds) {
    if (info.kind == kind) return info;
  }
  return kKinds[0];  // unreachable: every enumerator has a row
}

const ClientKindInfo* FindClientKind(std::string_view name) {
  for (const ClientKindInfo& info : kKinds) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

Status ParseClientKind(std::string_view text, ClientKind* out) {
  const ClientKindInfo* info = FindClientKind(text);
  if (info == nullptr) {
    return Status::InvalidArgument(
        "bad --client '" + std::string(text) +
        "' (allowed: " + KindsWhere([](const ClientKindInfo&) { return true; }, ", ") + ")");
  }
  *out = info->kind;
  return Status::Ok();
}

const char* ClientKindName(ClientKind kind) { return InfoOf(kind).name.data(); }

int ConnectionsOf(ClientKind kind, int connections, int threads) {
  const ClientKindInfo& info = InfoOf(kind);
  if (info.connections_per_thread) return std::max(connections, threads * info.default_connections);
  const int wanted = connections > 0 ? connections : info.default_connections;
  return std::min(wanted, info.max_connections);
}

Status CheckClientOptions(const ClientOptionUse& use) {
  const ClientKindInfo& info = InfoOf(use.client);
  if (use.connections > info.max_connections) {
    return Status::InvalidArgument("--client " + std::string(info.name) + " uses exactly " +
                                   (info.max_connections == 1
                                        ? "one connection"
                                        : std::to_string(info.max_connections) + " connections") +
                                   " (leave --connections out)");
  }
  if (!use.own_connection_command.empty() &&
      (!info.transactions || use.connections > use.fewest_threads || use.event_loop)) {
    // MULTI ... EXEC must reach the server in order on one connection.
    return Status::InvalidArgument(
        "--command " + use.own_connection_command + " needs --client " +
        KindsWhere([](const ClientKindInfo& k) { return k.transactions; }, " or ") +
        ", --io direct and one connection per thread (--connections at most the thread count)");
  }
  if (use.event_loop && !info.event_loop) {
    return AppliesOnly("--io event-loop",
                       KindsWhere([](const ClientKindInfo& k) { return k.event_loop; }, " and "));
  }
  const std::string pipelining =
      KindsWhere([](const ClientKindInfo& k) { return k.pipelines; }, " and ");
  if (use.pipeline > 1 && !info.pipelines) {
    return AppliesOnly(
        "--pipeline", pipelining,
        " (" + KindsWhere([](const ClientKindInfo& k) { return !k.pipelines; }, " and ") +
            " do one synchronous round trip per operation)");
  }
  if (use.refill && !info.pipelines) return AppliesOnly("--refill", pipelining);
  if (use.redis_benchmark && !info.redis_benchmark) {
    return Status::InvalidArgument(
        "--loadgen redis-benchmark: --client must be " +
        KindsWhere([](const ClientKindInfo& k) { return k.redis_benchmark; }, " or "));
  }
  return Status::Ok();
}

}  // namespace kvlab::harness
