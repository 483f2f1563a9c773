// ArrivalSchedule: the intended send times of one open-loop application
// thread. Arrivals are either evenly spaced (`uniform`, as wrk2) or a
// Poisson process (`poisson`: exponential gaps, the arrivals of many
// independent users). Each thread's schedule starts at a random phase
// within its first gap, so threads with the same rate do not fire in
// lock-step. Times are kept in double precision from the start, so a
// uniform schedule has no rounding drift at any rate.
//
// Thread safety: not thread-safe; each thread owns its schedule.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

#include "harness/status.h"

namespace kvlab::harness {

enum class ArrivalKind { kUniform, kPoisson };

Status ParseArrivalKind(std::string_view text, ArrivalKind* out);  // uniform|poisson
const char* ArrivalKindName(ArrivalKind kind);

class ArrivalSchedule {
 public:
  // REQUIRES: rate_per_s > 0.
  ArrivalSchedule(ArrivalKind kind, double rate_per_s, uint64_t seed, uint64_t start_ns);

  // The intended send time of the next request.
  uint64_t next_ns() const { return static_cast<uint64_t>(next_ns_); }
  // Moves on to the request after it.
  void Advance();

 private:
  double Gap();  // nanoseconds to the following arrival

  ArrivalKind kind_;
  double mean_gap_ns_;
  std::mt19937_64 random_;
  double next_ns_;
};

}  // namespace kvlab::harness
