// The SpAMM multiplication kernels on CUDA (section 3.3 of the cuSpAMM paper, Algorithms 2-3).
//
// One thread block computes a BM x BN block of C, which covers one or more output tiles of the
// norm map (or lies inside one when the tile is larger than the block). It first builds, in
// shared memory, a mask per tile of k saying which of its output tiles keep the product with
// that k (the bitmap of Algorithm 2), and compacts the k with any kept product into a list (the
// map_offset array), with one warp and ballots. It then streams the listed tiles of k through a
// multi-stage cp.async pipeline (double buffering generalised) and multiplies:
//   - mma_kernel: tensor cores through mma.sync for fp16/bf16 (m16n8k16), tf32 (m16n8k8) and
//     fp64 (m16n8k16 from compute capability 9.0, m8n8k4 before). Each warp owns a WM x WN block of
//     C; an MMA whose output tile does not keep the current k is skipped, so exactly the kept
//     products are summed. Thread blocks of 128 x 128 (64 x 64 when 128 x 128 blocks would not fill
//     the device) feed the tensor cores far better than the paper's 32 x 32 tiles.
//   - fma_kernel: fp32 with plain FMA, 128 x 128 blocks with 8 x 8 outputs per thread (64 x 64
//     with 4 x 4 where 128 x 128 blocks would not fill the device), operands staged through
//     registers into transposed, padded shared memory, double buffered.
// Both take the load-balance stride s of section 3.5.1: block b computes blocks
// (bi + u * groups_m, bj + v * groups_n) for u, v < s.
// On compute capability 9.0 the wgmma kernel (cuda_wgmma.cu) takes tf32, fp16 and bf16 with
// tiles of 64 and 128 instead.
// This file uses no Kokkos (cuda_multiply.cpp chooses between it and the wgmma kernel), so a
// standalone program can include it to time variants of its kernels.
#include <nearsparse/core/errors.hpp>

#include "../core/cuda/async_copy.hpp"
#include "../core/cuda/mma_f64.hpp"
#include "cuda_kernel_common.hpp"
#include "cuda_mma_sync.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>

namespace nearsparse::spamm::detail {
namespace {

using nearsparse::detail::cp_async16;
using nearsparse::detail::cp_async_commit;
using nearsparse::detail::cp_async_wait;

// ldmatrix: four (or two) 8 x 8 matrices of 16-bit elements, rows addressed by lanes 0-31
// (0-15 for .x2). Also used for tf32, whose 32-bit elements it moves as pairs of halves.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* row) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void* row) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(s));
}

// ---------------------------------------------------------------------------------------------
// Tensor-core formats. Fragment layouts are those of the PTX ISA for mma.sync; g = lane / 4,
// t = lane % 4. Shared memory holds A as [m][k] and B^T as [n][k], rows padded by 16 or 32 bytes
// so the fragment loads of a warp hit distinct banks.
struct mma_fp16 {
  using storage = std::uint16_t;
  using acc = float;
  static constexpr int MM = 16, MN = 8, MK = 16, BK = 32, PAD = 8, STAGES = 4, MIN_BLOCKS = 2;
  static constexpr int AR = 4, BR = 2, CR = 4;
  using areg = unsigned;
  using breg = unsigned;
  // A (16 x 16, rows of k): lanes 0-15 address rows 0-15 at k 0, lanes 16-31 at k 8.
  __device__ static void load_a(areg (&a)[AR], const storage* s, int ld, int lane) {
    ldmatrix_x4(a, s + (lane & 15) * ld + (lane >> 4) * 8);
  }
  // B^T (8 x 16, rows of k): lanes 0-7 address rows at k 0, lanes 8-15 at k 8.
  __device__ static void load_b(breg (&b)[BR], const storage* s, int ld, int lane) {
    ldmatrix_x2(b, s + (lane & 7) * ld + ((lane >> 3) & 1) * 8);
  }
  __device__ static void mma(acc (&c)[CR], const areg (&a)[AR], const breg (&b)[BR]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ static int c_row(int lane, int e) { return (lane >> 2) + (e >> 1) * 8; }
  __device__ static int c_col(int lane, int e) { return (lane & 3) * 2 + (e & 1); }
};

struct mma_bf16 : mma_fp16 {
  __device__ static void mma(acc (&c)[CR], const areg (&a)[AR], const breg (&b)[BR]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

struct mma_tf32 {
  using storage = float;
  using acc = float;
  static constexpr int MM = 16, MN = 8, MK = 8, BK = 32, PAD = 4, STAGES = 3, MIN_BLOCKS = 1;
  static constexpr int AR = 4, BR = 2, CR = 4;
  using areg = unsigned;
  using breg = unsigned;
  // The fp16 addressing with 4-element (16-byte) column offsets: each 32-bit element travels
  // as two halves and lands where the tf32 fragment wants it.
  __device__ static void load_a(areg (&a)[AR], const storage* s, int ld, int lane) {
    ldmatrix_x4(a, s + (lane & 15) * ld + (lane >> 4) * 4);
  }
  __device__ static void load_b(breg (&b)[BR], const storage* s, int ld, int lane) {
    ldmatrix_x2(b, s + (lane & 7) * ld + ((lane >> 3) & 1) * 4);
  }
  __device__ static void mma(acc (&c)[CR], const areg (&a)[AR], const breg (&b)[BR]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ static int c_row(int lane, int e) { return (lane >> 2) + (e >> 1) * 8; }
  __device__ static int c_col(int lane, int e) { return (lane & 3) * 2 + (e & 1); }
};

struct mma_fp64 {
  using storage = double;
  using acc = double;
  static constexpr int MM = 8, MN = 8, MK = 4, BK = 16, PAD = 4, STAGES = 3, MIN_BLOCKS = 1;
  static constexpr int AR = 1, BR = 1, CR = 2;
  using areg = double;
  using breg = double;
  __device__ static void load_a(areg (&a)[AR], const storage* s, int ld, int lane) {
    a[0] = s[(lane >> 2) * ld + (lane & 3)];
  }
  __device__ static void load_b(breg (&b)[BR], const storage* s, int ld, int lane) {
    b[0] = s[(lane >> 2) * ld + (lane & 3)];
  }
  __device__ static void mma(acc (&c)[CR], const areg (&a)[AR], const breg (&b)[BR]) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(c[0]), "+d"(c[1])
                 : "d"(a[0]), "d"(b[0]));
  }
  __device__ static int c_row(int lane, int) { return lane >> 2; }
  __device__ static int c_col(int lane, int e) { return (lane & 3) * 2 + e; }
};

// fp64 on compute capability 9.0 and later: m16n8k16 (src/core/cuda/mma_f64.hpp), the shape
// that reaches Hopper's FP64 tensor rate, which m8n8k4 above does not (see perf/RESULTS.md,
// spamm/cuda/.../fp64), with rows of BK + 2 doubles.
struct mma_fp64_k16 : nearsparse::detail::mma_f64_m16n8k16 {
  using storage = double;
  using acc = double;
  using areg = double;
  using breg = double;
  static constexpr int BK = 32, PAD = 2, STAGES = 3, MIN_BLOCKS = 1;
};

// One step of a warp: its AM x AN MMA atoms over BK values of k from shared memory, each atom
// only if its bit in `keep` is set.
template <class T, int AM, int AN, int LDS>
__device__ __forceinline__ void warp_tile_product(typename T::acc (&acc)[AM][AN][T::CR],
                                                  const typename T::storage* as,
                                                  const typename T::storage* bs, int lane,
                                                  unsigned keep) {
#pragma unroll
  for (int kk = 0; kk < T::BK; kk += T::MK) {
    typename T::areg af[AM][T::AR];
    typename T::breg bf[AN][T::BR];
#pragma unroll
    for (int i = 0; i < AM; ++i) T::load_a(af[i], as + i * T::MM * LDS + kk, LDS, lane);
#pragma unroll
    for (int j = 0; j < AN; ++j) T::load_b(bf[j], bs + j * T::MN * LDS + kk, LDS, lane);
#pragma unroll
    for (int i = 0; i < AM; ++i)
#pragma unroll
      for (int j = 0; j < AN; ++j)
        if (keep & (1u << (i * AN + j))) T::mma(acc[i][j], af[i], bf[j]);
  }
}

template <class T, int BM, int BN>
__host__ __device__ constexpr std::size_t mma_pipeline_bytes() {
  return std::size_t(T::STAGES) * (BM + BN) * (T::BK + T::PAD) * sizeof(typename T::storage);
}

template <class T, int BM, int BN, int WARPS_M, int WARPS_N, class CT>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32, T::MIN_BLOCKS)
    mma_kernel(const kernel_params p, CT* __restrict__ c) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
  constexpr int AM = WM / T::MM, AN = WN / T::MN;
  constexpr int LDS = T::BK + T::PAD;
  constexpr int A_STAGE = BM * LDS, B_STAGE = BN * LDS;
  constexpr int E = 16 / int(sizeof(typename T::storage));  // elements per 16-byte copy
  constexpr int CPR = T::BK / E;                            // copies per row and step
  static_assert(AM * AN <= 32, "one warp tests at most 32 tile bits");
  using S = typename T::storage;
  using acc_t = typename T::acc;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  S* stages = reinterpret_cast<S*>(smem_raw);
  std::uint16_t* masks =
      reinterpret_cast<std::uint16_t*>(smem_raw + mma_pipeline_bytes<T, BM, BN>());
  int* list = reinterpret_cast<int*>(masks + ((p.kt + 1) & ~1));

  const S* __restrict__ a = static_cast<const S*>(p.a);
  const S* __restrict__ b = static_cast<const S*>(p.b);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int sub_m = BM > p.tile ? BM >> p.shift : 1;
  const int sub_n = BN > p.tile ? BN >> p.shift : 1;
  const int steps_per_tile = p.tile / T::BK;
  const std::size_t kp = static_cast<std::size_t>(p.kp);

  // Which output tile of the block each MMA of this warp writes.
  int atom_row_sub[AM], atom_col_sub[AN];
#pragma unroll
  for (int i = 0; i < AM; ++i) atom_row_sub[i] = BM > p.tile ? (wm * WM + i * T::MM) >> p.shift : 0;
#pragma unroll
  for (int j = 0; j < AN; ++j) atom_col_sub[j] = BN > p.tile ? (wn * WN + j * T::MN) >> p.shift : 0;

  int bi, bj;
  band_order(blockIdx.x, p.groups_m, p.groups_n, bi, bj);
  for (int rep = 0; rep < p.stride * p.stride; ++rep) {
    const int ci = bi + (rep / p.stride) * p.groups_m, cj = bj + (rep % p.stride) * p.groups_n;
    if (ci >= p.blocks_m || cj >= p.blocks_n) continue;
    const int i0 = ci * BM, j0 = cj * BN;
    const int count =
        build_kept_list<THREADS>(p, i0 >> p.shift, j0 >> p.shift, sub_m, sub_n, masks, list);
    const int steps = count * steps_per_tile;

    auto load_stage = [&](int stage, int step) {
      const int kcol = list[step / steps_per_tile] * p.tile + (step % steps_per_tile) * T::BK;
      S* as = stages + stage * (A_STAGE + B_STAGE);
      S* bs = as + A_STAGE;
      for (int ch = threadIdx.x; ch < BM * CPR; ch += THREADS) {
        const int r = ch / CPR, q = ch % CPR;
        cp_async16(as + r * LDS + q * E, a + std::size_t(i0 + r) * kp + kcol + q * E);
      }
      for (int ch = threadIdx.x; ch < BN * CPR; ch += THREADS) {
        const int r = ch / CPR, q = ch % CPR;
        cp_async16(bs + r * LDS + q * E, b + std::size_t(j0 + r) * kp + kcol + q * E);
      }
    };

    acc_t acc[AM][AN][T::CR];
#pragma unroll
    for (int i = 0; i < AM; ++i)
#pragma unroll
      for (int j = 0; j < AN; ++j)
#pragma unroll
        for (int e = 0; e < T::CR; ++e) acc[i][j][e] = 0;

#pragma unroll
    for (int st = 0; st < T::STAGES - 1; ++st) {
      if (st < steps) load_stage(st, st);
      cp_async_commit();
    }
    for (int step = 0; step < steps; ++step) {
      cp_async_wait<T::STAGES - 2>();
      __syncthreads();
      const int next = step + T::STAGES - 1;
      if (next < steps) load_stage(next % T::STAGES, next);
      cp_async_commit();

      const unsigned mask = masks[list[step / steps_per_tile]];
      unsigned keep = 0;
#pragma unroll
      for (int i = 0; i < AM; ++i)
#pragma unroll
        for (int j = 0; j < AN; ++j)
          keep |= ((mask >> (atom_row_sub[i] * sub_n + atom_col_sub[j])) & 1u) << (i * AN + j);
      constexpr unsigned all = AM * AN == 32 ? 0xffffffffu : (1u << (AM * AN)) - 1u;

      const S* as = stages + (step % T::STAGES) * (A_STAGE + B_STAGE) + (wm * WM) * LDS;
      const S* bs = stages + (step % T::STAGES) * (A_STAGE + B_STAGE) + A_STAGE + (wn * WN) * LDS;
      // Decay matrices keep whole warp blocks far more often than not: that case runs without
      // a test per MMA, so the compiler can interleave loads and MMAs freely.
      if (keep == all) {
        warp_tile_product<T, AM, AN, LDS>(acc, as, bs, lane, all);
      } else if (keep != 0) {
        warp_tile_product<T, AM, AN, LDS>(acc, as, bs, lane, keep);
      }
    }
    cp_async_wait<0>();

    const CT alpha = static_cast<CT>(p.alpha), beta = static_cast<CT>(p.beta);
    // Nothing kept for this block (a panel of k that misses it) and beta = 1: C stays as it is,
    // unread and unwritten.
    if (steps == 0 && beta == CT(1)) {
      __syncthreads();
      continue;
    }
#pragma unroll
    for (int i = 0; i < AM; ++i)
#pragma unroll
      for (int j = 0; j < AN; ++j)
#pragma unroll
        for (int e = 0; e < T::CR; ++e) {
          const int row = i0 + wm * WM + i * T::MM + T::c_row(lane, e);
          const int col = j0 + wn * WN + j * T::MN + T::c_col(lane, e);
          if (row < p.m && col < p.n) {
            CT* out = c + row * p.s0 + col * p.s1;
            const CT value = alpha * static_cast<CT>(acc[i][j][e]);
            *out = beta == CT(0) ? value : value + beta * *out;
          }
        }
    __syncthreads();  // masks, list and stages are rebuilt for the next block
  }
}

// ---------------------------------------------------------------------------------------------
// fp32 with plain FMA. BM x BM blocks of C (BM = 128, or 64 where 128 x 128 blocks would leave
// most multiprocessors idle), 256 threads as 16 x 16, each thread Q x Q quadrants of 4 x 4 outputs
// (Q = BM / 64): rows ty * 4 + 64 q, columns tx * 4 + 64 q.
constexpr int fma_bk = 8, fma_threads = 256;

template <int BM>
struct fma_shape {
  static constexpr int Q = BM / 64;  // quadrants per dimension
  static constexpr int R = 4 * Q;    // outputs per thread and dimension
  static constexpr int LD = BM + 4;  // padded shared rows
  static_assert(BM == 64 || BM == 128, "FMA blocks are 64 or 128");
};

// One step of k (fma_bk values) of a thread's outputs, quadrant by quadrant; with Masked, a
// quadrant whose output tile does not keep the current k is skipped.
template <int BM, bool Masked>
__device__ __forceinline__ void fma_step(float (&acc)[fma_shape<BM>::R][fma_shape<BM>::R],
                                         const float (*as)[fma_shape<BM>::LD],
                                         const float (*bs)[fma_shape<BM>::LD], int tx, int ty,
                                         const bool (&keep)[fma_shape<BM>::Q][fma_shape<BM>::Q]) {
  constexpr int Q = fma_shape<BM>::Q;
#pragma unroll
  for (int k = 0; k < fma_bk; ++k) {
    float4 a4[Q], b4[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) a4[q] = *reinterpret_cast<const float4*>(&as[k][q * 64 + ty * 4]);
#pragma unroll
    for (int q = 0; q < Q; ++q) b4[q] = *reinterpret_cast<const float4*>(&bs[k][q * 64 + tx * 4]);
    float av[Q][4], bv[Q][4];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      av[q][0] = a4[q].x, av[q][1] = a4[q].y, av[q][2] = a4[q].z, av[q][3] = a4[q].w;
      bv[q][0] = b4[q].x, bv[q][1] = b4[q].y, bv[q][2] = b4[q].z, bv[q][3] = b4[q].w;
    }
#pragma unroll
    for (int u = 0; u < Q; ++u)
#pragma unroll
      for (int v = 0; v < Q; ++v)
        if (!Masked || keep[u][v]) {
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
              acc[u * 4 + i][v * 4 + j] = fmaf(av[u][i], bv[v][j], acc[u * 4 + i][v * 4 + j]);
        }
  }
}

// 128 x 128: two blocks per multiprocessor (at most 128 registers): with one, 8 warps cannot
// hide the shared-memory latency and the barrier of each step (see perf/RESULTS.md,
// spamm/cuda/.../fp32). 64 x 64 needs far fewer registers.
template <int BM, class CT>
__global__ void __launch_bounds__(fma_threads, BM == 128 ? 2 : 4)
    fma_kernel(const kernel_params p, CT* __restrict__ c) {
  using shape = fma_shape<BM>;
  constexpr int Q = shape::Q, R = shape::R, LD = shape::LD;
  __shared__ __align__(16) float as[2][fma_bk][LD];
  __shared__ __align__(16) float bs[2][fma_bk][LD];
  extern __shared__ __align__(16) unsigned char smem_raw[];
  std::uint16_t* masks = reinterpret_cast<std::uint16_t*>(smem_raw);
  int* list = reinterpret_cast<int*>(masks + ((p.kt + 1) & ~1));

  const float* __restrict__ a = static_cast<const float*>(p.a);
  const float* __restrict__ b = static_cast<const float*>(p.b);
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int sub_m = BM > p.tile ? BM >> p.shift : 1;
  const int sub_n = BM > p.tile ? BM >> p.shift : 1;
  const int steps_per_tile = p.tile / fma_bk;
  const std::size_t kp = static_cast<std::size_t>(p.kp);
  // The output tile of each of this thread's quadrants, by row and by column.
  int qrow[Q], qcol[Q];
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    qrow[q] = BM > p.tile ? (ty * 4 + q * 64) >> p.shift : 0;
    qcol[q] = BM > p.tile ? (tx * 4 + q * 64) >> p.shift : 0;
  }
  // Each step stages BM rows of 8 values of A and of B^T: 2 * BM float4 loads per operand, one
  // per thread (the first 128 threads only for BM = 64).
  const int load_row = tid / 2, load_k = (tid % 2) * 4;
  // Compile-time true for BM = 128, so that path carries no test (a run-time one cost spills).
  const bool loads = 2 * BM >= fma_threads || tid < 2 * BM;

  int bi, bj;
  band_order(blockIdx.x, p.groups_m, p.groups_n, bi, bj);
  for (int rep = 0; rep < p.stride * p.stride; ++rep) {
    const int ci = bi + (rep / p.stride) * p.groups_m, cj = bj + (rep % p.stride) * p.groups_n;
    if (ci >= p.blocks_m || cj >= p.blocks_n) continue;
    const int i0 = ci * BM, j0 = cj * BM;
    const int count =
        build_kept_list<fma_threads>(p, i0 >> p.shift, j0 >> p.shift, sub_m, sub_n, masks, list);
    const int steps = count * steps_per_tile;
    float acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
      for (int j = 0; j < R; ++j) acc[i][j] = 0.f;

    auto fetch = [&](int step, float4& ra, float4& rb) {
      if (!loads) return;
      const int kcol = list[step / steps_per_tile] * p.tile + (step % steps_per_tile) * fma_bk;
      ra = *reinterpret_cast<const float4*>(a + std::size_t(i0 + load_row) * kp + kcol + load_k);
      rb = *reinterpret_cast<const float4*>(b + std::size_t(j0 + load_row) * kp + kcol + load_k);
    };
    auto stash = [&](int buf, const float4& ra, const float4& rb) {
      if (!loads) return;
      as[buf][load_k + 0][load_row] = ra.x;
      as[buf][load_k + 1][load_row] = ra.y;
      as[buf][load_k + 2][load_row] = ra.z;
      as[buf][load_k + 3][load_row] = ra.w;
      bs[buf][load_k + 0][load_row] = rb.x;
      bs[buf][load_k + 1][load_row] = rb.y;
      bs[buf][load_k + 2][load_row] = rb.z;
      bs[buf][load_k + 3][load_row] = rb.w;
    };
    float4 ra, rb;
    if (steps > 0) {
      fetch(0, ra, rb);
      stash(0, ra, rb);
    }
    __syncthreads();
    for (int step = 0; step < steps; ++step) {
      const int buf = step & 1;
      if (step + 1 < steps) fetch(step + 1, ra, rb);
      const unsigned mask = masks[list[step / steps_per_tile]];
      bool keep[Q][Q];
#pragma unroll
      for (int u = 0; u < Q; ++u)
#pragma unroll
        for (int v = 0; v < Q; ++v) keep[u][v] = (mask >> (qrow[u] * sub_n + qcol[v])) & 1u;
      bool all = keep[0][0];
#pragma unroll
      for (int u = 0; u < Q; ++u)
#pragma unroll
        for (int v = 0; v < Q; ++v) all = all && keep[u][v];
      if (all) {
        fma_step<BM, false>(acc, as[buf], bs[buf], tx, ty, keep);
      } else {
        fma_step<BM, true>(acc, as[buf], bs[buf], tx, ty, keep);
      }
      if (step + 1 < steps) stash(buf ^ 1, ra, rb);
      __syncthreads();
    }

    const CT alpha = static_cast<CT>(p.alpha), beta = static_cast<CT>(p.beta);
    // Nothing kept for this block (a panel of k that misses it) and beta = 1: C stays as it is,
    // unread and unwritten.
    if (steps == 0 && beta == CT(1)) {
      __syncthreads();
      continue;
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int row = i0 + (i / 4) * 64 + ty * 4 + i % 4;
        const int col = j0 + (j / 4) * 64 + tx * 4 + j % 4;
        if (row < p.m && col < p.n) {
          CT* out = c + row * p.s0 + col * p.s1;
          const CT value = alpha * static_cast<CT>(acc[i][j]);
          *out = beta == CT(0) ? value : value + beta * *out;
        }
      }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Launching.
// Whether the m16n8k16 fp64 kernel runs on `device` (a build for an older architecture runs on
// Hopper through its PTX, where that kernel only traps).
bool fp64_k16_runs(int device) {
  if (info_of(device).major < 9) return false;  // info_of also checks the device id
  return nearsparse::detail::mma_f64_runs(
      reinterpret_cast<const void*>(mma_kernel<mma_fp64_k16, 128, 128, 2, 4, double>), device);
}

template <class T, int BM, int BN, int WARPS_M, int WARPS_N, class CT>
void launch_mma(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                double beta, CT* c, std::size_t s0, std::size_t s1) {
  const kernel_params p = make_params(pr, alpha, beta, s0, s1, BM, BN);
  auto kernel = mma_kernel<T, BM, BN, WARPS_M, WARPS_N, CT>;
  const std::size_t bytes = mma_pipeline_bytes<T, BM, BN>() + list_bytes(p.kt);
  static std::size_t raised_to[64] = {};
  set_shared_memory(device, kernel, bytes, raised_to);
  const unsigned grid = grid_blocks(p, "mma_kernel");
  kernel<<<grid, WARPS_M * WARPS_N * 32, bytes, stream>>>(p, c);
  nearsparse::detail::cuda::check_launch(multiply_function, "mma_kernel");
}

// 128 x 128 blocks unless they would leave most multiprocessors idle.
template <class T, class CT>
void dispatch_mma(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                  double beta, CT* c, std::size_t s0, std::size_t s1) {
  const long big = long((pr.geo.m + 127) / 128) * ((pr.geo.n + 127) / 128);
  if (big >= info_of(device).multiprocessors) {
    launch_mma<T, 128, 128, 2, 4>(stream, device, pr, alpha, beta, c, s0, s1);
  } else {
    launch_mma<T, 64, 64, 2, 2>(stream, device, pr, alpha, beta, c, s0, s1);
  }
}

template <int BM, class CT>
void launch_fma(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                double beta, CT* c, std::size_t s0, std::size_t s1) {
  const kernel_params p = make_params(pr, alpha, beta, s0, s1, BM, BM);
  auto kernel = fma_kernel<BM, CT>;
  const std::size_t bytes = list_bytes(p.kt);
  static std::size_t raised_to[64] = {};
  set_shared_memory(device, kernel, bytes, raised_to);  // dynamic: masks and list
  const unsigned grid = grid_blocks(p, "fma_kernel");
  kernel<<<grid, fma_threads, bytes, stream>>>(p, c);
  nearsparse::detail::cuda::check_launch(multiply_function, "fma_kernel");
}

// 128 x 128 blocks unless they would leave most multiprocessors idle: at N = 1024 the 64 blocks
// of 128 x 128 put the heaviest block's whole kept list on one multiprocessor.
template <class CT>
void dispatch_fma(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                  double beta, CT* c, std::size_t s0, std::size_t s1) {
  const long big = long((pr.geo.m + 127) / 128) * ((pr.geo.n + 127) / 128);
  if (big >= info_of(device).multiprocessors) {
    launch_fma<128>(stream, device, pr, alpha, beta, c, s0, s1);
  } else {
    launch_fma<64>(stream, device, pr, alpha, beta, c, s0, s1);
  }
}

template <class CT>
void multiply_any(cudaStream_t stream, int device, const multiply_problem& pr, double alpha,
                  double beta, CT* c, std::size_t s0, std::size_t s1) {
  if (pr.geo.m == 0 || pr.geo.n == 0 || pr.geo.kt == 0) return;
  switch (pr.precision) {
    case spamm::precision::fp64:
      // m16n8k16 stages take 209 KB of shared memory; a k of more than about 3900 tiles leaves
      // no room for the kept list beside them, and m8n8k4 (123 KB) runs it instead.
      if (fp64_k16_runs(device) &&
          mma_pipeline_bytes<mma_fp64_k16, 128, 128>() + list_bytes(pr.geo.kt) <=
              std::size_t(info_of(device).shared_memory_optin)) {
        dispatch_mma<mma_fp64_k16>(stream, device, pr, alpha, beta, c, s0, s1);
      } else {
        dispatch_mma<mma_fp64>(stream, device, pr, alpha, beta, c, s0, s1);
      }
      break;
    case spamm::precision::fp32:
      dispatch_fma(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    case spamm::precision::tf32:
      dispatch_mma<mma_tf32>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    case spamm::precision::fp16:
      dispatch_mma<mma_fp16>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
    case spamm::precision::bf16:
      dispatch_mma<mma_bf16>(stream, device, pr, alpha, beta, c, s0, s1);
      break;
  }
}

}  // namespace

void mma_sync_multiply(cudaStream_t stream, int device, const multiply_problem& problem,
                       double alpha, double beta, float* c, std::size_t s0, std::size_t s1) {
  multiply_any(stream, device, problem, alpha, beta, c, s0, s1);
}

void mma_sync_multiply(cudaStream_t stream, int device, const multiply_problem& problem,
                       double alpha, double beta, double* c, std::size_t s0, std::size_t s1) {
  multiply_any(stream, device, problem, alpha, beta, c, s0, s1);
}

}  // namespace nearsparse::spamm::detail
