// Pub/Sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE
// SUNSUBSCRIBE PUBLISH SPUBLISH PUBSUB — replies as Redis 7.0's pubsub.c
// writes them: a confirmation per channel (a RESP3 push), the client's count
// of subscriptions after it, and one confirmation with a null channel when
// an unsubscribe from everything finds nothing. The registry delivers the
// messages (server/pubsub_registry.h); the Session renders them.
#include <algorithm>
#include <string>

#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/commands/subcommands.h"

namespace kvlab {
namespace {

using Space = PubSubRegistry::Space;

// Redis's addReplyPubsub(Pat)(Un)Subscribed(): kind, channel (or null), count.
void Confirm(CommandCall& call, std::string_view kind, const std::string* channel, int64_t count) {
  ReplyWriter reply = call.reply();
  reply.PushHeader(3);
  reply.Bulk(kind);
  if (channel != nullptr) {
    reply.Bulk(*channel);
  } else {
    reply.Nil();
  }
  reply.Integer(count);
}

// Messages published before this command ran come before its replies, as
// they sit before them in a Redis client's reply buffer.
void RenderWaitingMessages(CommandCall& call) {
  if (!call.client.pubsub.HasMessages()) return;
  std::string rendered = RenderPubSubMessages(call.client);
  call.reply().Raw(rendered);
}

void SubscribeIn(CommandCall& call, Space space) {
  ClientSubscriptions& subs = call.client.pubsub;
  const uint64_t id = call.client.info.id;
  std::set<std::string>& mine = space == Space::kGlobal ? subs.channels : subs.shard_channels;
  for (size_t i = 1; i < call.args.size(); ++i) {
    std::string channel(call.args[i]);
    if (mine.insert(channel).second)
      call.server.pubsub.Subscribe(space, channel, id, subs.Mailbox());
    if (space == Space::kGlobal) {
      Confirm(call, "subscribe", &channel, subs.Count());
    } else {
      Confirm(call, "ssubscribe", &channel, static_cast<int64_t>(subs.shard_channels.size()));
    }
  }
  subs.active = true;
  RefreshListing(call.client);
}

void UnsubscribeIn(CommandCall& call, Space space) {
  RenderWaitingMessages(call);
  ClientSubscriptions& subs = call.client.pubsub;
  const uint64_t id = call.client.info.id;
  std::set<std::string>& mine = space == Space::kGlobal ? subs.channels : subs.shard_channels;
  const std::string_view kind = space == Space::kGlobal ? "unsubscribe" : "sunsubscribe";
  auto count = [&] {
    return space == Space::kGlobal ? subs.Count()
                                   : static_cast<int64_t>(subs.shard_channels.size());
  };
  if (call.args.size() == 1) {
    if (mine.empty()) Confirm(call, kind, nullptr, count());
    while (!mine.empty()) {
      const std::string channel = *mine.begin();
      mine.erase(mine.begin());
      call.server.pubsub.Unsubscribe(space, channel, id);
      Confirm(call, kind, &channel, count());
    }
  } else {
    for (size_t i = 1; i < call.args.size(); ++i) {
      const std::string channel(call.args[i]);
      if (mine.erase(channel) != 0) call.server.pubsub.Unsubscribe(space, channel, id);
      Confirm(call, kind, &channel, count());
    }
  }
  if (subs.Total() == 0) subs.active = false;
  RefreshListing(call.client);
}

void Subscribe(CommandCall& call) {
  RenderWaitingMessages(call);
  SubscribeIn(call, Space::kGlobal);
}
void Unsubscribe(CommandCall& call) { UnsubscribeIn(call, Space::kGlobal); }
void SSubscribe(CommandCall& call) {
  RenderWaitingMessages(call);
  SubscribeIn(call, Space::kShard);
}
void SUnsubscribe(CommandCall& call) { UnsubscribeIn(call, Space::kShard); }

void PSubscribe(CommandCall& call) {
  RenderWaitingMessages(call);
  ClientSubscriptions& subs = call.client.pubsub;
  for (size_t i = 1; i < call.args.size(); ++i) {
    std::string pattern(call.args[i]);
    if (std::find(subs.patterns.begin(), subs.patterns.end(), pattern) == subs.patterns.end()) {
      subs.patterns.push_back(pattern);
      call.server.pubsub.SubscribePattern(pattern, call.client.info.id, subs.Mailbox());
    }
    Confirm(call, "psubscribe", &pattern, subs.Count());
  }
  subs.active = true;
  RefreshListing(call.client);
}

void PUnsubscribe(CommandCall& call) {
  RenderWaitingMessages(call);
  ClientSubscriptions& subs = call.client.pubsub;
  const uint64_t id = call.client.info.id;
  if (call.args.size() == 1) {
    if (subs.patterns.empty()) Confirm(call, "punsubscribe", nullptr, subs.Count());
    while (!subs.patterns.empty()) {
      const std::string pattern = subs.patterns.front();
      subs.patterns.erase(subs.patterns.begin());
      call.server.pubsub.UnsubscribePattern(pattern, id);
      Confirm(call, "punsubscribe", &pattern, subs.Count());
    }
  } else {
    for (size_t i = 1; i < call.args.size(); ++i) {
      const std::string pattern(call.args[i]);
      const auto at = std::find(subs.patterns.begin(), subs.patterns.end(), pattern);
      if (at != subs.patterns.end()) {
        subs.patterns.erase(at);
        call.server.pubsub.UnsubscribePattern(pattern, id);
      }
      Confirm(call, "punsubscribe", &pattern, subs.Count());
    }
  }
  if (subs.Total() == 0) subs.active = false;
  RefreshListing(call.client);
}

void Publish(CommandCall& call) {
  call.reply().Integer(call.server.pubsub.Publish(Space::kGlobal, call.args[1], call.args[2]));
}
void SPublish(CommandCall& call) {
  call.reply().Integer(call.server.pubsub.Publish(Space::kShard, call.args[1], call.args[2]));
}

// PUBSUB CHANNELS|SHARDCHANNELS [pattern]; more arguments are Redis's
// subcommand syntax error.
void ListChannels(CommandCall& call, Space space) {
  if (call.args.size() > 3) {
    call.reply().Error("ERR unknown subcommand or wrong number of arguments for '" +
                       std::string(AsCString(call.args[1]).substr(0, 128)) + "'. Try PUBSUB HELP.");
    return;
  }
  std::string pattern;
  if (call.args.size() == 3) pattern = std::string(call.args[2]);
  const std::vector<std::string> channels =
      call.server.pubsub.Channels(space, call.args.size() == 3 ? &pattern : nullptr);
  ReplyWriter reply = call.reply();
  reply.ArrayHeader(channels.size());
  for (const std::string& channel : channels) reply.Bulk(channel);
}

void CountSubscribers(CommandCall& call, Space space) {
  ReplyWriter reply = call.reply();
  reply.ArrayHeader((call.args.size() - 2) * 2);
  for (size_t i = 2; i < call.args.size(); ++i) {
    reply.Bulk(call.args[i]);
    reply.Integer(call.server.pubsub.Subscribers(space, call.args[i]));
  }
}

void PubSubHelp(CommandCall& call) {
  static constexpr std::string_view kHelp[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help."};
  call.reply().StatusLines(kHelp);
}

constexpr Subcommand kPubSubSubcommands[] = {
    {"channels", -2, [](CommandCall& call) { ListChannels(call, Space::kGlobal); }},
    {"numsub", -2, [](CommandCall& call) { CountSubscribers(call, Space::kGlobal); }},
    {"numpat", 2, [](CommandCall& call) { call.reply().Integer(call.server.pubsub.Patterns()); }},
    {"shardchannels", -2, [](CommandCall& call) { ListChannels(call, Space::kShard); }},
    {"shardnumsub", -2, [](CommandCall& call) { CountSubscribers(call, Space::kShard); }},
    {"help", 2, PubSubHelp},
};

void PubSub(CommandCall& call) { DispatchSubcommand(call, "pubsub", kPubSubSubcommands); }

}  // namespace

std::string RenderPubSubMessages(ClientState& client) {
  std::string out;
  if (!client.pubsub.mailbox) return out;
  ReplyWriter writer(out, client.protocol);
  for (const PubSubMessage& message : client.pubsub.mailbox->Take()) {
    if (message.kind == PubSubMessage::Kind::kRaw) {
      writer.Raw(message.payload);
      continue;
    }
    const bool pattern = message.kind == PubSubMessage::Kind::kPatternMessage;
    writer.PushHeader(pattern ? 4 : 3);
    switch (message.kind) {
      case PubSubMessage::Kind::kMessage:
        writer.Bulk("message");
        break;
      case PubSubMessage::Kind::kPatternMessage:
        writer.Bulk("pmessage");
        writer.Bulk(message.pattern);
        break;
      case PubSubMessage::Kind::kShardMessage:
        writer.Bulk("smessage");
        break;
      case PubSubMessage::Kind::kRaw:
        break;
    }
    writer.Bulk(message.channel);
    writer.Bulk(message.payload);
  }
  return out;
}

void RegisterPubSubCommands(CommandTable& table) {
  using F = CommandSpec::Flags;
  table.Add({.name = "subscribe",
             .arity = -2,
             .flags = F::kPushReply,
             .handler = Subscribe,
             .group = "pubsub",
             .summary = "Listen for messages published to the given channels"});
  table.Add({.name = "unsubscribe",
             .arity = -1,
             .flags = F::kPushReply,
             .handler = Unsubscribe,
             .group = "pubsub",
             .summary = "Stop listening for messages posted to the given channels"});
  table.Add({.name = "psubscribe",
             .arity = -2,
             .flags = F::kPushReply,
             .handler = PSubscribe,
             .group = "pubsub",
             .summary = "Listen for messages published to channels matching the given patterns"});
  table.Add(
      {.name = "punsubscribe",
       .arity = -1,
       .flags = F::kPushReply,
       .handler = PUnsubscribe,
       .group = "pubsub",
       .summary = "Stop listening for messages posted to channels matching the given patterns"});
  table.Add({.name = "ssubscribe",
             .arity = -2,
             .flags = F::kPushReply,
             .handler = SSubscribe,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "pubsub",
             .summary = "Listen for messages published to the given shard channels"});
  table.Add({.name = "sunsubscribe",
             .arity = -1,
             .flags = F::kPushReply,
             .handler = SUnsubscribe,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "pubsub",
             .summary = "Stop listening for messages posted to the given shard channels"});
  table.Add({.name = "publish",
             .arity = 3,
             .flags = F::kFast,
             .handler = Publish,
             .group = "pubsub",
             .summary = "Post a message to a channel"});
  table.Add({.name = "spublish",
             .arity = 3,
             .flags = F::kFast,
             .handler = SPublish,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "pubsub",
             .summary = "Post a message to a shard channel"});
  table.Add({.name = "pubsub",
             .arity = -2,
             .handler = PubSub,
             .group = "pubsub",
             .summary = "A container for Pub/Sub commands",
             .subcommands = {"pubsub|channels", "pubsub|help", "pubsub|numpat", "pubsub|numsub",
                             "pubsub|shardchannels", "pubsub|shardnumsub"}});
}

}  // namespace kvlab
