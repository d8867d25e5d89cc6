// The SpAMM multiplication kernel for Hopper tensor cores (sm_90a): Algorithm 2 of the cuSpAMM
// paper with the tile loads of the Tensor Memory Accelerator and warpgroup MMAs (wgmma).
//
// A thread block computes a 128 x BN block of C (BN = 256 or 128) with three warpgroups:
//   - warpgroup 0, the producer: one thread walks the block's kept list and loads, for each
//     step of k, a 128 x 128-byte slice of packed A and a BN x 128-byte slice of packed B^T into
//     a ring of shared-memory stages with cp.async.bulk.tensor (128-byte swizzle). A stage's
//     "full" mbarrier completes when its bytes have landed; its "empty" one when both consumer
//     warpgroups are done reading it.
//   - warpgroups 1 and 2, the consumers: rows 0-63 and 64-127 of the block, with their
//     64 x BN accumulators in registers. For each step they issue wgmma over the stage so that
//     exactly the kept tile products are summed (tiles are 64 or 128: a 64-column quarter never
//     straddles two tiles; see issue_full and issue_split). A warpgroup keeps one step's MMAs in
//     flight while it waits for the next stage.
// The kept list (the per-tile bitmaps compacted into map_offset) is built first by all threads,
// with the k that every tile of the block keeps first (build_ordered_list); the load-balance
// stride s of section 3.5.1 and the block order are those of the mma.sync kernel.
// Registers move to the consumers with setmaxnreg: 40 for the producer, 232 for each consumer.
#include "cuda_wgmma.hpp"

#include "wgmma_instructions.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <type_traits>

namespace nearsparse::spamm::detail {
namespace {

constexpr int wg_bm = 128;         // rows of C per thread block
constexpr int wg_row_bytes = 128;  // bytes of k per stage row: one 128-byte swizzle row
constexpr int wg_threads = 384;    // producer warpgroup + two consumer warpgroups
constexpr int wg_consumer_warps = 8;

template <class Type>
struct wgmma_format;
template <>
struct wgmma_format<wgmma_f16> {
  static constexpr int bytes = 2;
  static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};
template <>
struct wgmma_format<wgmma_bf16> {
  static constexpr int bytes = 2;
  static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};
template <>
struct wgmma_format<wgmma_tf32> {
  static constexpr int bytes = 4;
  static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
};

template <int BN, int STAGES>
struct wgmma_layout {
  static constexpr int a_bytes = wg_bm * wg_row_bytes;
  static constexpr int b_bytes = BN * wg_row_bytes;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int quarters = BN / 64;
  static constexpr int zero_bytes = 64 * wg_row_bytes;  // one quarter of B, all zeros
  // Stages first (1024-byte aligned for the swizzle), then the zeros, the full and empty
  // mbarriers, the kept masks and list; 1024 bytes of slack to align the start.
  static std::size_t bytes(int kt) {
    return 1024 + std::size_t(STAGES) * stage_bytes + zero_bytes + 16 * STAGES + list_bytes(kt);
  }
};

// ----------------------------------------------------------------------------------------------
// PTX wrappers.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  const std::uint32_t addr = smem_addr(bar);
  std::uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  }
}
// A box of the tensor map at element coordinates (k, row) into shared memory, completing on bar.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int k, int row,
                                         std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(k), "r"(row), "r"(smem_addr(bar))
      : "memory");
}
// Shared-memory matrix descriptor of a K-major operand in 128-byte swizzled rows: groups of
// 8 rows 1024 bytes apart (stride byte offset), leading byte offset unused by this swizzle.
__device__ __forceinline__ std::uint64_t smem_descriptor(const void* p) {
  return std::uint64_t((smem_addr(p) & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across the asynchronous MMAs.
template <int R>
__device__ __forceinline__ void pin(float (&acc)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// ----------------------------------------------------------------------------------------------
// The MMAs of one stage: its four k-steps (16 fp16/bf16 or 8 tf32 values, 32 bytes of the
// swizzled row, so the descriptors advance by 2 units of 16 bytes).
// Every output tile of the block keeps this k: one m64nBN instruction per k-step.
template <class Type, int BN, int R>
__device__ __forceinline__ void issue_full(float (&acc)[R], std::uint64_t a, std::uint64_t b) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_op<Type, BN>::run(acc, a + 2 * kk, b + 2 * kk);
}
// Some tiles do not: one m64n64 instruction per 64-column quarter and k-step, with the B
// descriptor of a quarter that does not keep this k pointed at a block of zeros, which adds
// exactly nothing. Skipping those instructions instead would put MMAs on divergent paths, which
// ptxas serializes.
template <class Type, int BN, int R>
__device__ __forceinline__ void issue_split(float (&acc)[R], unsigned kept, std::uint64_t a,
                                            std::uint64_t b, std::uint64_t zeros) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int q = 0; q < BN / 64; ++q)
      wgmma_op<Type, 64>::run(acc + 32 * q, a + 2 * kk,
                              ((kept >> q) & 1u ? b + 512 * q : zeros) + 2 * kk);
}

// A barrier of the whole thread block that its threads may reach at different instructions:
// the producer and consumer warpgroups meet at the end of each output block from their own
// loops, which __syncthreads (bar.sync, "aligned": every thread at the same instruction) does
// not allow. Barrier 1, so as not to share barrier 0 with the __syncthreads of set-up.
__device__ __forceinline__ void block_barrier() {
  asm volatile("barrier.sync 1, %0;\n" ::"n"(wg_threads) : "memory");
}

// The block's kept list, as build_kept_list makes it but with the k that every output tile of
// the block keeps first: the consumers then run them in a loop of full-width MMAs and the rest
// in a loop of split ones, with no branch between MMAs. Returns the count; *full the first part.
__device__ int build_ordered_list(const kernel_params& p, int ti0, int tj0, int sub_m, int sub_n,
                                  std::uint16_t* masks, int* list, int* full) {
  __shared__ int counts[2];
  unsigned all = 0;  // the bits of the output tiles that exist
  for (int u = 0; u < sub_m && ti0 + u < p.mt; ++u)
    for (int v = 0; v < sub_n && tj0 + v < p.nt; ++v) all |= 1u << (u * sub_n + v);
  build_kept_masks<wg_threads>(p, ti0, tj0, sub_m, sub_n, masks);
  block_barrier();
  if (threadIdx.x < 32) {
    const int first = append_kept(masks, p.kt, list, 0, [all](unsigned m) { return m == all; });
    const int end =
        append_kept(masks, p.kt, list, first, [all](unsigned m) { return m != 0 && m != all; });
    if (threadIdx.x == 0) {
      counts[0] = first;
      counts[1] = end;
    }
  }
  block_barrier();
  *full = counts[0];
  return counts[1];
}

// ----------------------------------------------------------------------------------------------
template <class Type, int BN, int STAGES, class CT>
__global__ void __launch_bounds__(wg_threads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b, const kernel_params p,
                 CT* __restrict__ c) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using layout = wgmma_layout<BN, STAGES>;
  constexpr int quarters = layout::quarters;
  constexpr int R = BN / 2;  // accumulators per consumer thread
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  unsigned char* zeros = smem + STAGES * layout::stage_bytes;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(zeros + layout::zero_bytes);
  std::uint64_t* empty = full + STAGES;
  std::uint16_t* masks = reinterpret_cast<std::uint16_t*>(empty + STAGES);
  int* list = reinterpret_cast<int*>(masks + ((p.kt + 1) & ~1));

  for (int i = threadIdx.x; i < layout::zero_bytes / 16; i += wg_threads)
    reinterpret_cast<uint4*>(zeros)[i] = make_uint4(0, 0, 0, 0);
  // The zeros are written by ordinary stores and read by the tensor cores (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);                   // the producer's arrival, plus the bytes
      mbar_init(&empty[s], wg_consumer_warps);  // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  const int sub_m = wg_bm > p.tile ? wg_bm >> p.shift : 1;
  const int sub_n = BN > p.tile ? BN >> p.shift : 1;
  const int steps_per_tile = p.tile * wgmma_format<Type>::bytes / wg_row_bytes;
  const int k_per_step = wg_row_bytes / wgmma_format<Type>::bytes;
  int bi, bj;
  band_order(blockIdx.x, p.groups_m, p.groups_n, bi, bj);

  // Output block `rep` of this thread block (the stride of section 3.5.1): its origin and kept
  // list, or false past C's edge. All threads build the list, so both roles call it in step.
  auto open_block = [&](int rep, int& i0, int& j0, int& count, int& full_count) {
    const int ci = bi + (rep / p.stride) * p.groups_m, cj = bj + (rep % p.stride) * p.groups_n;
    if (ci >= p.blocks_m || cj >= p.blocks_n) return false;
    i0 = ci * wg_bm;
    j0 = cj * BN;
    count =
        build_ordered_list(p, i0 >> p.shift, j0 >> p.shift, sub_m, sub_n, masks, list, &full_count);
    return true;
  };

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    unsigned it = 0;  // steps issued so far, over all the block's output blocks
    for (int rep = 0; rep < p.stride * p.stride; ++rep) {
      int i0, j0, count, full_count;
      if (!open_block(rep, i0, j0, count, full_count)) continue;
      const int steps = count * steps_per_tile;
      if (threadIdx.x == 0) {
        for (int step = 0; step < steps; ++step, ++it) {
          const int s = it % STAGES;
          mbar_wait(&empty[s], ((it / STAGES) & 1) ^ 1);
          const int k = list[step / steps_per_tile] * p.tile + (step % steps_per_tile) * k_per_step;
          unsigned char* stage = smem + s * layout::stage_bytes;
          mbar_arrive_expect_tx(&full[s], layout::stage_bytes);
          tma_load(stage, &map_a, k, i0, &full[s]);
          tma_load(stage + layout::a_bytes, &map_b, k, j0, &full[s]);
        }
      }
      block_barrier();  // masks and list are rebuilt for the next block
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int half = warpgroup - 1;  // rows 64 * half .. of the block
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3;
    const int row_sub = wg_bm > p.tile ? (64 * half) >> p.shift : 0;
    int quarter_sub[quarters];
#pragma unroll
    for (int q = 0; q < quarters; ++q) quarter_sub[q] = BN > p.tile ? (64 * q) >> p.shift : 0;
    unsigned it = 0;
    for (int rep = 0; rep < p.stride * p.stride; ++rep) {
      int i0, j0, count, full_count;
      if (!open_block(rep, i0, j0, count, full_count)) continue;
      const int steps = count * steps_per_tile, full_steps = full_count * steps_per_tile;
      float acc[R];
#pragma unroll
      for (int i = 0; i < R; ++i) acc[i] = 0.f;
      const std::uint64_t dz = smem_descriptor(zeros);
      // After a step's MMAs are issued, those of the step before are waited for and its stage
      // handed back to the producer.
      auto release_previous = [&](int step) {
        wgmma_commit();
        wgmma_wait<1>();
        pin(acc);
        if (step > 0 && lane == 0) mbar_arrive(&empty[(it + STAGES - 1) % STAGES]);
      };
      int step = 0;
      for (; step < full_steps; ++step, ++it) {
        const int s = it % STAGES;
        unsigned char* stage = smem + s * layout::stage_bytes;
        mbar_wait(&full[s], (it / STAGES) & 1);
        pin(acc);
        issue_full<Type, BN>(acc, smem_descriptor(stage + half * 64 * wg_row_bytes),
                             smem_descriptor(stage + layout::a_bytes));
        release_previous(step);
      }
      for (; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        const unsigned mask = masks[list[step / steps_per_tile]];
        unsigned kept = 0;
#pragma unroll
        for (int q = 0; q < quarters; ++q)
          kept |= ((mask >> (row_sub * sub_n + quarter_sub[q])) & 1u) << q;
        unsigned char* stage = smem + s * layout::stage_bytes;
        mbar_wait(&full[s], (it / STAGES) & 1);
        pin(acc);
        issue_split<Type, BN>(acc, kept, smem_descriptor(stage + half * 64 * wg_row_bytes),
                              smem_descriptor(stage + layout::a_bytes), dz);
        release_previous(step);
      }
      wgmma_wait<0>();
      pin(acc);
      if (steps > 0 && lane == 0) mbar_arrive(&empty[(it + STAGES - 1) % STAGES]);

      const CT alpha = static_cast<CT>(p.alpha), beta = static_cast<CT>(p.beta);
      // Nothing kept for this block (a panel of k that misses it) and beta = 1: C stays as it is,
      // unread and unwritten.
      if (steps == 0 && beta == CT(1)) {
        block_barrier();
        continue;
      }
      const int g = lane >> 2, t = lane & 3;
      const int row0 = i0 + 64 * half + 16 * warp + g;
      // Each thread holds pairs of adjacent columns: with rows contiguous and pairs aligned,
      // a float C takes them as one vector store each, so a warp writes whole 32-byte sectors.
      // (Double C is written element by element: its pair stores cost the registers that the
      // MMA pipeline needs.)
      const bool pairs =
          p.s1 == 1 && p.s0 % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % (2 * sizeof(CT)) == 0;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + 8 * h, col = j0 + 8 * j + 2 * t;
          if (row >= p.m) continue;
          CT* out = c + row * p.s0 + col * p.s1;
          CT v0 = alpha * static_cast<CT>(acc[4 * j + 2 * h]);
          CT v1 = alpha * static_cast<CT>(acc[4 * j + 2 * h + 1]);
          if constexpr (std::is_same_v<CT, float>) {
            if (pairs && col + 1 < p.n) {
              float2* o = reinterpret_cast<float2*>(out);
              if (beta != CT(0)) {
                const float2 old = *o;
                v0 += beta * old.x;
                v1 += beta * old.y;
              }
              *o = float2{v0, v1};
              continue;
            }
          }
          if (col < p.n) out[0] = beta == CT(0) ? v0 : v0 + beta * out[0];
          if (col + 1 < p.n) out[p.s1] = beta == CT(0) ? v1 : v1 + beta * out[p.s1];
        }
      }
      block_barrier();
    }
  }
#else
  (void)map_a, (void)map_b, (void)p, (void)c;
#endif
}

// ----------------------------------------------------------------------------------------------
// Host side.
PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    nearsparse::detail::cuda::check(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &found),
        multiply_function, "cudaGetDriverEntryPointByVersion (cuTensorMapEncodeTiled)");
    if (found != cudaDriverEntryPointSuccess || f == nullptr)
      throw runtime_error(nearsparse::detail::concat(
          multiply_function, ": the CUDA driver offers no cuTensorMapEncodeTiled"));
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// A packed operand (rows x kp, row-major) seen in boxes of box_rows x 128 bytes.
template <class Type>
CUtensorMap tensor_map(const void* base, int rows, int kp, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(kp), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(kp) * wgmma_format<Type>::bytes};
  const cuuint32_t box[2] = {cuuint32_t(wg_row_bytes / wgmma_format<Type>::bytes),
                             cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = encode_function()(
      &map, wgmma_format<Type>::tma_type, 2, const_cast<void*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    throw runtime_error(nearsparse::detail::concat(multiply_function,
                                                   ": cuTensorMapEncodeTiled failed (", int(status),
                                                   ") for a ", rows, " x ", kp, " operand"));
  return map;
}

template <class Type, int BN, int STAGES, class CT>
void launch(cudaStream_t stream, int device, const multiply_problem& pr, double alpha, double beta,
            CT* c, std::size_t s0, std::size_t s1) {
  const kernel_params p = make_params(pr, alpha, beta, s0, s1, wg_bm, BN);
  const CUtensorMap map_a = tensor_map<Type>(pr.a, pr.geo.mp, pr.geo.kp, wg_bm);
  const CUtensorMap map_b = tensor_map<Type>(pr.b, pr.geo.np, pr.geo.kp, BN);
  auto kernel = wgmma_kernel<Type, BN, STAGES, CT>;
  const std::size_t bytes = wgmma_layout<BN, STAGES>::bytes(p.kt);
  static std::size_t raised_to[64] = {};
  set_shared_memory(device, kernel, bytes, raised_to);
  const unsigned grid = grid_blocks(p, "wgmma_kernel");
  kernel<<<grid, wg_threads, bytes, stream>>>(map_a, map_b, p, c);
  nearsparse::detail::cuda::check_launch(multiply_function, "wgmma_kernel");
}

// 128 x 256 blocks feed the tensor cores best; 128 x 128 when the wider ones would leave
// multiprocessors idle.
template <class Type, class CT>
void dispatch(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
              double beta, CT* c, std::size_t s0, std::size_t s1) {
  const long wide = long((pr.geo.m + wg_bm - 1) / wg_bm) * ((pr.geo.n + 255) / 256);
  if (wide >= info_of(device).multiprocessors) {
    launch<Type, 256, 4>(stream, device, pr, alpha, beta, c, s0, s1);
  } else {
    launch<Type, 128, 6>(stream, device, pr, alpha, beta, c, s0, s1);
  }
}

template <class CT>
void multiply_any(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                  double beta, CT* c, std::size_t s0, std::size_t s1) {
  if (pr.geo.m == 0 || pr.geo.n == 0 || pr.geo.kt == 0) return;
  switch (pr.precision) {
    case spamm::precision::fp16:
      dispatch<wgmma_f16>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    case spamm::precision::bf16:
      dispatch<wgmma_bf16>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    case spamm::precision::tf32:
      dispatch<wgmma_tf32>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    default:
      throw runtime_error(nearsparse::detail::concat(
          multiply_function, ": the wgmma kernel has no ", to_string(pr.precision), " path"));
  }
}

}  // namespace

bool wgmma_supports(int device, spamm::precision precision, int tile) {
  const device_info& d = info_of(device);
  const bool tensor_core = precision == spamm::precision::fp16 ||
                           precision == spamm::precision::bf16 ||
                           precision == spamm::precision::tf32;
  return d.major == 9 && d.minor == 0 && tensor_core && (tile == 64 || tile == 128);
}

void wgmma_multiply(cudaStream_t stream, int device, const multiply_problem& problem, double alpha,
                    double beta, float* c, std::size_t s0, std::size_t s1) {
  multiply_any(stream, device, problem, alpha, beta, c, s0, s1);
}

void wgmma_multiply(cudaStream_t stream, int device, const multiply_problem& problem, double alpha,
                    double beta, double* c, std::size_t s0, std::size_t s1) {
  multiply_any(stream, device, problem, alpha, beta, c, s0, s1);
}

}  // namespace nearsparse::spamm::detail
