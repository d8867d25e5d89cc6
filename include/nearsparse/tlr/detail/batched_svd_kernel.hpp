#pragma once
// The batched SVD's two paths and the dispatch between them (see batched_svd.hpp):
//   portable_batched_svd   one team per matrix, one-sided Jacobi, on every backend;
//   dispatch_batched_svd   the generic template takes the portable path (and refuses
//                          implementation::specialized); the overload on Kokkos::Cuda, defined in
//                          src/tlr/cuda_batched_svd.cpp, takes cuSOLVER's gesvdjBatched where the
//                          options and the shape allow it; the overloads on Kokkos::OpenMP and
//                          Kokkos::Serial (src/tlr/host_batched_svd.cpp) take LAPACK's gesvd.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace nearsparse::tlr::detail {

/// A checked batch of m x n matrices: A (m x n x batch), S (k x batch), U (m x k x batch) and
/// V (n x k x batch), column-major and contiguous, k = min(m, n), reachable from the execution
/// space that runs the SVD.
struct svd_batch {
  int m = 0, n = 0, batch = 0;
  double* a = nullptr;
  double* s = nullptr;
  double* u = nullptr;
  double* v = nullptr;
};

/// The largest m and n cuSOLVER's gesvdjBatched takes.
inline constexpr int cusolver_svd_max_extent = 32;

/// Whether cuSOLVER's gesvdjBatched takes m x n matrices.
constexpr bool cusolver_svd_fits(std::size_t m, std::size_t n) {
  return m <= std::size_t(cusolver_svd_max_extent) && n <= std::size_t(cusolver_svd_max_extent);
}

/// Whether the automatic choice takes cuSOLVER for m x n matrices: they must fit, and below
/// min(m, n) = 24 the portable kernel is ahead, since one team finishes the Jacobi sweeps of a
/// small matrix sooner than cuSOLVER's batched kernel (perf/RESULTS.md, tlr/batched_svd).
constexpr bool cusolver_svd_pays(std::size_t m, std::size_t n) {
  return cusolver_svd_fits(m, n) && (m < n ? m : n) >= 24;
}

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

/// The portable batched SVD of a checked batch.
template <class ExecSpace>
batched_svd_report portable_batched_svd(const ExecSpace& exec, const svd_batch& job,
                                        const batched_svd_options& options) {
  using mem = typename ExecSpace::memory_space;
  batched_svd_report report;
  report.kernel = "portable";
  const int k = job.m < job.n ? job.m : job.n;
  if (k == 0 || job.batch == 0) return report;
  batched_svd_kernel<ExecSpace> kernel;
  kernel.m = job.m;
  kernel.n = job.n;
  kernel.k = k;
  kernel.big = job.m > job.n ? job.m : job.n;
  kernel.small = k;
  kernel.max_sweeps = options.max_sweeps;
  kernel.a = job.a;
  kernel.s = job.s;
  kernel.u = job.u;
  kernel.v = job.v;
  const std::size_t batch = std::size_t(job.batch);
  const std::size_t per_team = 8 * kernel.doubles_per_team() + sizeof(int) * kernel.ints_per_team();
  const std::size_t teams = teams_per_launch(batch, per_team, options.workspace_bytes);
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
  launch_in_batches(exec, "nearsparse::tlr::batched_svd", batch, teams, kernel);
  int counts[2] = {0, 0};
  Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(counts, 2);
  Kokkos::deep_copy(exec, host, kernel.sweeps);
  exec.fence();
  report.max_sweeps_used = counts[0];
  report.not_converged = std::size_t(counts[1]);
  return report;
}

#ifdef KOKKOS_ENABLE_CUDA
/// cuSOLVER gesvdjBatched where options.implementation and the shape allow it (the Kokkos::Cuda
/// memory space must be device memory, and m, n <= 32; automatic only where it pays), the
/// portable kernel otherwise. Throws nearsparse::unsupported for implementation::specialized
/// where cuSOLVER cannot take the call, nearsparse::runtime_error when CUDA or cuSOLVER fails.
batched_svd_report dispatch_batched_svd(const Kokkos::Cuda& exec, const svd_batch& job,
                                        const batched_svd_options& options);
#endif

#ifdef KOKKOS_ENABLE_OPENMP
/// LAPACK's gesvd on each matrix, one thread per matrix, where this build has OpenBLAS (defined in
/// src/tlr/host_batched_svd.cpp); the portable kernel otherwise. Throws nearsparse::unsupported for
/// implementation::specialized without OpenBLAS.
batched_svd_report dispatch_batched_svd(const Kokkos::OpenMP& exec, const svd_batch& job,
                                        const batched_svd_options& options);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
batched_svd_report dispatch_batched_svd(const Kokkos::Serial& exec, const svd_batch& job,
                                        const batched_svd_options& options);
#endif

/// Every other execution space: the portable kernel; implementation::specialized throws
/// nearsparse::unsupported.
template <class ExecSpace>
batched_svd_report dispatch_batched_svd(const ExecSpace& exec, const svd_batch& job,
                                        const batched_svd_options& options) {
  nearsparse::detail::take_specialized_none<ExecSpace>("nearsparse::tlr::batched_svd",
                                                       options.implementation);
  return portable_batched_svd(exec, job, options);
}

}  // namespace nearsparse::tlr::detail
