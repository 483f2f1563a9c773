// MakeEngine/EngineKinds: the one place that maps an engine's name to its
// class. Adding an engine means adding it here and to kKinds.
#include <string>
#include <vector>

#include "engines/concurrent_engine.h"
#include "engines/engine.h"
#include "engines/single_engine.h"
#include "engines/striped_engine.h"

namespace kvlab {

const std::vector<std::string>& EngineKinds() {
  static const std::vector<std::string> kKinds = {"single", "concurrent", "striped"};
  return kKinds;
}

std::unique_ptr<Engine> MakeEngine(const EngineConfig& config, std::string* error) {
  if (config.kind == "single") return std::make_unique<SingleEngine>(config);
  if (config.kind == "concurrent") return std::make_unique<ConcurrentEngine>(config);
  if (config.kind == "striped") return std::make_unique<StripedEngine>(config);
  if (error) {
    *error = "unknown engine '" + config.kind + "' (expected one of:";
    for (const std::string& kind : EngineKinds()) *error += " " + kind;
    *error += ")";
  }
  return nullptr;
}

}  // namespace kvlab
