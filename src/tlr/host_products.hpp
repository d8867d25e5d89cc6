#pragma once
// The tile products of the host GEMM-LLD and GEMM-LLL paths: one thread per C tile gathers the
// low-rank terms of its products into two panels, L = [L_1 .. L_P] and R = [R_1 .. R_P] with
// A_a B_b = L_p R_p^T, so that one BLAS-3 GEMM, C += alpha L R^T, applies them all and reads and
// writes the C tile once. Products of two dense tiles are applied with a GEMM each.

#include "host_tile_svd.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/tlr/detail/tile_access.hpp>

#include <algorithm>
#include <cstddef>

namespace nearsparse::tlr::detail::host {

/// Columns a product's low-rank term takes in the panels (0 for a zero product), or -1 for the
/// product of two dense tiles.
inline int product_width(const tile_access& A, int a, const tile_access& B, int b) {
  const bool ad = A.slot(a) >= 0, bd = B.slot(b) >= 0;
  if (ad && bd) return -1;
  if (ad) return B.ranks[b];
  if (bd) return A.ranks[a];
  const int ra = A.ranks[a], rb = B.ranks[b];
  return ra == 0 || rb == 0 ? 0 : std::min(ra, rb);
}

/// Widest term a product of A and B tiles can take.
inline int max_width(const tile_access& A, const tile_access& B) {
  return std::max(A.kmax, B.kmax);
}

/// Writes the low-rank term of A_a B_b (not both dense) into L and R (nb rows, leading dimension
/// nb) at column `at`; returns the columns written. `s` holds kmax_a * kmax_b doubles.
inline int gather_product(const tile_access& A, int a, const tile_access& B, int b, double* L,
                          double* R, int at, double* s) {
  const int nb = A.nb, inner = A.col_extent(a);
  const int p = product_width(A, a, B, b);
  if (p <= 0) return 0;
  double* l = L + std::size_t(at) * nb;
  double* r = R + std::size_t(at) * nb;
  auto copy = [&](const double* src, double* dst, int cols) {
    std::copy(src, src + std::size_t(cols) * nb, dst);
  };
  if (A.slot(a) >= 0) {  // (D_a U_b) V_b^T
    hb::gemm(col, N, N, nb, p, inner, 1.0, A.dense_of(a), nb, B.u_of(b), nb, 0.0, l, nb);
    copy(B.v_of(b), r, p);
  } else if (B.slot(b) >= 0) {  // U_a (D_b^T V_a)^T
    copy(A.u_of(a), l, p);
    hb::gemm(col, T, N, nb, p, inner, 1.0, B.dense_of(b), nb, A.v_of(a), nb, 0.0, r, nb);
  } else {  // S = V_a^T U_b (ra x rb); U_a (V_b S^T)^T or (U_a S) V_b^T
    const int ra = A.ranks[a], rb = B.ranks[b];
    hb::gemm(col, T, N, ra, rb, inner, 1.0, A.v_of(a), nb, B.u_of(b), nb, 0.0, s, ra);
    if (ra <= rb) {
      copy(A.u_of(a), l, p);
      hb::gemm(col, N, T, nb, p, rb, 1.0, B.v_of(b), nb, s, ra, 0.0, r, nb);
    } else {
      hb::gemm(col, N, N, nb, p, ra, 1.0, A.u_of(a), nb, s, ra, 0.0, l, nb);
      copy(B.v_of(b), r, p);
    }
  }
  return p;
}

/// C (m x n, leading dimension ldc) = beta C (beta == 0: zero, C not read).
inline void scale(int m, int n, double beta, double* c, int ldc) {
  if (beta == 1) return;
  for (int j = 0; j < n; ++j) {
    double* cj = c + std::size_t(j) * ldc;
    if (beta == 0)
      for (int i = 0; i < m; ++i) cj[i] = 0.0;
    else
      for (int i = 0; i < m; ++i) cj[i] *= beta;
  }
}

/// C = beta C + alpha sum_p A_{a_p} B_{b_p} on a dense m x n C tile, `per_gemm` products per GEMM.
/// `work` holds 2 nb (per_gemm * max_width) + kmax_a kmax_b doubles.
template <class Pairs>
void dense_tile_update(const tile_access& A, const tile_access& B, const Pairs& pairs, int g,
                       int count, double alpha, double beta, double* c, int ldc, int m, int n,
                       int per_gemm, double* work) {
  const int nb = A.nb, w = max_width(A, B);
  double* L = work;
  double* R = L + std::size_t(nb) * per_gemm * w;
  double* S = R + std::size_t(nb) * per_gemm * w;
  if (count == 0) return scale(m, n, beta, c, ldc);
  for (int p0 = 0; p0 < count; p0 += per_gemm) {
    const int p1 = std::min(count, p0 + per_gemm);
    int width = 0;
    for (int p = p0; p < p1; ++p) {
      const int a = pairs.a_tile(g, p), b = pairs.b_tile(g, p);
      if (product_width(A, a, B, b) >= 0) width += gather_product(A, a, B, b, L, R, width, S);
    }
    if (width > 0)
      hb::gemm(col, N, T, m, n, width, alpha, L, nb, R, nb, beta, c, ldc);
    else
      scale(m, n, beta, c, ldc);
    beta = 1.0;
    for (int p = p0; p < p1; ++p) {  // products of two dense tiles
      const int a = pairs.a_tile(g, p), b = pairs.b_tile(g, p);
      if (product_width(A, a, B, b) < 0)
        hb::gemm(col, N, N, m, n, A.col_extent(a), alpha, A.dense_of(a), nb, B.dense_of(b), nb, 1.0,
                 c, ldc);
    }
  }
}

/// Doubles of dense_tile_update's workspace.
inline std::size_t dense_tile_work(const tile_access& A, const tile_access& B, int per_gemm) {
  return 2 * std::size_t(A.nb) * per_gemm * max_width(A, B) + std::size_t(A.kmax) * B.kmax;
}

/// Products per GEMM: `requested` (0: all of them, as far as the workspace budget allows for
/// `threads` threads), at least 1, at most `count`.
inline int products_per_gemm(const tile_access& A, const tile_access& B, int count, int requested,
                             std::size_t budget, int threads) {
  if (count <= 0) return 1;
  int per = requested > 0 ? requested : count;
  per = std::min(per, count);
  const std::size_t one = 2 * std::size_t(A.nb) * max_width(A, B) * sizeof(double);
  const std::size_t fit = one > 0 ? budget / (std::size_t(std::max(threads, 1)) * one) : per;
  if (std::size_t(per) > fit) per = static_cast<int>(std::max<std::size_t>(fit, 1));
  return per;
}

}  // namespace nearsparse::tlr::detail::host
