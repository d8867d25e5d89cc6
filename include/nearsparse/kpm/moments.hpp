#pragma once
// Chebyshev moments mu_n = tr T_n(H~) / N of a scaled Hermitian matrix, estimated over R start
// vectors (the stochastic trace), by the paper's three algorithms:
//
//   auto s = kpm::scaling_for(kpm::gershgorin_bounds(exec, H));
//   kpm::moments_options o;  o.num_moments = 2000;  o.num_vectors = 32;
//   kpm::chebyshev_moments m = kpm::moments(exec, H, s, o);  // aug_spmmv unless o.method says so
//   kpm::dos_curve dos = kpm::density_of_states(m, {});     // Jackson kernel, Chebyshev grid
//
// Every stage keeps the dot products on the device for the whole recurrence and reads them back
// once at the end (the naive stage reads each BLAS-1 result, as Figure 3 does).

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/detail/aligned_block.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/eta.hpp>
#include <nearsparse/kpm/detail/matrix_rows.hpp>
#include <nearsparse/kpm/detail/start_vectors.hpp>
#include <nearsparse/kpm/scaling.hpp>
#include <nearsparse/kpm/sell_matrix.hpp>
#include <nearsparse/kpm/spmv.hpp>

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosBlas1_scal.hpp>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace nearsparse::kpm {

namespace detail {

template <class Exec, class Scalar>
using block_view = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Exec::memory_space>;

/// Checks shared by every moment entry point; returns the recurrence steps ceil(M / 2).
template <class Exec, class Matrix>
int check_moment_inputs(const Exec& exec, const Matrix& h, const scaling& s,
                        const moments_options& o, int R, const char* fn) {
  using traits = matrix_traits<Matrix>;
  using nearsparse::detail::concat;
  if constexpr (is_crs<Matrix>::value) {
    validate_crs(exec, h, fn, "H");
  } else {
    require(h.rows() == h.cols(), fn, "H",
            concat("is ", h.rows(), " x ", h.cols(), ", but must be square"));
  }
  require_valid(s, fn);
  require(o.num_moments >= 2, fn, "options.num_moments",
          concat("must be at least 2, got ", o.num_moments));
  require(R >= 1, fn, "options.num_vectors",
          concat("must be at least 1 (R random start vectors), got ", R, " for H of ",
                 traits::rows(h), " x ", traits::cols(h)));
  nearsparse::detail::require_valid(fn, "options.implementation", o.implementation);
  check_tuning(o.tuning, R, fn);
  return (o.num_moments + 1) / 2;
}

/// Steps 0 .. steps-1 of the recurrence with the fused kernel on a block: X holds v_0 on entry.
template <class Exec, class Rows, class Block, class Eta>
void fused_recurrence(const Exec& exec, const Rows& rows, int n, Block x, Block y, const Eta& eta,
                      const scaling& s, int steps, const std::function<void(int, int)>& progress,
                      int progress_base, int progress_total, const aug_settings& settings) {
  const double a = s.a, b = s.b;
  aug_spmmv(exec, "nearsparse::kpm::aug_spmmv", rows, 0, n, x, y, aug_coefficients{a, -a * b, 0.0},
            true, eta, 0, settings);
  if (progress) progress(progress_base + 1, progress_total);
  for (int step = 1; step < steps; ++step) {
    aug_spmmv(exec, "nearsparse::kpm::aug_spmmv", rows, 0, n, y, x,
              aug_coefficients{2 * a, -2 * a * b, -1.0}, true, eta, step, settings);
    std::swap(x, y);
    if (progress) progress(progress_base + step + 1, progress_total);
  }
}

/// One step of Figure 3 on single vectors, v = v_m and w = v_{m-1} on entry, w = v_{m+1} on
/// exit (first: v = v_0 and w = v_1 = a (H - b) v_0): spmv, then axpy, scal, axpy, nrm2, dot, each
/// a Kokkos Kernels BLAS-1 call on the default instance of the space. Returns <v|v>, Re <w|v>.
template <class Exec, class Matrix, class Vec>
std::pair<double, double> naive_step(const Exec& exec, const Matrix& h, const Vec& v, const Vec& w,
                                     const Vec& u, const scaling& s, bool first,
                                     const aug_settings& settings = {}) {
  using scalar = typename Vec::non_const_value_type;
  apply_matrix(exec, 1.0, h, v, 0.0, u, settings);  // u = H v
  exec.fence();
  KokkosBlas::axpy(scalar(-s.b), v, u);  // u = u - b v
  if (first) {
    KokkosBlas::scal(w, scalar(s.a), u);  // w = a u
  } else {
    KokkosBlas::scal(w, scalar(-1), w);       // w = -w
    KokkosBlas::axpy(scalar(2 * s.a), u, w);  // w = w + 2a u
  }
  const double vv = KokkosBlas::nrm2(v);
  const scalar wv = KokkosBlas::dot(w, v);
  if constexpr (std::is_same_v<scalar, double>)
    return {vv * vv, wv};
  else
    return {vv * vv, wv.real()};
}

/// Figure 3 for one start vector: fills the host eta column r.
template <class Exec, class Matrix, class Vec>
void naive_recurrence(const Exec& exec, const Matrix& h, Vec v, Vec w, const Vec& u,
                      const scaling& s, int steps, std::vector<double>& eta, int R, int r,
                      const std::function<void(int, int)>& progress, int progress_base,
                      int progress_total, const aug_settings& settings) {
  exec.fence();  // Kokkos Kernels' BLAS-1 runs on the default instance of the space
  for (int step = 0; step < steps; ++step) {
    if (step > 0) std::swap(v, w);  // v = v_m, w = v_{m-1}
    const auto [vv, wv] = naive_step(exec, h, v, w, u, s, step == 0, settings);
    eta[std::size_t(2 * step) * R + r] = vv;
    eta[std::size_t(2 * step + 1) * R + r] = wv;
    if (progress) progress(progress_base + step + 1, progress_total);
  }
}

template <class Exec, class Matrix, class Start>
chebyshev_moments run_moments(const Exec& exec, const Matrix& h, const scaling& s,
                              const moments_options& o, int R, Start&& fill_start, const char* fn) {
  using traits = matrix_traits<Matrix>;
  using scalar = typename traits::scalar;
  using mem = typename Exec::memory_space;
  static_assert(is_kpm_scalar_v<scalar>,
                "nearsparse::kpm: the matrix scalar must be double or Kokkos::complex<double>");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename traits::memory_space>::accessible,
                "nearsparse::kpm: the execution space cannot reach the matrix's memory");
  const int steps = check_moment_inputs(exec, h, s, o, R, fn);
  const int n = traits::rows(h);
  const auto rows = rows_of(h);
  aug_settings settings;
  settings.function = fn;
  settings.implementation = o.implementation;
  settings.tuning = o.tuning;
  if (o.method != algorithm::naive) settings = aug_period(exec, rows, settings);
  std::vector<double> eta(std::size_t(2 * steps) * R, 0.0);

  exec.fence();
  const auto t0 = std::chrono::steady_clock::now();
  if (o.method == algorithm::aug_spmmv) {
    const aligned_block<scalar, mem> x("nearsparse::kpm::V", std::size_t(n), std::size_t(R));
    const aligned_block<scalar, mem> y("nearsparse::kpm::W", std::size_t(n), std::size_t(R));
    Kokkos::View<double**, Kokkos::LayoutRight, mem> d_eta(std::string("nearsparse::kpm::eta"),
                                                           std::size_t(2 * steps), std::size_t(R));
    fill_start(x.view, 0);
    fused_recurrence(exec, rows, n, x.view, y.view, d_eta, s, steps, o.progress, 0, steps,
                     settings);
    auto h_eta = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_eta);
    std::copy(h_eta.data(), h_eta.data() + eta.size(), eta.begin());
  } else if (o.method == algorithm::aug_spmv) {
    block_view<Exec, scalar> x(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::kpm::v")),
        std::size_t(n), 1);
    block_view<Exec, scalar> y(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::kpm::w")),
        std::size_t(n), 1);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> d_eta(std::string("nearsparse::kpm::eta"),
                                                           std::size_t(2 * steps), std::size_t(R));
    for (int r = 0; r < R; ++r) {
      fill_start(x, r);
      fused_recurrence(exec, rows, n, x, y,
                       Kokkos::subview(d_eta, Kokkos::ALL, std::make_pair(r, r + 1)), s, steps,
                       o.progress, r * steps, R * steps, settings);
    }
    auto h_eta = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_eta);
    std::copy(h_eta.data(), h_eta.data() + eta.size(), eta.begin());
  } else {
    using vec = Kokkos::View<scalar*, Kokkos::LayoutRight, mem>;
    vec v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::kpm::v")),
          std::size_t(n));
    vec w(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::kpm::w")),
          std::size_t(n));
    vec u(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::kpm::u")),
          std::size_t(n));
    for (int r = 0; r < R; ++r) {
      fill_start(as_block(v), r);
      naive_recurrence(exec, h, v, w, u, s, steps, eta, R, r, o.progress, r * steps, R * steps,
                       settings);
    }
  }
  exec.fence();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return finish_moments(
      eta, {o.num_moments, R, steps, n, traits::nonzeros(h), s, o.method, seconds}, fn);
}

}  // namespace detail

/// Moments of H~ = s.a (H - s.b) over o.num_vectors random-phase start vectors. H is a CRS or a
/// SELL-C-sigma matrix of double or complex<double>, Hermitian; runs on `exec`. Throws
/// nearsparse::invalid_argument for a non-square or invalid H, M < 2, R < 1, a bad scaling, or a
/// scaling that leaves part of the spectrum outside [-1, 1] (detected from the moments), or a
/// tuning the CUDA kernel cannot take; nearsparse::unsupported for implementation::specialized
/// where the CUDA kernel cannot serve the call.
template <class ExecSpace, class Matrix>
chebyshev_moments moments(const ExecSpace& exec, const Matrix& h, const scaling& s,
                          const moments_options& o) {
  constexpr const char* fn = "nearsparse::kpm::moments";
  const auto seed = o.seed;
  auto fill = [&](const auto& block, int r0) {
    if constexpr (detail::is_sell<Matrix>::value)
      detail::fill_start_vectors(exec, block, h.rows(), seed, 0, r0, h.permutation(), true);
    else
      detail::fill_start_vectors(exec, block, int(h.numRows()), seed, 0, r0,
                                 Kokkos::View<int*, typename ExecSpace::memory_space>(), false);
  };
  return detail::run_moments(exec, h, s, o, o.num_vectors, fill, fn);
}

/// Moments over the user's start vectors: the columns of `start` (N x R, in H's row order; for a
/// SELL matrix the permuted order). A block of all N unit vectors gives the exact trace.
template <class ExecSpace, class Matrix, class StartView>
chebyshev_moments moments(const ExecSpace& exec, const Matrix& h, const scaling& s,
                          const moments_options& o, const StartView& start) {
  static_assert_matrix<ExecSpace, StartView>();
  constexpr const char* fn = "nearsparse::kpm::moments";
  using traits = detail::matrix_traits<Matrix>;
  require(start.extent(0) == std::size_t(traits::rows(h)), fn, "start",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(start),
                                     ", but needs one row per row of H (", traits::rows(h), " x ",
                                     traits::cols(h), ")"));
  auto fill = [&](const auto& block, int r0) {
    const int cols = int(block.extent(1));
    Kokkos::deep_copy(exec, block,
                      Kokkos::subview(start, Kokkos::ALL, std::make_pair(r0, r0 + cols)));
  };
  return detail::run_moments(exec, h, s, o, int(start.extent(1)), fill, fn);
}

}  // namespace nearsparse::kpm
