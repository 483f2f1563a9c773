#include "harness/clients/server_control.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <deque>

#include "harness/measurement/process_readings.h"
#include "harness/clients/resp_encoding.h"

namespace kvlab::harness {

std::map<std::string, std::string> ParseInfo(std::string_view text) {
  std::map<std::string, std::string> fields;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fields.emplace(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
  }
  return fields;
}

Status ServerControl::Open(const Target& target, const ConnectionOptions& options,
                           std::unique_ptr<ServerControl>* out) {
  std::unique_ptr<Connection> connection;
  Status opened = Connection::Open(target, options, &connection);
  if (!opened.ok()) return opened;
  // A server that wants a password answers -NOAUTH to everything but AUTH,
  // HELLO and QUIT: say so now, not as failed requests once the load runs.
  // ECHO, not PING: the known-answer test servers count (and delay) PINGs.
  std::string echo;
  AppendCommand(&echo, {"ECHO", "kvlab"});
  ReplyPtr reply;
  Status echoed = connection->Call(echo, &reply);
  if (!echoed.ok()) return echoed.WithContext("ECHO");  // unanswered: the connection is spent
  if (reply->type == REDIS_REPLY_ERROR &&
      std::string_view(reply->str, reply->len).starts_with("NOAUTH")) {
    return Status::ConnectionFailed(target.ToUrl() + " requires AUTH (it answered ECHO with -" +
                                    std::string(reply->str, reply->len) +
                                    "): give its password with --password");
  }
  out->reset(new ServerControl(std::move(connection)));
  return Status::Ok();
}

ServerControl::ServerControl(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)) {}

Status ServerControl::Command(std::initializer_list<std::string_view> args, ReplyPtr* reply) {
  std::string request;
  AppendCommand(&request, args);
  Status called = connection_->Call(request, reply);
  if (!called.ok()) return called;
  if ((*reply)->type == REDIS_REPLY_ERROR) {
    return Status::IoError(std::string(*args.begin()) +
                           " failed: " + std::string((*reply)->str, (*reply)->len));
  }
  return Status::Ok();
}

Status ServerControl::Info(std::string_view section, std::string* text) {
  ReplyPtr reply;
  Status called = Command({"INFO", section}, &reply);
  if (!called.ok()) return called;
  if (reply->type != REDIS_REPLY_STRING) {
    return Status::IoError("INFO did not answer with a bulk string");
  }
  text->assign(reply->str, reply->len);
  return Status::Ok();
}

Status ServerControl::RouteBySlots(const Target& entry, const ConnectionOptions& options) {
  Status fetched = SlotMap::Fetch(entry, options, &map_);
  if (!fetched.ok()) return fetched;
  std::vector<std::string> pids;
  for (const Target& node : map_->nodes()) {
    std::unique_ptr<Connection> connection;
    Status opened = Connection::Open(node, options, &connection);
    if (!opened.ok()) return opened.WithContext("node " + node.ToUrl());
    std::string request;
    AppendCommand(&request, {"INFO", "server"});
    ReplyPtr reply;
    Status called = connection->Call(request, &reply);
    if (!called.ok()) return called.WithContext("node " + node.ToUrl());
    std::string pid;
    if (reply->type == REDIS_REPLY_STRING) {
      pid = ParseInfo(std::string_view(reply->str, reply->len))["process_id"];
    }
    bool seen = false;
    for (const std::string& other : pids) seen |= !pid.empty() && other == pid;
    pids.push_back(pid);
    first_of_process_.push_back(!seen);
    nodes_.push_back(std::move(connection));
  }
  return Status::Ok();
}

Status ServerControl::FlushAll() {
  ReplyPtr reply;
  if (nodes_.empty()) return Command({"FLUSHALL"}, &reply);
  std::string request;
  AppendCommand(&request, {"FLUSHALL"});
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!first_of_process_[n]) continue;
    Status called = nodes_[n]->Call(request, &reply);
    if (!called.ok()) return called.WithContext("FLUSHALL");
    if (reply->type == REDIS_REPLY_ERROR) return Status::IoError("FLUSHALL failed on a node");
  }
  return Status::Ok();
}

// YCSB's load phase: every record inserted once (HMSET of its fields, then
// ZADD to the index), in key order, kBatch operations in flight.
Status ServerControl::LoadYcsbRecords(const WorkloadSpec& spec, uint64_t* records_written) {
  constexpr size_t kBatch = 1000;
  WorkloadSpec load = spec;
  load.ycsb = YcsbWorkload::kLoad;
  WorkloadGenerator generator(load, /*stream=*/~uint64_t{0}, 0);
  std::deque<RequestInfo> in_flight;
  std::string batch;
  uint64_t started = 0;
  while (*records_written < spec.keys) {
    while (started < spec.keys && in_flight.size() < kBatch) {
      in_flight.push_back(generator.AppendNext(&batch));
      ++started;
    }
    Status written = connection_->Write(batch);
    if (!written.ok()) return written.WithContext("prefill");
    batch.clear();
    for (size_t answered = in_flight.size(); answered > 0; --answered) {
      ReplyPtr reply;
      Status read = connection_->ReadReply(&reply);
      if (!read.ok()) return read.WithContext("prefill");
      RequestInfo info = in_flight.front();
      in_flight.pop_front();
      const ReplyOutcome outcome = generator.OnReply(*reply, &info, &batch);
      if (!outcome.done) {
        in_flight.push_back(info);
      } else if (outcome.verdict != ReplyVerdict::kOk) {
        const std::string why = reply->str ? reply->str : "a reply of the wrong type";
        return Status::IoError("prefill: a YCSB insert (HMSET, ZADD " + std::string(kYcsbIndexKey) +
                               ") failed: " + why);
      } else {
        ++*records_written;
      }
    }
  }
  return Status::Ok();
}

// One container of spec.shape.elements elements per key, one command each:
// HSET key f0 v f1 v ..., RPUSH key v ..., SADD key m0 ..., ZADD key 0 m0 1 m1 ...
// Each element (field value, list element, member) is --value-size bytes.
Status ServerControl::PrefillContainers(const WorkloadSpec& spec, uint64_t* keys_written) {
  constexpr uint64_t kBatch = 100;  // keys per pipelined write
  WorkloadGenerator generator(spec, /*stream=*/~uint64_t{0}, 0);
  const int elements = spec.shape.elements;
  const size_t element_bytes = spec.value_size_min;
  auto member = [&](int i) {
    std::string text = "m" + std::to_string(i) + ":";
    text.resize(std::max(text.size(), element_bytes), 'x');
    return text;
  };
  std::string batch;
  for (uint64_t first = 0; first < spec.keys; first += kBatch) {
    const uint64_t last = std::min(spec.keys, first + kBatch);
    batch.clear();
    for (uint64_t index = first; index < last; ++index) {
      std::vector<std::string> args;
      args.push_back(std::string(generator.KeyName(index)));
      switch (spec.shape.kind) {
        case ValueShape::Kind::kHash:
          args.insert(args.begin(), "HSET");
          for (int i = 0; i < elements; ++i) {
            args.push_back("field" + std::to_string(i));
            args.push_back(std::string(generator.NextValue()));
          }
          break;
        case ValueShape::Kind::kList:
          args.insert(args.begin(), "RPUSH");
          for (int i = 0; i < elements; ++i) args.push_back(std::string(generator.NextValue()));
          break;
        case ValueShape::Kind::kSet:
          args.insert(args.begin(), "SADD");
          for (int i = 0; i < elements; ++i) args.push_back(member(i));
          break;
        case ValueShape::Kind::kZSet:
          args.insert(args.begin(), "ZADD");
          for (int i = 0; i < elements; ++i) {
            args.push_back(std::to_string(i));
            args.push_back(member(i));
          }
          break;
        case ValueShape::Kind::kString:
          break;
      }
      AppendCommandOf(&batch, args);
    }
    Status written = connection_->Write(batch);
    if (!written.ok()) return written.WithContext("prefill");
    for (uint64_t index = first; index < last; ++index) {
      ReplyPtr reply;
      Status read = connection_->ReadReply(&reply);
      if (!read.ok()) return read.WithContext("prefill");
      if (reply->type != REDIS_REPLY_INTEGER || reply->integer != elements) {
        const std::string why =
            reply->type == REDIS_REPLY_ERROR && reply->str ? reply->str : "an unexpected reply";
        return Status::IoError("prefill: filling " + ValueShapeName(spec.shape) +
                               " failed: " + why);
      }
    }
    *keys_written = last;
  }
  return Status::Ok();
}

Status ServerControl::Prefill(const WorkloadSpec& spec, uint64_t* keys_written) {
  constexpr uint64_t kBatch = 1000;  // keys per pipelined write
  *keys_written = 0;
  if (spec.shape.kind != ValueShape::Kind::kString) return PrefillContainers(spec, keys_written);
  if (spec.command == CommandKind::kPing) return Status::Ok();
  if (spec.command == CommandKind::kYcsb) return LoadYcsbRecords(spec, keys_written);
  WorkloadGenerator generator(spec, /*stream=*/~uint64_t{0}, 0);
  // Routed: each key to its owner's connection; else all to the one.
  std::vector<Connection*> targets;
  if (nodes_.empty()) {
    targets.push_back(connection_.get());
  } else {
    for (auto& node : nodes_) targets.push_back(node.get());
  }
  // Unrouted: MSETs of kKeysPerMset keys, one command per kKeysPerMset keys instead of
  // one each: a server that pays per command (the sharded engine's hop per command, ~4 s
  // for a million single SETs) fills in a fraction of the time, which every fresh start
  // of an alternated GET point pays. Routed (a cluster, even of one node), keys of
  // different slots cannot share a command (CROSSSLOT), so each key is its own SET.
  constexpr uint64_t kKeysPerMset = 100;
  const bool unrouted = nodes_.empty();
  std::vector<std::string> batches(targets.size());
  std::vector<uint64_t> sent(targets.size());
  std::string request;
  std::vector<std::string> mset;
  for (uint64_t first = 0; first < spec.keys; first += kBatch) {
    const uint64_t last = std::min(spec.keys, first + kBatch);
    for (std::string& batch : batches) batch.clear();
    sent.assign(targets.size(), 0);
    for (uint64_t index = first; index < last; ++index) {
      const std::string_view value =
          spec.command == CommandKind::kIncrby ? std::string_view("0") : generator.NextValue();
      const std::string key(generator.KeyName(index));
      if (unrouted) {
        if (mset.empty()) mset.push_back("MSET");
        mset.push_back(key);
        mset.emplace_back(value);
        if (mset.size() == 1 + 2 * kKeysPerMset || index + 1 == last) {
          AppendCommandOf(&batches[0], mset);
          ++sent[0];
          mset.clear();
        }
        continue;
      }
      request.clear();
      AppendCommand(&request, {"SET", key, value});
      const size_t node = map_ ? map_->NodeOf(request) : 0;
      batches[node].append(request);
      ++sent[node];
    }
    for (size_t n = 0; n < targets.size(); ++n) {
      if (sent[n] == 0) continue;
      Status written = targets[n]->Write(batches[n]);
      if (!written.ok()) return written.WithContext("prefill");
    }
    for (size_t n = 0; n < targets.size(); ++n) {
      for (uint64_t i = 0; i < sent[n]; ++i) {
        ReplyPtr reply;
        Status read = targets[n]->ReadReply(&reply);
        if (!read.ok()) return read.WithContext("prefill");
        if (CheckReply(*reply, ExpectedReply::kOk) != ReplyVerdict::kOk) {
          return Status::IoError(std::string("prefill: ") + (unrouted ? "MSET" : "SET") +
                                 " was not answered +OK");
        }
      }
    }
    *keys_written = last;
  }
  return Status::Ok();
}

double ServerControl::NodesCpuSeconds() {
  std::string request;
  AppendCommand(&request, {"INFO", "cpu"});
  double total = 0;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!first_of_process_[n]) continue;
    ReplyPtr reply;
    if (!nodes_[n]->Call(request, &reply).ok() || reply->type != REDIS_REPLY_STRING) return -1;
    auto fields = ParseInfo(std::string_view(reply->str, reply->len));
    if (!fields.count("used_cpu_user") || !fields.count("used_cpu_sys")) return -1;
    total += std::strtod(fields["used_cpu_user"].c_str(), nullptr) +
             std::strtod(fields["used_cpu_sys"].c_str(), nullptr);
  }
  return total;
}

double ServerControl::CpuSeconds() {
  if (!nodes_.empty()) return NodesCpuSeconds();
  std::string text;
  if (!Info("cpu", &text).ok()) return -1;
  const auto fields = ParseInfo(text);
  const auto user = fields.find("used_cpu_user");
  const auto system = fields.find("used_cpu_sys");
  if (user == fields.end() || system == fields.end()) return -1;
  return std::strtod(user->second.c_str(), nullptr) + std::strtod(system->second.c_str(), nullptr);
}

Status ServerControl::GetInteger(std::string_view key, int64_t* value) {
  ReplyPtr reply;
  Status called = Command({"GET", key}, &reply);
  if (!called.ok()) return called;
  if (reply->type != REDIS_REPLY_STRING) return Status::IoError("GET did not answer a string");
  const auto [end, error] = std::from_chars(reply->str, reply->str + reply->len, *value);
  if (error != std::errc() || end != reply->str + reply->len) {
    return Status::IoError("GET did not answer an integer");
  }
  return Status::Ok();
}

pid_t LocalServerPid(ServerControl& control) {
  std::string text;
  if (!control.Info("server", &text).ok()) return 0;
  const auto fields = ParseInfo(text);
  const auto pid = fields.find("process_id");
  const auto uptime = fields.find("uptime_in_seconds");
  if (pid == fields.end() || uptime == fields.end()) return 0;
  const pid_t candidate = static_cast<pid_t>(std::strtol(pid->second.c_str(), nullptr, 10));
  if (candidate <= 0) return 0;
  const double age = ProcessAgeSeconds(candidate);
  const double reported = std::strtod(uptime->second.c_str(), nullptr);
  return age >= 0 && std::abs(age - reported) <= 2.0 ? candidate : 0;
}

}  // namespace kvlab::harness
