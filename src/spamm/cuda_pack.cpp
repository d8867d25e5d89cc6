// The packing of a SpAMM operand on CUDA (detail/pack.hpp, pack_cuda): one 32 x 8 thread block
// per 32 x 32 tile of the destination. Where the source's contiguous index runs along the
// destination's rows (A in LayoutRight), each warp reads and writes 32 consecutive elements of a
// row straight through; otherwise (B transposed, or a LayoutLeft A) the tile goes through shared
// memory (33 columns: no bank conflicts), read along the source's contiguous index and written
// along the destination's rows. Values are rounded by the format's own encode from double, as
// the portable kernel rounds them, so both give the same bits; non-finite source values are
// counted into one device word (atomics: they are rare).
//
// pack_norms_kernel packs and computes the norm map in one pass (detail/pack_norms.hpp): one
// block of norm_threads per tile of the destination, each thread writing the 16-byte chunks of
// the tile that the get-norm kernel would read with it, in the same order, and summing their
// squares as that kernel does (cuda_norm_sums.hpp). Where the source runs along the tile's rows
// a thread reads its chunk's values straight (16-byte loads where a row-major source's chunk is
// aligned, element by element otherwise); otherwise each pass
// of the block (the tile rows its chunks cover) is first read along the source's contiguous
// index into shared memory.
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/detail/pack_norms.hpp>

#include "../core/cuda/check.hpp"
#include "cuda_norm_sums.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nearsparse::spamm::detail {
namespace {

constexpr int edge = 32;       // destination tile edge
constexpr int block_rows = 8;  // thread rows per block: each thread covers edge / block_rows

template <class F>
struct precision_of;
template <spamm::precision P>
struct precision_of<format<P>> {
  static constexpr spamm::precision value = P;
};

// Where op(src)(r, c) is in the source, in elements.
__device__ inline std::size_t source_offset(const pack_job& job, int r, int c) {
  return job.transpose ? std::size_t(c) * job.s0 + std::size_t(r) * job.s1
                       : std::size_t(r) * job.s0 + std::size_t(c) * job.s1;
}

// x rounded to Format; a non-finite x adds one to `bad`.
template <class Format, class T>
__device__ typename Format::storage encode_counting(T x, int& bad) {
  const double v = static_cast<double>(x);
  bad += (v - v == 0.0) ? 0 : 1;
  return Format::encode(v);
}

// op(src)(r, c) of a packing job, rounded to Format (zero outside op(src)); a non-finite source
// value adds one to `bad`.
template <class Format, class T>
__device__ typename Format::storage source_value(const pack_job& job, int rows, int cols, int r,
                                                 int c, int& bad) {
  if (r >= rows || c >= cols) return Format::encode(0.0);
  return encode_counting<Format>(static_cast<const T*>(job.src)[source_offset(job, r, c)], bad);
}

template <class Format, class T>
__global__ void pack_kernel(pack_job job, bool through_shared) {
  using storage = typename Format::storage;
  __shared__ storage tile[edge][edge + 1];
  storage* dst = static_cast<storage*>(job.dst);
  const int rows = job.transpose ? job.src_cols : job.src_rows;  // op(src)'s extents
  const int cols = job.transpose ? job.src_rows : job.src_cols;
  const int r0 = blockIdx.y * edge, c0 = blockIdx.x * edge;
  const std::size_t ld = std::size_t(job.cols_p);
  int bad = 0;
  const auto value = [&](int r, int c) {
    return source_value<Format, T>(job, rows, cols, r, c, bad);
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

// The stage of one pass: norm_threads chunks of 16 bytes, rows padded by one chunk (rows stay
// 16-byte aligned), for at most 64 rows.
constexpr int stage_chunks = norm_threads + 64;

template <class Format, class T, class Acc>
__global__ void __launch_bounds__(norm_threads)
    pack_norms_kernel(pack_job job, tile_norm_job out, spamm::precision prec, bool through_shared) {
  using storage = typename Format::storage;
  constexpr int per_chunk = 16 / int(sizeof(storage));
  union chunk_t {
    uint4 bits;
    storage e[per_chunk];
  };
  __shared__ uint4 stage_bits[stage_chunks];
  storage* stage = reinterpret_cast<storage*>(stage_bits);
  const int rows = job.transpose ? job.src_cols : job.src_rows;  // op(src)'s extents
  const int cols = job.transpose ? job.src_rows : job.src_cols;
  const int tile = out.tile, per_row = tile / per_chunk, chunks = tile * per_row;
  const int pass_rows = norm_threads / per_row < tile ? norm_threads / per_row : tile;
  const int pitch = tile + per_chunk;
  // Consecutive blocks run along the source's contiguous index, so that the blocks running at
  // a time read long runs of the same source lines.
  const int tr = through_shared ? blockIdx.x : blockIdx.y;
  const int tk = through_shared ? blockIdx.y : blockIdx.x;
  const int r0 = tr * tile, c0 = tk * tile;
  const std::size_t ld = std::size_t(job.cols_p);
  storage* dst = static_cast<storage*>(job.dst);
  int bad = 0;
  Acc sum = 0;
  for (int first = 0; first < chunks; first += norm_threads) {
    const int pass_r0 = first / per_row;  // the first tile row of this pass
    if (through_shared) {
      // Threads run along the pass's rows: the source's contiguous index.
      // A pass holds at most per_chunk elements per thread: all of a thread's loads are issued
      // before any is stored, so that they are in flight together.
      // (Zero outside op(src), which encodes as the padding does.)
      T values[per_chunk];
#pragma unroll
      for (int e = 0; e < per_chunk; ++e) {
        const int idx = int(threadIdx.x) + e * norm_threads;
        const int r = r0 + pass_r0 + idx % pass_rows, c = c0 + idx / pass_rows;
        values[e] = idx < pass_rows * tile && r < rows && c < cols
                        ? __ldg(static_cast<const T*>(job.src) + source_offset(job, r, c))
                        : T(0);
      }
      if (first > 0) __syncthreads();  // the last pass's chunks are read
#pragma unroll
      for (int e = 0; e < per_chunk; ++e) {
        const int idx = int(threadIdx.x) + e * norm_threads;
        if (idx < pass_rows * tile)
          stage[(idx % pass_rows) * pitch + idx / pass_rows] =
              encode_counting<Format>(values[e], bad);
      }
      __syncthreads();
    }
    const int ch = first + int(threadIdx.x);
    if (ch >= chunks) continue;
    const int r = ch / per_row, c = (ch % per_row) * per_chunk;
    chunk_t chunk;
    if (through_shared) {
      chunk.bits = *reinterpret_cast<const uint4*>(stage + (r - pass_r0) * pitch + c);
    } else {
      const int gr = r0 + r, gc = c0 + c;
      constexpr int loads = int(per_chunk * sizeof(T)) / 16;  // 16-byte loads per chunk
      bool done = false;
      if constexpr (loads > 0) {
        // A whole chunk of a source row with unit stride, 16-byte aligned.
        if (!job.transpose && job.s1 == 1 && gr < rows && gc + per_chunk <= cols) {
          const T* run = static_cast<const T*>(job.src) + std::size_t(gr) * job.s0 + gc;
          if (reinterpret_cast<std::uintptr_t>(run) % 16 == 0) {
            T values[per_chunk];
            for (int l = 0; l < loads; ++l) {
              const uint4 raw = __ldg(reinterpret_cast<const uint4*>(run) + l);
              std::memcpy(values + l * (16 / int(sizeof(T))), &raw, 16);
            }
            for (int e = 0; e < per_chunk; ++e)
              chunk.e[e] = encode_counting<Format>(values[e], bad);
            done = true;
          }
        }
      }
      if (!done)
        for (int e = 0; e < per_chunk; ++e)
          chunk.e[e] = source_value<Format, T>(job, rows, cols, gr, gc + e, bad);
    }
    *reinterpret_cast<uint4*>(dst + std::size_t(r0 + r) * ld + c0 + c) = chunk.bits;
    sum += chunk_squares<Acc>(chunk.bits, prec);
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0 && tr < out.tiles_r)
    store_norm(out.norms, out.is_a, tr, tk, out.kt, out.nt, sqrt(static_cast<double>(sum)));
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

template <class Format, class T>
void pack_norms_cuda(const Kokkos::Cuda& exec, const pack_job& job, const tile_norm_job& out) {
  constexpr const char* function = "nearsparse::spamm::detail::pack_norms_cuda";
  cudaStream_t stream = exec.cuda_stream();
  nearsparse::detail::cuda::check(cudaMemsetAsync(job.bad, 0, sizeof(std::int64_t), stream),
                                  function, "cudaMemsetAsync");
  if (job.rows_p == 0 || job.cols_p == 0) return;
  const bool rows_contiguous = job.transpose ? job.s0 == 1 : job.s1 == 1;
  const unsigned tiles_c = unsigned(job.cols_p / out.tile),
                 tiles_r = unsigned(job.rows_p / out.tile);
  const dim3 grid = rows_contiguous ? dim3(tiles_c, tiles_r) : dim3(tiles_r, tiles_c);
  using Acc = std::conditional_t<sizeof(typename Format::storage) == 8, double, float>;
  pack_norms_kernel<Format, T, Acc>
      <<<grid, norm_threads, 0, stream>>>(job, out, precision_of<Format>::value, !rows_contiguous);
  nearsparse::detail::cuda::check_launch(function, "pack_norms_kernel");
}

#define NEARSPARSE_PACK_CUDA(P)                                                     \
  template void pack_cuda<format<spamm::precision::P>, float>(const Kokkos::Cuda&,  \
                                                              const pack_job&);     \
  template void pack_cuda<format<spamm::precision::P>, double>(const Kokkos::Cuda&, \
                                                               const pack_job&);    \
  template void pack_norms_cuda<format<spamm::precision::P>, float>(                \
      const Kokkos::Cuda&, const pack_job&, const tile_norm_job&);                  \
  template void pack_norms_cuda<format<spamm::precision::P>, double>(               \
      const Kokkos::Cuda&, const pack_job&, const tile_norm_job&);
NEARSPARSE_PACK_CUDA(fp64)
NEARSPARSE_PACK_CUDA(fp32)
NEARSPARSE_PACK_CUDA(tf32)
NEARSPARSE_PACK_CUDA(fp16)
NEARSPARSE_PACK_CUDA(bf16)
#undef NEARSPARSE_PACK_CUDA

}  // namespace nearsparse::spamm::detail
