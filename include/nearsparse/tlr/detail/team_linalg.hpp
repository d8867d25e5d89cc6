#pragma once
// Dense linear algebra for one team on one small problem: the building blocks of the portable
// batched kernels (one team per tile). Matrices are column-major, given as a pointer and a leading
// dimension; they live in global memory (a slice of a workspace) so tiles of any size fit.
//
// Parallel layout: threads of the team (TeamThreadRange) take columns or output entries, the
// vector lanes of a thread (ThreadVectorRange) take rows, so consecutive lanes touch consecutive
// addresses. Every routine ends with a team barrier: its results are visible to the whole team.

#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/random.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nearsparse::tlr::detail {

/// The team shape of the tile kernels: 8 warps of 32 lanes on a GPU, one thread on a host backend
/// (host teams larger than one only add barriers there).
template <class ExecSpace>
Kokkos::TeamPolicy<ExecSpace> tile_team_policy(const ExecSpace& exec, int league) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename ExecSpace::memory_space>::accessible) {
    return Kokkos::TeamPolicy<ExecSpace>(exec, league, 1, 1);
  } else {
    return Kokkos::TeamPolicy<ExecSpace>(exec, league, 8, 32);
  }
}

/// Teams per launch when each needs `bytes_per_team` of workspace: as many as `budget` allows, at
/// least one, at most `count`.
inline std::size_t teams_per_launch(std::size_t count, std::size_t bytes_per_team,
                                    std::size_t budget) {
  const std::size_t fit = budget / (bytes_per_team > 0 ? bytes_per_team : 1);
  return fit < 1 ? 1 : (fit < count ? fit : count);
}

/// Runs the team functor `kernel` (which reads its first team's index from kernel.first) over
/// `count` teams, `batch` per launch, so its workspace holds `batch` slices.
template <class ExecSpace, class Kernel>
void launch_in_batches(const ExecSpace& exec, const std::string& label, std::size_t count,
                       std::size_t batch, Kernel kernel) {
  for (std::size_t first = 0; first < count; first += batch) {
    kernel.first = static_cast<int>(first);
    const std::size_t league = batch < count - first ? batch : count - first;
    Kokkos::parallel_for(label, tile_team_policy(exec, static_cast<int>(league)), kernel);
  }
}

/// Sum of f(i, j) over the m x n index range, reduced across the team; every thread gets it, and
/// the team may reduce again at once (core/detail/team_reduce.hpp).
template <class Team, class F>
KOKKOS_INLINE_FUNCTION double team_sum(const Team& team, int m, int n, const F& f) {
  double total = 0;
  nearsparse::detail::team_reduce_fenced(
      team, n,
      [&](const int j, double& outer) {
        double column = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, m), [&](const int i, double& acc) { acc += f(i, j); },
            column);
        Kokkos::single(Kokkos::PerThread(team), [&]() { outer += column; });
      },
      total);
  return total;
}

/// C (m x n) = alpha * op(A) * B + beta * C for a long m and a short inner dimension k:
/// op(A) is A (m x k) or, with trans_b, B is read as B^T from an n x k array. Lanes take rows,
/// threads take columns. beta == 0 does not read C.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_gemm_nx(const Team& team, bool trans_b, int m, int n, int k,
                                         double alpha, const double* A, int lda, const double* B,
                                         int ldb, double beta, double* C, int ldc) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m), [&](const int i) {
      double s = 0;
      for (int l = 0; l < k; ++l) s += A[i + l * lda] * (trans_b ? B[j + l * ldb] : B[l + j * ldb]);
      double* c = C + i + j * ldc;
      *c = (beta == 0 ? 0.0 : beta * *c) + alpha * s;
    });
  });
  team.team_barrier();
}

/// C (m x n) = alpha * A^T * B + beta * C for short m, n and a long inner dimension k: A is k x m,
/// B is k x n. Each output entry is one dot product, reduced across the lanes of a thread.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_gemm_tn(const Team& team, int m, int n, int k, double alpha,
                                         const double* A, int lda, const double* B, int ldb,
                                         double beta, double* C, int ldc) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * n), [&](const int e) {
    const int i = e % m, j = e / m;
    const double* a = A + i * lda;
    const double* b = B + j * ldb;
    double s = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, k), [&](const int l, double& acc) { acc += a[l] * b[l]; },
        s);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      double* c = C + i + j * ldc;
      *c = (beta == 0 ? 0.0 : beta * *c) + alpha * s;
    });
  });
  team.team_barrier();
}

/// dst (m x n) = src (m x n); columns n .. n_zero - 1 of dst are set to zero.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_copy(const Team& team, int m, int n, int n_zero, const double* src,
                                      int lds, double* dst, int ldd) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n_zero > n ? n_zero : n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m),
                         [&](const int i) { dst[i + j * ldd] = j < n ? src[i + j * lds] : 0.0; });
  });
  team.team_barrier();
}

/// Applies the reflector H = I - t v v^T (v of length len, v[0] = 1 implied) to columns
/// c_begin .. c_end - 1 of C (len rows from C): w = v^T col, col -= t w v, one thread per column.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_reflect(const Team& team, const double* v, int len, double t,
                                         double* C, int ldc, int c_begin, int c_end) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c_begin, c_end), [&](const int c) {
    double* col = C + c * ldc;
    double w = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, len),
        [&](const int i, double& s) { s += (i == 0 ? 1.0 : v[i]) * col[i]; }, w);
    w *= t;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, len),
                         [&](const int i) { col[i] -= w * (i == 0 ? 1.0 : v[i]); });
  });
  team.team_barrier();
}

/// Householder QR of the m x n matrix A in place, as LAPACK's geqrf: R on and above the
/// diagonal, the reflectors v_j (v_j(j) = 1 implied) below it, tau[min(m, n)].
template <class Team>
KOKKOS_INLINE_FUNCTION void team_geqrf(const Team& team, int m, int n, double* A, int lda,
                                       double* tau) {
  const int steps = m < n ? m : n;
  for (int j = 0; j < steps; ++j) {
    double* a = A + j + j * lda;
    const int len = m - j;
    double tail = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamVectorRange(team, 1, len), [&](const int i, double& s) { s += a[i] * a[i]; },
        tail);
    const double alpha = a[0];
    double beta = alpha, t = 0, scale = 0;
    if (tail > 0) {
      const double norm = ::sqrt(alpha * alpha + tail);
      beta = alpha >= 0 ? -norm : norm;
      t = (beta - alpha) / beta;
      scale = 1.0 / (alpha - beta);
    }
    team.team_barrier();  // every thread has read a[0] before it changes
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, 1, len),
                         [&](const int i) { a[i] *= scale; });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      a[0] = beta;
      tau[j] = t;
    });
    team.team_barrier();
    if (t == 0) continue;
    team_reflect(team, a, len, t, A + j, lda, j + 1, n);
  }
}

/// C (m x n) = Q C, Q = H_0 H_1 ... H_{k-1} from team_geqrf's reflectors in A (m x k) and tau.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_apply_q(const Team& team, int m, int n, int k, const double* A,
                                         int lda, const double* tau, double* C, int ldc) {
  for (int j = k - 1; j >= 0; --j) {
    const double t = tau[j];
    if (t == 0) continue;
    team_reflect(team, A + j + j * lda, m - j, t, C + j, ldc, 0, n);
  }
}

/// Sets the m x n matrix C to the first n columns of the identity.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_identity(const Team& team, int m, int n, double* C, int ldc) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m),
                         [&](const int i) { C[i + j * ldc] = i == j ? 1.0 : 0.0; });
  });
  team.team_barrier();
}

/// The randomized SVD's sample matrix Omega, one definition for every path (portable, host, CUDA)
/// so that all draw the same samples: tile t's stream is seed ^ (t << 20), and entry (q, l) of its
/// nb x ell Omega is uniform in [-1, 1) from index q * ell + l of the stream.
KOKKOS_INLINE_FUNCTION std::uint64_t omega_stream(std::uint64_t seed, int tile) {
  return seed ^ (static_cast<std::uint64_t>(tile) << 20);
}
KOKKOS_INLINE_FUNCTION double omega_entry(std::uint64_t stream, int q, int l, int ell) {
  return nearsparse::detail::scale_uniform(
      nearsparse::detail::uniform01(stream, std::uint64_t(q) * ell + l, 0), -1, 1);
}

/// Q (m x n) = the orthonormal basis of the columns of X (m x n, m >= n or not) from Householder
/// QR: X is overwritten with the reflectors, tau[n] with their factors.
template <class Team>
KOKKOS_INLINE_FUNCTION void team_orthonormal_basis(const Team& team, int m, int n, double* X,
                                                   int ldx, double* Q, int ldq, double* tau) {
  team_geqrf(team, m, n, X, ldx, tau);
  team_identity(team, m, n, Q, ldq);
  team_apply_q(team, m, n, n < m ? n : m, X, ldx, tau, Q, ldq);
}

/// One-sided Jacobi SVD (Hestenes): rotates the n columns of A (m x n) until they are mutually
/// orthogonal, accumulating the rotations in V (n x n, set to the identity here), so that
/// A_in V = A_out, with A_out = U diag(sigma). Then sigma[j] = |A_out(:, j)| and perm lists the
/// columns by decreasing sigma. Pairs are visited in round-robin order, n/2 disjoint pairs at a
/// time in parallel. A pair counts as orthogonal when |a_p . a_q| <= sqrt(m) eps |a_p| |a_q| (the
/// rounding of the dot product itself, as LAPACK's dgesvj), or when a column is below eps^2 of the
/// whole matrix (such columns cannot matter to any truncation). `flag` is one int of workspace.
/// Returns the number of sweeps.
template <class Team>
KOKKOS_INLINE_FUNCTION int team_jacobi_svd(const Team& team, int m, int n, double* A, int lda,
                                           double* V, int ldv, double* sigma, int* perm, int* flag,
                                           int max_sweeps = 40) {
  team_identity(team, n, n, V, ldv);
  const int players = n + (n % 2);  // an odd n gets a dummy column that never rotates
  const double total = team_sum(
      team, m, n, [&](const int i, const int j) { return A[i + j * lda] * A[i + j * lda]; });
  const double eps = 2.220446049250313e-16;
  const double tol = ::sqrt(double(m)) * eps;
  const double floor = total * eps * eps * eps * eps;
  int sweep = 0;
  for (; sweep < max_sweeps && n > 1; ++sweep) {
    Kokkos::single(Kokkos::PerTeam(team), [&]() { *flag = 0; });
    team.team_barrier();
    for (int round = 0; round < players - 1; ++round) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, players / 2), [&](const int k) {
        auto seat = [&](int x) { return 1 + (x + round) % (players - 1); };
        const int p = k == 0 ? 0 : seat(k);
        const int q = k == 0 ? seat(0) : seat(players - 1 - k);
        if (p >= n || q >= n) return;
        double* ap = A + p * lda;
        double* aq = A + q * lda;
        double app = 0, aqq = 0, apq = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, m), [&](const int i, double& s) { s += ap[i] * ap[i]; },
            app);
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, m), [&](const int i, double& s) { s += aq[i] * aq[i]; },
            aqq);
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, m), [&](const int i, double& s) { s += ap[i] * aq[i]; },
            apq);
        // Converged pair: orthogonal to working precision (or a zero column).
        if (!(::fabs(apq) > tol * ::sqrt(app * aqq)) || app <= floor || aqq <= floor) return;
        const double zeta = (aqq - app) / (2 * apq);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (::fabs(zeta) + ::sqrt(1 + zeta * zeta));
        const double c = 1 / ::sqrt(1 + t * t), s = c * t;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, m), [&](const int i) {
          const double x = ap[i], y = aq[i];
          ap[i] = c * x - s * y;
          aq[i] = s * x + c * y;
        });
        double* vp = V + p * ldv;
        double* vq = V + q * ldv;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n), [&](const int i) {
          const double x = vp[i], y = vq[i];
          vp[i] = c * x - s * y;
          vq[i] = s * x + c * y;
        });
        Kokkos::single(Kokkos::PerThread(team), [&]() { *flag = 1; });
      });
      team.team_barrier();
    }
    const int rotated = *flag;
    team.team_barrier();  // everyone has read the flag before the next sweep resets it
    if (rotated == 0) break;
  }
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const int j) {
    double s = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, m),
        [&](const int i, double& acc) { acc += A[i + j * lda] * A[i + j * lda]; }, s);
    Kokkos::single(Kokkos::PerThread(team), [&]() { sigma[j] = ::sqrt(s); });
  });
  team.team_barrier();
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    for (int j = 0; j < n; ++j) perm[j] = j;
    for (int j = 1; j < n; ++j) {  // insertion sort, decreasing sigma (n is small)
      const int x = perm[j];
      int i = j - 1;
      while (i >= 0 && sigma[perm[i]] < sigma[x]) {
        perm[i + 1] = perm[i];
        --i;
      }
      perm[i + 1] = x;
    }
  });
  team.team_barrier();
  return sweep;
}

/// The rank to keep from singular values sigma[perm[0]] >= sigma[perm[1]] >= ... (n of them):
/// with fixed_rank >= 0, min(fixed_rank, cap); otherwise the smallest k with
/// extra^2 + sum_{l >= k} sigma_l^2 <= tolerance^2, capped at cap (extra is an error already made,
/// such as a range finder's residual). Zero singular values are never kept. Writes the error of
/// the choice, sqrt(extra^2 + sum_{l >= k} sigma_l^2), to *error. The tails are summed from the
/// smallest value up: a difference of large sums would lose the small ones. One thread.
KOKKOS_INLINE_FUNCTION int choose_rank(const double* sigma, const int* perm, int n, int fixed_rank,
                                       double tolerance, int cap, double extra, double* error) {
  if (cap > n) cap = n;
  if (cap < 0) cap = 0;
  int nonzero = 0;
  while (nonzero < n && sigma[perm[nonzero]] > 0) ++nonzero;
  int k = nonzero;
  double tail2 = extra * extra;
  if (fixed_rank >= 0) {
    k = fixed_rank < k ? fixed_rank : k;
  } else {
    const double tol2 = tolerance * tolerance;
    while (k > 0 && tail2 + sigma[perm[k - 1]] * sigma[perm[k - 1]] <= tol2) {
      tail2 += sigma[perm[k - 1]] * sigma[perm[k - 1]];
      --k;
    }
  }
  if (k > cap) k = cap;
  double dropped = extra * extra;
  for (int l = n - 1; l >= k; --l) dropped += sigma[perm[l]] * sigma[perm[l]];
  *error = ::sqrt(dropped);
  return k;
}

}  // namespace nearsparse::tlr::detail
