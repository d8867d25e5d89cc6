// The get-norm kernel on CUDA (section 3.2 of the cuSpAMM paper): one thread block per tile of a
// packed operand. Each thread reads 16-byte chunks of the tile and sums squares; warps reduce
// with shuffles, then one warp reduces the warps' sums (cuda_norm_sums.hpp). Every format sums
// on the CUDA cores, fp16 too: the packing that computes the norm maps on the way
// (cuda_pack.cpp) sums the same chunks in the same order, so both give the same bits. (The
// paper's fp16 sums on the tensor cores, equations 3-4, accumulate in the MMA's own order.)
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/detail/norms.hpp>

#include "../core/cuda/check.hpp"
#include "cuda_norm_sums.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace nearsparse::spamm::detail {
namespace {

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
    sum += chunk_squares<Acc>(v, prec);
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0)
    store_norm(p.norms, p.is_a, tr, tk, p.kt, p.nt, sqrt(static_cast<double>(sum)));
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
  // One block per tile, on the grid's x extent (at most 2^31 - 1 blocks).
  const std::uint64_t tiles = std::uint64_t(tiles_r) * std::uint64_t(geo.kt);
  if (tiles > std::uint64_t(2147483647))
    throw unsupported(nearsparse::detail::concat(
        function, ": the norm map of ", is_a ? "A" : "B", " has ", tiles, " tiles (", tiles_r,
        " x ", geo.kt, "); the CUDA get-norm kernel launches at most 2147483647 blocks"));
  const unsigned blocks = static_cast<unsigned>(tiles);
  cudaStream_t stream = exec.cuda_stream();
  if (precision == spamm::precision::fp64) {
    norms_kernel<double><<<blocks, norm_threads, 0, stream>>>(p, precision);
  } else {
    norms_kernel<float><<<blocks, norm_threads, 0, stream>>>(p, precision);
  }
  nearsparse::detail::cuda::check_launch(function, "norms_kernel");
}

}  // namespace nearsparse::spamm::detail
