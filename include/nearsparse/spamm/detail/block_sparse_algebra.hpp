#pragma once
// Kernels of the block-sparse algebra (spamm/block_sparse_algebra.hpp): the sum alpha A + beta B
// on the union of two tile patterns, the identity, the trace and the Gershgorin bounds. Every
// kernel is a labelled RangePolicy or TeamPolicy on the caller's execution space instance and
// runs on every backend; none allocates more than O(tile rows + stored tiles * tile^2).

#include <nearsparse/spamm/detail/block_sparse_parts.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nearsparse::spamm::detail {

/// Counts of the sum's phases.
struct add_counts {
  std::int64_t tiles_before_drop = 0, tiles_dropped = 0;
  double dropped_sq = 0.0;
  std::int64_t non_finite = 0;
};

/// Tile row i of the sum: the length of the merge of the ascending column lists of A and B (of
/// those operands in use) into counts(i).
template <class MemorySpace>
struct add_count_kernel {
  bool use_a, use_b;
  Kokkos::View<std::int64_t*, MemorySpace> a_row_map;
  Kokkos::View<int*, MemorySpace> a_cols;
  Kokkos::View<std::int64_t*, MemorySpace> b_row_map;
  Kokkos::View<int*, MemorySpace> b_cols;
  Kokkos::View<std::int64_t*, MemorySpace> counts;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    std::int64_t pa = use_a ? a_row_map(i) : 0, ea = use_a ? a_row_map(i + 1) : 0;
    std::int64_t pb = use_b ? b_row_map(i) : 0, eb = use_b ? b_row_map(i + 1) : 0;
    std::int64_t n = 0;
    while (pa < ea || pb < eb) {
      if (pb >= eb || (pa < ea && a_cols(pa) < b_cols(pb))) {
        ++pa;
      } else if (pa >= ea || b_cols(pb) < a_cols(pa)) {
        ++pb;
      } else {
        ++pa;
        ++pb;
      }
      ++n;
    }
    counts(i) = n;
  }
};

/// Tile row i of the sum: the merged column list into c_cols from c_row_map(i) on, and for each
/// of its tiles the source tile in A and in B (or -1) into sources(2 q) and sources(2 q + 1).
template <class MemorySpace>
struct add_fill_kernel {
  bool use_a, use_b;
  Kokkos::View<std::int64_t*, MemorySpace> a_row_map;
  Kokkos::View<int*, MemorySpace> a_cols;
  Kokkos::View<std::int64_t*, MemorySpace> b_row_map;
  Kokkos::View<int*, MemorySpace> b_cols;
  Kokkos::View<std::int64_t*, MemorySpace> c_row_map;
  Kokkos::View<int*, MemorySpace> c_cols;
  Kokkos::View<std::int64_t*, MemorySpace> sources;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    std::int64_t pa = use_a ? a_row_map(i) : 0, ea = use_a ? a_row_map(i + 1) : 0;
    std::int64_t pb = use_b ? b_row_map(i) : 0, eb = use_b ? b_row_map(i + 1) : 0;
    std::int64_t q = c_row_map(i);
    while (pa < ea || pb < eb) {
      std::int64_t sa = -1, sb = -1;
      int j = 0;
      if (pb >= eb || (pa < ea && a_cols(pa) < b_cols(pb))) {
        j = a_cols(pa);
        sa = pa++;
      } else if (pa >= ea || b_cols(pb) < a_cols(pa)) {
        j = b_cols(pb);
        sb = pb++;
      } else {
        j = a_cols(pa);
        sa = pa++;
        sb = pb++;
      }
      c_cols(q) = j;
      sources(2 * q) = sa;
      sources(2 * q + 1) = sb;
      ++q;
    }
  }
};

/// Entry e of the sum's tile values: alpha times A's entry plus beta times B's entry at the same
/// position of the source tiles (a missing source contributes nothing).
template <class Scalar, class MemorySpace>
struct add_values_kernel {
  std::int64_t tt;
  Scalar alpha, beta;
  Kokkos::View<std::int64_t*, MemorySpace> sources;
  Kokkos::View<Scalar*, MemorySpace> a_values;
  Kokkos::View<Scalar*, MemorySpace> b_values;
  Kokkos::View<Scalar*, MemorySpace> c_values;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t p = e / tt, r = e % tt;
    const std::int64_t sa = sources(2 * p), sb = sources(2 * p + 1);
    Scalar v = Scalar(0);
    if (sa >= 0) v += alpha * a_values(sa * tt + r);
    if (sb >= 0) v += beta * b_values(sb * tt + r);
    c_values(e) = v;
  }
};

/// C_new = alpha * A + beta * B on the union of the tile patterns of the operands with a nonzero
/// coefficient (an operand with coefficient 0 is ignored, its values included), then the drop
/// rule at (tolerance, relative). `c_new` comes with rows, cols and tile set; A and B have them
/// too. C_new gets new arrays: A or B may be the old C.
template <class ExecSpace, class Scalar, class MemorySpace>
add_counts add_impl(const ExecSpace& exec, Scalar alpha,
                    const block_sparse_parts<Scalar, MemorySpace>& a, Scalar beta,
                    const block_sparse_parts<Scalar, MemorySpace>& b, double tolerance,
                    bool relative, block_sparse_parts<Scalar, MemorySpace>& c_new) {
  add_counts out;
  const int mt = c_new.tile_rows();
  const std::int64_t tt = std::int64_t(c_new.tile) * c_new.tile;
  const bool use_a = alpha != Scalar(0), use_b = beta != Scalar(0);
  c_new.row_map = bs_alloc<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(mt) + 1);
  auto counts = bs_alloc_raw<std::int64_t, MemorySpace>(exec, "nearsparse::spamm::add::counts",
                                                        std::size_t(mt));
  const auto a_row_map = a.row_map;
  const auto a_cols = a.cols_idx;
  const auto b_row_map = b.row_map;
  const auto b_cols = b.cols_idx;
  // Per tile row: the length of the merge of the two ascending column lists.
  if (mt > 0) {
    Kokkos::parallel_for(
        "nearsparse::spamm::add::count", Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
        add_count_kernel<MemorySpace>{use_a, use_b, a_row_map, a_cols, b_row_map, b_cols, counts});
  }
  const auto c_row_map = c_new.row_map;
  const std::int64_t n_c =
      exclusive_scan(exec, "nearsparse::spamm::add::scan", counts, c_row_map, mt);
  constexpr std::int64_t int_max = 2147483647;
  nearsparse::require(n_c <= int_max, "nearsparse::spamm::add", "C",
                      nearsparse::detail::concat("would have ", n_c, " tiles; at most ", int_max,
                                                 " are supported"));
  allocate_tiles(exec, c_new, n_c);
  const auto c_cols = c_new.cols_idx;
  const auto c_values = c_new.values;
  out.tiles_before_drop = n_c;
  if (n_c == 0) return out;
  // Source tiles of every tile of C: its tile in A and in B, or -1.
  auto sources = bs_alloc_raw<std::int64_t, MemorySpace>(exec, "nearsparse::spamm::add::sources",
                                                         2 * std::size_t(n_c));
  Kokkos::parallel_for("nearsparse::spamm::add::fill", Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
                       add_fill_kernel<MemorySpace>{use_a, use_b, a_row_map, a_cols, b_row_map,
                                                    b_cols, c_row_map, c_cols, sources});
  const auto a_values = a.values;
  const auto b_values = b.values;
  Kokkos::parallel_for(
      "nearsparse::spamm::add::values",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n_c * tt),
      add_values_kernel<Scalar, MemorySpace>{tt, alpha, beta, sources, a_values, b_values,
                                             c_values});
  compute_tile_norms(exec, c_new);
  const double norm_sq = sum_of_squares(exec, c_new.norms, out.non_finite);
  if (out.non_finite > 0) return out;
  out.dropped_sq =
      compact(exec, c_new, drop_threshold(tolerance, relative, norm_sq), out.tiles_dropped);
  exec.fence();
  return out;
}

/// Entry i of the identity's row map (i for i <= mt) and, for tile row i < mt, its one diagonal
/// tile: column index col0 + i and norm sqrt(number of its diagonal entries inside the n rows).
template <class MemorySpace>
struct identity_structure_kernel {
  int mt, n, tile;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols;
  Kokkos::View<double*, MemorySpace> norms;
  int col0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    row_map(i) = i;
    if (i < mt) {
      cols(i) = col0 + i;
      const int inside = (i + 1) * tile <= n ? tile : n - i * tile;
      norms(i) = ::sqrt(static_cast<double>(inside));
    }
  }
};

/// Entry e of the identity's diagonal tiles: 1 on the diagonal inside the n x n matrix, else 0.
template <class Scalar, class MemorySpace>
struct identity_values_kernel {
  int n, tile;
  std::int64_t tt;
  Kokkos::View<Scalar*, MemorySpace> values;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t p = e / tt;
    const int r = static_cast<int>((e % tt) / tile), c = static_cast<int>(e % tile);
    values(e) = (r == c && p * tile + r < n) ? Scalar(1) : Scalar(0);
  }
};

/// The n x n identity in tiles of `tile` into m (rows, cols and tile set by the caller); with
/// col0 > 0, rows [col0 * tile, col0 * tile + m.rows) of a larger identity (m.rows x m.cols).
template <class ExecSpace, class Scalar, class MemorySpace>
void identity_impl(const ExecSpace& exec, block_sparse_parts<Scalar, MemorySpace>& m,
                   int col0 = 0) {
  const int mt = m.tile_rows(), n = m.rows, tile = m.tile;
  const std::int64_t tt = std::int64_t(tile) * tile;
  m.row_map = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(mt) + 1);
  allocate_tiles(exec, m, mt);
  m.dropped_norm = 0.0;
  const auto row_map = m.row_map;
  const auto cols = m.cols_idx;
  const auto norms = m.norms;
  const auto values = m.values;
  Kokkos::parallel_for(
      "nearsparse::spamm::identity_structure", Kokkos::RangePolicy<ExecSpace>(exec, 0, mt + 1),
      identity_structure_kernel<MemorySpace>{mt, n, tile, row_map, cols, norms, col0});
  if (mt > 0) {
    Kokkos::parallel_for("nearsparse::spamm::identity_values",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                             exec, 0, std::int64_t(mt) * tt),
                         identity_values_kernel<Scalar, MemorySpace>{n, tile, tt, values});
  }
  exec.fence();
}

/// Diagonal entry i of the square matrix, from its stored diagonal tile (none: 0), added to s;
/// with col0 > 0, of rows starting at tile row col0 of a larger matrix (its diagonal tile of
/// tile row ti at tile column col0 + ti).
template <class Scalar, class MemorySpace>
struct trace_kernel {
  int tile;
  std::int64_t tt;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols;
  Kokkos::View<Scalar*, MemorySpace> values;
  int col0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& s) const {
    const int ti = i / tile, r = i % tile;
    const std::int64_t p = find_tile(cols, row_map(ti), row_map(ti + 1), col0 + ti);
    if (p >= 0) s += static_cast<double>(values(p * tt + r * tile + r));
  }
};

/// Sum of the diagonal entries of the stored diagonal tiles of the square m (waits); with
/// col0 > 0, of m's rows as rows col0 * tile on of a larger matrix.
template <class ExecSpace, class Scalar, class MemorySpace>
double trace_impl(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                  int col0 = 0) {
  const int n = m.rows, tile = m.tile;
  const std::int64_t tt = std::int64_t(tile) * tile;
  double sum = 0.0;
  if (n == 0 || m.cols_idx.extent(0) == 0) return sum;
  const auto row_map = m.row_map;
  const auto cols = m.cols_idx;
  const auto values = m.values;
  Kokkos::parallel_reduce("nearsparse::spamm::trace", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                          trace_kernel<Scalar, MemorySpace>{tile, tt, row_map, cols, values, col0},
                          sum);
  exec.fence();
  return sum;
}

/// Row i of the square m: its diagonal entry and the sum of the magnitudes of its other entries,
/// over the stored tiles of its tile row (row0 + i of a larger matrix whose rows from row0 on m
/// holds). Columns past the matrix hold zeros in edge tiles, so summing the whole tile row is
/// exact.
template <class RowMap, class Cols, class Values>
KOKKOS_INLINE_FUNCTION void gershgorin_row(const RowMap& row_map, const Cols& cols,
                                           const Values& values, int tile, int i, int row0,
                                           double& diag, double& off) {
  const std::int64_t tt = std::int64_t(tile) * tile;
  const int ti = i / tile, r = i % tile;
  diag = 0.0;
  off = 0.0;
  for (std::int64_t p = row_map(ti); p < row_map(ti + 1); ++p) {
    const auto* row = values.data() + p * tt + std::int64_t(r) * tile;
    const int base = cols(p) * tile;
    for (int c = 0; c < tile; ++c) {
      const double v = static_cast<double>(row[c]);
      if (base + c == row0 + i) {
        diag = v;
      } else {
        off += v < 0 ? -v : v;
      }
    }
  }
}

/// Lower end a_ii - sum_(j != i) |a_ij| of row i's Gershgorin disc folded into a running minimum.
template <class Scalar, class MemorySpace>
struct gershgorin_lower_kernel {
  int tile;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols;
  Kokkos::View<Scalar*, MemorySpace> values;
  int row0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& s) const {
    double diag = 0.0, off = 0.0;
    gershgorin_row(row_map, cols, values, tile, i, row0, diag, off);
    if (diag - off < s) s = diag - off;
  }
};

/// Upper end a_ii + sum_(j != i) |a_ij| of row i's Gershgorin disc folded into a running maximum.
template <class Scalar, class MemorySpace>
struct gershgorin_upper_kernel {
  int tile;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols;
  Kokkos::View<Scalar*, MemorySpace> values;
  int row0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& s) const {
    double diag = 0.0, off = 0.0;
    gershgorin_row(row_map, cols, values, tile, i, row0, diag, off);
    if (diag + off > s) s = diag + off;
  }
};

/// Gershgorin bounds of the square m: the smallest a_ii - sum_(j != i) |a_ij| and the largest
/// a_ii + sum_(j != i) |a_ij| over the rows, from the stored tiles (waits). n > 0. With row0 > 0,
/// over m's rows as rows row0 on of a larger matrix.
template <class ExecSpace, class Scalar, class MemorySpace>
void gershgorin_impl(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                     double& lower, double& upper, int row0 = 0) {
  const int n = m.rows, tile = m.tile;
  const auto row_map = m.row_map;
  const auto cols = m.cols_idx;
  const auto values = m.values;
  double lo = 0.0, hi = 0.0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::gershgorin_lower", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      gershgorin_lower_kernel<Scalar, MemorySpace>{tile, row_map, cols, values, row0},
      Kokkos::Min<double>(lo));
  Kokkos::parallel_reduce(
      "nearsparse::spamm::gershgorin_upper", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      gershgorin_upper_kernel<Scalar, MemorySpace>{tile, row_map, cols, values, row0},
      Kokkos::Max<double>(hi));
  exec.fence();
  lower = lo;
  upper = hi;
}

}  // namespace nearsparse::spamm::detail
