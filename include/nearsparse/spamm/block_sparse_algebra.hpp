#pragma once
// Algebra on block-sparse SpAMM matrices (spamm/block_sparse.hpp): sums, the identity, the
// trace, the Frobenius norm and Gershgorin bounds, all on the stored tiles, without a dense array.
//
// What.
//   add(exec, alpha, A, beta, B, C, opts)  C = alpha A + beta B on the union of the tile patterns
//                                          of A and B, then the drop rule of opts on C's tiles
//   identity<Scalar>(exec, n, tile)        the n x n identity: the diagonal tiles only
//   trace(exec, A)                         sum of the diagonal entries (square A)
//   frobenius_norm(exec, A)                ||A||_F of the stored tiles, from their norms
//   gershgorin_bounds(exec, A)             {lower, upper}: every eigenvalue of a symmetric A lies
//                                          in [min_i a_ii - r_i, max_i a_ii + r_i],
//                                          r_i = sum_(j != i) |a_ij| (square A; {0, 0} if empty)
//
//   auto I = nearsparse::spamm::identity<double>(exec, H.rows(), H.tile());
//   nearsparse::spamm::block_sparse_matrix<double, Exec> X;          // C may be unallocated
//   nearsparse::spamm::block_sparse_add_options aopt;
//   aopt.drop_tolerance = 1e-10;                                       // relative to ||X||_F
//   nearsparse::spamm::add(exec, 2.0, I, -0.5, H, X, aopt);           // X = 2 I - H / 2
//   const auto b = nearsparse::spamm::gershgorin_bounds(exec, H);      // b.lower, b.upper
//
// Algorithm of add. Per tile row, the two ascending tile column lists are merged twice: once to
// count C's tiles of the row, then (after an exclusive scan of the counts into C's row_map) to
// write C's column indices and, for each tile of C, its source tiles in A and B. One thread per
// element of C's tiles then forms alpha a + beta b; the tile norms are recomputed and the drop
// rule of the options (as in block_sparse_multiply_options: drop_tolerance, absolute or relative
// to the result's ||C||_F) removes tiles. An operand whose coefficient is 0 is ignored (its
// tiles, values and dropped norm), as multiply ignores C when beta == 0.
//
// Error. The sum of the stored tiles is exact up to the rounding of one multiply-add per element.
// C.dropped_norm() = |alpha| A.dropped_norm() + |beta| B.dropped_norm() + (the norm of the tiles
// the drop rule removed from C, report.dropped_norm): by the triangle inequality it bounds the
// norm of everything dropped from C, at the construction of A and B and since, against
// alpha A_full + beta B_full.
//
// Complexity and memory. add: O(tile rows + tiles of A + tiles of B) for the merges and
// O(tiles of C * tile^2) for the values and norms; memory O(tile rows + tiles of C * tile^2)
// (two int64 source indices per tile of C while it runs). identity: O(n * tile) work and memory
// (tile_rows tiles). trace: O(n log(tiles per row)). frobenius_norm: O(stored tiles).
// gershgorin_bounds: O(rows * stored tiles of the row's tile row * tile) = O(stored tiles *
// tile^2). No array of all tile_rows x tile_cols tiles and no dense rows x cols array anywhere.
//
// Every function takes the execution space instance first and runs all its kernels and
// allocations on it; each waits for it before returning. Arguments are checked on entry:
// nearsparse::invalid_argument names the function, the argument and the extents involved.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/detail/block_sparse_algebra.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace nearsparse::spamm {

// The dense frobenius_norm stays visible next to the block-sparse overload below, for callers in
// this namespace that pass a View.
using nearsparse::frobenius_norm;

/// Options of add on block-sparse matrices.
struct block_sparse_add_options {
  /// The drop rule applied to the result's tiles (relative: to the result's ||C||_F); 0 drops
  /// only the tiles that are exactly zero.
  double drop_tolerance = 0.0;
  drop_rule rule = drop_rule::relative;
};

/// What one block-sparse add did.
struct block_sparse_add_report {
  std::int64_t tiles_kept = 0;     ///< tiles of C after the drop rule
  std::int64_t tiles_dropped = 0;  ///< tiles of the union the drop rule removed (zero ones too)
  /// Frobenius norm of the tiles the drop rule removed from the result.
  double dropped_norm = 0.0;
};

namespace detail {

template <class Scalar, class ExecSpace>
void require_square(const char* fn, const char* argument,
                    const block_sparse_matrix<Scalar, ExecSpace>& m) {
  require(
      m.rows() == m.cols(), fn, argument,
      nearsparse::detail::concat("has extents ", m.rows(), " x ", m.cols(), "; it must be square"));
}

}  // namespace detail

/// C = alpha * A + beta * B on the union of the tile patterns, then the drop rule of the options
/// (see the top of this header). A and B must have the same extents and tile; C either has them
/// too or is default-constructed (no arrays). C may be A or B: it gets new arrays, and keeps its
/// old ones when an argument is refused or the result is not finite.
template <class Scalar, class ExecSpace>
block_sparse_add_report add(const ExecSpace& exec,
                            typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type alpha,
                            const block_sparse_matrix<Scalar, ExecSpace>& a,
                            typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type beta,
                            const block_sparse_matrix<Scalar, ExecSpace>& b,
                            block_sparse_matrix<Scalar, ExecSpace>& c,
                            const block_sparse_add_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::add";
  a.check_structure(fn, "A");
  b.check_structure(fn, "B");
  require(b.rows() == a.rows() && b.cols() == a.cols(), fn, "B",
          nearsparse::detail::concat("has extents ", b.rows(), " x ", b.cols(), ", but A has ",
                                     a.rows(), " x ", a.cols(), "; they must be equal"));
  require(b.tile() == a.tile(), fn, "B",
          nearsparse::detail::concat("(", detail::describe(b), ") has tile ", b.tile(), ", but A (",
                                     detail::describe(a), ") has tile ", a.tile()));
  if (c.is_allocated()) {
    c.check_structure(fn, "C");
    require(c.rows() == a.rows() && c.cols() == a.cols(), fn, "C",
            nearsparse::detail::concat("has extents ", c.rows(), " x ", c.cols(), ", expected ",
                                       a.rows(), " x ", a.cols(), " (A and B are ", a.rows(), " x ",
                                       a.cols(), ")"));
    require(c.tile() == a.tile(), fn, "C",
            nearsparse::detail::concat("(", detail::describe(c), ") has tile ", c.tile(),
                                       ", but A (", detail::describe(a), ") has tile ", a.tile()));
  }
  require(std::isfinite(double(alpha)), fn, "alpha",
          nearsparse::detail::concat("is ", double(alpha), "; it must be finite"));
  require(std::isfinite(double(beta)), fn, "beta",
          nearsparse::detail::concat("is ", double(beta), "; it must be finite"));
  require_nonnegative(fn, "options.drop_tolerance", options.drop_tolerance);
  detail::require_drop_rule(fn, "options.rule", options.rule);
  {
    std::int64_t bad = 0;
    if (alpha != Scalar(0)) {
      detail::sum_of_squares(exec, a.norms(), bad);
      detail::require_non_finite_free(fn, "A", bad, detail::describe(a));
    }
    if (beta != Scalar(0)) {
      detail::sum_of_squares(exec, b.norms(), bad);
      detail::require_non_finite_free(fn, "B", bad, detail::describe(b));
    }
  }
  typename block_sparse_matrix<Scalar, ExecSpace>::parts_type result;
  result.rows = a.rows();
  result.cols = a.cols();
  result.tile = a.tile();
  const detail::add_counts counts =
      detail::add_impl(exec, Scalar(alpha), a.parts(), Scalar(beta), b.parts(),
                       options.drop_tolerance, options.rule == drop_rule::relative, result);
  exec.fence();
  require(counts.non_finite == 0, fn, "C",
          nearsparse::detail::concat("= alpha * A + beta * B (A: ", detail::describe(a),
                                     "; B: ", detail::describe(b), ") has non-finite values in ",
                                     counts.non_finite, " tiles (overflow)"));
  const double removed = std::sqrt(counts.dropped_sq);
  result.dropped_norm = removed +
                        (alpha != Scalar(0) ? std::abs(double(alpha)) * a.dropped_norm() : 0.0) +
                        (beta != Scalar(0) ? std::abs(double(beta)) * b.dropped_norm() : 0.0);
  block_sparse_add_report report;
  report.tiles_dropped = counts.tiles_dropped;
  report.tiles_kept = counts.tiles_before_drop - counts.tiles_dropped;
  report.dropped_norm = removed;
  c.assign(result, fn, "C");
  return report;
}

/// The n x n identity with tiles of `tile` (8, 16, 32, 64 or 128): the tile_rows diagonal tiles;
/// in the edge tile only the diagonal entries inside the matrix are 1.
template <class Scalar = double, class ExecSpace>
block_sparse_matrix<Scalar, ExecSpace> identity(const ExecSpace& exec, int n, int tile = 64) {
  constexpr const char* fn = "nearsparse::spamm::identity";
  require(n >= 0, fn, "n", nearsparse::detail::concat("is ", n, "; it must be >= 0"));
  detail::require_block_sparse_extent(fn, "n", std::size_t(n), std::size_t(n));
  detail::require_block_sparse_tile(fn, "tile", tile);
  typename block_sparse_matrix<Scalar, ExecSpace>::parts_type parts;
  parts.rows = n;
  parts.cols = n;
  parts.tile = tile;
  detail::identity_impl(exec, parts);
  block_sparse_matrix<Scalar, ExecSpace> m;
  m.assign(parts, fn, "n");
  return m;
}

/// The trace of the square A: the sum of the diagonal entries of its stored diagonal tiles,
/// accumulated in double.
template <class Scalar, class ExecSpace>
double trace(const ExecSpace& exec, const block_sparse_matrix<Scalar, ExecSpace>& a) {
  constexpr const char* fn = "nearsparse::spamm::trace";
  a.check_structure(fn, "A");
  detail::require_square(fn, "A", a);
  return detail::trace_impl(exec, a.parts());
}

/// ||A||_F of the stored tiles: the square root of the sum of the squared tile norms (what the
/// drop rule removed is not included; A.dropped_norm() bounds it).
template <class Scalar, class ExecSpace>
double frobenius_norm(const ExecSpace& exec, const block_sparse_matrix<Scalar, ExecSpace>& a) {
  constexpr const char* fn = "nearsparse::spamm::frobenius_norm";
  a.check_structure(fn, "A");
  std::int64_t bad = 0;
  const double sq = detail::sum_of_squares(exec, a.norms(), bad);
  exec.fence();
  return std::sqrt(sq);
}

/// Gershgorin bounds of the square A from its stored tiles: lower = min_i (a_ii - r_i), upper =
/// max_i (a_ii + r_i), r_i = sum_(j != i) |a_ij|; {0, 0} for an empty A. For a symmetric A every
/// eigenvalue lies in [lower, upper].
template <class Scalar, class ExecSpace>
spectral_bounds gershgorin_bounds(const ExecSpace& exec,
                                  const block_sparse_matrix<Scalar, ExecSpace>& a) {
  constexpr const char* fn = "nearsparse::spamm::gershgorin_bounds";
  a.check_structure(fn, "A");
  detail::require_square(fn, "A", a);
  spectral_bounds b;
  if (a.rows() == 0) return b;
  detail::gershgorin_impl(exec, a.parts(), b.lower, b.upper);
  return b;
}

}  // namespace nearsparse::spamm
