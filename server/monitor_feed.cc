#include "server/monitor_feed.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/ascii_case.h"

namespace kvlab {
namespace {

// sdscatrepr(): the argument in double quotes, with \\ \" \n \r \t \a \b
// escaped and other bytes outside the printable range as \xHH.
void AppendQuoted(std::string& line, std::string_view arg) {
  line += '"';
  for (const char c : arg) {
    switch (c) {
      case '\\':
        line += "\\\\";
        break;
      case '"':
        line += "\\\"";
        break;
      case '\n':
        line += "\\n";
        break;
      case '\r':
        line += "\\r";
        break;
      case '\t':
        line += "\\t";
        break;
      case '\a':
        line += "\\a";
        break;
      case '\b':
        line += "\\b";
        break;
      default:
        if (c >= ' ' && c <= '~') {
          line += c;
        } else {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          line += hex;
        }
    }
  }
  line += '"';
}

// Which arguments Redis 7.0 shows as "(redacted)": AUTH's, and HELLO's two
// after its AUTH option.
std::vector<bool> Redacted(std::span<const std::string_view> args) {
  std::vector<bool> redacted(args.size(), false);
  const std::string name = AsciiLowercase(args[0]);
  if (name == "auth") {
    for (size_t i = 1; i < args.size(); ++i) redacted[i] = true;
  } else if (name == "hello") {
    for (size_t i = 2; i + 2 < args.size(); ++i) {
      if (AsciiLowercase(args[i]) == "auth") {
        redacted[i + 1] = redacted[i + 2] = true;
        break;
      }
    }
  }
  return redacted;
}

}  // namespace

std::string MonitorFeed::Line(int64_t time_us, const ClientInfo& from,
                              std::span<const std::string_view> args) {
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "+%lld.%06lld ", static_cast<long long>(time_us / 1000000),
                static_cast<long long>(time_us % 1000000));
  std::string line = stamp;
  // Redis names a Unix-socket client by the server's socket path.
  if (from.is_unix) {
    std::string_view path = from.local_address;
    if (path.size() >= 2 && path.substr(path.size() - 2) == ":0") path.remove_suffix(2);
    line += "[0 unix:" + std::string(path) + "] ";
  } else {
    line += "[0 " + from.peer_address + "] ";
  }
  const std::vector<bool> redacted = Redacted(args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (i != 0) line += ' ';
    if (redacted[i]) {
      line += "\"(redacted)\"";
    } else {
      AppendQuoted(line, args[i]);
    }
  }
  line += "\r\n";
  return line;
}

void MonitorFeed::Add(uint64_t client, std::shared_ptr<PubSubMailbox> mailbox) {
  MutexLock lock(mutex_);
  clients_.emplace_back(client, std::move(mailbox));
  monitors_.store(static_cast<int>(clients_.size()), std::memory_order_relaxed);
}

void MonitorFeed::Remove(uint64_t client) {
  MutexLock lock(mutex_);
  std::erase_if(clients_, [client](const auto& entry) { return entry.first == client; });
  monitors_.store(static_cast<int>(clients_.size()), std::memory_order_relaxed);
}

void MonitorFeed::Feed(const ClientInfo& from, std::span<const std::string_view> args) {
  if (args.empty()) return;
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const std::string line = Line(now_us, from, args);
  MutexLock lock(mutex_);
  for (const auto& [client, mailbox] : clients_) {
    mailbox->Deliver({PubSubMessage::Kind::kRaw, {}, {}, line});
  }
}

}  // namespace kvlab
