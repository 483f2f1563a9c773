#include "harness/clients/slot_map.h"

#include <charconv>

#include "base/hash_slot.h"
#include "harness/clients/resp_encoding.h"

namespace kvlab::harness {
namespace {

// Parses the "$<len>\r\n<bytes>\r\n" at *at; advances past it.
std::optional<std::string_view> TakeBulk(std::string_view request, size_t* at) {
  if (*at >= request.size() || request[*at] != '$') return std::nullopt;
  const size_t line_end = request.find("\r\n", *at);
  if (line_end == std::string_view::npos) return std::nullopt;
  size_t length = 0;
  const auto [end, error] =
      std::from_chars(request.data() + *at + 1, request.data() + line_end, length);
  if (error != std::errc() || end != request.data() + line_end) return std::nullopt;
  const size_t start = line_end + 2;
  if (start + length + 2 > request.size()) return std::nullopt;
  *at = start + length + 2;
  return request.substr(start, length);
}

}  // namespace

std::string_view FirstKeyOf(std::string_view request) {
  if (request.empty() || request[0] != '*') return {};
  size_t at = request.find("\r\n");
  if (at == std::string_view::npos) return {};
  int count = 0;
  std::from_chars(request.data() + 1, request.data() + at, count);
  if (count < 2) return {};
  at += 2;
  if (!TakeBulk(request, &at)) return {};
  return TakeBulk(request, &at).value_or(std::string_view());
}

Status SlotMap::Fetch(const Target& entry, const ConnectionOptions& options,
                      std::unique_ptr<SlotMap>* out) {
  if (entry.transport != Transport::kTcp) {
    return Status::InvalidArgument("--route slots needs a tcp:// target (a cluster's node)");
  }
  std::unique_ptr<Connection> connection;
  Status opened = Connection::Open(entry, options, &connection);
  if (!opened.ok()) return opened;
  std::string request;
  AppendCommand(&request, {"CLUSTER", "SLOTS"});
  ReplyPtr reply;
  Status called = connection->Call(request, &reply);
  if (!called.ok()) return called.WithContext("CLUSTER SLOTS");
  return FromReply(*reply, entry, out);
}

Status SlotMap::FromReply(const redisReply& slots, const Target& entry,
                          std::unique_ptr<SlotMap>* out) {
  const redisReply* reply = &slots;
  if (reply->type != REDIS_REPLY_ARRAY) {
    const std::string said =
        reply->type == REDIS_REPLY_ERROR ? std::string(reply->str, reply->len) : "no array";
    return Status::IoError("--route slots: CLUSTER SLOTS answered " + said);
  }
  std::unique_ptr<SlotMap> map(new SlotMap());
  map->owner_of_slot_.reset(new std::atomic<uint16_t>[kHashSlots]);
  std::vector<bool> covered(kHashSlots, false);
  for (size_t r = 0; r < reply->elements; ++r) {
    const redisReply* range = reply->element[r];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
        range->element[2]->type != REDIS_REPLY_ARRAY || range->element[2]->elements < 2) {
      return Status::IoError("--route slots: CLUSTER SLOTS entry of an unknown shape");
    }
    const long long first = range->element[0]->integer;
    const long long last = range->element[1]->integer;
    const redisReply* master = range->element[2];
    Target node;
    node.transport = Transport::kTcp;
    node.host = std::string(master->element[0]->str, master->element[0]->len);
    if (node.host.empty()) node.host = entry.host;  // Redis: "" for the node asked, when unknown
    node.port = static_cast<int>(master->element[1]->integer);
    size_t index = map->nodes_.size();
    for (size_t n = 0; n < map->nodes_.size(); ++n) {
      if (map->nodes_[n].host == node.host && map->nodes_[n].port == node.port) index = n;
    }
    if (index == map->nodes_.size()) map->nodes_.push_back(node);
    if (first < 0 || last >= kHashSlots || first > last) {
      return Status::IoError("--route slots: CLUSTER SLOTS range out of 0..16383");
    }
    for (long long slot = first; slot <= last; ++slot) {
      map->owner_of_slot_[slot].store(static_cast<uint16_t>(index), std::memory_order_relaxed);
      covered[slot] = true;
    }
  }
  for (uint32_t slot = 0; slot < kHashSlots; ++slot) {
    if (!covered[slot]) {
      return Status::IoError("--route slots: slot " + std::to_string(slot) + " has no owner");
    }
  }
  *out = std::move(map);
  return Status::Ok();
}

size_t SlotMap::NodeOf(std::string_view request) const {
  // A command without a key (PING) goes to slot 0's owner.
  return owner_of_slot_[HashSlot(FirstKeyOf(request))].load(std::memory_order_relaxed);
}

std::optional<size_t> SlotMap::Follow(const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ERROR) return std::nullopt;
  const std::string_view text(reply.str, reply.len);
  if (!text.starts_with("MOVED ")) return std::nullopt;
  const size_t space = text.find(' ', 6);
  const size_t colon = text.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return std::nullopt;
  }
  uint32_t slot = 0;
  int port = 0;
  std::from_chars(text.data() + 6, text.data() + space, slot);
  std::from_chars(text.data() + colon + 1, text.data() + text.size(), port);
  const std::string_view host = text.substr(space + 1, colon - space - 1);
  if (slot >= kHashSlots) return std::nullopt;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].port == port && (nodes_[n].host == host || host.empty())) {
      owner_of_slot_[slot].store(static_cast<uint16_t>(n), std::memory_order_relaxed);
      moved_.fetch_add(1, std::memory_order_relaxed);
      return n;
    }
  }
  return std::nullopt;
}

}  // namespace kvlab::harness
