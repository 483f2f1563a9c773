// Connection commands: PING ECHO QUIT RESET AUTH HELLO SELECT CLIENT — the
// per-client state (authentication, name) and the handshakes clients do on
// connect. Replies follow Redis 7.0's server.c, networking.c and acl.c.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/version.h"

namespace kvlab {
namespace {

constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";

// ACLAuthenticateUser() for kvlab's only user, "default".
bool Authenticate(const ServerContext& server, std::string_view user, std::string_view password) {
  if (user != "default") return false;
  const std::string& required = server.settings.requirepass;
  return required.empty() || password == required;
}

void Ping(CommandCall& call) {
  if (call.args.size() > 2) {
    call.reply().Error(WrongArityError("ping"));
  } else if (call.client.pubsub.active && call.client.protocol == RespVersion::kResp2) {
    // A RESP2 subscriber's replies are all arrays (pingCommand()).
    ReplyWriter reply = call.reply();
    reply.ArrayHeader(2);
    reply.Bulk("pong");
    reply.Bulk(call.args.size() == 2 ? call.args[1] : std::string_view());
  } else if (call.args.size() == 2) {
    call.reply().Bulk(call.args[1]);
  } else {
    call.reply().SimpleString("PONG");
  }
}

void Echo(CommandCall& call) { call.reply().Bulk(call.args[1]); }

void Quit(CommandCall& call) {
  call.client.close_after_reply = true;
  call.reply().Ok();
}

// RESET: the connection's state back to a new connection's (Redis 7.0's
// resetCommand() and clearClientConnectionState()): an open MULTI
// discarded, every WATCH and subscription forgotten, RESP2, no name, and authenticated
// only where the default user needs no password. The Session runs it at
// once inside MULTI (kNoMulti) and before AUTH (kNoAuth), as Redis does.
void Reset(CommandCall& call) {
  Transaction& transaction = call.client.transaction;
  if (transaction.open()) transaction.TakeQueued();
  call.server.watches.UnwatchAll(transaction.watcher());
  call.client.pubsub.LeaveAll(call.server.pubsub, call.server.monitors, call.client.info.id);
  call.client.protocol = RespVersion::kResp2;
  call.client.name.clear();
  call.client.authenticated = call.server.settings.requirepass.empty();
  RefreshListing(call.client);
  call.reply().SimpleString("RESET");
}

void Auth(CommandCall& call) {
  if (call.args.size() > 3) {
    call.reply().Error(kSyntaxError);
    return;
  }
  std::string_view user = "default";
  std::string_view password;
  if (call.args.size() == 2) {
    if (call.server.settings.requirepass.empty()) {
      call.reply().Error(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
      return;
    }
    password = call.args[1];
  } else {
    user = call.args[1];
    password = call.args[2];
  }
  if (Authenticate(call.server, user, password)) {
    call.client.authenticated = true;
    call.reply().Ok();
  } else {
    call.reply().Error(kWrongPass);
  }
}

// Redis accepts client names made of the printable ASCII range '!'..'~'.
bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

// HELLO [protover [AUTH user pass] [SETNAME name]]: RESP2 or RESP3 from
// this reply on (helloCommand()); without a version the protocol stays.
void Hello(CommandCall& call) {
  const auto& args = call.args;
  size_t next = 1;
  std::optional<RespVersion> protocol;
  if (args.size() >= 2) {
    std::optional<int64_t> version = ParseRedisInt64(args[next++]);
    if (!version) {
      call.reply().Error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (*version != 2 && *version != 3) {
      call.reply().Error("NOPROTO unsupported protocol version");
      return;
    }
    protocol = *version == 3 ? RespVersion::kResp3 : RespVersion::kResp2;
  }
  std::optional<std::string_view> user, password, name;
  for (size_t j = next; j < args.size(); ++j) {
    size_t more = args.size() - 1 - j;
    if (EqualsIgnoreCase(args[j], "auth") && more >= 2) {
      user = args[j + 1];
      password = args[j + 2];
      j += 2;
    } else if (EqualsIgnoreCase(args[j], "setname") && more >= 1) {
      name = args[++j];
    } else {
      call.reply().Error("ERR Syntax error in HELLO option '" + std::string(AsCString(args[j])) +
                         "'");
      return;
    }
  }
  if (user) {
    if (!Authenticate(call.server, *user, *password)) {
      call.reply().Error(kWrongPass);
      return;
    }
    call.client.authenticated = true;
  }
  if (!call.client.authenticated) {
    call.reply().Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
    return;
  }
  if (name) {
    if (!ValidClientName(*name)) {
      call.reply().Error(kBadClientName);
      return;
    }
    call.client.name = std::string(*name);
  }
  if (protocol) call.client.protocol = *protocol;
  RefreshListing(call.client);
  ReplyWriter reply = call.reply();
  reply.MapHeader(7);
  reply.Bulk("server");
  reply.Bulk("redis");
  reply.Bulk("version");
  reply.Bulk(kRedisCompatVersion);
  reply.Bulk("proto");
  reply.Integer(static_cast<int64_t>(call.client.protocol));
  reply.Bulk("id");
  reply.Integer(static_cast<int64_t>(call.client.info.id));
  reply.Bulk("mode");
  reply.Bulk("standalone");
  reply.Bulk("role");
  reply.Bulk("master");
  reply.Bulk("modules");
  reply.ArrayHeader(0);
}

void Select(CommandCall& call) {
  std::optional<int64_t> index = ParseRedisInt64(call.args[1]);
  if (!index) {
    call.reply().Error(kNotIntegerError);
  } else if (*index < INT32_MIN || *index > INT32_MAX) {
    call.reply().Error("ERR value is out of range, value must between -2147483648 and 2147483647");
  } else if (*index != 0) {
    call.reply().Error("ERR DB index is out of range");
  } else {
    call.reply().Ok();
  }
}

using Listing = ClientDirectory::Listing;

Listing::View ViewOf(const ClientState& client) {
  return {.name = client.name,
          .protocol = static_cast<int>(client.protocol),
          .channels = client.pubsub.channels.size(),
          .patterns = client.pubsub.patterns.size(),
          .shard_channels = client.pubsub.shard_channels.size(),
          .pubsub = client.pubsub.active};
}

// One line of CLIENT LIST (catClientInfoString()): the fields kvlab knows
// of every client, in Redis's order and spelling. Left out, rather than
// made up: idle (kvlab reads no clock per command), multi, the buffer
// sizes, events, redir.
std::string ClientLine(const ClientInfo& info, const Listing::View& view,
                       const std::string* last_command) {
  std::string flags;
  if (view.pubsub) flags += 'P';
  if (info.is_unix) flags += 'U';
  if (flags.empty()) flags = "N";
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::steady_clock::now() - info.connected_at);
  return "id=" + std::to_string(info.id) + " addr=" + info.peer_address +
         " laddr=" + info.local_address + " fd=" + std::to_string(info.fd) + " name=" + view.name +
         " age=" + std::to_string(age.count()) + " flags=" + flags +
         " db=0 sub=" + std::to_string(view.channels) + " psub=" + std::to_string(view.patterns) +
         " ssub=" + std::to_string(view.shard_channels) +
         " cmd=" + (last_command != nullptr ? *last_command : std::string("NULL")) +
         " user=default resp=" + std::to_string(view.protocol) + "\n";
}

std::string ClientInfoLine(const ClientState& client) {
  return ClientLine(client.info, ViewOf(client),
                    client.listing ? client.listing->last_command() : nullptr);
}

// CLIENT HELP: the subcommands kvlab-server answers, in Redis's layout.
void ClientHelp(CommandCall& call) {
  static constexpr std::string_view kHelp[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are: ID <client-id>, TYPE (NORMAL|PUBSUB), ADDR <ip:port>,",
      "    LADDR <ip:port>, SKIPME (YES|NO).",
      "LIST [options ...]",
      "    Return information about client connections. Options: TYPE (NORMAL|PUBSUB),",
      "    ID <client-id> [<client-id> ...].",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "HELP",
      "    Prints this help."};
  call.reply().StatusLines(kHelp);
}

// Redis's getClientTypeByName(): kvlab's clients are all `normal` or `pubsub`.
enum class ClientType { kNormal, kReplica, kMaster, kPubSub, kUnknown };
ClientType ClientTypeNamed(std::string_view name) {
  if (EqualsIgnoreCase(name, "normal")) return ClientType::kNormal;
  if (EqualsIgnoreCase(name, "slave") || EqualsIgnoreCase(name, "replica"))
    return ClientType::kReplica;
  if (EqualsIgnoreCase(name, "pubsub")) return ClientType::kPubSub;
  if (EqualsIgnoreCase(name, "master")) return ClientType::kMaster;
  return ClientType::kUnknown;
}
ClientType TypeOf(const Listing::View& view) {
  return view.pubsub ? ClientType::kPubSub : ClientType::kNormal;
}

// CLIENT LIST [TYPE type | ID id [id ...]]: every client, this one from
// its own state (the others from their listings).
void ClientList(CommandCall& call) {
  const auto& args = call.args;
  std::optional<ClientType> type;
  std::vector<uint64_t> ids;
  bool by_id = false;
  if (args.size() == 4 && EqualsIgnoreCase(args[2], "type")) {
    type = ClientTypeNamed(args[3]);
    if (*type == ClientType::kUnknown) {
      call.reply().Error("ERR Unknown client type '" + std::string(AsCString(args[3])) + "'");
      return;
    }
  } else if (args.size() > 3 && EqualsIgnoreCase(args[2], "id")) {
    by_id = true;
    for (size_t i = 3; i < args.size(); ++i) {
      const std::optional<int64_t> id = ParseRedisInt64(args[i]);
      if (!id) {
        call.reply().Error("ERR Invalid client ID");
        return;
      }
      ids.push_back(static_cast<uint64_t>(*id));
    }
  } else if (args.size() != 2) {
    call.reply().Error(kSyntaxError);
    return;
  }
  const uint64_t self = call.client.info.id;
  std::string text;
  if (by_id) {
    for (uint64_t id : ids) {
      if (id == self) {
        text += ClientInfoLine(call.client);
      } else if (auto listing = call.server.clients.Find(id)) {
        text += ClientLine(listing->info(), listing->view(), listing->last_command());
      }
    }
    call.reply().Verbatim(text);
    return;
  }
  bool self_listed = false;
  for (const auto& listing : call.server.clients.All()) {
    if (listing->info().id == self) {
      self_listed = true;
      if (!type || TypeOf(ViewOf(call.client)) == *type) text += ClientInfoLine(call.client);
      continue;
    }
    const Listing::View view = listing->view();
    if (type && TypeOf(view) != *type) continue;
    text += ClientLine(listing->info(), view, listing->last_command());
  }
  // A Session with no connection lists itself all the same.
  if (!self_listed && (!type || TypeOf(ViewOf(call.client)) == *type)) {
    text += ClientInfoLine(call.client);
  }
  call.reply().Verbatim(text);
}

// CLIENT KILL addr | CLIENT KILL [ID id] [TYPE type] [USER user] [ADDR
// addr] [LADDR laddr] [SKIPME yes|no] ... (clientKillCommand()). A killed
// client leaves the directory and its channels at once, as Redis frees it;
// its socket closes on its own thread. This client, when it matches,
// closes after the reply.
void ClientKill(CommandCall& call) {
  const auto& args = call.args;
  std::optional<std::string_view> addr, laddr;
  std::optional<ClientType> type;
  uint64_t id = 0;
  bool skip_self = true;
  if (args.size() == 3) {
    addr = args[2];
    skip_self = false;  // with the old form a client may kill itself
  } else {
    for (size_t i = 2; i < args.size(); i += 2) {
      if (i + 1 >= args.size()) {
        call.reply().Error(kSyntaxError);
        return;
      }
      const std::string_view option = args[i], value = args[i + 1];
      if (EqualsIgnoreCase(option, "id")) {
        const std::optional<int64_t> parsed = ParseRedisInt64(value);
        if (!parsed || *parsed < 1) {
          call.reply().Error("ERR client-id should be greater than 0");
          return;
        }
        id = static_cast<uint64_t>(*parsed);
      } else if (EqualsIgnoreCase(option, "type")) {
        type = ClientTypeNamed(value);
        if (*type == ClientType::kUnknown) {
          call.reply().Error("ERR Unknown client type '" + std::string(AsCString(value)) + "'");
          return;
        }
      } else if (EqualsIgnoreCase(option, "addr")) {
        addr = value;
      } else if (EqualsIgnoreCase(option, "laddr")) {
        laddr = value;
      } else if (EqualsIgnoreCase(option, "user")) {
        if (value != "default") {
          call.reply().Error("ERR No such user '" + std::string(AsCString(value)) + "'");
          return;
        }
      } else if (EqualsIgnoreCase(option, "skipme")) {
        if (EqualsIgnoreCase(value, "yes")) {
          skip_self = true;
        } else if (EqualsIgnoreCase(value, "no")) {
          skip_self = false;
        } else {
          call.reply().Error(kSyntaxError);
          return;
        }
      } else {
        call.reply().Error(kSyntaxError);
        return;
      }
    }
  }
  const uint64_t self = call.client.info.id;
  auto matches = [&](const ClientInfo& info, const Listing::View& view) {
    return (!addr || info.peer_address == *addr) && (!laddr || info.local_address == *laddr) &&
           (!type || TypeOf(view) == *type) && (id == 0 || info.id == id);
  };
  int64_t killed = 0;
  bool close_self = false;
  for (const auto& listing : call.server.clients.All()) {
    const ClientInfo& info = listing->info();
    if (info.id == self || !matches(info, listing->view())) continue;
    call.server.clients.Remove(info.id);
    call.server.pubsub.RemoveClient(info.id);
    listing->Close();
    ++killed;
  }
  if (!skip_self && matches(call.client.info, ViewOf(call.client))) {
    close_self = true;
    ++killed;
  }
  if (args.size() == 3) {
    if (killed == 0) {
      call.reply().Error("ERR No such client");
    } else {
      call.reply().Ok();
    }
  } else {
    call.reply().Integer(killed);
  }
  if (close_self) call.client.close_after_reply = true;
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 when client `id` was blocked (it
// answers as on a timeout, or the UNBLOCKED error), else 0.
void ClientUnblock(CommandCall& call) {
  const auto& args = call.args;
  if (args.size() != 3 && args.size() != 4) {
    call.reply().Error(WrongArityError("client|unblock"));
    return;
  }
  bool error = false;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "error")) {
      error = true;
    } else if (!EqualsIgnoreCase(args[3], "timeout")) {
      call.reply().Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  const std::optional<int64_t> id = ParseRedisInt64(args[2]);
  if (!id) {
    call.reply().Error(kNotIntegerError);
    return;
  }
  const bool unblocked =
      *id > 0 && call.server.blocking.UnblockClient(static_cast<uint64_t>(*id), error);
  call.reply().Integer(unblocked ? 1 : 0);
}

// CLIENT ID | GETNAME | SETNAME name | INFO | LIST | UNBLOCK
void Client(CommandCall& call) {
  const auto& args = call.args;
  std::string_view sub = args[1];
  auto arity_is = [&](size_t expected, std::string_view full_name) {
    if (args.size() == expected) return true;
    call.reply().Error(WrongArityError(full_name));
    return false;
  };
  if (EqualsIgnoreCase(sub, "id")) {
    if (arity_is(2, "client|id")) call.reply().Integer(static_cast<int64_t>(call.client.info.id));
  } else if (EqualsIgnoreCase(sub, "getname")) {
    if (!arity_is(2, "client|getname")) return;
    if (call.client.name.empty()) {
      call.reply().Nil();
    } else {
      call.reply().Bulk(call.client.name);
    }
  } else if (EqualsIgnoreCase(sub, "setname")) {
    if (!arity_is(3, "client|setname")) return;
    if (!ValidClientName(args[2])) {
      call.reply().Error(kBadClientName);
      return;
    }
    call.client.name = std::string(args[2]);
    RefreshListing(call.client);
    call.reply().Ok();
  } else if (EqualsIgnoreCase(sub, "info")) {
    if (arity_is(2, "client|info")) call.reply().Verbatim(ClientInfoLine(call.client));
  } else if (EqualsIgnoreCase(sub, "list")) {
    ClientList(call);
  } else if (EqualsIgnoreCase(sub, "reply")) {
    // CLIENT REPLY ON|OFF|SKIP: the Session drops the replies (Dispatch).
    if (!arity_is(3, "client|reply")) return;
    ReplyMode& mode = call.client.reply_mode;
    if (EqualsIgnoreCase(args[2], "on")) {
      mode = ReplyMode::kOn;
      call.reply().Ok();
    } else if (EqualsIgnoreCase(args[2], "off")) {
      mode = ReplyMode::kOff;
    } else if (EqualsIgnoreCase(args[2], "skip")) {
      if (mode != ReplyMode::kOff) mode = ReplyMode::kSkipNext;
    } else {
      call.reply().Error(kSyntaxError);
    }
  } else if (EqualsIgnoreCase(sub, "kill")) {
    if (args.size() < 3) {
      call.reply().Error(WrongArityError("client|kill"));
      return;
    }
    ClientKill(call);
  } else if (EqualsIgnoreCase(sub, "unblock")) {
    ClientUnblock(call);
  } else if (EqualsIgnoreCase(sub, "help")) {
    if (arity_is(2, "client|help")) ClientHelp(call);
  } else {
    call.reply().Error("ERR unknown subcommand '" + std::string(AsCString(sub).substr(0, 128)) +
                       "'. Try CLIENT HELP.");
  }
}

}  // namespace

void RefreshListing(const ClientState& client) {
  if (client.listing) client.listing->set_view(ViewOf(client));
}

void RegisterConnectionCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "ping",
             .arity = -1,
             .flags = F::kFast,
             .handler = Ping,
             .group = "connection",
             .summary = "Ping the server"});
  table.Add({.name = "echo",
             .arity = 2,
             .flags = F::kFast,
             .handler = Echo,
             .group = "connection",
             .summary = "Echo the given string"});
  table.Add({.name = "quit",
             .arity = -1,
             .flags = F::kNoAuth | F::kFast | F::kNoMulti,
             .handler = Quit,
             .group = "connection",
             .summary = "Close the connection"});
  table.Add({.name = "reset",
             .arity = 1,
             .flags = F::kNoAuth | F::kFast | F::kNoMulti,
             .handler = Reset,
             .group = "connection",
             .summary = "Reset the connection"});
  table.Add({.name = "auth",
             .arity = -2,
             .flags = F::kNoAuth | F::kFast,
             .handler = Auth,
             .group = "connection",
             .summary = "Authenticate to the server"});
  table.Add({.name = "hello",
             .arity = -1,
             .flags = F::kNoAuth | F::kFast,
             .handler = Hello,
             .group = "connection",
             .summary = "Handshake with Redis"});
  table.Add({.name = "select",
             .arity = 2,
             .flags = F::kFast,
             .handler = Select,
             .group = "connection",
             .summary = "Change the selected database for the current connection"});
  table.Add(
      {.name = "client",
       .arity = -2,
       .flags = F::kNone,
       .handler = Client,
       .group = "connection",
       .summary = "A container for client connection commands",
       .subcommands = {"client|getname", "client|id", "client|info", "client|kill", "client|list",
                       "client|reply", "client|setname", "client|unblock", "client|help"}});
}

}  // namespace kvlab
