// MakeEngine: the one place that maps an engine's name to its class. Adding
// an engine means adding it here and to engine_kind.cc's table.
#include <string>

#include "engines/kinds/concurrent_engine.h"
#include "engines/engine.h"
#include "engines/engine_kind.h"
#include "engines/kinds/owner_engine.h"
#include "engines/kinds/sharded_engine.h"
#include "engines/kinds/single_engine.h"
#include "engines/kinds/striped_engine.h"

namespace kvlab {
namespace {

std::unique_ptr<Engine> Construct(const EngineConfig& config) {
  if (config.kind == "single") return std::make_unique<SingleEngine>(config);
  if (config.kind == "sharded") return std::make_unique<ShardedEngine>(config);
  if (config.kind == "concurrent") return std::make_unique<ConcurrentEngine>(config);
  if (config.kind == "striped") return std::make_unique<StripedEngine>(config);
  if (config.kind == "owner") return std::make_unique<OwnerEngine>(config);
  return nullptr;
}

}  // namespace

Status MakeEngine(const EngineConfig& config, std::unique_ptr<Engine>* engine) {
  if (config.shards > kMaxShards) {
    return Status::InvalidArgument("shards must be at most " + std::to_string(kMaxShards));
  }
  if (config.stripes > kMaxStripes) {
    return Status::InvalidArgument("stripes must be at most " + std::to_string(kMaxStripes));
  }
  std::unique_ptr<Engine> built = Construct(config);
  if (built == nullptr) {
    std::string message = "unknown engine '" + config.kind + "' (expected one of:";
    for (const std::string& kind : EngineKinds()) message += " " + kind;
    return Status::InvalidArgument(message + ")");
  }
  *engine = std::move(built);
  return Status::Ok();
}

}  // namespace kvlab
