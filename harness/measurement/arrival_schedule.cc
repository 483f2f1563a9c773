#include "harness/measurement/arrival_schedule.h"

#include <cmath>
#include <string>

namespace kvlab::harness {

Status ParseArrivalKind(std::string_view text, ArrivalKind* out) {
  if (text == "uniform")
    *out = ArrivalKind::kUniform;
  else if (text == "poisson")
    *out = ArrivalKind::kPoisson;
  else
    return Status::InvalidArgument("bad --arrival '" + std::string(text) +
                                   "' (allowed: uniform, poisson)");
  return Status::Ok();
}

const char* ArrivalKindName(ArrivalKind kind) {
  return kind == ArrivalKind::kPoisson ? "poisson" : "uniform";
}

ArrivalSchedule::ArrivalSchedule(ArrivalKind kind, double rate_per_s, uint64_t seed,
                                 uint64_t start_ns)
    : kind_(kind), mean_gap_ns_(1e9 / rate_per_s), random_(seed) {
  // Uniform: a random phase in [0, gap). Poisson: the first gap is itself
  // exponential (memoryless), which is the random phase.
  const double phase = kind_ == ArrivalKind::kUniform
                           ? std::uniform_real_distribution<double>(0, mean_gap_ns_)(random_)
                           : Gap();
  next_ns_ = static_cast<double>(start_ns) + phase;
}

void ArrivalSchedule::Advance() { next_ns_ += Gap(); }

double ArrivalSchedule::Gap() {
  if (kind_ == ArrivalKind::kUniform) return mean_gap_ns_;
  // Inverse transform: -ln(U) * mean, with U in (0, 1].
  const double u = 1.0 - std::uniform_real_distribution<double>(0, 1)(random_);
  return -std::log(u) * mean_gap_ns_;
}

}  // namespace kvlab::harness
