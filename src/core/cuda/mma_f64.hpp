#pragma once
// The fp64 tensor-core MMA of compute capability 9.0, mma.sync m16n8k16 (f64), with its fragment
// loads from shared memory and the places of its accumulators: the SpAMM mma.sync kernel
// (src/spamm/cuda_mma_sync.cpp) and the diagonal band tiles (src/diagonal/cuda_hm_band_tiles.cpp)
// both sum with it. CUDA only.
//
// Shared memory holds A as [m][k] and B^T as [n][k] with leading dimension ld. The k slots are
// relabelled: slot t + 4j of lane t (t = lane % 4) holds k = 4t + j, in A and B alike, so the sum
// is unchanged and each lane's four k of a row are adjacent and load as two 16-byte words. With
// ld = 16k + 2 doubles (k >= 1) the eight lanes of each quarter-warp fall on distinct banks.
//
// On Hopper this shape reaches the FP64 tensor rate; m8n8k4 runs at about the rate of the
// previous generation (perf/RESULTS.md). The instruction exists only from sm_90: code built for
// an older target traps, so a caller launches it only where mma_f64_compiled_in says so.

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

namespace nearsparse::detail {

/// Whether `kernel` (one that sums with mma_f64_m16n8k16) was compiled for sm_90 or later as it
/// runs on `device`: false for a build for an older GPU that reaches the device through its PTX,
/// where the kernel only traps. The query costs about a launch; callers keep the answer.
inline bool mma_f64_compiled_in(const void* kernel, int device) {
  int current = device;
  cudaGetDevice(&current);
  if (current != device) cudaSetDevice(device);
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (current != device) cudaSetDevice(current);
  return status == cudaSuccess && attributes.ptxVersion >= 90;
}

/// Whether `kernel` (one that sums with mma_f64_m16n8k16) runs on `device`: compute capability
/// 9.0 or later, and the kernel compiled for it (mma_f64_compiled_in). Read once per kernel and
/// device, as the queries cost about a launch each.
inline bool mma_f64_runs(const void* kernel, int device) {
  if (device < 0) return false;
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, bool> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(kernel, device);
  const auto found = known.find(key);
  if (found != known.end()) return found->second;
  int major = 0;
  const bool runs =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      major >= 9 && mma_f64_compiled_in(kernel, device);
  known.emplace(key, runs);
  return runs;
}

struct mma_f64_m16n8k16 {
  static constexpr int MM = 16, MN = 8, MK = 16;
  static constexpr int AR = 8, BR = 4, CR = 4;  // doubles per lane of A, B and C
  // a[h + 2j]: row g + 8h (g = lane / 4), slot t + 4j (k = 4t + j); s points at the tile's row 0.
  __device__ static void load_a(double (&a)[AR], const double* s, int ld, int lane) {
    const double* r = s + (lane >> 2) * ld + (lane & 3) * 4;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int q = 0; q < 4; q += 2) {
        const double2 v = *reinterpret_cast<const double2*>(r + h * 8 * ld + q);
        a[h + 2 * q] = v.x;
        a[h + 2 * q + 2] = v.y;
      }
  }
  // b[j]: column g, slot t + 4j (k = 4t + j); s points at the tile's column 0 (a row of B^T).
  __device__ static void load_b(double (&b)[BR], const double* s, int ld, int lane) {
    const double* r = s + (lane >> 2) * ld + (lane & 3) * 4;
#pragma unroll
    for (int q = 0; q < 4; q += 2) {
      const double2 v = *reinterpret_cast<const double2*>(r + q);
      b[q] = v.x;
      b[q + 1] = v.y;
    }
  }
  __device__ static void mma(double (&c)[CR], const double (&a)[AR], const double (&b)[BR]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    __trap();  // never launched: see mma_f64_compiled_in
#endif
  }
  // Row and column within the 16 x 8 tile of accumulator e of a lane.
  __device__ static int c_row(int lane, int e) {
    return (lane >> 2) + (e >> 1) * 8;
  }
  __device__ static int c_col(int lane, int e) {
    return (lane & 3) * 2 + (e & 1);
  }
};

}  // namespace nearsparse::detail
