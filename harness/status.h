// The harness's Status is the project's (base/status.h): one outcome type for
// every component, so a harness error reads like an engine's or a server's.
#pragma once

#include "base/status.h"

namespace kvlab::harness {

using Status = kvlab::Status;

}  // namespace kvlab::harness
