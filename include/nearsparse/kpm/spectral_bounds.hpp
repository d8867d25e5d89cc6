#pragma once
// Intervals holding the spectrum of a Hermitian matrix, to scale it for the Chebyshev expansion:
// Gershgorin's discs (a guaranteed enclosure from one pass over the entries) and a few Lanczos
// steps (a tighter estimate: the extreme Ritz values widened by their residual norms, clipped to
// the Gershgorin interval). Both treat H as Hermitian: the diagonal's imaginary parts are ignored.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/detail/matrix_rows.hpp>
#include <nearsparse/kpm/detail/start_vectors.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>
#include <nearsparse/kpm/scaling.hpp>
#include <nearsparse/kpm/spmv.hpp>

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosBlas1_scal.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace nearsparse::kpm {

struct lanczos_options {
  /// Lanczos steps, in [1, 10000] (at most N are taken): more give tighter extreme Ritz values.
  int steps = 40;
  std::uint64_t seed = 7;  ///< of the random-phase start vector
};

namespace detail {
KOKKOS_INLINE_FUNCTION double real_part(double x) {
  return x;
}
KOKKOS_INLINE_FUNCTION double real_part(const complex_double& x) {
  return x.real();
}
KOKKOS_INLINE_FUNCTION double magnitude(double x) {
  return x < 0 ? -x : x;
}
KOKKOS_INLINE_FUNCTION double magnitude(const complex_double& x) {
  return Kokkos::abs(x);
}

/// Eigenvalues (ascending) and the last component of each normalized eigenvector of the
/// symmetric tridiagonal matrix with diagonal `alpha` and off-diagonal `beta` (src/kpm).
void tridiagonal_eigen(const std::vector<double>& alpha, const std::vector<double>& beta,
                       std::vector<double>& values, std::vector<double>& last_components);

/// Throws for a matrix the bounds cannot take (not square, invalid CRS).
template <class Exec, class Matrix>
void check_bounds_input(const Exec& exec, const Matrix& h, const char* fn) {
  if constexpr (is_crs<Matrix>::value) {
    validate_crs(exec, h, fn, "H");
  } else {
    require(h.rows() == h.cols(), fn, "H",
            nearsparse::detail::concat("is ", h.rows(), " x ", h.cols(), ", but must be square"));
  }
}
}  // namespace detail

namespace detail {
/// Row i's Gershgorin disc [Re h_ii - r_i, Re h_ii + r_i] folded into a running interval. A named
/// functor, not a lambda: in a CUDA build, an extended lambda in this header template, once two
/// translation units instantiate it, makes the Serial reduction call through a null pointer.
template <class Rows>
struct gershgorin_discs {
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Kokkos::MinMaxScalar<double>& m) const {
    const row_span s = rows.span(i);
    double centre = 0, radius = 0;
    for (int j = 0; j < s.count; ++j) {
      const std::int64_t e = s.begin + std::int64_t(j) * s.stride;
      if (rows.column(e) == i)
        centre += real_part(rows.value(e));
      else
        radius += magnitude(rows.value(e));
    }
    if (centre - radius < m.min_val) m.min_val = centre - radius;
    if (centre + radius > m.max_val) m.max_val = centre + radius;
  }
};
}  // namespace detail

/// [min_i (Re h_ii - r_i), max_i (Re h_ii + r_i)] with r_i = sum_{j != i} |h_ij|. An empty matrix
/// gives [0, 0].
template <class ExecSpace, class Matrix>
spectral_interval gershgorin_bounds(const ExecSpace& exec, const Matrix& h) {
  constexpr const char* fn = "nearsparse::kpm::gershgorin_bounds";
  detail::check_bounds_input(exec, h, fn);
  using traits = detail::matrix_traits<Matrix>;
  const int n = traits::rows(h);
  if (n == 0) return {0, 0};
  // The SELL permutation renumbers rows and columns alike, so the diagonal stays the diagonal.
  using rows_type = decltype(detail::rows_of(h));
  Kokkos::MinMaxScalar<double> interval;
  Kokkos::parallel_reduce("nearsparse::kpm::gershgorin", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                          detail::gershgorin_discs<rows_type>{detail::rows_of(h)},
                          Kokkos::MinMax<double>(interval));
  return {interval.min_val, interval.max_val};
}

/// Gershgorin interval of some rows of a matrix held on the host (global columns; the row with
/// local index i is global row row_begin + i): the union of their discs. An empty set gives an
/// empty interval (lower > upper), so intervals of several row blocks combine by min and max.
template <class Scalar>
spectral_interval gershgorin_bounds_of_rows(const host_crs<Scalar>& rows, std::int64_t row_begin) {
  spectral_interval out{std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (std::int64_t i = 0; i < rows.rows; ++i) {
    double centre = 0, radius = 0;
    for (int e = rows.row_map[std::size_t(i)]; e < rows.row_map[std::size_t(i) + 1]; ++e) {
      if (rows.columns[std::size_t(e)] == row_begin + i)
        centre += detail::real_part(rows.values[std::size_t(e)]);
      else
        radius += detail::magnitude(rows.values[std::size_t(e)]);
    }
    out.lower = std::min(out.lower, centre - radius);
    out.upper = std::max(out.upper, centre + radius);
  }
  return out;
}

/// The extreme Ritz values of a Lanczos run and their residual norms |beta_k s_k|: each interval
/// [theta - residual, theta + residual] holds an eigenvalue of H, and every Ritz value lies
/// inside the spectrum's hull: lambda_min <= lowest <= highest <= lambda_max.
struct ritz_extremes {
  double lowest = 0, highest = 0;
  double lowest_residual = 0, highest_residual = 0;
  int steps = 0;  ///< Lanczos steps taken (fewer than asked where an invariant subspace was found)
};

/// options.steps Lanczos steps on H (without reorthogonalization, which the extreme Ritz values do
/// not need) from a random-phase start vector: the extreme Ritz values and their residual norms.
/// An empty matrix gives zeros; a 1 x 1 matrix its entry.
template <class ExecSpace, class Matrix>
ritz_extremes lanczos_ritz_values(const ExecSpace& exec, const Matrix& h,
                                  const lanczos_options& options = {}) {
  constexpr const char* fn = "nearsparse::kpm::lanczos_ritz_values";
  const int steps = options.steps;
  const std::uint64_t seed = options.seed;
  require(steps >= 1 && steps <= 10000, fn, "options.steps",
          nearsparse::detail::concat("must be in [1, 10000], got ", steps));
  detail::check_bounds_input(exec, h, fn);
  using traits = detail::matrix_traits<Matrix>;
  using scalar = typename traits::scalar;
  using mem = typename ExecSpace::memory_space;
  const int n = traits::rows(h);
  if (n == 0) return {};
  using vec = Kokkos::View<scalar*, Kokkos::LayoutRight, mem>;
  vec q(std::string("nearsparse::kpm::lanczos.q"), std::size_t(n));
  vec q_prev(std::string("nearsparse::kpm::lanczos.q_prev"), std::size_t(n));
  vec z(std::string("nearsparse::kpm::lanczos.z"), std::size_t(n));
  detail::fill_start_vectors(exec, detail::as_block(q), n, seed, 0, 0, Kokkos::View<int*, mem>(),
                             false);
  exec.fence();
  KokkosBlas::scal(q, scalar(1.0 / std::sqrt(double(n))), q);
  std::vector<double> alpha, beta;
  const int k_max = std::min(steps, n);
  double beta_prev = 0;
  for (int k = 0; k < k_max; ++k) {
    spmv(exec, 1.0, h, q, 0.0, z);  // z = H q
    exec.fence();
    if (k > 0) KokkosBlas::axpy(scalar(-beta_prev), q_prev, z);
    const scalar qz = KokkosBlas::dot(q, z);
    const double a = detail::real_part(qz);
    KokkosBlas::axpy(scalar(-a), q, z);
    const double b = KokkosBlas::nrm2(z);
    alpha.push_back(a);
    beta.push_back(b);
    if (!(b > 1e-12 * std::max(1.0, std::abs(a)))) break;  // invariant subspace: exact
    Kokkos::deep_copy(q_prev, q);
    KokkosBlas::scal(q, scalar(1.0 / b), z);
    beta_prev = b;
  }
  exec.fence();
  std::vector<double> theta, last;
  const std::vector<double> off(beta.begin(), beta.end() - 1);
  detail::tridiagonal_eigen(alpha, off, theta, last);
  const double bk = beta.back();
  ritz_extremes r;
  r.lowest = theta.front();
  r.highest = theta.back();
  r.lowest_residual = std::abs(bk * last.front());
  r.highest_residual = std::abs(bk * last.back());
  r.steps = int(alpha.size());
  return r;
}

/// The extreme Ritz values of lanczos_ritz_values widened by their residual norms, intersected
/// with the Gershgorin interval.
template <class ExecSpace, class Matrix>
spectral_interval lanczos_bounds(const ExecSpace& exec, const Matrix& h,
                                 const lanczos_options& options = {}) {
  constexpr const char* fn = "nearsparse::kpm::lanczos_bounds";
  require(options.steps >= 1 && options.steps <= 10000, fn, "options.steps",
          nearsparse::detail::concat("must be in [1, 10000], got ", options.steps));
  const spectral_interval outer = gershgorin_bounds(exec, h);
  using traits = detail::matrix_traits<Matrix>;
  if (traits::rows(h) <= 1) return outer;
  const ritz_extremes r = lanczos_ritz_values(exec, h, options);
  const double lo = r.lowest - r.lowest_residual;
  const double hi = r.highest + r.highest_residual;
  return {std::max(lo, outer.lower), std::min(hi, outer.upper)};
}

}  // namespace nearsparse::kpm
