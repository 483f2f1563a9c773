#include "engines/clock.h"

#include <chrono>

namespace kvlab {

int64_t UnixNowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace kvlab
