#include "server/aof_rewrite_policy.h"

namespace kvlab {

AofRewritePolicy& AutoRewritePolicy() {
  static AofRewritePolicy policy;
  return policy;
}

bool AutoRewriteDue(uint64_t current, uint64_t base, int64_t percentage, uint64_t min_size) {
  if (percentage <= 0 || current <= min_size) return false;
  const uint64_t from = base == 0 ? 1 : base;
  if (current <= from) return false;
  // growth% = (current - from) * 100 / from, without overflow for any size
  const long double growth = (static_cast<long double>(current) - from) * 100.0L / from;
  return growth >= static_cast<long double>(percentage);
}

}  // namespace kvlab
