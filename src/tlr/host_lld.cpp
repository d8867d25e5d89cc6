// GEMM-LLD on Kokkos::OpenMP and Kokkos::Serial: one thread per C tile (dynamic schedule) gathers
// the low-rank terms of its products into two panels and applies them with one OpenBLAS GEMM,
// C = beta C + alpha [L_1 .. L_P] [R_1 .. R_P]^T (host_products.hpp), so each C tile is read and
// written once for gemm_options::outer_products_per_call products (all of them by default). Where
// the build has no OpenBLAS the portable kernels run.

#include "host_products.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/tlr/detail/lld_dispatch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>

namespace nearsparse::tlr::detail {

namespace {

template <class Exec>
void host_lld(const Exec& exec, double alpha, const lld_operands& ops, double beta,
              const product_pairs<Kokkos::HostSpace>& pairs, int most_pairs,
              const gemm_options& options) {
  const int groups = pairs.groups();
  if (groups == 0) return;
  const int threads = exec.concurrency();
  const int per = host::products_per_gemm(ops.a, ops.b, most_pairs, options.outer_products_per_call,
                                          options.workspace_bytes, threads);
  host::thread_slices<Exec> ws(exec, host::dense_tile_work(ops.a, ops.b, per), 0,
                               "nearsparse::tlr::gemm_lld::host_work");
  const int nb = ops.a.nb, tr = ops.c_tile_rows;
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const host::hb::thread_scope one_thread(1);
  Kokkos::parallel_for("nearsparse::tlr::gemm_lld::host", host::items(exec, groups),
                       [=](const int g) {
                         const int id = ws.token.acquire();
                         const int ct = pairs.c_tile(g);
                         const int row0 = (ct % tr) * nb, col0 = (ct / tr) * nb;
                         const int m = std::min(nb, ops.c_rows - row0);
                         const int n = std::min(nb, ops.c_cols - col0);
                         double* c = ops.c + row0 + std::size_t(col0) * ops.ldc;
                         host::dense_tile_update(ops.a, ops.b, pairs, g, pairs.pair_count(g), alpha,
                                                 beta, c, ops.ldc, m, n, per, ws.d(id));
                         ws.token.release(id);
                       });
  exec.fence();
}

template <class Exec>
void lld_batched(const Exec& exec, double alpha, const lld_operands& ops, double beta,
                 const std::vector<tile_triple>& batch, const gemm_options& options) {
  const char* fn = "nearsparse::tlr::gemm_lld_batched";
  if (!nearsparse::detail::host_blas::take_path(fn, options.implementation, exec.name()))
    return portable_gemm_lld_batched(exec, alpha, ops, beta, batch, options);
  const auto pairs = upload_batch(exec, batch);
  host_lld(exec, alpha, ops, beta, pairs, 1, options);
}

template <class Exec>
void gemm_dense(const Exec& exec, double alpha, const lld_operands& ops, double beta,
                const gemm_options& options) {
  if (!nearsparse::detail::host_blas::take_path("nearsparse::tlr::gemm", options.implementation,
                                                exec.name()))
    return portable_gemm_dense(exec, alpha, ops, beta, options);
  product_pairs<Kokkos::HostSpace> pairs;
  pairs.outer = true;
  pairs.k_begin = 0;
  pairs.k_end = ops.inner_tiles();
  pairs.mt_a = ops.a.tile_rows;
  pairs.mt_b = ops.b.tile_rows;
  pairs.mt_c = ops.c_tile_rows;
  pairs.groups_outer = ops.c_tiles;
  host_lld(exec, alpha, ops, beta, pairs, pairs.k_end, options);
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
void dispatch_gemm_lld_batched(const Kokkos::OpenMP& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options) {
  lld_batched(exec, alpha, ops, beta, batch, options);
}
void dispatch_gemm_dense(const Kokkos::OpenMP& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options) {
  gemm_dense(exec, alpha, ops, beta, options);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
void dispatch_gemm_lld_batched(const Kokkos::Serial& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options) {
  lld_batched(exec, alpha, ops, beta, batch, options);
}
void dispatch_gemm_dense(const Kokkos::Serial& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options) {
  gemm_dense(exec, alpha, ops, beta, options);
}
#endif

}  // namespace nearsparse::tlr::detail
