// The get-norm kernel on CUDA (section 3.2 of the cuSpAMM paper): one thread block per tile of a
// packed operand. Each thread reads 16-byte chunks of the tile and sums squares; warps reduce
// with shuffles, then one warp reduces the warps' sums. For fp16 the sums of squares run on the
// tensor cores instead (equations 3-4), see tensor_core_norms_kernel.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/detail/norms.hpp>

#include "../core/cuda/check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

namespace nearsparse::spamm::detail {
namespace {

constexpr int norm_threads = 256;

template <class Acc>
__device__ Acc block_sum(Acc v) {
  __shared__ Acc warp_sums[norm_threads / 32];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0;
  if (warp == 0) {
    if (lane < norm_threads / 32) v = warp_sums[lane];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// Sum of squares of the 16 bytes at p, by storage format.
__device__ float squares(const uint4& q, spamm::precision p) {
  float s = 0.f;
  if (p == spamm::precision::fp16) {
    const __half2* h = reinterpret_cast<const __half2*>(&q);
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      s += f.x * f.x + f.y * f.y;
    }
  } else if (p == spamm::precision::bf16) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&q);
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      s += f.x * f.x + f.y * f.y;
    }
  } else {
    const float* f = reinterpret_cast<const float*>(&q);
    for (int i = 0; i < 4; ++i) s += f[i] * f[i];
  }
  return s;
}

struct norm_params {
  const unsigned char* data;
  std::size_t row_bytes;  // kp * element bytes
  int tile_bytes;         // tile * element bytes
  int tile, kt, nt;
  bool is_a;
  double* norms;
};

// Every format but fp64 sums in float (its inputs have at most 24-bit significands); fp64 in
// double. Edge tiles need no bounds: the packing is zero outside the matrix.
template <class Acc>
__global__ void __launch_bounds__(norm_threads) norms_kernel(norm_params p, spamm::precision prec) {
  const int tr = blockIdx.x / p.kt, tk = blockIdx.x % p.kt;
  const unsigned char* base =
      p.data + static_cast<std::size_t>(tr) * p.tile * p.row_bytes + std::size_t(tk) * p.tile_bytes;
  const int chunks_per_row = p.tile_bytes / 16, chunks = p.tile * chunks_per_row;
  Acc sum = 0;
  for (int ch = threadIdx.x; ch < chunks; ch += norm_threads) {
    const int r = ch / chunks_per_row, q = ch % chunks_per_row;
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(base + r * p.row_bytes + q * 16));
    if constexpr (sizeof(Acc) == 8) {
      const double* d = reinterpret_cast<const double*>(&v);
      sum += d[0] * d[0] + d[1] * d[1];
    } else {
      sum += squares(v, prec);
    }
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    const double norm = sqrt(static_cast<double>(sum));
    if (p.is_a) {
      p.norms[std::size_t(tr) * p.kt + tk] = norm;
    } else {
      p.norms[std::size_t(tk) * p.nt + tr] = norm;
    }
  }
}

// fp16 on the tensor cores. The paper multiplies by a matrix of ones (equations 3-4), which needs
// the squares as fp16 operands: they would be rounded, and over- or underflow beyond 2^8 or below
// 2^-12. Multiplying each 16 x 16 block X by its own transpose instead puts the
// sums of squares of its rows on the diagonal of X X^T, with products exact in the fp32
// accumulator; the trace of the accumulated sum over all blocks of the tile is the squared norm.
constexpr int tc_warps = 4;

__global__ void __launch_bounds__(tc_warps * 32) tensor_core_norms_kernel(norm_params p) {
  using namespace nvcuda;
  const int tr = blockIdx.x / p.kt, tk = blockIdx.x % p.kt;
  const int ld = static_cast<int>(p.row_bytes / 2);
  const __half* base =
      reinterpret_cast<const __half*>(p.data + static_cast<std::size_t>(tr) * p.tile * p.row_bytes +
                                      std::size_t(tk) * p.tile_bytes);
  const int per_side = p.tile / 16, blocks = per_side * per_side;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int b = warp; b < blocks; b += tc_warps) {
    const __half* block = base + (b / per_side) * 16 * ld + (b % per_side) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> x;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> xt;
    wmma::load_matrix_sync(x, block, ld);
    wmma::load_matrix_sync(xt, block, ld);  // the same bytes read column-major: X^T
    wmma::mma_sync(acc, x, xt, acc);
  }
  __shared__ float product[tc_warps][16 * 16];
  wmma::store_matrix_sync(product[warp], acc, 16, wmma::mem_row_major);
  __syncwarp();
  float diag = lane < 16 ? product[warp][lane * 17] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1)
    diag += __shfl_down_sync(0xffffffffu, diag, offset);
  __shared__ float warp_sums[tc_warps];
  if (lane == 0) warp_sums[warp] = diag;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int w = 0; w < tc_warps; ++w) sum += warp_sums[w];
    const double norm = sqrt(static_cast<double>(sum));
    if (p.is_a) {
      p.norms[std::size_t(tr) * p.kt + tk] = norm;
    } else {
      p.norms[std::size_t(tk) * p.nt + tr] = norm;
    }
  }
}

}  // namespace

void compute_norms(const Kokkos::Cuda& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::CudaSpace>& norms) {
  // The CUDA kernels serve every precision and tile.
  if (!nearsparse::detail::take_specialized(function, opt.implementation, true, exec.name())) {
    compute_norms_portable(exec, opt.precision, packed, geo, which, norms);
    return;
  }
  const spamm::precision precision = opt.precision;
  const bool is_a = which == operand::a;
  const int tiles_r = is_a ? geo.mt : geo.nt;
  if (tiles_r == 0 || geo.kt == 0) return;
  const int bytes = storage_bytes(precision);
  norm_params p{static_cast<const unsigned char*>(packed),
                std::size_t(geo.kp) * bytes,
                geo.tile * bytes,
                geo.tile,
                geo.kt,
                geo.nt,
                is_a,
                norms.data()};
  const unsigned blocks = static_cast<unsigned>(tiles_r) * static_cast<unsigned>(geo.kt);
  cudaStream_t stream = exec.cuda_stream();
  if (precision == spamm::precision::fp16) {
    tensor_core_norms_kernel<<<blocks, tc_warps * 32, 0, stream>>>(p);
  } else if (precision == spamm::precision::fp64) {
    norms_kernel<double><<<blocks, norm_threads, 0, stream>>>(p, precision);
  } else {
    norms_kernel<float><<<blocks, norm_threads, 0, stream>>>(p, precision);
  }
  nearsparse::detail::cuda::check_launch(
      function, precision == spamm::precision::fp16 ? "tensor_core_norms_kernel" : "norms_kernel");
}

}  // namespace nearsparse::spamm::detail
