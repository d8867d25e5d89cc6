// Compression on Kokkos::OpenMP and Kokkos::Serial: one thread per low-rank tile (dynamic
// schedule), each copying its tile out of A and running the truncated SVD of host_tile_svd.hpp
// with serial OpenBLAS and LAPACK (inside a parallel region OpenBLAS runs on the calling thread).
// The method, Omega and truncation rule are the portable kernels', so both paths keep the same
// accuracy; where the build has no OpenBLAS the portable kernels run.

#include "host_tile_svd.hpp"

#include <nearsparse/core/detail/deferred_exception.hpp>
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/tlr/detail/compression_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace nearsparse::tlr::detail {

namespace {

constexpr const char* fn = "nearsparse::tlr::compress";

template <class Exec>
bool take(const Exec& exec, const compression_options& options) {
  return nearsparse::detail::host_blas::take_path(fn, options.implementation, exec.name());
}

template <class Exec>
void compress_tiles(const Exec& exec, const compression_job& job,
                    const compression_options& options) {
  if (job.tile_count == 0) return;
  const int nb = job.nb;
  const bool exact = options.method == compression_method::svd;
  const int ell = std::min(nb, options.max_rank + options.oversampling);
  // The randomized method's first try: twice the oversampling (at least 16) of its ell samples.
  const int first_ell = std::min(ell, std::max(16, 2 * options.oversampling));
  const host::tile_svd_plan plan(nb, ell, first_ell, options.power_iterations, exact);
  host::thread_slices<Exec> ws(exec, std::size_t(nb) * nb + plan.doubles(), plan.ints(),
                               "nearsparse::tlr::compress::host_work");
  const std::uint64_t seed = options.seed;
  // A tile SVD that fails throws; the exception leaves after the region.
  nearsparse::detail::deferred_exception deferred;
  auto* failure = &deferred;
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const host::hb::thread_scope one_thread(1);
  Kokkos::parallel_for(
      "nearsparse::tlr::compress::host", host::items(exec, job.tile_count), [=](const int e) {
        const int id = ws.token.acquire();
        failure->run([&] {
          const int t = job.tiles[e];
          const int row0 = (t % job.tile_rows) * nb, col0 = (t / job.tile_rows) * nb;
          const int m = std::min(nb, job.rows - row0), n = std::min(nb, job.cols - col0);
          double* tile = ws.d(id);
          const double* a = job.a + row0 * job.a_row_stride + col0 * job.a_col_stride;
          for (int q = 0; q < nb; ++q) {
            double* c = tile + std::size_t(q) * nb;
            if (q < n)
              for (int r = 0; r < m; ++r) c[r] = a[r * job.a_row_stride + q * job.a_col_stride];
            for (int r = q < n ? m : 0; r < nb; ++r) c[r] = 0.0;
          }
          const int cap = std::min({job.max_rank, m, n});
          const std::size_t offset = std::size_t(t) * nb * job.max_rank;
          const host::tile_svd_outcome o = host::truncated_svd(
              plan, m, n, tile, omega_stream(seed, t), job.fixed_rank, job.tolerance, cap,
              job.max_rank, job.u + offset, job.v + offset, tile + std::size_t(nb) * nb, ws.i(id));
          job.ranks[t] = o.rank;
          job.errors[t] = o.error;
        });
        ws.token.release(id);
      });
  exec.fence();
  deferred.rethrow();
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
bool take_specialized_compression(const Kokkos::OpenMP& exec, const compression_options& options) {
  return take(exec, options);
}
void specialized_compress(const Kokkos::OpenMP& exec, const compression_job& job,
                          const compression_options& options) {
  compress_tiles(exec, job, options);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool take_specialized_compression(const Kokkos::Serial& exec, const compression_options& options) {
  return take(exec, options);
}
void specialized_compress(const Kokkos::Serial& exec, const compression_job& job,
                          const compression_options& options) {
  compress_tiles(exec, job, options);
}
#endif

}  // namespace nearsparse::tlr::detail
