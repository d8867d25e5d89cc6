#pragma once
// Index arithmetic shared by the diagonal formats, usable on the host and in kernels.
//
// An ordinary diagonal is named by its offset d = column - row: 0 is the main diagonal, d > 0 a
// superdiagonal, d < 0 a subdiagonal. Along diagonal d the element (i, j) sits at position
// min(i, j), so an element keeps its position when the matrix is transposed (and d becomes -d):
// that is what lets products read A^T without moving data.
//
// A compact diagonal k (0 <= k < n, square matrices only) holds superdiagonal k followed by
// subdiagonal n - k; its entry p is element (p, (p + k) mod n).

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::diagonal::detail {

using index_type = std::int64_t;

/// Length of diagonal d of a rows x cols matrix; 0 when the diagonal lies outside it.
KOKKOS_INLINE_FUNCTION index_type diagonal_length(index_type rows, index_type cols, index_type d) {
  const index_type len =
      d >= 0 ? (rows < cols - d ? rows : cols - d) : (rows + d < cols ? rows + d : cols);
  return len > 0 ? len : 0;
}

/// Sum of min(y, cap) over y = 1, ..., count (count >= 0, cap >= 0).
KOKKOS_INLINE_FUNCTION index_type sum_of_capped(index_type count, index_type cap) {
  return count <= cap ? count * (count + 1) / 2 : cap * (cap + 1) / 2 + (count - cap) * cap;
}

/// Values in diagonals lo, lo + 1, ..., d - 1 of a rows x cols matrix, for
/// 1 - rows <= lo <= d <= cols: where diagonal d starts when every diagonal from lo on is
/// stored (diagonal_starts of a band), in O(1).
KOKKOS_INLINE_FUNCTION index_type band_diagonal_start(index_type rows, index_type cols,
                                                      index_type lo, index_type d) {
  // Values in the diagonals before d, counted from the lowest, 1 - rows: the subdiagonals
  // x < 0 hold min(rows + x, cols), the others min(rows, cols - x).
  const auto before = [rows, cols](index_type x) {
    return x <= 0 ? sum_of_capped(rows + x - 1, cols)
                  : sum_of_capped(rows - 1, cols) + sum_of_capped(cols, rows) -
                        sum_of_capped(cols - x, rows);
  };
  return before(d) - before(lo);
}

/// Row of the element at position p of diagonal d.
KOKKOS_INLINE_FUNCTION index_type row_of(index_type d, index_type p) {
  return d >= 0 ? p : p - d;
}

/// Column of the element at position p of diagonal d.
KOKKOS_INLINE_FUNCTION index_type col_of(index_type d, index_type p) {
  return d >= 0 ? p + d : p;
}

/// Position of element (i, j) along its diagonal j - i.
KOKKOS_INLINE_FUNCTION index_type position_of(index_type i, index_type j) {
  return i < j ? i : j;
}

/// Compact diagonal that holds ordinary diagonal d of an n x n matrix.
KOKKOS_INLINE_FUNCTION int compact_of(int d, int n) {
  return d >= 0 ? d : d + n;
}

/// (a mod n) for a in (-n, 2n).
KOKKOS_INLINE_FUNCTION int wrap(int a, int n) {
  return a >= n ? a - n : (a < 0 ? a + n : a);
}

/// Position of `value` among the n ascending values get(0), ..., get(n - 1), or -1.
template <class Get>
KOKKOS_INLINE_FUNCTION int find_ascending(int n, int value, const Get& get) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    const int v = get(mid);
    if (v == value) return mid;
    if (v < value)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

}  // namespace nearsparse::diagonal::detail
