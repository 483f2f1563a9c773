#include "harness/measurement/client_phases.h"

namespace kvlab::harness {

const std::array<const char*, kClientPhaseCount>& ClientPhaseNames() {
  static const std::array<const char*, kClientPhaseCount> kNames = {"build", "send", "wait",
                                                                    "receive"};
  return kNames;
}

}  // namespace kvlab::harness
