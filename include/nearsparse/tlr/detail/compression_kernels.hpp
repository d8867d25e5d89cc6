#pragma once
// The per-tile compression kernels: one team per low-rank tile, reading the tile straight from the
// dense matrix, workspace from a slice of a global array; and the dispatch to the specialized
// paths (the host overloads on Kokkos::OpenMP and Kokkos::Serial, src/tlr/host_compression.cpp:
// LAPACK and BLAS on each tile, one thread per tile; the overload on Kokkos::Cuda,
// src/tlr/cuda_compression.cpp: the randomized method batched over tiles with cuBLAS).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/options.hpp>
#include <nearsparse/tlr/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace nearsparse::tlr::detail {

/// What every compression kernel shares: the source, the destination and the tile geometry.
template <class AView, class MemorySpace>
struct compression_target {
  using factor_view = typename tlr_matrix<MemorySpace>::factor_view;
  AView a;
  factor_view u, v;
  Kokkos::View<int*, MemorySpace> ranks;
  Kokkos::View<double*, MemorySpace> errors;    // per tile: the Frobenius error made
  Kokkos::View<const int*, MemorySpace> tiles;  // the low-rank tiles, by number
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> work;
  Kokkos::View<int**, Kokkos::LayoutLeft, MemorySpace> iwork;
  int first = 0;  // index into `tiles` of this launch's first tile
  int tile_rows = 0, nb = 0, rows = 0, cols = 0, max_rank = 0, fixed_rank = -1;
  double tolerance = 0;

  struct tile_frame {
    int t, row0, col0, m, n;
  };
  KOKKOS_INLINE_FUNCTION tile_frame frame(int league_rank) const {
    const int t = tiles(first + league_rank);
    const int i = t % tile_rows, j = t / tile_rows;
    const int row0 = i * nb, col0 = j * nb;
    return {t, row0, col0, rows - row0 < nb ? rows - row0 : nb,
            cols - col0 < nb ? cols - col0 : nb};
  }
  /// Writes the first k columns of the factors (columns perm[0..k) of the sources, rows beyond the
  /// tile's extents and columns beyond k as zero), the rank and the error.
  template <class Team>
  KOKKOS_INLINE_FUNCTION void store(const Team& team, const tile_frame& f, int k, const int* perm,
                                    const double* us, int ldu, const double* vs, int ldv,
                                    double error) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, max_rank), [&](const int l) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int r) {
        u(r, l, f.t) = l < k && r < f.m ? us[r + perm[l] * ldu] : 0.0;
        v(r, l, f.t) = l < k && r < f.n ? vs[r + perm[l] * ldv] : 0.0;
      });
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      ranks(f.t) = k;
      errors(f.t) = error;
    });
  }
  KOKKOS_INLINE_FUNCTION int cap(const tile_frame& f) const {
    int c = max_rank < f.m ? max_rank : f.m;
    return c < f.n ? c : f.n;
  }
};

/// Randomized SVD of each tile T (m x n): Y = T Omega (ell columns), power iterations with
/// re-orthonormalization, Q = qr(Y), B^T = T^T Q, one-sided Jacobi on B^T = W Sigma Vh^T, so
/// T ~ (Q Vh) Sigma W^T: U = Q Vh (orthonormal), V = W Sigma (the rotated columns of B^T). The
/// error of rank k is sqrt(|T - Q B|_F^2 + sum_{l >= k} sigma_l^2), the first term computed.
template <class AView, class MemorySpace>
struct randomized_compression {
  compression_target<AView, MemorySpace> c;
  int ell = 0, power_iterations = 0;
  std::uint64_t seed = 0;

  static int doubles_per_tile(int nb, int ell) { return 4 * nb * ell + ell * ell + 2 * ell; }
  static int ints_per_tile(int ell) { return ell + 1; }

  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int lr = team.league_rank();
    const auto f = c.frame(lr);
    const int nb = c.nb;
    double* Y = &c.work(0, lr);
    double* Q = Y + nb * ell;
    double* BT = Q + nb * ell;
    double* UF = BT + nb * ell;
    double* Vh = UF + nb * ell;
    double* tau = Vh + ell * ell;
    double* sigma = tau + ell;
    int* perm = &c.iwork(0, lr);
    int* flag = perm + ell;
    const auto& a = c.a;
    const int row0 = f.row0, col0 = f.col0, m = f.m, n = f.n;

    // Y = T Omega, Omega uniform in [-1, 1) from (seed, tile, column, row).
    const std::uint64_t stream = omega_stream(seed, f.t);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, ell), [&](const int l) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int r) {
        double s = 0;
        if (r < m)
          for (int q = 0; q < n; ++q) s += a(row0 + r, col0 + q) * omega_entry(stream, q, l, ell);
        Y[r + l * nb] = s;
      });
    });
    team.team_barrier();
    for (int it = 0; it < power_iterations; ++it) {
      orthonormal_basis(team, Y, Q, tau);
      times_transpose(team, f, Q, BT);  // BT = T^T Q
      orthonormal_basis(team, BT, Q, tau);
      times(team, f, Q, Y);  // Y = T Q
    }
    orthonormal_basis(team, Y, Q, tau);
    times_transpose(team, f, Q, BT);
    team_jacobi_svd(team, nb, ell, BT, nb, Vh, ell, sigma, perm, flag);
    team_gemm_nx(team, false, nb, ell, ell, 1.0, Q, nb, Vh, ell, 0.0, UF, nb);  // U = Q Vh
    // |T - U (B^T Vh)^T|_F^2, the range finder's residual.
    const double residual2 = team_sum(team, m, n, [&](const int r, const int q) {
      double x = a(row0 + r, col0 + q);
      for (int l = 0; l < ell; ++l) x -= UF[r + l * nb] * BT[q + l * nb];
      return x * x;
    });
    // Every thread makes the same (cheap, sequential) choice from the same values.
    double error = 0;
    const int k = choose_rank(sigma, perm, ell, c.fixed_rank, c.tolerance, c.cap(f),
                              ::sqrt(residual2), &error);
    c.store(team, f, k, perm, UF, nb, BT, nb, error);
  }

 private:
  // Q = the orthonormal basis of the columns of X (nb x ell); X is overwritten.
  template <class Team>
  KOKKOS_INLINE_FUNCTION void orthonormal_basis(const Team& team, double* X, double* Q,
                                                double* tau) const {
    team_orthonormal_basis(team, c.nb, ell, X, c.nb, Q, c.nb, tau);
  }
  // out (nb x ell) = T^T X; rows of out beyond the tile's columns are zero.
  template <class Team, class Frame>
  KOKKOS_INLINE_FUNCTION void times_transpose(const Team& team, const Frame& f, const double* X,
                                              double* out) const {
    const int nb = c.nb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb * ell), [&](const int e) {
      const int q = e % nb, l = e / nb;
      double s = 0;
      if (q < f.n)
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, f.m),
            [&](const int r, double& acc) { acc += c.a(f.row0 + r, f.col0 + q) * X[r + l * nb]; },
            s);
      Kokkos::single(Kokkos::PerThread(team), [&]() { out[q + l * nb] = s; });
    });
    team.team_barrier();
  }
  // out (nb x ell) = T X; rows beyond the tile's rows are zero.
  template <class Team, class Frame>
  KOKKOS_INLINE_FUNCTION void times(const Team& team, const Frame& f, const double* X,
                                    double* out) const {
    const int nb = c.nb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, ell), [&](const int l) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int r) {
        double s = 0;
        if (r < f.m)
          for (int q = 0; q < f.n; ++q) s += c.a(f.row0 + r, f.col0 + q) * X[q + l * nb];
        out[r + l * nb] = s;
      });
    });
    team.team_barrier();
  }
};

/// Exact SVD of each tile by one-sided Jacobi on W = T^T (n x m, its m columns rotated):
/// W Vh = W' with orthogonal columns, so T = Vh Sigma (W'/Sigma)^T: U = Vh, V = W'.
template <class AView, class MemorySpace>
struct jacobi_compression {
  compression_target<AView, MemorySpace> c;

  static std::size_t doubles_per_tile(int nb) { return 2 * std::size_t(nb) * nb + nb; }
  static int ints_per_tile(int nb) { return nb + 1; }

  template <class Team>
  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int lr = team.league_rank();
    const auto f = c.frame(lr);
    const int nb = c.nb;
    double* W = &c.work(0, lr);
    double* Vh = W + std::size_t(nb) * nb;
    double* sigma = Vh + std::size_t(nb) * nb;
    int* perm = &c.iwork(0, lr);
    int* flag = perm + nb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, f.m), [&](const int r) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, f.n),
                           [&](const int q) { W[q + r * nb] = c.a(f.row0 + r, f.col0 + q); });
    });
    team.team_barrier();
    team_jacobi_svd(team, f.n, f.m, W, nb, Vh, nb, sigma, perm, flag);
    double error = 0;
    const int k = choose_rank(sigma, perm, f.m, c.fixed_rank, c.tolerance, c.cap(f), 0.0, &error);
    c.store(team, f, k, perm, Vh, nb, W, nb, error);
  }
};

/// A compression in raw form for the specialized paths: A's element (r, c) is at
/// a[r * a_row_stride + c * a_col_stride]; the factors, ranks and errors are the output matrix's
/// arrays; `tiles` lists the low-rank tiles by number (a host array).
struct compression_job {
  const double* a = nullptr;
  std::size_t a_row_stride = 0, a_col_stride = 0;
  double* u = nullptr;
  double* v = nullptr;
  int* ranks = nullptr;
  double* errors = nullptr;
  const int* tiles = nullptr;
  int tile_count = 0;
  int tile_rows = 0, nb = 0, rows = 0, cols = 0, max_rank = 0, fixed_rank = -1;
  /// Each tile's share of the error budget (an absolute Frobenius norm).
  double tolerance = 0;
};

/// Whether compress takes the specialized path on this execution space; the generic template has
/// none (implementation::specialized throws nearsparse::unsupported).
template <class ExecSpace>
bool take_specialized_compression(const ExecSpace&, const compression_options& options) {
  return nearsparse::detail::take_specialized_none<ExecSpace>(
      "nearsparse::tlr::compress", options.implementation,
      "compression runs in the portable kernels on this execution space");
}

/// The specialized compression of the job's tiles; only called where
/// take_specialized_compression said yes, which the generic template never does.
template <class ExecSpace>
void specialized_compress(const ExecSpace&, const compression_job&, const compression_options&) {
  throw nearsparse::runtime_error(
      "nearsparse::tlr::compress: no specialized compression on this execution space");
}

#ifdef KOKKOS_ENABLE_OPENMP
/// Host compression (LAPACK and BLAS on each tile) where this build has OpenBLAS; the portable
/// kernels otherwise (implementation::specialized throws nearsparse::unsupported there).
bool take_specialized_compression(const Kokkos::OpenMP& exec, const compression_options& options);
void specialized_compress(const Kokkos::OpenMP& exec, const compression_job& job,
                          const compression_options& options);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool take_specialized_compression(const Kokkos::Serial& exec, const compression_options& options);
void specialized_compress(const Kokkos::Serial& exec, const compression_job& job,
                          const compression_options& options);
#endif
#ifdef KOKKOS_ENABLE_CUDA
/// The randomized method batched over the tiles on the GPU (src/tlr/cuda_compression.cpp): the
/// products with the tiles through cuBLAS strided-batched DGEMMs, the orthonormalizations in
/// Householder kernels of one thread block per tile, the small SVDs in team kernels; taken where
/// Kokkos::Cuda's memory space is device memory and the method is randomized (the exact method runs
/// in the portable kernels).
bool take_specialized_compression(const Kokkos::Cuda& exec, const compression_options& options);
void specialized_compress(const Kokkos::Cuda& exec, const compression_job& job,
                          const compression_options& options);
#endif

}  // namespace nearsparse::tlr::detail
