// The last step of a batched GEMM-LLD on Kokkos::Cuda: C_g = beta C_g + alpha L_g R_g^T for a
// batch of tiles, with L_g (m x k) and R_g (n x k) thin (k small beside m and n). The product is
// then bound by reading and writing C, not by its arithmetic, and a general batched GEMM spends
// most of its time elsewhere; this kernel reads each element of C once and writes it once.
//
// One block of 256 threads (8 warps, 4 x 2) computes a 64 x 64 block of one C tile with the fp64
// tensor-core MMA (m16n8k16, src/core/cuda/mma_f64.hpp): each warp 16 x 32, as 1 x 4 MMA tiles,
// within the registers of 3 blocks (24 warps) per SM, so that the copies of C of several blocks
// are in flight at once.
// C's block is copied into shared memory asynchronously (cp.async) at the start, in whole
// columns, while the k dimension goes through shared memory 16 at a time, rows of L and R as
// [row][k] (zero past m, n and k). Each lane then updates its sums' places of the copy, and the
// block writes it back in whole columns. The blocks of all tiles of a batch form one grid.

#include "cuda_products.hpp"

#include "../core/cuda/check.hpp"
#include "../core/cuda/mma_f64.hpp"

#include <nearsparse/core/errors.hpp>

#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <mutex>
#include <set>

namespace nearsparse::tlr::detail {

namespace {

using mma = nearsparse::detail::mma_f64_m16n8k16;

constexpr int block_rows = 64, block_cols = 64, slice = 16;
constexpr int threads = 256;
static_assert(threads % block_rows == 0 && slice % (threads / block_rows) == 0, "staging layout");
// Leading dimension of the staged rows: 16 k + 2 doubles puts the eight lanes of a quarter-warp
// on distinct banks (mma_f64.hpp).
constexpr int stage_ld = slice + 2;
// Leading dimension of the block's sums in shared memory (odd: a column's rows on distinct banks).
constexpr int sum_ld = block_rows + 1;

struct update_params {
  int m, n, k;
  double alpha, beta;
  const double* const* l;
  const double* const* r;
  double* const* c;
  int ldl, ldr, ldc;
  int blocks_m, blocks_per_tile;
};

// Stages rows [row0, row0 + 64) and k [k0, k0 + 16) of a column-major rows x k matrix as
// s[row][k], zero outside it. Consecutive threads read consecutive rows (coalesced); a thread keeps
// one row and steps through k.
__device__ void stage(double* s, const double* x, int ld, int rows, int k, int row0, int k0) {
  constexpr int k_step = threads / block_rows;
  const int i = threadIdx.x % block_rows, kk0 = threadIdx.x / block_rows;
  const bool row_in = row0 + i < rows;
  const double* from = x + (row0 + i) + std::size_t(k0 + kk0) * ld;
  double* to = s + i * stage_ld + kk0;
#pragma unroll
  for (int q = 0; q < slice / k_step; ++q) {
    const int kk = kk0 + k_step * q;
    to[k_step * q] = row_in && k0 + kk < k ? from[std::size_t(k_step * q) * ld] : 0.0;
  }
}

// Shared memory of a block: C's block (column-major, leading dimension sum_ld), then the staged
// slices of L and R.
constexpr int c_values = block_cols * sum_ld, stage_values = (block_rows + block_cols) * stage_ld;
constexpr std::size_t shared_bytes = std::size_t(c_values + stage_values) * sizeof(double);

__device__ void copy_async(double* to, const double* from) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(address), "l"(from));
}

__global__ void __launch_bounds__(threads, 3) low_rank_update_kernel(const update_params p) {
  extern __shared__ __align__(16) double shared[];
  double* sc = shared;
  double* sl = shared + c_values;
  double* sr = sl + block_rows * stage_ld;
  const int tile = blockIdx.x / p.blocks_per_tile, b = blockIdx.x % p.blocks_per_tile;
  const int row0 = (b % p.blocks_m) * block_rows, col0 = (b / p.blocks_m) * block_cols;
  const double* l = p.l[tile];
  const double* r = p.r[tile];
  double* c = p.c[tile];
  // C's block in whole columns: thread t takes row t % 64 of columns t / 64 + 4 q. Its copy into
  // shared memory starts now and runs under the products (beta = 0 never reads C).
  const int i = threadIdx.x % block_rows, j0 = threadIdx.x / block_rows;
  constexpr int per_thread = block_rows * block_cols / threads, col_step = threads / block_rows;
  const bool row_in = row0 + i < p.m;
  double* base = c + (row0 + i) + std::size_t(col0) * p.ldc;
  if (p.beta != 0.0) {
#pragma unroll
    for (int q = 0; q < per_thread; ++q) {
      const int jj = j0 + col_step * q;
      if (row_in && col0 + jj < p.n)
        copy_async(sc + jj * sum_ld + i, base + std::size_t(jj) * p.ldc);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp % 4) * 16, wn = (warp / 4) * 32;
  double acc[4][mma::CR] = {};
  for (int k0 = 0; k0 < p.k; k0 += slice) {
    __syncthreads();  // the previous slice is read
    stage(sl, l, p.ldl, p.m, p.k, row0, k0);
    stage(sr, r, p.ldr, p.n, p.k, col0, k0);
    __syncthreads();
    double a[mma::AR];
    mma::load_a(a, sl + wm * stage_ld, stage_ld, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      double bf[mma::BR];
      mma::load_b(bf, sr + (wn + 8 * j) * stage_ld, stage_ld, lane);
      mma::mma(acc[j], a, bf);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();  // C's block is in shared memory
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < mma::CR; ++e) {
      double& x = sc[(wn + 8 * j + mma::c_col(lane, e)) * sum_ld + wm + mma::c_row(lane, e)];
      x = p.beta != 0.0 ? p.beta * x + p.alpha * acc[j][e] : p.alpha * acc[j][e];
    }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < per_thread; ++q) {
    const int jj = j0 + col_step * q;
    if (row_in && col0 + jj < p.n) base[std::size_t(jj) * p.ldc] = sc[jj * sum_ld + i];
  }
}

}  // namespace

bool low_rank_update_runs(const Kokkos::Cuda& exec) {
  return nearsparse::detail::mma_f64_runs(reinterpret_cast<const void*>(low_rank_update_kernel),
                                          exec.cuda_device());
}

void low_rank_update_batched(const Kokkos::Cuda& exec, const char* function, int m, int n, int k,
                             double alpha, const double* const* l, int ldl, const double* const* r,
                             int ldr, double beta, double* const* c, int ldc, int count) {
  if (m <= 0 || n <= 0 || count <= 0) return;
  // Above the 48 KiB a block gets without asking: set once for each device, on exec's device
  // (the current one).
  {
    static std::mutex mutex;
    static std::set<int> raised;
    const std::lock_guard<std::mutex> lock(mutex);
    if (raised.insert(exec.cuda_device()).second) {
      const cudaError_t status =
          cudaFuncSetAttribute(low_rank_update_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared_bytes));
      if (status != cudaSuccess) raised.erase(exec.cuda_device());
      nearsparse::detail::cuda::check(status, function,
                                      "cudaFuncSetAttribute(low_rank_update_kernel)");
    }
  }
  update_params p{m, n, k, alpha, beta, l, r, c, ldl, ldr, ldc, 0, 0};
  p.blocks_m = (m + block_rows - 1) / block_rows;
  const long long per_tile =
      static_cast<long long>(p.blocks_m) * ((n + block_cols - 1) / block_cols);
  // One grid holds at most 2^31 - 1 blocks: more tiles than that go in several launches.
  if (per_tile > 0x7fffffffLL)
    throw nearsparse::unsupported(nearsparse::detail::concat(
        function, ": a ", m, " x ", n, " tile needs ", per_tile,
        " thread blocks of the low-rank update, more than one CUDA grid holds"));
  p.blocks_per_tile = static_cast<int>(per_tile);
  const int per_launch = static_cast<int>(std::min<long long>(count, 0x7fffffffLL / per_tile));
  for (int first = 0; first < count; first += per_launch) {
    const int tiles = std::min(per_launch, count - first);
    update_params q = p;
    q.l += first, q.r += first, q.c += first;
    low_rank_update_kernel<<<static_cast<unsigned>(tiles) * p.blocks_per_tile, threads,
                             shared_bytes, exec.cuda_stream()>>>(q);
    nearsparse::detail::cuda::check_launch(function, "low_rank_update_kernel");
  }
}

}  // namespace nearsparse::tlr::detail
