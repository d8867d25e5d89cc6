// The batched SVD on Kokkos::OpenMP and Kokkos::Serial: LAPACK's gesvd (OpenBLAS) on each
// matrix, one thread per matrix (dynamic schedule; inside a parallel region OpenBLAS runs on the
// calling thread). gesvd writes V^T; batched_svd returns V, so each V is transposed from a
// per-thread buffer. Where the build has no OpenBLAS the portable kernel runs.

#include "host_tile_svd.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/tlr/detail/batched_svd_kernel.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace nearsparse::tlr::detail {

namespace {

constexpr const char* fn = "nearsparse::tlr::batched_svd";

template <class Exec>
batched_svd_report host_batched_svd(const Exec& exec, const svd_batch& job,
                                    const batched_svd_options& options) {
  if (!nearsparse::detail::host_blas::take_path(fn, options.implementation, exec.name()))
    return portable_batched_svd(exec, job, options);
  batched_svd_report report;
  report.kernel = "lapack gesvd";
  const int m = job.m, n = job.n, k = std::min(m, n);
  if (k == 0 || job.batch == 0) return report;
  namespace hb = nearsparse::detail::host_blas;
  double query = 0;
  hb::gesvd('S', 'S', m, n, nullptr, m, nullptr, nullptr, m, nullptr, k, &query, -1);
  const int lwork = std::max(1, static_cast<int>(query) + 1);
  host::thread_slices<Exec> ws(exec, std::size_t(k) * n + std::size_t(lwork), 0,
                               "nearsparse::tlr::batched_svd::host_work");
  Kokkos::View<int, Kokkos::HostSpace> failed("nearsparse::tlr::batched_svd::failed");
  const svd_batch b = job;
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const hb::thread_scope one_thread(1);
  Kokkos::parallel_for(
      "nearsparse::tlr::batched_svd::host", host::items(exec, b.batch), [=](const int e) {
        const int id = ws.token.acquire();
        double* vt = ws.d(id);  // k x n
        double* work = vt + std::size_t(k) * n;
        const std::size_t i = std::size_t(e);
        double* a = b.a + i * std::size_t(m) * n;
        double* u = b.u + i * std::size_t(m) * k;
        double* v = b.v + i * std::size_t(n) * k;
        const int info =
            hb::gesvd('S', 'S', m, n, a, m, b.s + i * std::size_t(k), u, m, vt, k, work, lwork);
        if (info > 0) Kokkos::atomic_add(&failed(), 1);
        for (int l = 0; l < k; ++l)
          for (int r = 0; r < n; ++r) v[r + std::size_t(l) * n] = vt[l + std::size_t(r) * k];
        ws.token.release(id);
      });
  exec.fence();
  report.not_converged = std::size_t(failed());
  return report;
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
batched_svd_report dispatch_batched_svd(const Kokkos::OpenMP& exec, const svd_batch& job,
                                        const batched_svd_options& options) {
  return host_batched_svd(exec, job, options);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
batched_svd_report dispatch_batched_svd(const Kokkos::Serial& exec, const svd_batch& job,
                                        const batched_svd_options& options) {
  return host_batched_svd(exec, job, options);
}
#endif

}  // namespace nearsparse::tlr::detail
