#pragma once
// What the CUDA SpAMM multiplication kernels share: their parameter block and the building of a
// thread block's kept list (Algorithm 2 of the cuSpAMM paper, lines 3-16). Free of Kokkos, so
// the Hopper kernel (cuda_wgmma.cu), which nvcc compiles on its own for sm_90a, includes it too.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>

#include "../core/cuda/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace nearsparse::spamm::detail {

/// The entry point the CUDA multiplication kernels' errors name.
inline constexpr const char* multiply_function = "nearsparse::spamm::multiply";

struct kernel_params {
  const void* a;
  const void* b;
  const double* an;
  const double* bn;
  double tau;
  int m, n, kp, tile, shift;  // shift = log2(tile)
  int mt, nt, kt;
  int blocks_m, blocks_n;  // thread-block tiles of C
  int stride, groups_m, groups_n;
  double alpha, beta;
  std::size_t s0, s1;  // strides of C
};

/// The parameters of one launch whose thread blocks compute bm x bn blocks of C.
inline kernel_params make_params(const multiply_problem& pr, double alpha, double beta,
                                 std::size_t s0, std::size_t s1, int bm, int bn) {
  kernel_params p{};
  const geometry& g = pr.geo;
  p.a = pr.a;
  p.b = pr.b;
  p.an = pr.a_norms;
  p.bn = pr.b_norms;
  p.tau = pr.tau;
  p.m = g.m;
  p.n = g.n;
  p.kp = g.kp;
  p.tile = g.tile;
  p.shift = g.tile == 32 ? 5 : g.tile == 64 ? 6 : 7;
  p.mt = g.mt;
  p.nt = g.nt;
  p.kt = g.kt;
  p.blocks_m = (g.m + bm - 1) / bm;
  p.blocks_n = (g.n + bn - 1) / bn;
  p.stride = pr.stride;
  p.groups_m = (p.blocks_m + pr.stride - 1) / pr.stride;
  p.groups_n = (p.blocks_n + pr.stride - 1) / pr.stride;
  p.alpha = alpha;
  p.beta = beta;
  p.s0 = s0;
  p.s1 = s1;
  return p;
}

/// The thread blocks of a launch over p's groups_m x groups_n output blocks (grid x, read as an
/// int by band_order). Throws nearsparse::unsupported past CUDA's limit of 2^31 - 1, naming the
/// kernel and the extents, rather than launching a product in 32-bit wrapped blocks.
inline unsigned grid_blocks(const kernel_params& p, const char* kernel) {
  const std::uint64_t blocks = std::uint64_t(p.groups_m) * std::uint64_t(p.groups_n);
  if (blocks > std::uint64_t(2147483647))
    throw unsupported(nearsparse::detail::concat(multiply_function, ": ", kernel, " would need ",
                                                 blocks, " thread blocks (", p.groups_m, " x ",
                                                 p.groups_n, ") for a product of ", p.m, " x ", p.n,
                                                 "; a CUDA grid holds at most 2147483647"));
  return static_cast<unsigned>(blocks);
}

/// Bytes of shared memory that build_kept_list needs for kt tiles of k.
inline std::size_t list_bytes(int kt) {
  return std::size_t((kt + 1) & ~1) * 2 + std::size_t(kt) * 4;
}

/// Device attributes the launches need, read once per device: a query costs about as much as a
/// launch.
struct device_info {
  int multiprocessors = 0, shared_memory_optin = 0, major = 0, minor = 0;
};
inline const device_info& info_of(int device) {
  static device_info cache[64];
  static std::once_flag once[64];
  if (device < 0 || device >= 64)
    throw runtime_error(nearsparse::detail::concat(multiply_function, ": CUDA device id ", device,
                                                   " is out of range (at most 63)"));
  std::call_once(once[device], [device] {
    using nearsparse::detail::cuda::check;
    constexpr const char* call = "cudaDeviceGetAttribute";
    device_info& d = cache[device];
    check(cudaDeviceGetAttribute(&d.multiprocessors, cudaDevAttrMultiProcessorCount, device),
          multiply_function, call);
    check(cudaDeviceGetAttribute(&d.shared_memory_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                 device),
          multiply_function, call);
    check(cudaDeviceGetAttribute(&d.major, cudaDevAttrComputeCapabilityMajor, device),
          multiply_function, call);
    check(cudaDeviceGetAttribute(&d.minor, cudaDevAttrComputeCapabilityMinor, device),
          multiply_function, call);
  });
  return cache[device];
}

/// Checks that a launch's `bytes` of shared memory fit the device, and raises the kernel's
/// dynamic limit when they exceed what it was raised to on that device before (raised_to, one
/// entry per device; the attribute call costs about a launch, so it is not repeated).
template <class Kernel>
void set_shared_memory(int device, Kernel kernel, std::size_t bytes, std::size_t (&raised_to)[64]) {
  const int limit = info_of(device).shared_memory_optin;
  if (bytes > static_cast<std::size_t>(limit))
    throw unsupported(
        nearsparse::detail::concat(multiply_function, ": the product needs ", bytes,
                                   " bytes of shared memory per block; the device offers ", limit));
  if (bytes > raised_to[device]) {
    const std::string call = nearsparse::detail::concat(
        "cudaFuncSetAttribute (a dynamic shared memory size of ", bytes, " bytes)");
    nearsparse::detail::cuda::check(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)),
        multiply_function, call.c_str());
    raised_to[device] = bytes;
  }
}

#ifdef __CUDACC__
/// The output block (group) of thread block `index`, in bands of 8 block rows walked column by
/// column: the blocks resident at one time then share a few panels of A and B in L2. In row
/// order they would span all of B, which at N = 16384 (512 MB in fp16) comes from DRAM again
/// for every block row and made the product memory-bound.
__device__ __forceinline__ void band_order(int index, int groups_m, int groups_n, int& bi,
                                           int& bj) {
  constexpr int band_rows = 8;
  const int band = index / (band_rows * groups_n);
  const int rows = ::min(band_rows, groups_m - band * band_rows);
  const int r = index - band * band_rows * groups_n;
  bi = band * band_rows + r % rows;
  bj = r / rows;
}

/// The per-k masks of one thread block whose output tiles start at (ti0, tj0) and span
/// sub_m x sub_n tiles: masks[k] has bit (u * sub_n + v) set when output tile (ti0 + u, tj0 + v)
/// keeps k. All THREADS threads call it; the caller synchronizes before reading the masks.
template <int THREADS>
__device__ void build_kept_masks(const kernel_params& p, int ti0, int tj0, int sub_m, int sub_n,
                                 std::uint16_t* masks) {
  for (int k = threadIdx.x; k < p.kt; k += THREADS) {
    unsigned mask = 0;
    for (int u = 0; u < sub_m && ti0 + u < p.mt; ++u) {
      const double na = p.an[std::size_t(ti0 + u) * p.kt + k];
      for (int v = 0; v < sub_n && tj0 + v < p.nt; ++v)
        if (na * p.bn[std::size_t(k) * p.nt + tj0 + v] >= p.tau) mask |= 1u << (u * sub_n + v);
    }
    masks[k] = static_cast<std::uint16_t>(mask);
  }
}

/// Run by one warp: appends to list, from position base, the k < kt whose mask passes
/// take(mask), in ascending order, compacted with ballots; returns the new end.
template <class Take>
__device__ int append_kept(const std::uint16_t* masks, int kt, int* list, int base, Take take) {
  const int lane = threadIdx.x & 31;
  for (int k0 = 0; k0 < kt; k0 += 32) {
    const int k = k0 + lane;
    const bool keep = k < kt && take(unsigned(masks[k]));
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (keep) list[base + __popc(ballot & ((1u << lane) - 1u))] = k;
    base += __popc(ballot);
  }
  return base;
}

/// The kept list of such a block: build_kept_masks, then list[0 .. count-1] the k with any bit
/// set, ascending. All THREADS threads call it.
template <int THREADS>
__device__ int build_kept_list(const kernel_params& p, int ti0, int tj0, int sub_m, int sub_n,
                               std::uint16_t* masks, int* list) {
  __shared__ int count;
  build_kept_masks<THREADS>(p, ti0, tj0, sub_m, sub_n, masks);
  __syncthreads();
  if (threadIdx.x < 32) {
    const int end = append_kept(masks, p.kt, list, 0, [](unsigned mask) { return mask != 0; });
    if (threadIdx.x == 0) count = end;
  }
  __syncthreads();
  return count;
}
#endif

}  // namespace nearsparse::spamm::detail
