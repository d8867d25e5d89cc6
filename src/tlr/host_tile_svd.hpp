#pragma once
// The truncated SVD of one tile on the host, for the host compression and recompression: LAPACK
// and BLAS (OpenBLAS) called by one thread on its own tile.
//
//   randomized   the portable kernel's method (randomized_compression in
//                compression_kernels.hpp) with BLAS-3 products: Y = T Omega (Omega's first
//                columns of the portable kernel's), power iterations with re-orthonormalization
//                (geqrf, orgqr), Q = orth(Y), B^T = T^T Q, the range finder's residual
//                |T - Q B|_F computed, the SVD of B^T (gesdd), U = Q Vh, V = W Sigma, the rank
//                chosen by choose_rank from the residual and the singular values (the portable
//                rule). Adaptive: it starts with fewer samples than the portable kernel's ell and
//                doubles them while the measured error misses the tolerance, so a tile of low
//                rank costs O(tile^2 * its rank) rather than O(tile^2 * ell); with all ell samples
//                it is the portable method.
//   exact        the SVD of the whole tile (gesdd), truncated by the same rule.
//   factored     a tile given as Wu Wv^T with few columns (the recompression of a sum of
//                low-rank products): Q = orth(Wu) spans it exactly, B^T = Wv R_u^T, then as above
//                with no residual.
//
// Both write the tile's factors in the TLR storage: U and V are nb x kmax (leading dimension nb),
// rows beyond the tile's extents and columns beyond the rank zero.

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nearsparse::tlr::detail::host {

namespace hb = nearsparse::detail::host_blas;
inline constexpr hb::order col = hb::order::column_major;
inline constexpr hb::op N = hb::op::none;
inline constexpr hb::op T = hb::op::transpose;

/// gesdd('S') of the rows x cols matrix a; throws nearsparse::runtime_error when LAPACK reports
/// that its divide and conquer did not converge (info > 0), rather than truncating singular values
/// it never found. Called inside parallel regions: the callers defer the exception
/// (core/detail/deferred_exception.hpp).
inline void gesdd_converged(int rows, int cols, double* a, int lda, double* s, double* u, int ldu,
                            double* vt, int ldvt, double* work, int lwork, int* iwork) {
  const int info = hb::gesdd('S', rows, cols, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork);
  if (info > 0)
    throw nearsparse::runtime_error(
        nearsparse::detail::concat("nearsparse::tlr (compression or recompression of a tile): "
                                   "LAPACK gesdd did not converge on a ",
                                   rows, " x ", cols, " tile factor (info ", info,
                                   "): a NaN or Inf in the tile, or values near overflow"));
}

/// Per-thread workspace of Kokkos host kernels: one slice per UniqueToken value.
template <class Exec>
struct thread_slices {
  Kokkos::Experimental::UniqueToken<Exec> token;
  Kokkos::View<double*, Kokkos::HostSpace> doubles;
  Kokkos::View<int*, Kokkos::HostSpace> ints;
  std::size_t per_doubles = 0, per_ints = 0;
  thread_slices(const Exec& exec, std::size_t d, std::size_t i, const char* label)
      : token(exec),
        per_doubles(std::max<std::size_t>(d, 1)),
        per_ints(std::max<std::size_t>(i, 1)) {
    const std::size_t n = static_cast<std::size_t>(token.size());
    doubles = Kokkos::View<double*, Kokkos::HostSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n * per_doubles);
    ints = Kokkos::View<int*, Kokkos::HostSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n * per_ints);
  }
  double* d(int id) const { return doubles.data() + std::size_t(id) * per_doubles; }
  int* i(int id) const { return ints.data() + std::size_t(id) * per_ints; }
};

/// Dynamic schedule over `count` items on exec: items differ in cost (ranks, edge tiles).
template <class Exec>
Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>> items(const Exec& exec, int count) {
  return Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>(exec, 0, count);
}

/// out = Frobenius norm squared of the m x n matrix at a (leading dimension ld).
inline double norm2(int m, int n, const double* a, int ld) {
  double s = 0;
  for (int j = 0; j < n; ++j) {
    const double* c = a + std::size_t(j) * ld;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < m; ++i) s += c[i] * c[i];
  }
  return s;
}

/// The shapes of the truncated SVD of nb x nb tiles with up to `ell` samples, and the workspace
/// it needs.
struct tile_svd_plan {
  int nb = 0, ell = 0, first_ell = 0, power_iterations = 0;
  bool exact = false;
  int lwork = 1;

  /// first_ell: the samples of the first try (randomized; at most ell).
  tile_svd_plan(int nb_, int ell_, int first_ell_, int power_iterations_, bool exact_)
      : nb(nb_),
        ell(exact_ ? nb_ : ell_),
        first_ell(std::max(1, std::min(first_ell_, ell_))),
        power_iterations(power_iterations_),
        exact(exact_) {
    if (ell == 0) return;
    if (exact) {
      query_gesdd(nb, nb);
      return;
    }
    query_panel(nb, ell);
  }
  /// Doubles beside the tile itself (nb x nb, which the caller holds).
  std::size_t doubles() const {
    const std::size_t n = std::size_t(nb), l = std::size_t(ell);
    if (exact) return 2 * n * n + n + std::size_t(lwork);
    return n * n + 4 * n * l + 2 * l * l + 2 * l + std::size_t(lwork);
  }
  std::size_t ints() const { return 8 * std::size_t(ell) + 1; }

  /// Workspace for geqrf, orgqr and gesdd on rows x cols panels.
  void query_panel(int rows, int cols) {
    double q = 0;
    hb::geqrf(rows, cols, nullptr, rows, nullptr, &q, -1);
    take(q);
    hb::orgqr(rows, cols, cols, nullptr, rows, nullptr, &q, -1);
    take(q);
    query_gesdd(rows, cols);
  }

 private:
  void take(double q) { lwork = std::max(lwork, static_cast<int>(q) + 1); }
  void query_gesdd(int rows, int cols) {
    double q = 0;
    int iq = 0;
    hb::gesdd('S', rows, cols, nullptr, rows, nullptr, nullptr, rows, nullptr, cols, &q, -1, &iq);
    take(q);
  }
};

/// What the truncation of one tile chose.
struct tile_svd_outcome {
  int rank = 0;
  double error = 0;
  double tolerance = 0;  // the absolute tolerance applied
};

/// Writes the factors: U's first k columns (from uk unless u_done, where the caller wrote them
/// into u), V = W(:, :k) Sigma; rows beyond m (U) and n (V) and columns k .. kmax - 1 zero.
inline void store_factors(int nb, int m, int n, int k, int kmax, const double* uk, int ldu,
                          bool u_done, const double* w, int ldw, bool w_transposed,
                          const double* sigma, double* u, double* v) {
  for (int l = 0; l < kmax; ++l) {
    double* uc = u + std::size_t(l) * nb;
    double* vc = v + std::size_t(l) * nb;
    if (l < k) {
      if (!u_done)
        for (int r = 0; r < m; ++r) uc[r] = uk[r + std::size_t(l) * ldu];
      for (int r = m; r < nb; ++r) uc[r] = 0.0;
      const double s = sigma[l];
      if (w_transposed)
        for (int r = 0; r < n; ++r) vc[r] = w[l + std::size_t(r) * ldw] * s;
      else
        for (int r = 0; r < n; ++r) vc[r] = w[r + std::size_t(l) * ldw] * s;
      for (int r = n; r < nb; ++r) vc[r] = 0.0;
    } else {
      for (int r = 0; r < nb; ++r) uc[r] = 0.0;
      for (int r = 0; r < nb; ++r) vc[r] = 0.0;
    }
  }
}

/// The last step of the randomized and factored routes: T ~ Q B with Q (nb x c, orthonormal) and
/// B^T (nb x c, overwritten); B^T = W Sigma Vh^T, so T ~ (Q Vh) Sigma W^T. The rank from the
/// singular values and the error already made (`residual`); tolerance < 0 means relative to the
/// tile's norm (the singular values' norm) times -tolerance.
inline tile_svd_outcome finish(int nb, int m, int n, int c, const double* Q, double* BT,
                               double residual, int fixed_rank, double tolerance, int cap, int kmax,
                               double* u, double* v, double* W, double* vh, double* sigma,
                               double* lw, int lwork, int* iwork) {
  tile_svd_outcome out;
  gesdd_converged(nb, c, BT, nb, sigma, W, nb, vh, c, lw, lwork, iwork);
  int* perm = iwork;  // LAPACK sorts the singular values
  for (int l = 0; l < c; ++l) perm[l] = l;
  if (tolerance < 0) {
    double s2 = 0;
    for (int l = c - 1; l >= 0; --l) s2 += sigma[l] * sigma[l];
    tolerance = -tolerance * std::sqrt(s2 + residual * residual);
  }
  out.tolerance = tolerance;
  out.rank = choose_rank(sigma, perm, c, fixed_rank, tolerance, cap, residual, &out.error);
  if (out.rank > 0)  // U = Q Vh(:, :k) = Q (vh(:k, :))^T, straight into the factor storage
    hb::gemm(col, N, T, nb, out.rank, c, 1.0, Q, nb, vh, c, 0.0, u, nb);
  store_factors(nb, m, n, out.rank, kmax, nullptr, nb, true, W, nb, false, sigma, u, v);
  return out;
}

/// Truncated SVD of the m x n tile held in t (nb x nb, leading dimension nb, zero beyond m and
/// n; kept unless exact). Writes U and V (nb x kmax each, leading dimension nb) and returns the
/// rank and the Frobenius error. The rank follows choose_rank: fixed_rank >= 0, or the smallest
/// within `tolerance` (absolute), at most `cap`. `stream` seeds Omega (randomized), as the
/// portable kernel's omega_stream(seed, tile).
inline tile_svd_outcome truncated_svd(const tile_svd_plan& plan, int m, int n, double* t,
                                      std::uint64_t stream, int fixed_rank, double tolerance,
                                      int cap, int kmax, double* u, double* v, double* work,
                                      int* iwork) {
  const int nb = plan.nb, ell = plan.ell;
  tile_svd_outcome out;
  if (ell == 0 || m == 0 || n == 0) {
    out.error = std::sqrt(norm2(m, n, t, nb));
    store_factors(nb, m, n, 0, kmax, nullptr, nb, false, nullptr, nb, false, nullptr, u, v);
    return out;
  }
  if (plan.exact) {
    const int kk = std::min(m, n);
    double* uf = work;
    double* vt = uf + std::size_t(nb) * nb;
    double* sigma = vt + std::size_t(nb) * nb;
    double* lw = sigma + nb;
    gesdd_converged(m, n, t, nb, sigma, uf, nb, vt, nb, lw, plan.lwork, iwork);
    int* perm = iwork;
    for (int l = 0; l < kk; ++l) perm[l] = l;
    out.rank = choose_rank(sigma, perm, kk, fixed_rank, tolerance, cap, 0.0, &out.error);
    store_factors(nb, m, n, out.rank, kmax, uf, nb, false, vt, nb, true, sigma, u, v);
    return out;
  }
  const std::size_t panel = std::size_t(nb) * ell;
  double* E = work;                      // the residual T - Q B
  double* X = E + std::size_t(nb) * nb;  // Omega, then the power iterations' second basis
  double* Y = X + panel;                 // T Omega, then the basis Q
  double* BT = Y + panel;
  double* W = BT + panel;
  double* tau = W + panel;
  double* vh = tau + ell;
  double* sigma = vh + std::size_t(ell) * ell;
  double* lw = sigma + ell;
  // Fixed ranks need rank + oversampling samples from the start; accuracies start small.
  int c = fixed_rank >= 0 ? ell : plan.first_ell;
  for (;;) {
    // Omega (n x c; rows beyond n zero): the first c columns of the portable kernel's.
    for (int l = 0; l < c; ++l)
      for (int q = 0; q < nb; ++q)
        X[q + std::size_t(l) * nb] = q < n ? omega_entry(stream, q, l, ell) : 0.0;
    auto orth = [&](double* Z) {  // Z = the orthonormal basis of its columns
      hb::geqrf(nb, c, Z, nb, tau, lw, plan.lwork);
      hb::orgqr(nb, c, c, Z, nb, tau, lw, plan.lwork);
    };
    hb::gemm(col, N, N, nb, c, nb, 1.0, t, nb, X, nb, 0.0, Y, nb);  // Y = T Omega
    for (int it = 0; it < plan.power_iterations; ++it) {
      orth(Y);
      hb::gemm(col, T, N, nb, c, nb, 1.0, t, nb, Y, nb, 0.0, X, nb);  // X = T^T Q
      orth(X);
      hb::gemm(col, N, N, nb, c, nb, 1.0, t, nb, X, nb, 0.0, Y, nb);  // Y = T X
    }
    orth(Y);
    hb::gemm(col, T, N, nb, c, nb, 1.0, t, nb, Y, nb, 0.0, BT, nb);  // B^T = T^T Q
    // The range finder's residual T - Q B over the tile's extents (the portable kernel's sum).
    std::copy(t, t + std::size_t(nb) * nb, E);
    hb::gemm(col, N, T, nb, nb, c, -1.0, Y, nb, BT, nb, 1.0, E, nb);
    const double residual = std::sqrt(norm2(m, n, E, nb));
    // The samples suffice when the truncation meets the tolerance (or a fixed rank is asked, or
    // every sample is taken); otherwise try again with twice as many.
    const tile_svd_outcome o = finish(nb, m, n, c, Y, BT, residual, fixed_rank, tolerance, cap,
                                      kmax, u, v, W, vh, sigma, lw, plan.lwork, iwork);
    if (fixed_rank >= 0 || c >= ell || o.error <= tolerance) return o;
    c = std::min(ell, 2 * c);
  }
}

/// Truncated SVD of the m x n tile Wu Wv^T (nb x c each, leading dimension nb; overwritten), exact:
/// Q = orth(Wu) spans the tile, B^T = Wv R_u^T. tolerance < 0: relative to the tile's norm times
/// -tolerance. Workspace: factored_doubles(nb, c) doubles, 8 c + 1 ints.
inline std::size_t factored_doubles(int nb, int c, int lwork) {
  return 2 * std::size_t(nb) * c + 2 * std::size_t(c) * c + 2 * std::size_t(c) + std::size_t(lwork);
}
inline tile_svd_outcome factored_svd(int nb, int m, int n, int c, double* Wu, double* Wv,
                                     int fixed_rank, double tolerance, int cap, int kmax, double* u,
                                     double* v, double* work, int lwork, int* iwork) {
  double* BT = work;
  double* W = BT + std::size_t(nb) * c;
  double* Ru = W + std::size_t(nb) * c;
  double* vh = Ru + std::size_t(c) * c;
  double* tau = vh + std::size_t(c) * c;
  double* sigma = tau + c;
  double* lw = sigma + c;
  const int q = std::min(nb, c);
  hb::geqrf(nb, c, Wu, nb, tau, lw, lwork);
  for (int j = 0; j < c; ++j)  // R_u: upper triangle, q x c
    for (int i = 0; i < c; ++i)
      Ru[i + std::size_t(j) * c] = i <= j && i < q ? Wu[i + std::size_t(j) * nb] : 0.0;
  hb::orgqr(nb, c, q, Wu, nb, tau, lw, lwork);
  hb::gemm(col, N, T, nb, c, c, 1.0, Wv, nb, Ru, c, 0.0, BT, nb);  // B^T = Wv R_u^T
  return finish(nb, m, n, c, Wu, BT, 0.0, fixed_rank, tolerance, cap, kmax, u, v, W, vh, sigma, lw,
                lwork, iwork);
}

}  // namespace nearsparse::tlr::detail::host
