// MakeEngine: the one place that maps an engine's name to its class. Adding
// an engine means adding it here and to engine_kind.cc's table.
#include <string>

#include "engines/concurrent_engine.h"
#include "engines/engine.h"
#include "engines/engine_kind.h"
#include "engines/sharded_engine.h"
#include "engines/single_engine.h"
#include "engines/striped_engine.h"

namespace kvlab {
namespace {

std::unique_ptr<Engine> Invalid(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return nullptr;
}

}  // namespace

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
