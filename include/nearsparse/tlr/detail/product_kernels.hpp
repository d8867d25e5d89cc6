#pragma once
// The portable batched products, one team per C tile (a group of tile products):
//   dense_update   GEMM-LLD, C = beta C + alpha A_t B_t on a dense C tile, for every kind of A and
//                  B tile (low rank or dense): for two low-rank tiles
//                  C += alpha U_a ((V_a^T U_b) V_b^T), three small GEMMs, the big one a rank-r_b
//                  update of C;
//   lowrank_update GEMM-LLL (the paper's Algorithm 1), C = beta C + alpha A_t B_t on a low-rank
//                  C tile: the product as a low-rank pair (P_u, P_v) of width min(r_a, r_b) is
//                  appended to C's factors, both concatenations are QR-factored, the small
//                  R_u R_v^T gets a one-sided Jacobi SVD, the rank is truncated, and the factors
//                  are rebuilt from the Householder reflectors.

#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/detail/tile_access.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::tlr::detail {

/// C (m x n, leading dimension ldc) = beta C (beta == 0: zero, C not read).
template <class Team>
KOKKOS_INLINE_FUNCTION void team_scale(const Team& team, int m, int n, double beta, double* C,
                                       int ldc) {
  if (beta == 1) return;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m), [&](const int i) {
      double* c = C + i + j * ldc;
      *c = beta == 0 ? 0.0 : beta * *c;
    });
  });
  team.team_barrier();
}

/// C (m x n) = beta C + alpha A_t B_t for tile a of A and tile b of B; `work` holds
/// kmax_a * kmax_b + nb * max(kmax_a, kmax_b) doubles.
template <class Team>
KOKKOS_INLINE_FUNCTION void dense_update(const Team& team, const tile_access& A, int a,
                                         const tile_access& B, int b, double alpha, double beta,
                                         double* C, int ldc, int m, int n, double* work) {
  const int nb = A.nb;
  const int inner = A.col_extent(a);
  const bool a_dense = A.slot(a) >= 0, b_dense = B.slot(b) >= 0;
  if (a_dense && b_dense) {
    team_gemm_nx(team, false, m, n, inner, alpha, A.dense_of(a), nb, B.dense_of(b), nb, beta, C,
                 ldc);
    return;
  }
  double* X = work;  // nb x max(kmax_a, kmax_b)
  if (a_dense) {     // C += alpha (D_a U_b) V_b^T
    const int rb = B.ranks[b];
    if (rb == 0) return team_scale(team, m, n, beta, C, ldc);
    team_gemm_nx(team, false, m, rb, inner, 1.0, A.dense_of(a), nb, B.u_of(b), nb, 0.0, X, nb);
    team_gemm_nx(team, true, m, n, rb, alpha, X, nb, B.v_of(b), nb, beta, C, ldc);
    return;
  }
  const int ra = A.ranks[a];
  if (b_dense) {  // C += alpha U_a (D_b^T V_a)^T
    if (ra == 0) return team_scale(team, m, n, beta, C, ldc);
    team_gemm_tn(team, n, ra, inner, 1.0, B.dense_of(b), nb, A.v_of(a), nb, 0.0, X, nb);
    team_gemm_nx(team, true, m, n, ra, alpha, A.u_of(a), nb, X, nb, beta, C, ldc);
    return;
  }
  const int rb = B.ranks[b];
  if (ra == 0 || rb == 0) return team_scale(team, m, n, beta, C, ldc);
  double* S = X + nb * (A.kmax > B.kmax ? A.kmax : B.kmax);  // ra x rb, leading dimension ra
  team_gemm_tn(team, ra, rb, inner, 1.0, A.v_of(a), nb, B.u_of(b), nb, 0.0, S, ra);
  team_gemm_nx(team, false, m, rb, ra, 1.0, A.u_of(a), nb, S, ra, 0.0, X, nb);
  team_gemm_nx(team, true, m, n, rb, alpha, X, nb, B.v_of(b), nb, beta, C, ldc);
}

inline int dense_update_work(const tile_access& A, const tile_access& B) {
  return A.kmax * B.kmax + A.nb * (A.kmax > B.kmax ? A.kmax : B.kmax);
}

/// Workspace of lowrank_update: two panels of nb x w, w = kmax_c + max(kmax_a, kmax_b), the small
/// matrices and the reflectors' scalars; ints for the Jacobi permutation and flag.
struct lowrank_work {
  int nb = 0, w = 0, ka = 0, kb = 0;
  KOKKOS_INLINE_FUNCTION int doubles() const { return 2 * nb * w + 2 * w * w + ka * kb + 3 * w; }
  KOKKOS_INLINE_FUNCTION int ints() const { return w + 1; }
};

/// The outcome of one recompression, for the report.
struct lowrank_outcome {
  double dropped2 = 0;  // squared Frobenius norm of what was truncated
  bool at_cap = false;  // the accuracy needed more than C's max_rank
};

/// Tile c of the TLR matrix C (low rank) = beta C + alpha A_t B_t; returns what was dropped.
/// fixed_rank >= 0 truncates to that rank, otherwise to relative accuracy `accuracy`.
template <class Team>
KOKKOS_INLINE_FUNCTION lowrank_outcome lowrank_update(const Team& team, const tile_access& A, int a,
                                                      const tile_access& B, int b,
                                                      const tile_access& C, int c, double alpha,
                                                      double beta, double accuracy, int fixed_rank,
                                                      const lowrank_work& lw, double* work,
                                                      int* iwork) {
  lowrank_outcome out;
  const int nb = lw.nb, w = lw.w;
  double* Wu = work;
  double* Wv = Wu + nb * w;
  double* Mt = Wv + nb * w;
  double* Vh = Mt + w * w;
  double* S = Vh + w * w;
  double* tau_u = S + lw.ka * lw.kb;
  double* tau_v = tau_u + w;
  double* sigma = tau_v + w;
  int* perm = iwork;
  int* flag = iwork + w;
  const int inner = A.col_extent(a);
  const int m = C.row_extent(c), n = C.col_extent(c);
  const int rc = C.ranks[c];
  double* Cu = C.u_of(c);
  double* Cv = C.v_of(c);

  // The product term as P_u P_v^T, written after C's factors: Wu = [C_u | P_u],
  // Wv = [beta C_v | alpha P_v].
  const bool a_dense = A.slot(a) >= 0, b_dense = B.slot(b) >= 0;
  const int ra = a_dense ? -1 : A.ranks[a];
  const int rb = b_dense ? -1 : B.ranks[b];
  int p = 0;
  double* Pu = Wu + nb * rc;
  double* Pv = Wv + nb * rc;
  if (a_dense) {  // (D_a U_b) V_b^T
    p = rb;
    if (p > 0) {
      team_gemm_nx(team, false, nb, p, inner, 1.0, A.dense_of(a), nb, B.u_of(b), nb, 0.0, Pu, nb);
      team_copy(team, nb, p, p, B.v_of(b), nb, Pv, nb);
    }
  } else if (b_dense) {  // U_a (D_b^T V_a)^T
    p = ra;
    if (p > 0) {
      team_copy(team, nb, p, p, A.u_of(a), nb, Pu, nb);
      team_gemm_tn(team, nb, p, inner, 1.0, B.dense_of(b), nb, A.v_of(a), nb, 0.0, Pv, nb);
    }
  } else if (ra > 0 && rb > 0) {  // U_a S V_b^T with S = V_a^T U_b (ra x rb)
    team_gemm_tn(team, ra, rb, inner, 1.0, A.v_of(a), nb, B.u_of(b), nb, 0.0, S, ra);
    if (ra <= rb) {  // U_a (V_b S^T)^T
      p = ra;
      team_copy(team, nb, p, p, A.u_of(a), nb, Pu, nb);
      team_gemm_nx(team, true, nb, p, rb, 1.0, B.v_of(b), nb, S, ra, 0.0, Pv, nb);
    } else {  // (U_a S) V_b^T
      p = rb;
      team_gemm_nx(team, false, nb, p, ra, 1.0, A.u_of(a), nb, S, ra, 0.0, Pu, nb);
      team_copy(team, nb, p, p, B.v_of(b), nb, Pv, nb);
    }
  }
  if (p == 0 || alpha == 0) {  // nothing to add: C = beta C
    if (beta == 0) {
      team_scale(team, nb, C.kmax, 0.0, Cv, nb);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { C.ranks[c] = 0; });
      team.team_barrier();
      team_scale(team, nb, C.kmax, 0.0, Cu, nb);
    } else {
      team_scale(team, nb, rc, beta, Cv, nb);
    }
    return out;
  }
  // Scale the product's right factor by alpha and C's by beta, and copy C's factors in.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rc + p), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int i) {
      if (j < rc) {
        Wu[i + j * nb] = Cu[i + j * nb];
        Wv[i + j * nb] = beta == 0 ? 0.0 : beta * Cv[i + j * nb];
      } else {
        Wv[i + j * nb] *= alpha;
      }
    });
  });
  team.team_barrier();

  const int rhat = rc + p;
  const int q = rhat < nb ? rhat : nb;
  team_geqrf(team, nb, rhat, Wu, nb, tau_u);
  team_geqrf(team, nb, rhat, Wv, nb, tau_v);
  // M^T = R_v R_u^T (q x q); R is upper trapezoidal, q x rhat.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, q * q), [&](const int e) {
    const int i = e % q, j = e / q;
    const int l0 = i > j ? i : j;
    double s = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, l0, rhat),
        [&](const int l, double& acc) { acc += Wv[i + l * nb] * Wu[j + l * nb]; }, s);
    Kokkos::single(Kokkos::PerThread(team), [&]() { Mt[i + j * q] = s; });
  });
  team.team_barrier();
  // M^T Vh = W (orthogonal columns): M = Vh W^T, so C = (Q_u Vh) (Q_v W)^T.
  team_jacobi_svd(team, q, q, Mt, q, Vh, q, sigma, perm, flag);
  double norm2 = 0;
  for (int l = 0; l < q; ++l) norm2 += sigma[l] * sigma[l];
  int cap = C.kmax < m ? C.kmax : m;
  cap = cap < n ? cap : n;
  double error = 0;
  const int k = choose_rank(sigma, perm, q, fixed_rank, accuracy * ::sqrt(norm2), cap, 0.0, &error);
  out.dropped2 = error * error;
  out.at_cap = fixed_rank < 0 && k == cap && error > accuracy * ::sqrt(norm2);
  // C_u = Q_u [Vh(:, perm[0:k]); 0], C_v = Q_v [W(:, perm[0:k]); 0]; columns from k on are zero.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C.kmax), [&](const int l) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int i) {
      const bool keep = l < k && i < q;
      Cu[i + l * nb] = keep ? Vh[i + perm[l] * q] : 0.0;
      Cv[i + l * nb] = keep ? Mt[i + perm[l] * q] : 0.0;
    });
  });
  team.team_barrier();
  team_apply_q(team, nb, k, q, Wu, nb, tau_u, Cu, nb);
  team_apply_q(team, nb, k, q, Wv, nb, tau_v, Cv, nb);
  // Rows beyond the tile's extents stay zero (rounding in the reflectors could touch them).
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](const int l) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int i) {
      if (i >= m) Cu[i + l * nb] = 0.0;
      if (i >= n) Cv[i + l * nb] = 0.0;
    });
  });
  Kokkos::single(Kokkos::PerTeam(team), [&]() { C.ranks[c] = k; });
  team.team_barrier();
  return out;
}

}  // namespace nearsparse::tlr::detail
