// PartialQuicksort: Redis's pqsort() (src/pqsort.c, Bentley & McIlroy's
// "Engineering a Sort Function" with the recursion pruned to the ranks
// [lrange, rrange]), step for step, so that SORT ... BY ... LIMIT orders
// elements the comparison calls equal exactly as Redis does. Only the
// ranks inside [lrange, rrange] end up in sorted order.
//
// Pure function over the caller's vector; thread-compatible.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace kvlab {

namespace partial_quicksort_detail {

template <typename T, typename Compare>
size_t Median3(std::vector<T>& v, size_t a, size_t b, size_t c, Compare& cmp) {
  return cmp(v[a], v[b]) < 0 ? (cmp(v[b], v[c]) < 0 ? b : (cmp(v[a], v[c]) < 0 ? c : a))
                             : (cmp(v[b], v[c]) > 0 ? b : (cmp(v[a], v[c]) < 0 ? a : c));
}

// vecswap(): swaps v[a + i] and v[b + i] for i in [0, n).
template <typename T>
void SwapRuns(std::vector<T>& v, size_t a, size_t b, size_t n) {
  for (size_t i = 0; i < n; ++i) std::swap(v[a + i], v[b + i]);
}

// _pqsort() over v[base, base + n), in element indexes instead of bytes.
template <typename T, typename Compare>
void Sort(std::vector<T>& v, size_t base, size_t n, Compare& cmp, size_t lrange, size_t rrange) {
  // The sub-array [lo, lo + m) holds none of the wanted ranks.
  auto outside = [&](size_t lo, size_t m) {
    return (lrange < lo && rrange < lo) || (lrange >= lo + m && rrange >= lo + m);
  };
  while (true) {
    if (n < 7) {
      for (size_t pm = base + 1; pm < base + n; ++pm) {
        for (size_t pl = pm; pl > base && cmp(v[pl - 1], v[pl]) > 0; --pl) {
          std::swap(v[pl], v[pl - 1]);
        }
      }
      return;
    }
    size_t pm = base + n / 2;
    if (n > 7) {
      size_t pl = base;
      size_t pn = base + n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        pl = Median3(v, pl, pl + d, pl + 2 * d, cmp);
        pm = Median3(v, pm - d, pm, pm + d, cmp);
        pn = Median3(v, pn - 2 * d, pn - d, pn, cmp);
      }
      pm = Median3(v, pl, pm, pn, cmp);
    }
    std::swap(v[base], v[pm]);
    // pb and pc may cross below `base + 1`: signed, as the C pointers are.
    ptrdiff_t pa = static_cast<ptrdiff_t>(base) + 1, pb = pa;
    ptrdiff_t pc = static_cast<ptrdiff_t>(base + n - 1), pd = pc;
    while (true) {
      int result = 0;
      while (pb <= pc && (result = cmp(v[pb], v[base])) <= 0) {
        if (result == 0) std::swap(v[pa++], v[pb]);
        ++pb;
      }
      while (pb <= pc && (result = cmp(v[pc], v[base])) >= 0) {
        if (result == 0) std::swap(v[pc], v[pd--]);
        --pc;
      }
      if (pb > pc) break;
      std::swap(v[pb++], v[pc--]);
    }
    const ptrdiff_t pn = static_cast<ptrdiff_t>(base + n);
    const ptrdiff_t start = static_cast<ptrdiff_t>(base);
    ptrdiff_t r = std::min(pa - start, pb - pa);
    SwapRuns(v, base, static_cast<size_t>(pb - r), static_cast<size_t>(r));
    r = std::min(pd - pc, pn - pd - 1);
    SwapRuns(v, static_cast<size_t>(pb), static_cast<size_t>(pn - r), static_cast<size_t>(r));
    if ((r = pb - pa) > 1 && !outside(base, static_cast<size_t>(r))) {
      Sort(v, base, static_cast<size_t>(r), cmp, lrange, rrange);
    }
    if ((r = pd - pc) <= 1) return;
    // Iterates rather than recursing, as pqsort does.
    base = static_cast<size_t>(pn - r);
    n = static_cast<size_t>(r);
    if (outside(base, n)) return;
  }
}

}  // namespace partial_quicksort_detail

// Sorts v so that ranks [lrange, rrange] hold what a full sort puts there.
// cmp(a, b) -> int: negative, zero or positive, as qsort's comparator.
template <typename T, typename Compare>
void PartialQuicksort(std::vector<T>& v, size_t lrange, size_t rrange, Compare cmp) {
  partial_quicksort_detail::Sort(v, 0, v.size(), cmp, lrange, rrange);
}

}  // namespace kvlab
