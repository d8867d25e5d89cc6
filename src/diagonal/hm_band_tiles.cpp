// Host side of the band tiles: the operands' ranges and when the tiles pay
// (include/nearsparse/diagonal/detail/hm_band_tiles.hpp).
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>

#include <algorithm>

namespace nearsparse::diagonal::detail {

hm_band_range hm_band_range_of(const std::vector<int>& stored_offsets, bool transposed) {
  hm_band_range r;
  if (stored_offsets.empty()) return r;
  r.count = int(stored_offsets.size());
  r.lo = transposed ? -stored_offsets.back() : stored_offsets.front();
  r.hi = transposed ? -stored_offsets.front() : stored_offsets.back();
  return r;
}

double hm_band_tile_work(int m, int k, int n, const hm_band_range& a, const hm_band_range& b,
                         const hm_band_range& c) {
  if (m <= 0 || n <= 0 || k <= 0 || a.count == 0 || b.count == 0 || c.count == 0) return 0;
  constexpr int t = hm_band_tile, s = hm_band_slice;
  double work = 0;
  // The kernel's grid: for each row tile, the column tiles that meet C's range of offsets.
  for (int i0 = 0; i0 < m; i0 += t) {
    const int i1 = std::min(i0 + t, m) - 1;
    const int first = std::max(0, i0 + c.lo) / t;
    const int last = std::min(n - 1, i1 + c.hi);
    for (int k0 = first * t; k0 <= last; k0 += t) {
      const int k1 = std::min(k0 + t, n) - 1;
      const int jlo = std::max({i0 + a.lo, k0 - b.hi, 0});
      const int jhi = std::min({i1 + a.hi, k1 - b.lo, k - 1});
      if (jhi >= jlo) work += double(t) * t * s * ((jhi - jlo) / s + 1);
    }
  }
  return work;
}

bool hm_band_tiles_fit(const hm_band_range& a, const hm_band_range& b, const hm_band_range& c) {
  return a.count > 0 && b.count > 0 && c.count > 0 &&
         double(a.span()) + b.span() + c.span() <= hm_band_max_range;
}

bool hm_band_tiles_pay(int m, int k, int n, const hm_band_range& a, const hm_band_range& b,
                       const hm_band_range& c, double multiply_adds) {
  if (!hm_band_tiles_fit(a, b, c)) return false;
  if (2 * a.count < a.span() || 2 * b.count < b.span()) return false;
  if (multiply_adds < hm_band_min_multiply_adds) return false;
  return hm_band_tile_work(m, k, n, a, b, c) <= hm_band_max_waste * multiply_adds;
}

}  // namespace nearsparse::diagonal::detail
