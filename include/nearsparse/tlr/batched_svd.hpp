#pragma once
// Batched SVD of many small dense matrices of one shape: A_b = U_b diag(S_b) V_b^T for every b,
// the building block of compression and recompression. The portable path runs one team per
// matrix with the one-sided Jacobi SVD of the tile kernels (any m, n); on Kokkos::Cuda, matrices
// of 24 x 24 up to 32 x 32, where it measured faster, go to cuSOLVER's gesvdjBatched
// (src/tlr/cuda_batched_svd.cpp).
//
//   Kokkos::View<double***, Kokkos::LayoutLeft> A("A", m, n, batch);   // column-major, contiguous
//   Kokkos::View<double**, Kokkos::LayoutLeft> S("S", k, batch);       // k = min(m, n)
//   Kokkos::View<double***, Kokkos::LayoutLeft> U("U", m, k, batch), V("V", n, k, batch);
//   auto report = nearsparse::tlr::batched_svd(exec, A, S, U, V);       // A is overwritten
//
// Singular values come in decreasing order; U and V have orthonormal columns (the columns that
// belong to zero singular values complete the bases).

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/detail/vendor_choice.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace nearsparse::tlr {

struct batched_svd_options {
  /// automatic: cuSOLVER gesvdjBatched on Kokkos::Cuda where it fits (m, n <= 32) and measured
  /// faster (min(m, n) >= 24), the portable kernel otherwise; vendor: cuSOLVER (an error where
  /// it is not compiled in or the shape does not fit).
  kernel_choice kernel = kernel_choice::automatic;
  /// Jacobi sweeps before a matrix counts as not converged.
  int max_sweeps = 100;
  /// Bound on the workspace of one launch of the portable kernel.
  std::size_t workspace_bytes = std::size_t(1) << 30;
};

struct batched_svd_report {
  /// The path taken: "portable" or "cusolver gesvdjBatched".
  std::string kernel;
  /// Matrices whose Jacobi iteration stopped at max_sweeps (their results are still returned).
  std::size_t not_converged = 0;
  /// The most sweeps any matrix took (portable path; cuSOLVER does not report it: -1).
  int max_sweeps_used = -1;
};

namespace detail {

/// The largest m and n cuSOLVER's gesvdjBatched takes.
inline constexpr int vendor_svd_max_extent = 32;

/// Whether the automatic choice takes cuSOLVER for m x n matrices: they must fit, and the
/// measured crossover (perf/RESULTS.md, tlr/batched_svd on an H100) puts the portable kernel
/// ahead for the smaller shapes, whose Jacobi sweeps one team finishes faster than cuSOLVER's
/// batched kernel.
constexpr bool vendor_svd_pays(std::size_t m, std::size_t n) {
  return m <= std::size_t(vendor_svd_max_extent) && n <= std::size_t(vendor_svd_max_extent) &&
         (m < n ? m : n) >= 24;
}

#ifdef KOKKOS_ENABLE_CUDA
/// cuSOLVER gesvdjBatched on exec's stream; A (m x n x batch, column-major, contiguous) is
/// overwritten; S (k x batch), U (m x k x batch), V (n x k x batch) as batched_svd. Returns the
/// number of matrices cuSOLVER reports as not converged (this waits for the stream).
std::size_t cuda_batched_svd(const Kokkos::Cuda& exec, int m, int n, int batch, double* a,
                             double* s, double* u, double* v, int max_sweeps);
#endif

/// One team per matrix: one-sided Jacobi on A (m >= n) or on A^T (m < n, copied to workspace),
/// then sorting, normalization and completion of the orthonormal bases.
template <class ExecSpace>
struct batched_svd_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using mem = typename ExecSpace::memory_space;
  int first = 0;
  int m = 0, n = 0, k = 0, big = 0, small = 0, max_sweeps = 0;
  double* a = nullptr;
  double* s = nullptr;
  double* u = nullptr;
  double* v = nullptr;
  Kokkos::View<double*, mem> work;  // per team: W (big x small), R (small x small), sigma
  Kokkos::View<int*, mem> iwork;    // per team: perm (small), flag
  Kokkos::View<int*, mem> sweeps;   // [0]: most sweeps, [1]: matrices not converged

  KOKKOS_INLINE_FUNCTION std::size_t doubles_per_team() const {
    return std::size_t(big) * small + std::size_t(small) * small + small;
  }
  KOKKOS_INLINE_FUNCTION std::size_t ints_per_team() const { return std::size_t(small) + 1; }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const std::size_t b = std::size_t(first) + std::size_t(t);
    double* W = work.data() + std::size_t(t) * doubles_per_team();
    double* R = W + std::size_t(big) * small;
    double* sigma = R + std::size_t(small) * small;
    int* perm = iwork.data() + std::size_t(t) * ints_per_team();
    int* flag = perm + small;
    const double* A = a + b * std::size_t(m) * n;
    // W = A (m >= n) or A^T (m < n): big x small, its columns are what Jacobi orthogonalizes.
    const bool wide = m < n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, small), [&](const int j) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, big), [&](const int i) {
        W[i + std::size_t(j) * big] = wide ? A[j + std::size_t(i) * m] : A[i + std::size_t(j) * m];
      });
    });
    team.team_barrier();
    const int used =
        team_jacobi_svd(team, big, small, W, big, R, small, sigma, perm, flag, max_sweeps);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Kokkos::atomic_fetch_max(&sweeps(0), used);
      if (used >= max_sweeps && small > 1) Kokkos::atomic_add(&sweeps(1), 1);
    });
    // W = X diag(sigma) with X the left factor of W, R the right one: W_in = X diag(sigma) R^T.
    // A = U S V^T takes U = X, V = R (m >= n), or U = R, V = X (m < n).
    double* Ub = u + b * std::size_t(m) * k;
    double* Vb = v + b * std::size_t(n) * k;
    double* X = wide ? Vb : Ub;  // big x small
    double* Y = wide ? Ub : Vb;  // small x small
    double* S = s + b * std::size_t(k);
    // Below Jacobi's own floor (eps^2 of the largest) a column was never rotated: zero.
    const double floor = sigma[perm[0]] * 4.930380657631324e-32;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, small), [&](const int j) {
      const int p = perm[j];
      const double sj = sigma[p];
      const bool zero = !(sj > floor);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, big), [&](const int i) {
        X[i + std::size_t(j) * big] = zero ? 0.0 : W[i + std::size_t(p) * big] / sj;
      });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, small), [&](const int i) {
        Y[i + std::size_t(j) * small] = R[i + std::size_t(p) * small];
      });
      Kokkos::single(Kokkos::PerThread(team), [&]() { S[j] = zero ? 0.0 : sj; });
    });
    team.team_barrier();
    // Columns of X for zero singular values: unit vectors orthogonalized (twice) against the
    // columns before them. Rare (rank-deficient matrices), so one thread does it.
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int j = 0; j < small; ++j) {
        if (S[j] > 0) continue;
        double* x = X + std::size_t(j) * big;
        for (int e = 0; e < big; ++e) {
          for (int i = 0; i < big; ++i) x[i] = i == e ? 1.0 : 0.0;
          for (int pass = 0; pass < 2; ++pass)
            for (int l = 0; l < j; ++l) {
              const double* y = X + std::size_t(l) * big;
              double d = 0;
              for (int i = 0; i < big; ++i) d += y[i] * x[i];
              for (int i = 0; i < big; ++i) x[i] -= d * y[i];
            }
          double nn = 0;
          for (int i = 0; i < big; ++i) nn += x[i] * x[i];
          if (nn > 0.25) {
            const double scale = 1.0 / ::sqrt(nn);
            for (int i = 0; i < big; ++i) x[i] *= scale;
            break;
          }
        }
      }
    });
    team.team_barrier();
  }
};

template <class View>
constexpr void static_assert_batch_view() {
  static_assert(Kokkos::is_view<View>::value, "nearsparse::tlr::batched_svd: arguments are Views");
  static_assert(std::is_same<typename View::non_const_value_type, double>::value,
                "nearsparse::tlr::batched_svd: Views of double");
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
                "nearsparse::tlr::batched_svd: LayoutLeft Views (column-major, batch slowest)");
}

}  // namespace detail

/// A(:, :, b) = U(:, :, b) diag(S(:, b)) V(:, :, b)^T for every b. A is m x n x batch
/// (overwritten), S is k x batch, U is m x k x batch and V is n x k x batch with k = min(m, n), all
/// LayoutLeft Views of double accessible from `exec`. Throws nearsparse::invalid_argument for
/// mismatched extents, non-finite values in A or bad options, and nearsparse::unsupported for
/// kernel_choice::vendor where cuSOLVER cannot take the call.
template <class ExecSpace, class AView, class SView, class UView, class VView>
batched_svd_report batched_svd(const ExecSpace& exec, const AView& a, const SView& s,
                               const UView& u, const VView& v,
                               const batched_svd_options& options = batched_svd_options{}) {
  constexpr const char* fn = "nearsparse::tlr::batched_svd";
  detail::static_assert_batch_view<AView>();
  detail::static_assert_batch_view<SView>();
  detail::static_assert_batch_view<UView>();
  detail::static_assert_batch_view<VView>();
  static_assert(
      AView::rank == 3 && UView::rank == 3 && VView::rank == 3 && SView::rank == 2,
      "nearsparse::tlr::batched_svd: A, U, V are rank 3 (rows, columns, batch), S rank 2");
  static_assert(is_accessible_from_v<ExecSpace, AView> && is_accessible_from_v<ExecSpace, SView> &&
                    is_accessible_from_v<ExecSpace, UView> &&
                    is_accessible_from_v<ExecSpace, VView>,
                "nearsparse::tlr::batched_svd: Views must be accessible from the execution space");
  const std::size_t m = a.extent(0), n = a.extent(1), batch = a.extent(2);
  const std::size_t k = m < n ? m : n;
  auto shape = [](const auto& x) { return nearsparse::detail::extents_string(x); };
  require(s.extent(0) == k && s.extent(1) == batch, fn, "S",
          nearsparse::detail::concat("is ", shape(s), "; A is ", shape(a), ", so S must be ", k,
                                     " x ", batch));
  require(u.extent(0) == m && u.extent(1) == k && u.extent(2) == batch, fn, "U",
          nearsparse::detail::concat("is ", shape(u), "; A is ", shape(a), ", so U must be ", m,
                                     " x ", k, " x ", batch));
  require(v.extent(0) == n && v.extent(1) == k && v.extent(2) == batch, fn, "V",
          nearsparse::detail::concat("is ", shape(v), "; A is ", shape(a), ", so V must be ", n,
                                     " x ", k, " x ", batch));
  require(options.max_sweeps >= 1, fn, "options.max_sweeps",
          nearsparse::detail::concat("is ", options.max_sweeps, "; it must be at least 1"));
  require(options.workspace_bytes > 0, fn, "options.workspace_bytes", "must be > 0");
  require(m * n * batch < std::size_t(1) << 62 && batch <= std::size_t(2147483647), fn, "A",
          nearsparse::detail::concat("(", shape(a), ") exceeds the supported size"));
  const bool fits = m <= std::size_t(detail::vendor_svd_max_extent) &&
                    n <= std::size_t(detail::vendor_svd_max_extent);
  const bool vendor =
      detail::use_vendor<ExecSpace>(fn, options.kernel) &&
      (options.kernel == kernel_choice::vendor ? fits : detail::vendor_svd_pays(m, n));
  if (options.kernel == kernel_choice::vendor && !fits)
    throw unsupported(nearsparse::detail::concat(
        fn, ": kernel_choice::vendor (cuSOLVER gesvdjBatched) takes matrices of at most ",
        detail::vendor_svd_max_extent, " x ", detail::vendor_svd_max_extent, "; A is ", shape(a)));
  batched_svd_report report;
  report.kernel = vendor ? "cusolver gesvdjBatched" : "portable";
  if (k == 0 || batch == 0) {
    if (m * k * batch > 0) Kokkos::deep_copy(exec, u, 0.0);
    if (n * k * batch > 0) Kokkos::deep_copy(exec, v, 0.0);
    return report;
  }
  Kokkos::View<const double*, typename AView::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      flat(a.data(), m * n * batch);
  require_finite(exec, fn, "A", flat);

#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (detail::vendor_path_exists<ExecSpace>()) {
    if (vendor) {
      report.not_converged =
          detail::cuda_batched_svd(exec, int(m), int(n), int(batch), a.data(), s.data(), u.data(),
                                   v.data(), options.max_sweeps);
      return report;
    }
  }
#endif
  using mem = typename ExecSpace::memory_space;
  detail::batched_svd_kernel<ExecSpace> kernel;
  kernel.m = int(m);
  kernel.n = int(n);
  kernel.k = int(k);
  kernel.big = int(m > n ? m : n);
  kernel.small = int(k);
  kernel.max_sweeps = options.max_sweeps;
  kernel.a = a.data();
  kernel.s = s.data();
  kernel.u = u.data();
  kernel.v = v.data();
  const std::size_t per_team = 8 * kernel.doubles_per_team() + sizeof(int) * kernel.ints_per_team();
  const std::size_t teams = detail::teams_per_launch(batch, per_team, options.workspace_bytes);
  kernel.work =
      Kokkos::View<double*, mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                                                    std::string("nearsparse::tlr::svd_work")),
                                 teams * kernel.doubles_per_team());
  kernel.iwork =
      Kokkos::View<int*, mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                                                 std::string("nearsparse::tlr::svd_iwork")),
                              teams * kernel.ints_per_team());
  kernel.sweeps = Kokkos::View<int*, mem>(
      Kokkos::view_alloc(exec, std::string("nearsparse::tlr::svd_sweeps")), 2);
  detail::launch_in_batches(exec, "nearsparse::tlr::batched_svd", batch, teams, kernel);
  int counts[2] = {0, 0};
  Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(counts, 2);
  Kokkos::deep_copy(exec, host, kernel.sweeps);
  exec.fence();
  report.max_sweeps_used = counts[0];
  report.not_converged = std::size_t(counts[1]);
  return report;
}

}  // namespace nearsparse::tlr
