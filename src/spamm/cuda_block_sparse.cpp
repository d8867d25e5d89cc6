// The numeric phase of the block-sparse multiply on CUDA: one thread block per tile of C, which
// walks the tile row of A, finds each partner tile of B by binary search, and accumulates the kept
// products A[i,k] B[k,j] in registers (each thread a micro-tile of C, A's and B's tiles staged in
// shared memory a slab of k at a time), so that C is written once, with its norm, and never read
// back between products. The portable kernel forms every entry as its own dot product from
// global memory; batched GEMM over the same products writes each C tile once per product.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/detail/block_sparse_multiply.hpp>

#include "../core/cuda/check.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace nearsparse::spamm::detail {

namespace {

constexpr int threads_per_block = 256;

__device__ __forceinline__ std::int64_t find_column_dev(const int* cols, std::int64_t begin,
                                                        std::int64_t end, int j) {
  while (begin < end) {
    const std::int64_t mid = begin + (end - begin) / 2;
    const int c = cols[mid];
    if (c == j) return mid;
    if (c < j) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return -1;
}

/// T x T tiles; TD x TD threads (TD = min(T, 16)), each an M x M micro-tile (M = T / TD); slabs of
/// KC = min(T, 16) columns of A and rows of B in shared memory.
template <class Scalar, int T>
__global__ void __launch_bounds__(threads_per_block)
    block_sparse_products_kernel(const block_sparse_products<Scalar> p) {
  constexpr int TD = T < 16 ? T : 16;
  constexpr int M = T / TD;
  constexpr int KC = T < 16 ? T : 16;
  __shared__ Scalar a_slab[T][KC + 1];
  __shared__ Scalar b_slab[KC][T];
  __shared__ std::int64_t partner;
  __shared__ double reduce[threads_per_block / 32];

  const std::int64_t q = blockIdx.x;
  const int tid = threadIdx.x;
  constexpr int nthreads = TD * TD;  // the block size: 64 (T = 8) or 256
  const int tr = tid / TD, tc = tid % TD;
  // The tile row of q: the last i with c_row_map[i] <= q.
  int lo = 0, hi = p.tile_rows;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (p.c_row_map[mid] <= q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const int i = lo, j = p.c_cols[q];
  constexpr std::int64_t tt = std::int64_t(T) * T;

  Scalar acc[M][M];
#pragma unroll
  for (int u = 0; u < M; ++u)
#pragma unroll
    for (int v = 0; v < M; ++v) acc[u][v] = Scalar(0);
  double dropped = 0.0;
  const std::int64_t a_end = p.a_row_map[i + 1];
  for (std::int64_t ap = p.a_row_map[i]; ap < a_end; ++ap) {
    if (tid == 0) {
      const int k = p.a_cols[ap];
      std::int64_t bq = find_column_dev(p.b_cols, p.b_row_map[k], p.b_row_map[k + 1], j);
      if (bq >= 0) {
        const double np = p.a_norms[ap] * p.b_norms[bq];
        if (!(np >= p.tau)) {  // as the symbolic phase: kept when >= tau
          dropped += np;
          bq = -1;
        }
      }
      partner = bq;
    }
    __syncthreads();
    const std::int64_t bq = partner;
    if (bq >= 0) {  // the same for the whole block: the barriers inside are reached by all
      const Scalar* a = p.a_values + ap * tt;
      const Scalar* b = p.b_values + bq * tt;
      for (int k0 = 0; k0 < T; k0 += KC) {
        for (int e = tid; e < T * KC; e += nthreads) {
          const int r = e / KC, c = e % KC;
          a_slab[r][c] = a[std::int64_t(r) * T + k0 + c];
        }
        for (int e = tid; e < KC * T; e += nthreads) {
          const int r = e / T, c = e % T;
          b_slab[r][c] = b[std::int64_t(k0 + r) * T + c];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < KC; ++kk) {
          Scalar av[M], bv[M];
#pragma unroll
          for (int u = 0; u < M; ++u) av[u] = a_slab[tr + u * TD][kk];
#pragma unroll
          for (int v = 0; v < M; ++v) bv[v] = b_slab[kk][tc + v * TD];
#pragma unroll
          for (int u = 0; u < M; ++u)
#pragma unroll
            for (int v = 0; v < M; ++v) acc[u][v] += av[u] * bv[v];
        }
        __syncthreads();
      }
    }
    __syncthreads();  // `partner` is rewritten for the next tile of A's row
  }

  // C = alpha acc + beta C_old; zeros outside the matrix; the tile's norm.
  const std::int64_t old = p.old_values != nullptr ? find_column_dev(p.old_cols, p.old_row_map[i],
                                                                     p.old_row_map[i + 1], j)
                                                   : -1;
  const int r_end = min(T, p.rows - i * T), c_end = min(T, p.cols - j * T);
  Scalar* c = p.c_values + q * tt;
  double sq = 0.0;
  {
#pragma unroll
    for (int u = 0; u < M; ++u)
#pragma unroll
      for (int v = 0; v < M; ++v) {
        const int r = tr + u * TD, col = tc + v * TD;
        const std::int64_t e = std::int64_t(r) * T + col;
        Scalar value = Scalar(0);
        if (r < r_end && col < c_end) {
          value = p.alpha * acc[u][v];
          if (old >= 0) value += p.beta * p.old_values[old * tt + e];
        }
        c[e] = value;
        sq += double(value) * double(value);
      }
  }
  for (int offset = 16; offset > 0; offset /= 2) sq += __shfl_down_sync(0xffffffffu, sq, offset);
  if ((tid & 31) == 0) reduce[tid / 32] = sq;
  __syncthreads();
  if (tid == 0) {
    double total = 0.0;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) total += reduce[w];
    p.c_norms[q] = sqrt(total);
    p.tile_bound[q] = dropped;
  }
}

template <class Scalar, int T>
void launch(const Kokkos::Cuda& exec, const block_sparse_products<Scalar>& p) {
  constexpr int TD = T < 16 ? T : 16;
  constexpr int threads = TD * TD;  // whole warps (64 or 256): the shuffle reduction needs them
  block_sparse_products_kernel<Scalar, T>
      <<<static_cast<unsigned>(p.c_tiles), threads, 0, exec.cuda_stream()>>>(p);
  nearsparse::detail::cuda::check_launch("nearsparse::spamm::multiply",
                                         "block_sparse_products_kernel");
}

template <class Scalar>
bool run_products(const Kokkos::Cuda& exec, const char* function, nearsparse::implementation choice,
                  const block_sparse_products<Scalar>& p) {
  if (!nearsparse::detail::take_specialized(function, choice, true, exec.name())) return false;
  if (p.c_tiles == 0) return true;
  switch (p.tile) {
    case 8:
      launch<Scalar, 8>(exec, p);
      break;
    case 16:
      launch<Scalar, 16>(exec, p);
      break;
    case 32:
      launch<Scalar, 32>(exec, p);
      break;
    case 64:
      launch<Scalar, 64>(exec, p);
      break;
    default:
      launch<Scalar, 128>(exec, p);
      break;
  }
  return true;
}

}  // namespace

bool block_sparse_specialized_available(const Kokkos::Cuda&) {
  return true;
}

bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p) {
  return run_products(exec, function, choice, p);
}
bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p) {
  return run_products(exec, function, choice, p);
}

}  // namespace nearsparse::spamm::detail
