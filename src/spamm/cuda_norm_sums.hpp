#pragma once
// The sums of squares of the CUDA get-norm kernels (cuda_norms.cpp) and of the packing that
// computes the norm maps on the way (cuda_pack.cpp): one thread block of norm_threads per tile,
// each thread summing the 16-byte chunks ch = threadIdx.x, threadIdx.x + norm_threads, ... of
// the packed tile (row ch / chunks-per-row) in that order, then warp shuffles and one warp over
// the warps' sums. Both kernels call these same functions in the same order, so they give the
// same norms bit for bit, and a refreshed plan the norms a new one computes.

#include <nearsparse/spamm/options.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace nearsparse::spamm::detail {

inline constexpr int norm_threads = 256;

/// The sum over the block of every thread's v; thread 0 holds it.
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

/// The sum of squares of one 16-byte chunk of packed values in format p: in double for fp64,
/// in float for the others (their values have at most 24-bit significands).
template <class Acc>
__device__ Acc chunk_squares(const uint4& q, spamm::precision p) {
  // Every product and sum rounded on its own (no contraction into FMA left to the compiler), so
  // that the same bytes give the same bits wherever this is inlined.
  if constexpr (sizeof(Acc) == 8) {
    const double* d = reinterpret_cast<const double*>(&q);
    return __dadd_rn(__dmul_rn(d[0], d[0]), __dmul_rn(d[1], d[1]));
  } else {
    const auto pair = [](float s, float2 f) {
      return __fadd_rn(s, __fadd_rn(__fmul_rn(f.x, f.x), __fmul_rn(f.y, f.y)));
    };
    float s = 0.f;
    if (p == spamm::precision::fp16) {
      const __half2* h = reinterpret_cast<const __half2*>(&q);
      for (int i = 0; i < 4; ++i) s = pair(s, __half22float2(h[i]));
    } else if (p == spamm::precision::bf16) {
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&q);
      for (int i = 0; i < 4; ++i) s = pair(s, __bfloat1622float2(h[i]));
    } else {
      const float* f = reinterpret_cast<const float*>(&q);
      for (int i = 0; i < 4; i += 2) s = pair(s, make_float2(f[i], f[i + 1]));
    }
    return s;
  }
}

/// Where a tile's norm goes: A's tile (tr, tk) at norms[tr * kt + tk], B's (packed as B^T, tile
/// row tr = j) at norms[tk * nt + tr].
__device__ inline void store_norm(double* norms, bool is_a, int tr, int tk, int kt, int nt,
                                  double norm) {
  if (is_a) {
    norms[static_cast<std::size_t>(tr) * kt + tk] = norm;
  } else {
    norms[static_cast<std::size_t>(tk) * nt + tr] = norm;
  }
}

}  // namespace nearsparse::spamm::detail
