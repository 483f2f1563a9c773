// CLUSTER SLOTS, SHARDS, NODES, INFO, MYID and KEYSLOT: how a shard-aware
// client learns which port owns which key. With --shard-ports BASE (owner
// engine), kvlab-server presents itself as a Redis Cluster of N masters, one
// per I/O thread: node i listens on BASE + i and serves the slots
// [FirstSlotOf(i, N), FirstSlotOf(i + 1, N)), which are exactly the keys
// its thread owns (base/hash_slot.h). Without --shard-ports, CLUSTER is
// refused as by a Redis without cluster-enabled. Replies follow Redis 7.0's
// cluster.c; there are no replicas, epochs or failovers to report.
#include <cstdio>
#include <string>

#include "base/hash_slot.h"
#include "server/cluster_routing.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

// Node i's id: 40 hex digits, as Redis's, fixed for a given port so a
// client sees the same map from every node.
std::string NodeId(const ServerSettings& settings, unsigned node) {
  char id[41];
  std::snprintf(id, sizeof id, "%024x%08x%08x", 0x6b766cu /* "kvl" */,
                static_cast<unsigned>(settings.shard_ports), node);
  return id;
}

struct NodeRange {
  unsigned first;
  unsigned last;  // inclusive
  unsigned port;
};

NodeRange RangeOf(const ServerSettings& settings, unsigned node) {
  const unsigned nodes = settings.engine.shards;
  return {FirstSlotOf(node, nodes), FirstSlotOf(node + 1, nodes) - 1, settings.shard_ports + node};
}

// CLUSTER SLOTS and CLUSTER SHARDS: an array of one entry per node, each
// written by entry(reply, node, its range).
template <typename Entry>
void ReplyPerNode(CommandCall& call, Entry&& entry) {
  const ServerSettings& settings = call.server.settings;
  ReplyWriter reply = call.reply();
  reply.ArrayHeader(settings.engine.shards);
  for (unsigned node = 0; node < settings.engine.shards; ++node) {
    entry(reply, node, RangeOf(settings, node));
  }
}

void Slots(CommandCall& call, const std::string& ip) {
  const ServerSettings& settings = call.server.settings;
  ReplyPerNode(call, [&](ReplyWriter& reply, unsigned node, const NodeRange& range) {
    reply.ArrayHeader(3);
    reply.Integer(range.first);
    reply.Integer(range.last);
    reply.ArrayHeader(4);
    reply.Bulk(ip);
    reply.Integer(range.port);
    reply.Bulk(NodeId(settings, node));
    reply.MapHeader(0);  // Redis 7.0's networking metadata: none
  });
}

void Shards(CommandCall& call, const std::string& ip) {
  const ServerSettings& settings = call.server.settings;
  ReplyPerNode(call, [&](ReplyWriter& reply, unsigned node, const NodeRange& range) {
    reply.MapHeader(2);
    reply.Bulk("slots");
    reply.ArrayHeader(2);
    reply.Integer(range.first);
    reply.Integer(range.last);
    reply.Bulk("nodes");
    reply.ArrayHeader(1);
    reply.MapHeader(7);
    reply.Bulk("id");
    reply.Bulk(NodeId(settings, node));
    reply.Bulk("port");
    reply.Integer(range.port);
    reply.Bulk("ip");
    reply.Bulk(ip);
    reply.Bulk("endpoint");
    reply.Bulk(ip);
    reply.Bulk("role");
    reply.Bulk("master");
    reply.Bulk("replication-offset");
    reply.Integer(0);
    reply.Bulk("health");
    reply.Bulk("online");
  });
}

void Nodes(CommandCall& call, const std::string& ip) {
  const ServerSettings& settings = call.server.settings;
  const int myself = call.client.info.owner_port < 0 ? 0 : call.client.info.owner_port;
  std::string text;
  for (unsigned node = 0; node < settings.engine.shards; ++node) {
    const NodeRange range = RangeOf(settings, node);
    text += NodeId(settings, node) + " " + ip + ":" + std::to_string(range.port) + "@" +
            std::to_string(range.port + 10000) +
            (static_cast<int>(node) == myself ? " myself,master" : " master") + " - 0 0 " +
            std::to_string(node + 1) + " connected " + std::to_string(range.first) + "-" +
            std::to_string(range.last) + "\n";
  }
  call.reply().Verbatim(text);
}

void Info(CommandCall& call) {
  const std::string nodes = std::to_string(call.server.settings.engine.shards);
  call.reply().Verbatim(
      "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n"
      "cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:" +
      nodes + "\r\ncluster_size:" + nodes + "\r\ncluster_current_epoch:" + nodes +
      "\r\ncluster_my_epoch:1\r\n");
}

// CLUSTER HELP: the subcommands the shard ports answer, in Redis's layout.
void Help(CommandCall& call) {
  static constexpr std::string_view kHelp[] = {
      "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "INFO",
      "    Return information about the cluster.",
      "KEYSLOT <key>",
      "    Return the hash slot for <key>.",
      "MYID",
      "    Return the node id.",
      "NODES",
      "    Return cluster configuration seen by node. Output format:",
      "    <id> <ip:port@bus-port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
      "SHARDS",
      "    Return information about slot range mappings and the nodes associated with them.",
      "SLOTS",
      "    Return information about slots range mappings. Each range is made of:",
      "    start, end, master and replicas IP addresses, ports and ids",
      "HELP",
      "    Prints this help."};
  call.reply().StatusLines(kHelp);
}

void Cluster(CommandCall& call) {
  const ServerSettings& settings = call.server.settings;
  if (settings.shard_ports == 0) {
    call.reply().Error("ERR This instance has cluster support disabled");
    return;
  }
  const std::string_view sub = call.args[1];
  const std::string ip = AnnouncedIp(call.client.info, settings);
  auto exactly = [&](size_t argc) {
    if (call.args.size() == argc) return true;
    call.reply().Error("ERR unknown subcommand or wrong number of arguments for '" +
                       std::string(AsCString(sub)) + "'. Try CLUSTER HELP.");
    return false;
  };
  if (EqualsIgnoreCase(sub, "slots")) {
    if (exactly(2)) Slots(call, ip);
  } else if (EqualsIgnoreCase(sub, "shards")) {
    if (exactly(2)) Shards(call, ip);
  } else if (EqualsIgnoreCase(sub, "nodes")) {
    if (exactly(2)) Nodes(call, ip);
  } else if (EqualsIgnoreCase(sub, "info")) {
    if (exactly(2)) Info(call);
  } else if (EqualsIgnoreCase(sub, "myid")) {
    const int node = call.client.info.owner_port < 0 ? 0 : call.client.info.owner_port;
    if (exactly(2)) call.reply().Bulk(NodeId(settings, static_cast<unsigned>(node)));
  } else if (EqualsIgnoreCase(sub, "keyslot")) {
    if (exactly(3)) call.reply().Integer(HashSlot(call.args[2]));
  } else if (EqualsIgnoreCase(sub, "help")) {
    if (exactly(2)) Help(call);
  } else {
    call.reply().Error("ERR unknown subcommand '" + std::string(AsCString(sub).substr(0, 128)) +
                       "'. Try CLUSTER HELP.");
  }
}

}  // namespace

void RegisterClusterCommands(CommandTable& table) {
  table.Add({.name = "cluster",
             .arity = -2,
             .flags = CommandSpec::kNone,
             .handler = Cluster,
             .group = "cluster",
             .summary = "A container for Redis Cluster commands",
             .subcommands = {"cluster|info", "cluster|keyslot", "cluster|myid", "cluster|nodes",
                             "cluster|shards", "cluster|slots", "cluster|help"}});
}

}  // namespace kvlab
