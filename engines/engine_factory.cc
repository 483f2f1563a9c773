// MakeEngine/EngineKinds: the one place that maps an engine's name to its
// class. Adding an engine means adding it here and to kKinds.
#include <string>
#include <vector>

#include "engines/concurrent_engine.h"
#include "engines/engine.h"
#include "engines/sharded_engine.h"
#include "engines/single_engine.h"
#include "engines/striped_engine.h"

namespace kvlab {
namespace {

// Far beyond any useful machine; guards against a typo spawning 10^6 threads.
constexpr unsigned kMaxShards = 1024;
constexpr unsigned kMaxStripes = 1u << 20;

std::unique_ptr<Engine> Invalid(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return nullptr;
}

}  // namespace

const std::vector<std::string>& EngineKinds() {
  static const std::vector<std::string> kKinds = {"single", "sharded", "concurrent", "striped"};
  return kKinds;
}

std::unique_ptr<Engine> MakeEngine(const EngineConfig& config, std::string* error) {
  if (config.shards > kMaxShards) return Invalid(error, "shards must be at most " + std::to_string(kMaxShards));
  if (config.stripes > kMaxStripes) return Invalid(error, "stripes must be at most " + std::to_string(kMaxStripes));
  if (config.kind == "single") return std::make_unique<SingleEngine>(config);
  if (config.kind == "sharded") return std::make_unique<ShardedEngine>(config);
  if (config.kind == "concurrent") return std::make_unique<ConcurrentEngine>(config);
  if (config.kind == "striped") return std::make_unique<StripedEngine>(config);
  std::string message = "unknown engine '" + config.kind + "' (expected one of:";
  for (const std::string& kind : EngineKinds()) message += " " + kind;
  return Invalid(error, message + ")");
}

}  // namespace kvlab
