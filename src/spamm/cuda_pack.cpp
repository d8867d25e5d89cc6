// The packing of a SpAMM operand on CUDA (detail/pack.hpp, pack_cuda): one 32 x 8 thread block
// per 32 x 32 tile of the destination. Where the source's contiguous index runs along the
// destination's rows (A in LayoutRight), each warp reads and writes 32 consecutive elements of a
// row straight through; otherwise (B transposed, or a LayoutLeft A) the tile goes through shared
// memory (33 columns: no bank conflicts), read along the source's contiguous index and written
// along the destination's rows. Values are rounded by the format's own encode from double, as
// the portable kernel rounds them, so both give the same bits; non-finite source values are
// counted into one device word (atomics: they are rare).
#include <nearsparse/spamm/detail/pack.hpp>

#include "../core/cuda/check.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace nearsparse::spamm::detail {
namespace {

constexpr int edge = 32;       // destination tile edge
constexpr int block_rows = 8;  // thread rows per block: each thread covers edge / block_rows

template <class Format, class T>
__global__ void pack_kernel(pack_job job, bool through_shared) {
  using storage = typename Format::storage;
  __shared__ storage tile[edge][edge + 1];
  const T* src = static_cast<const T*>(job.src);
  storage* dst = static_cast<storage*>(job.dst);
  const int rows = job.transpose ? job.src_cols : job.src_rows;  // op(src)'s extents
  const int cols = job.transpose ? job.src_rows : job.src_cols;
  const int r0 = blockIdx.y * edge, c0 = blockIdx.x * edge;
  const std::size_t ld = std::size_t(job.cols_p);
  // op(src)(r, c), counting a non-finite value; zero outside op(src).
  int bad = 0;
  const auto value = [&](int r, int c) {
    if (r >= rows || c >= cols) return Format::encode(0.0);
    const std::size_t at = job.transpose ? std::size_t(c) * job.s0 + std::size_t(r) * job.s1
                                         : std::size_t(r) * job.s0 + std::size_t(c) * job.s1;
    const double v = static_cast<double>(src[at]);
    bad += (v - v == 0.0) ? 0 : 1;
    return Format::encode(v);
  };
  if (!through_shared) {
    const int c = c0 + int(threadIdx.x);
    if (c < job.cols_p)
      for (int i = threadIdx.y; i < edge; i += block_rows) {
        const int r = r0 + i;
        if (r < job.rows_p) dst[std::size_t(r) * ld + c] = value(r, c);
      }
  } else {
    // Read with threadIdx.x along destination rows (the source's contiguous index).
    for (int j = threadIdx.y; j < edge; j += block_rows) {
      const int r = r0 + int(threadIdx.x), c = c0 + j;
      if (r < job.rows_p && c < job.cols_p) tile[threadIdx.x][j] = value(r, c);
    }
    __syncthreads();
    const int c = c0 + int(threadIdx.x);
    if (c < job.cols_p)
      for (int i = threadIdx.y; i < edge; i += block_rows) {
        const int r = r0 + i;
        if (r < job.rows_p) dst[std::size_t(r) * ld + c] = tile[i][threadIdx.x];
      }
  }
  if (job.count_non_finite && bad != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(job.bad), static_cast<unsigned long long>(bad));
}

}  // namespace

template <class Format, class T>
void pack_cuda(const Kokkos::Cuda& exec, const pack_job& job) {
  constexpr const char* function = "nearsparse::spamm::detail::pack_cuda";
  cudaStream_t stream = exec.cuda_stream();
  nearsparse::detail::cuda::check(cudaMemsetAsync(job.bad, 0, sizeof(std::int64_t), stream),
                                  function, "cudaMemsetAsync");
  if (job.rows_p == 0 || job.cols_p == 0) return;
  // The source runs contiguously along destination rows when consecutive destination columns
  // are consecutive in memory.
  const bool rows_contiguous = job.transpose ? job.s0 == 1 : job.s1 == 1;
  const dim3 grid(unsigned((job.cols_p + edge - 1) / edge),
                  unsigned((job.rows_p + edge - 1) / edge));
  pack_kernel<Format, T><<<grid, dim3(edge, block_rows), 0, stream>>>(job, !rows_contiguous);
  nearsparse::detail::cuda::check_launch(function, "pack_kernel");
}

#define NEARSPARSE_PACK_CUDA(P)                                                     \
  template void pack_cuda<format<spamm::precision::P>, float>(const Kokkos::Cuda&,  \
                                                              const pack_job&);     \
  template void pack_cuda<format<spamm::precision::P>, double>(const Kokkos::Cuda&, \
                                                               const pack_job&);
NEARSPARSE_PACK_CUDA(fp64)
NEARSPARSE_PACK_CUDA(fp32)
NEARSPARSE_PACK_CUDA(tf32)
NEARSPARSE_PACK_CUDA(fp16)
NEARSPARSE_PACK_CUDA(bf16)
#undef NEARSPARSE_PACK_CUDA

}  // namespace nearsparse::spamm::detail
