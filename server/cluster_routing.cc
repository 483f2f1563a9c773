#include "server/cluster_routing.h"

#include "base/hash_slot.h"
#include "server/command_table.h"

namespace kvlab {

std::string AnnouncedIp(const ClientInfo& client, const ServerSettings& settings) {
  if (!client.is_unix) {
    std::string_view address = client.local_address;  // "1.2.3.4:p" or "[::1]:p"
    const size_t colon = address.rfind(':');
    if (colon != std::string_view::npos) address = address.substr(0, colon);
    if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
      address = address.substr(1, address.size() - 2);
    }
    if (!address.empty()) return std::string(address);
  }
  if (settings.bind == "0.0.0.0") return "127.0.0.1";
  if (settings.bind == "::") return "::1";
  return settings.bind;
}

std::optional<std::string> MovedError(const CommandSpec& spec,
                                      std::span<const std::string_view> args,
                                      const ClientInfo& client, const ServerSettings& settings) {
  if (client.owner_port < 0 || spec.keys.first <= 0) return std::nullopt;
  const size_t first = static_cast<size_t>(spec.keys.first);
  if (first >= args.size()) return std::nullopt;
  const uint32_t slot = HashSlot(args[first]);
  const uint32_t owner = OwnerOfSlot(slot, settings.engine.shards);
  if (static_cast<int>(owner) == client.owner_port) return std::nullopt;
  return "MOVED " + std::to_string(slot) + " " + AnnouncedIp(client, settings) + ":" +
         std::to_string(settings.shard_ports + owner);
}

}  // namespace kvlab
