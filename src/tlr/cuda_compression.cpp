// Compression on Kokkos::Cuda: the portable kernel's randomized SVD batched over all tiles
// (cuda_tile_compression.hpp). The portable kernel runs one team per tile and reads the tile once
// per sample column in each product with it; here the tiles are packed once and every product
// with them is one cuBLAS strided-batched DGEMM over the batch, so each product reads each tile
// once at the GPU's GEMM speed. The tall QR factorizations are block kernels that spread each
// Householder step over all of a block's threads; the SVD of B^T goes through its QR, so the
// Jacobi rotations act on ell x ell matrices rather than nb x ell panels. Omega, the power
// iterations, the residual and the truncation rule are the portable kernel's, so both paths keep
// the same accuracy.

#include "cuda_tile_compression.hpp"

#include "../core/cuda/check.hpp"
#include "../core/cuda/handles.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/detail/compression_kernels.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>

#include <cublas_v2.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace nearsparse::tlr::detail {

namespace cuda_tiles {

namespace {

namespace cuda = nearsparse::detail::cuda;
using team_member = Kokkos::TeamPolicy<Kokkos::Cuda>::member_type;

/// The workspace of a batch, one region per quantity so that tile g's panel of each is at a fixed
/// stride (what the strided-batched GEMMs take).
struct regions {
  std::size_t panel = 0;  // nb * ell
  double* x = nullptr;    // Omega, then the power iterations' second basis, then U = Q Vh
  double* y = nullptr;    // T Omega, then the reflectors of its QR and B^T's, then V = B^T Vh
  double* q = nullptr;    // the orthonormal basis
  double* bt = nullptr;   // B^T = T^T Q
  double* vh = nullptr;   // ell x ell
  double* r = nullptr;    // ell x ell: R of B^T = Q2 R, rotated by the SVD
  double* tau = nullptr;  // ell
  double* sigma = nullptr;
  double* norms = nullptr;  // 2 per tile: |T|_F^2, then the residual |T - Q B|_F^2
  int* ints = nullptr;      // ell + 1 per tile: the order of the singular values, a flag

  regions(double* work, int count, int nb, int ell) : panel(std::size_t(nb) * ell) {
    const std::size_t c = static_cast<std::size_t>(count);
    x = work;
    y = x + c * panel;
    q = y + c * panel;
    bt = q + c * panel;
    vh = bt + c * panel;
    r = vh + c * std::size_t(ell) * ell;
    tau = r + c * std::size_t(ell) * ell;
    sigma = tau + c * ell;
    norms = sigma + c * ell;
    ints = reinterpret_cast<int*>(norms + 2 * c);
  }
};

KOKKOS_INLINE_FUNCTION int extent_of(int total, int start, int nb) {
  return total - start < nb ? total - start : nb;
}

/// Omega of every tile (nb x ell, rows beyond the tile's columns zero): the portable kernel's.
struct omega_fill {
  packed_tiles in;
  double* x;
  int ell;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t e) const {
    const std::size_t panel = std::size_t(in.nb) * ell;
    const int g = static_cast<int>(e / panel);
    const int rem = static_cast<int>(e % panel);
    const int q = rem % in.nb, l = rem / in.nb;
    const int t = in.tiles[g];
    const int n = extent_of(in.cols, (t / in.tile_rows) * in.nb, in.nb);
    x[e] = q < n ? omega_entry(omega_stream(seed, t), q, l, ell) : 0.0;
  }
};

/// norms[2 g + slot] = |tile g|_F^2.
struct tile_norms {
  packed_tiles in;
  double* norms;
  int slot;
  KOKKOS_INLINE_FUNCTION void operator()(const team_member& team) const {
    const int g = team.league_rank(), nb = in.nb;
    const double* t = in.packed + std::size_t(g) * nb * nb;
    const double s = team_sum(team, nb, nb, [&](const int r, const int c) {
      const double v = t[r + std::size_t(c) * nb];
      return v * v;
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { norms[2 * g + slot] = s; });
  }
};

// Householder QR of tall panels (nb x ell, leading dimension nb), one block per tile. The team
// kernels of team_linalg.hpp give each column to one warp and walk its rows; here every step
// spreads the rows over the whole block, so each element is read once per step with all the
// block's loads in flight: the panels are far larger than shared memory and the steps are
// latency-bound.
constexpr int qr_threads = 256;
constexpr int qr_warps = qr_threads / 32;
constexpr int qr_chunk = 64;  // columns reduced at a time

/// The sum of every thread's v, returned to all; `sh` holds qr_warps doubles.
__device__ double block_sum(double v, double* sh) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // earlier readers of sh are done
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  double s = 0;
  for (int k = 0; k < qr_warps; ++k) s += sh[k];
  return s;
}

/// C(j:m, c0:c1) = (I - t v v^T) C(j:m, c0:c1), v = (1, a[j+1 .. m-1]) (a: the reflector's
/// column, indexed by row; it shares no element with the columns of C touched). Four columns at a
/// time, so each thread has four independent loads in flight.
__device__ void reflect(const double* __restrict__ a, int j, int m, double t,
                        double* __restrict__ c, int ldc, int c0, int c1) {
  __shared__ double part[qr_warps][qr_chunk];
  __shared__ double w[qr_chunk];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int b0 = c0; b0 < c1; b0 += qr_chunk) {
    const int b1 = b0 + qr_chunk < c1 ? b0 + qr_chunk : c1;
    for (int col = b0; col < b1; col += 4) {
      const int nc = b1 - col < 4 ? b1 - col : 4;
      double p[4] = {0, 0, 0, 0};
      const double* cc = c + std::size_t(col) * ldc;
      for (int r = j + threadIdx.x; r < m; r += qr_threads) {
        const double v = r == j ? 1.0 : a[r];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (u < nc) p[u] += v * cc[r + std::size_t(u) * ldc];
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int u = 0; u < 4; ++u) p[u] += __shfl_xor_sync(0xffffffffu, p[u], o);
      if (lane == 0)
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (u < nc) part[warp][col - b0 + u] = p[u];
    }
    __syncthreads();
    if (threadIdx.x < b1 - b0) {
      double s = 0;
      for (int k = 0; k < qr_warps; ++k) s += part[k][threadIdx.x];
      w[threadIdx.x] = t * s;
    }
    __syncthreads();
    for (int r = j + threadIdx.x; r < m; r += qr_threads) {
      const double v = r == j ? 1.0 : a[r];
      for (int col = b0; col < b1; ++col) c[r + std::size_t(col) * ldc] -= w[col - b0] * v;
    }
    __syncthreads();  // part and w are reused
  }
}

/// Householder QR of each block's panel x (m x n, m >= n) in place, as LAPACK's geqrf (and
/// team_geqrf); with q, also Q (m x n) = H_0 .. H_{n-1} I, formed backwards as LAPACK's org2r.
__global__ void householder_qr(double* x, std::size_t stride, double* tau_all, int m, int n,
                               double* q, std::size_t q_stride) {
  __shared__ double sh[qr_warps];
  double* a = x + blockIdx.x * stride;
  double* tau = tau_all + std::size_t(blockIdx.x) * n;
  for (int j = 0; j < n; ++j) {
    double* col = a + std::size_t(j) * m;
    const double alpha = col[j];
    double tail = 0;
    for (int r = j + 1 + threadIdx.x; r < m; r += qr_threads) tail += col[r] * col[r];
    tail = block_sum(tail, sh);  // also orders every read of col[j] before its change
    double beta = alpha, t = 0, scale = 0;
    if (tail > 0) {
      const double norm = sqrt(alpha * alpha + tail);
      beta = alpha >= 0 ? -norm : norm;
      t = (beta - alpha) / beta;
      scale = 1.0 / (alpha - beta);
    }
    for (int r = j + 1 + threadIdx.x; r < m; r += qr_threads) col[r] *= scale;
    if (threadIdx.x == 0) {
      col[j] = beta;
      tau[j] = t;
    }
    __syncthreads();
    if (t != 0) reflect(col, j, m, t, a, m, j + 1, n);
  }
  if (!q) return;
  double* qq = q + blockIdx.x * q_stride;
  for (int e = threadIdx.x; e < m * n; e += qr_threads) qq[e] = e % m == e / m ? 1.0 : 0.0;
  __syncthreads();
  for (int j = n - 1; j >= 0; --j)  // H_j leaves columns < j of the identity alone
    if (tau[j] != 0) reflect(a + std::size_t(j) * m, j, m, tau[j], qq, m, j, n);
}

/// The SVD of each tile's R (ell x ell, from the QR of a copy of B^T = Q2 R, in y): one-sided
/// Jacobi rotates R's columns (ell long rather than nb): R Vh = W2 Sigma. Then B^T Vh = Q2 W2 Sigma
/// is V (two batched GEMMs later form it and U = Q Vh).
struct small_svd {
  regions w;
  int nb, ell;
  KOKKOS_INLINE_FUNCTION void operator()(const team_member& team) const {
    const int g = team.league_rank();
    const double* qr = w.y + g * w.panel;
    double* rf = w.r + std::size_t(g) * ell * ell;
    int* perm = w.ints + std::size_t(g) * (ell + 1);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, ell), [&](const int j) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, ell), [&](const int i) {
        rf[i + j * ell] = i <= j ? qr[i + std::size_t(j) * nb] : 0.0;
      });
    });
    team.team_barrier();
    team_jacobi_svd(team, ell, ell, rf, ell, w.vh + std::size_t(g) * ell * ell, ell,
                    w.sigma + std::size_t(g) * ell, perm, perm + ell);
  }
};

/// The rank and the factors of each tile: U = Q Vh (in x) and V = B^T Vh (in y), columns in the
/// order of the singular values.
struct truncate_tiles {
  packed_tiles in;
  tile_factors out;
  regions w;
  int ell, fixed_rank;
  double tolerance;
  KOKKOS_INLINE_FUNCTION void operator()(const team_member& team) const {
    const int g = team.league_rank(), nb = in.nb;
    const int t = in.tiles[g];
    const int m = extent_of(in.rows, (t % in.tile_rows) * nb, nb);
    const int n = extent_of(in.cols, (t / in.tile_rows) * nb, nb);
    const double* uf = w.x + g * w.panel;
    const double* vf = w.y + g * w.panel;
    const double* sigma = w.sigma + std::size_t(g) * ell;
    const int* perm = w.ints + std::size_t(g) * (ell + 1);
    const double tol = tolerance >= 0 ? tolerance : -tolerance * ::sqrt(w.norms[2 * g]);
    int cap = out.kmax < m ? out.kmax : m;
    cap = cap < n ? cap : n;
    double error = 0;
    const int k =
        choose_rank(sigma, perm, ell, fixed_rank, tol, cap, ::sqrt(w.norms[2 * g + 1]), &error);
    double* u = out.u + std::size_t(t) * nb * out.kmax;
    double* v = out.v + std::size_t(t) * nb * out.kmax;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, out.kmax), [&](const int l) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int r) {
        u[r + std::size_t(l) * nb] = l < k && r < m ? uf[r + perm[l] * nb] : 0.0;
        v[r + std::size_t(l) * nb] = l < k && r < n ? vf[r + perm[l] * nb] : 0.0;
      });
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      out.ranks[t] = k;
      out.errors[t] = error;
      if (out.tolerances) out.tolerances[t] = tol;
    });
  }
};

/// Rank 0 for every tile (no samples): zero factors, the error the tile's norm.
struct zero_tiles {
  packed_tiles in;
  tile_factors out;
  double* norms;
  double tolerance;
  KOKKOS_INLINE_FUNCTION void operator()(const team_member& team) const {
    const int g = team.league_rank(), nb = in.nb;
    const int t = in.tiles[g];
    double* u = out.u + std::size_t(t) * nb * out.kmax;
    double* v = out.v + std::size_t(t) * nb * out.kmax;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, nb * out.kmax), [&](const int e) {
      u[e] = 0.0;
      v[e] = 0.0;
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const double norm = ::sqrt(norms[2 * g]);
      out.ranks[t] = 0;
      out.errors[t] = norm;
      if (out.tolerances) out.tolerances[t] = tolerance >= 0 ? tolerance : -tolerance * norm;
    });
  }
};

Kokkos::TeamPolicy<Kokkos::Cuda> per_tile(const Kokkos::Cuda& exec, int count) {
  return tile_team_policy(exec, count);
}

}  // namespace

std::size_t workspace_doubles_per_tile(int nb, int ell) {
  const std::size_t n = std::size_t(nb), l = std::size_t(ell);
  // Four panels, Vh and R, tau and sigma, two norms, and ell + 1 ints (as doubles, rounded up).
  return 4 * n * l + 2 * l * l + 2 * l + 2 + (l + 2) / 2;
}

void compress_packed(const Kokkos::Cuda& exec, const char* function, const packed_tiles& in,
                     const tile_factors& out, const sampling_rule& rule, double* work) {
  if (in.count == 0) return;
  const int nb = in.nb, ell = rule.ell, count = in.count;
  const regions w(work, count, nb, ell);
  if (ell == 0) {
    Kokkos::parallel_for("nearsparse::tlr::compress::norms", per_tile(exec, count),
                         tile_norms{in, w.norms, 0});
    Kokkos::parallel_for("nearsparse::tlr::compress::zero", per_tile(exec, count),
                         zero_tiles{in, out, w.norms, rule.tolerance});
    return;
  }
  if (rule.tolerance < 0)
    Kokkos::parallel_for("nearsparse::tlr::compress::norms", per_tile(exec, count),
                         tile_norms{in, w.norms, 0});
  Kokkos::parallel_for("nearsparse::tlr::compress::omega",
                       Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::size_t>>(
                           exec, 0, std::size_t(count) * w.panel),
                       omega_fill{in, w.x, ell, rule.seed});

  cublasHandle_t handle = cuda::cublas_handle(exec, function);
  const long long tile_stride = static_cast<long long>(nb) * nb;
  const long long panel_stride = static_cast<long long>(w.panel);
  // out (nb x ell) = op(T) X for every tile, one strided-batched call.
  auto times = [&](bool transpose, const double* x, double* result) {
    const double one = 1.0, zero = 0.0;
    cuda::check(
        cublasDgemmStridedBatched(handle, transpose ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, nb,
                                  ell, nb, &one, in.packed, nb, tile_stride, x, nb, panel_stride,
                                  &zero, result, nb, panel_stride, count),
        function, "cublasDgemmStridedBatched");
  };
  cudaStream_t stream = exec.cuda_stream();
  auto orthonormalize_panel = [&](double* from) {  // Q = orth(from); from holds the reflectors
    householder_qr<<<count, qr_threads, 0, stream>>>(from, w.panel, w.tau, nb, ell, w.q, w.panel);
    cuda::check_launch(function, "householder_qr");
  };
  times(false, w.x, w.y);  // Y = T Omega
  for (int it = 0; it < rule.power_iterations; ++it) {
    orthonormalize_panel(w.y);
    times(true, w.q, w.x);  // X = T^T Q
    orthonormalize_panel(w.x);
    times(false, w.q, w.y);  // Y = T X
  }
  orthonormalize_panel(w.y);
  times(true, w.q, w.bt);  // B^T = T^T Q
  {
    // T - Q B in place of T, and its norm: the range finder's residual.
    const double minus_one = -1.0, one = 1.0;
    cuda::check(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, ell, &minus_one,
                                          w.q, nb, panel_stride, w.bt, nb, panel_stride, &one,
                                          in.packed, nb, tile_stride, count),
                function, "cublasDgemmStridedBatched");
  }
  Kokkos::parallel_for("nearsparse::tlr::compress::residual", per_tile(exec, count),
                       tile_norms{in, w.norms, 1});
  // R of B^T = Q2 R (on a copy), the SVD of R, then U = Q Vh and V = B^T Vh = Q2 W2 Sigma.
  cuda::check(cudaMemcpyAsync(w.y, w.bt, std::size_t(count) * w.panel * sizeof(double),
                              cudaMemcpyDeviceToDevice, stream),
              function, "cudaMemcpyAsync");
  householder_qr<<<count, qr_threads, 0, stream>>>(w.y, w.panel, w.tau, nb, ell, nullptr, 0);
  cuda::check_launch(function, "householder_qr");
  Kokkos::parallel_for("nearsparse::tlr::compress::small_svd", per_tile(exec, count),
                       small_svd{w, nb, ell});
  {
    const double one = 1.0, zero = 0.0;
    const long long small_stride = static_cast<long long>(ell) * ell;
    for (const auto& [from, to] : {std::pair<const double*, double*>{w.q, w.x}, {w.bt, w.y}})
      cuda::check(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, nb, ell, ell, &one,
                                            from, nb, panel_stride, w.vh, ell, small_stride, &zero,
                                            to, nb, panel_stride, count),
                  function, "cublasDgemmStridedBatched");
  }
  Kokkos::parallel_for("nearsparse::tlr::compress::truncate", per_tile(exec, count),
                       truncate_tiles{in, out, w, ell, rule.fixed_rank, rule.tolerance});
}

}  // namespace cuda_tiles

namespace {

constexpr const char* fn = "nearsparse::tlr::compress";

/// Copies tiles first .. first + count - 1 of the job into the packed buffer (zero beyond their
/// extents), reading A through its strides.
struct pack_tiles {
  compression_job job;
  const int* tiles;
  double* packed;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t e) const {
    const int nb = job.nb;
    const std::size_t area = std::size_t(nb) * nb;
    const int g = static_cast<int>(e / area);
    const int rem = static_cast<int>(e % area);
    const int r = rem % nb, c = rem / nb;
    const int t = tiles[g];
    const int row0 = (t % job.tile_rows) * nb, col0 = (t / job.tile_rows) * nb;
    packed[e] = row0 + r < job.rows && col0 + c < job.cols
                    ? job.a[std::size_t(row0 + r) * job.a_row_stride +
                            std::size_t(col0 + c) * job.a_col_stride]
                    : 0.0;
  }
};

}  // namespace

bool take_specialized_compression(const Kokkos::Cuda& exec, const compression_options& options) {
  constexpr bool device_memory = std::is_same<Kokkos::Cuda::memory_space, Kokkos::CudaSpace>::value;
  if (!device_memory)
    return nearsparse::detail::take_specialized(
        fn, options.implementation, false, exec.name(),
        "the batched compression needs Kokkos::Cuda's memory space to be CudaSpace");
  return nearsparse::detail::take_specialized(
      fn, options.implementation, options.method == compression_method::randomized, exec.name(),
      "the exact method (svd) runs in the portable kernels on Kokkos::Cuda");
}

void specialized_compress(const Kokkos::Cuda& exec, const compression_job& job,
                          const compression_options& options) {
  if (job.tile_count == 0) return;
  const int nb = job.nb;
  const int ell = std::min(nb, options.max_rank + options.oversampling);
  Kokkos::View<int*, Kokkos::CudaSpace> tiles(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::tlr::tiles")),
      job.tile_count);
  Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> listed(
      job.tiles, job.tile_count);
  Kokkos::deep_copy(exec, tiles, listed);

  const std::size_t area = std::size_t(nb) * nb;
  const std::size_t per_tile = area + cuda_tiles::workspace_doubles_per_tile(nb, ell);
  const std::size_t batch = teams_per_launch(std::size_t(job.tile_count), per_tile * sizeof(double),
                                             options.workspace_bytes);
  Kokkos::View<double*, Kokkos::CudaSpace> packed(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::tlr::compress::packed")),
      batch * area);
  Kokkos::View<double*, Kokkos::CudaSpace> work(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::tlr::compress::work")),
      batch * (per_tile - area));

  cuda_tiles::tile_factors out;
  out.u = job.u;
  out.v = job.v;
  out.kmax = job.max_rank;
  out.ranks = job.ranks;
  out.errors = job.errors;
  cuda_tiles::sampling_rule rule;
  rule.fixed_rank = job.fixed_rank;
  rule.tolerance = job.tolerance;
  rule.ell = ell;
  rule.power_iterations = options.power_iterations;
  rule.seed = options.seed;
  for (std::size_t first = 0; first < std::size_t(job.tile_count); first += batch) {
    const int count = static_cast<int>(std::min(batch, std::size_t(job.tile_count) - first));
    Kokkos::parallel_for("nearsparse::tlr::compress::pack",
                         Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::size_t>>(
                             exec, 0, std::size_t(count) * area),
                         pack_tiles{job, tiles.data() + first, packed.data()});
    cuda_tiles::packed_tiles in;
    in.packed = packed.data();
    in.count = count;
    in.nb = nb;
    in.tiles = tiles.data() + first;
    in.tile_rows = job.tile_rows;
    in.rows = job.rows;
    in.cols = job.cols;
    cuda_tiles::compress_packed(exec, fn, in, out, rule, work.data());
  }
  exec.fence();  // the buffers die here
}

}  // namespace nearsparse::tlr::detail
