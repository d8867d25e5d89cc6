// GEMM-LLL on Kokkos::OpenMP and Kokkos::Serial: one thread per C tile (dynamic schedule). A
// dense C tile is updated as in GEMM-LLD. A low-rank C tile is summed into a dense nb x nb tile,
// D = beta C_u C_v^T + alpha sum_p L_p R_p^T = Wu Wv^T (the gathered panels of host_products.hpp),
// and recompressed once, truncated to trunc relative to |D|_F:
//   - a sum of at most nb / 4 columns exactly from its factors (QR of Wu, SVD of Wv R_u^T; the
//     portable kernels' algorithm, applied once to the whole sum);
//   - a wider one by forming D with OpenBLAS GEMMs and the adaptive randomized SVD of
//     host_tile_svd.hpp (up to oversampling 10 beyond C's max_rank, one power iteration; the range
//     finder's residual is measured and counts in the error).
// Recompressing once per C tile rather than after every product saves nt - 1 QR factorizations
// and SVDs per tile, and the single truncation drops less. Where the
// build has no OpenBLAS the portable kernels run.

#include "host_products.hpp"

#include <nearsparse/core/detail/deferred_exception.hpp>
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/tlr/detail/lll_dispatch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nearsparse::tlr::detail {

namespace {

template <class Exec>
void host_lll(const Exec& exec, const lll_job<Kokkos::HostSpace>& job) {
  const int groups = job.pairs.groups();
  if (groups == 0) return;
  const tile_access A = job.a, B = job.b, C = job.c;
  const int nb = A.nb, kc = C.kmax;
  int most = 0;
  for (int g = 0; g < groups && !job.pairs.outer; ++g)
    most = std::max(most, job.pairs.pair_count(g));
  if (job.pairs.outer) most = job.pairs.k_end - job.pairs.k_begin;
  const int per = host::products_per_gemm(A, B, most, 0, job.workspace_bytes, exec.concurrency());
  const int ell = std::min(nb, kc + recompression_oversampling);
  const host::tile_svd_plan plan(nb, ell, std::min(ell, 2 * recompression_oversampling),
                                 recompression_power_iterations, false);
  // Sums of at most nb / 4 columns take the factored route.
  const int wf = std::max(1, nb / 4);
  const host::tile_svd_plan fplan(nb, wf, wf, 0, false);
  const std::size_t factored =
      2 * std::size_t(nb) * wf + host::factored_doubles(nb, wf, fplan.lwork);
  const std::size_t update = host::dense_tile_work(A, B, per);
  const std::size_t tile = std::size_t(nb) * nb;
  host::thread_slices<Exec> ws(exec, tile + std::max({update, plan.doubles(), factored}),
                               std::max(plan.ints(), fplan.ints()),
                               "nearsparse::tlr::gemm_lll::host_work");
  const auto pairs = job.pairs;
  const double alpha = job.alpha, beta = job.beta;
  const double accuracy = job.trunc.accuracy;
  const int fixed_rank = job.trunc.fixed_rank;
  double* dropped2 = job.dropped2;
  int* at_cap = job.at_cap;
  // A tile SVD that fails throws; the exception leaves after the region.
  nearsparse::detail::deferred_exception deferred;
  auto* failure = &deferred;
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const host::hb::thread_scope one_thread(1);
  Kokkos::parallel_for(
      "nearsparse::tlr::gemm_lll::host", host::items(exec, groups), [=](const int g) {
        const int id = ws.token.acquire();
        failure->run([&] {
          const int ct = pairs.c_tile(g);
          const int count = pairs.pair_count(g);
          const int m = C.row_extent(ct), n = C.col_extent(ct);
          double* d = ws.d(id);
          double* work = d + tile;
          if (C.slot(ct) >= 0) {
            host::dense_tile_update(A, B, pairs, g, count, alpha, beta, C.dense_of(ct), nb, m, n,
                                    per, work);
            return;
          }
          double* cu = C.u_of(ct);
          double* cv = C.v_of(ct);
          const int rc = C.ranks[ct];
          bool adds = false;  // whether any product has a nonzero term
          for (int p = 0; p < count && !adds; ++p)
            adds = host::product_width(A, pairs.a_tile(g, p), B, pairs.b_tile(g, p)) > 0;
          if (!adds || alpha == 0) {  // C = beta C
            if (beta == 0) {
              host::scale(nb, kc, 0.0, cu, nb);
              host::scale(nb, kc, 0.0, cv, nb);
              C.ranks[ct] = 0;
            } else {
              host::scale(nb, rc, beta, cv, nb);
            }
            return;
          }
          const int cap = std::min({kc, m, n});
          const int own = beta != 0 ? rc : 0;
          int total = own;
          for (int p = 0; p < count; ++p)
            total += std::max(0, host::product_width(A, pairs.a_tile(g, p), B, pairs.b_tile(g, p)));
          if (total <= wf) {
            // Factored: Wu = [C_u | L], Wv = [beta C_v | alpha R], truncated exactly.
            double* wu = work;
            double* wv = wu + std::size_t(nb) * wf;
            double* s = wv + std::size_t(nb) * wf;
            std::copy(cu, cu + std::size_t(nb) * own, wu);
            for (std::size_t e = 0; e < std::size_t(nb) * own; ++e) wv[e] = beta * cv[e];
            int width = own;
            for (int p = 0; p < count; ++p)
              width += host::gather_product(A, pairs.a_tile(g, p), B, pairs.b_tile(g, p), wu, wv,
                                            width, s);
            for (std::size_t e = std::size_t(nb) * own; e < std::size_t(nb) * width; ++e)
              wv[e] *= alpha;
            const host::tile_svd_outcome o =
                host::factored_svd(nb, m, n, width, wu, wv, fixed_rank, -accuracy, cap, kc, cu, cv,
                                   s, fplan.lwork, ws.i(id));
            C.ranks[ct] = o.rank;
            dropped2[ct] += o.error * o.error;
            at_cap[ct] += fixed_rank < 0 && o.rank == cap && o.error > o.tolerance ? 1 : 0;
            return;
          }
          // D = beta C_u C_v^T + alpha L R^T, products gathered `per` at a time.
          if (own > 0)
            host::hb::gemm(host::col, host::N, host::T, nb, nb, own, beta, cu, nb, cv, nb, 0.0, d,
                           nb);
          else
            std::fill(d, d + tile, 0.0);
          const int w = host::max_width(A, B);
          double* L = work;
          double* R = L + std::size_t(nb) * per * w;
          double* S = R + std::size_t(nb) * per * w;
          for (int p0 = 0; p0 < count; p0 += per) {
            const int p1 = std::min(count, p0 + per);
            int width = 0;
            for (int p = p0; p < p1; ++p)
              width += host::gather_product(A, pairs.a_tile(g, p), B, pairs.b_tile(g, p), L, R,
                                            width, S);
            if (width > 0)
              host::hb::gemm(host::col, host::N, host::T, nb, nb, width, alpha, L, nb, R, nb, 1.0,
                             d, nb);
          }
          const double norm = std::sqrt(host::norm2(m, n, d, nb));
          const double tolerance = accuracy * norm;
          const host::tile_svd_outcome o =
              host::truncated_svd(plan, m, n, d, omega_stream(recompression_seed, ct), fixed_rank,
                                  tolerance, cap, kc, cu, cv, work, ws.i(id));
          C.ranks[ct] = o.rank;
          dropped2[ct] += o.error * o.error;
          at_cap[ct] += fixed_rank < 0 && o.rank == cap && o.error > tolerance ? 1 : 0;
        });
        ws.token.release(id);
      });
  exec.fence();
  deferred.rethrow();
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
bool take_specialized_lll(const Kokkos::OpenMP& exec, const char* function,
                          const gemm_options& options) {
  return nearsparse::detail::host_blas::take_path(function, options.implementation, exec.name());
}
void specialized_lll(const Kokkos::OpenMP& exec, const lll_job<Kokkos::HostSpace>& job) {
  host_lll(exec, job);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool take_specialized_lll(const Kokkos::Serial& exec, const char* function,
                          const gemm_options& options) {
  return nearsparse::detail::host_blas::take_path(function, options.implementation, exec.name());
}
void specialized_lll(const Kokkos::Serial& exec, const lll_job<Kokkos::HostSpace>& job) {
  host_lll(exec, job);
}
#endif

}  // namespace nearsparse::tlr::detail
