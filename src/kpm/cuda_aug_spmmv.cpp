// CUDA kernel of the augmented SpMMV; see include/nearsparse/kpm/detail/cuda_aug_spmmv.hpp.
#include "../core/cuda/check.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/detail/cuda_aug_spmmv.hpp>

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

namespace nearsparse::kpm::detail {

namespace {

constexpr int block_threads = 256;
constexpr unsigned full_mask = 0xffffffffu;

// Ops::load reads the matrix and `in` through the read-only data path (__ldg).
struct real_ops {
  using type = double;
  __device__ static type zero() { return 0.0; }
  __device__ static type fma(type a, type b, type c) { return ::fma(a, b, c); }
  __device__ static type scale(double s, type a) { return s * a; }
  __device__ static type add(type a, type b) { return a + b; }
  __device__ static double norm2(type a) { return a * a; }
  __device__ static double real_dot(type a, type b) { return a * b; }
  __device__ static type shfl(type a, int src) { return __shfl_sync(full_mask, a, src); }
  __device__ static type load(const type* p) { return __ldg(p); }
};

struct complex_ops {
  using type = double2;
  __device__ static type zero() { return make_double2(0.0, 0.0); }
  // c + a b
  __device__ static type fma(type a, type b, type c) {
    return make_double2(::fma(a.x, b.x, ::fma(-a.y, b.y, c.x)),
                        ::fma(a.x, b.y, ::fma(a.y, b.x, c.y)));
  }
  __device__ static type scale(double s, type a) { return make_double2(s * a.x, s * a.y); }
  __device__ static type add(type a, type b) { return make_double2(a.x + b.x, a.y + b.y); }
  __device__ static double norm2(type a) { return a.x * a.x + a.y * a.y; }
  __device__ static double real_dot(type a, type b) { return a.x * b.x + a.y * b.y; }
  __device__ static type shfl(type a, int src) {
    return make_double2(__shfl_sync(full_mask, a.x, src), __shfl_sync(full_mask, a.y, src));
  }
  __device__ static type load(const type* p) { return __ldg(p); }
};

struct crs_access {
  const int* row_map;
  __device__ void span(int i, std::int64_t& begin, int& stride, int& count) const {
    begin = __ldg(row_map + i);
    stride = 1;
    count = __ldg(row_map + i + 1) - int(begin);
  }
};

struct sell_access {
  const std::int64_t* chunk_offsets;
  const int* chunk_lengths;
  int chunk_height;
  __device__ void span(int i, std::int64_t& begin, int& stride, int& count) const {
    const int c = i / chunk_height;
    begin = __ldg(chunk_offsets + c) + (i - c * chunk_height);
    stride = chunk_height;
    count = __ldg(chunk_lengths + c);
  }
};

/// G lanes per row (a power of two <= 32), CPL columns per lane (R <= G * CPL). At most 4
/// resident blocks of 256 threads, i.e. 64 registers: with 8 resident blocks (32 registers) the
/// kernel spills for every CPL, which costs more than the occupancy gains (perf/RESULTS.md,
/// kpm/step).
///
/// Rows go to blocks in chunks: Lines runs of chunk_iters * rows_per_window consecutive rows
/// each, walked together window by window (each window takes rows_per_window / Lines rows of
/// every run). A block thus visits rows that read the same nearby vector rows one after another
/// (in L1), and chunks that share far neighbours run at the same phase (row_period.hpp). Where a
/// run is the matrix's stencil period, two runs walked together also share the neighbours one
/// period apart (Lines = 2, taken for 16 lanes per row only: the 32-lane shape spills with it).
/// With `counter` null, block b takes chunks b, b + gridDim.x, ...; otherwise each block takes the
/// next chunk from counter[0] when it is done with one (the last block to finish resets both
/// counters for the next launch), so chunks run in nearly global order and blocks finish
/// together instead of the last wave running nearly empty (perf/RESULTS.md, kpm/step).
///
/// Broadcast: a group of G lanes loads G of a row's entries at once and shares them by shuffles
/// (always with 32 lanes; see broadcast_group). FixedR > 0 is R known at compile time, G * CPL.
template <class Ops, class Access, int G, int CPL, bool Dots, int Lines, bool Broadcast, int FixedR>
__global__ void __launch_bounds__(block_threads, 4)
    aug_kernel(Access access, const int* __restrict__ columns,
               const typename Ops::type* __restrict__ values,
               const typename Ops::type* __restrict__ in, typename Ops::type* __restrict__ out,
               int R_in, int row_begin, int row_end, double alpha, double beta, double gamma,
               double* __restrict__ eta, int eta_ld, int step, int chunk_iters,
               unsigned* __restrict__ counter) {
  using T = typename Ops::type;
  // A compile-time R lets the compiler drop the column checks and fold the addressing.
  const int R = FixedR > 0 ? FixedR : R_in;
  const int lane = threadIdx.x & 31;
  const int g = lane % G;  // lane within the group: columns g, g + G, ...
  const int group_in_warp = lane / G;
  constexpr int groups_per_warp = 32 / G;
  const int warp = threadIdx.x >> 5;
  constexpr int warps = block_threads / 32;
  constexpr int rows_per_window = warps * groups_per_warp;
  double vv[CPL], wv[CPL];
#pragma unroll
  for (int k = 0; k < CPL; ++k) vv[k] = wv[k] = 0;

  // Row arithmetic stays in 32 bits inside a chunk (rows < 2^31): a 64-bit division per window
  // is a measurable share of a step.
  const int rows = row_end - row_begin;
  static_assert(rows_per_window % Lines == 0, "a window takes the same rows of every run");
  constexpr int segment = rows_per_window / Lines;  // rows of each run per window
  const int run_rows = rows_per_window * chunk_iters;
  const long long chunk_rows = (long long)(run_rows)*Lines;
  const int windows = chunk_iters * Lines;  // per chunk
  const int slot = warp * groups_per_warp + group_in_warp;
  const int slot_offset = (slot / segment) * run_rows + slot % segment;
  __shared__ unsigned next_chunk;
  // Every lane of a warp runs the same number of iterations (the shuffles need the full warp).
  for (long long pass = 0;; ++pass) {
    long long chunk;
    if (counter) {
      __syncthreads();  // every warp has read next_chunk
      if (threadIdx.x == 0) next_chunk = atomicAdd(counter, 1u);
      __syncthreads();
      chunk = next_chunk;
    } else {
      chunk = blockIdx.x + pass * gridDim.x;
    }
    const long long chunk_first = chunk * chunk_rows;
    if (chunk_first >= rows) break;
    const int left = int(min(chunk_rows, rows - chunk_first));  // rows of this chunk
    const int first_row = row_begin + int(chunk_first);
    for (int w = 0; w < windows; ++w) {
      const int local = slot_offset + w * segment;
      const bool active = local < left;
      const int i = active ? first_row + local : row_begin;
      std::int64_t begin = 0;
      int stride = 1, count = 0;
      if (active) access.span(i, begin, stride, count);
      T y[CPL];
#pragma unroll
      for (int k = 0; k < CPL; ++k) y[k] = Ops::zero();
      if constexpr (Broadcast) {
        // The group's lanes load up to G of the row's entries at once and broadcast them: one load
        // of a row's columns and values per G entries instead of one per entry and lane. The trip
        // count is the warp's longest row (the shuffles need every lane); a shorter row's lanes
        // skip the products past its end. With 32 lanes (one row per warp) the trip count is the
        // row's own, and the check is left out.
        int trips = count;
        for (int offset = G; offset < 32; offset *= 2)
          trips = max(trips, __shfl_xor_sync(full_mask, trips, offset));
        const int first_lane = group_in_warp * G;
        for (int first = 0; first < trips; first += G) {
          int my_col = 0;
          T my_val = Ops::zero();
          if (first + g < count) {
            const std::int64_t e = begin + std::int64_t(first + g) * stride;
            my_col = __ldg(columns + e);
            my_val = Ops::load(values + e);
          }
          const int n = min(G, trips - first);
#pragma unroll 4
          for (int j = 0; j < n; ++j) {
            const int c = __shfl_sync(full_mask, my_col, first_lane + j);
            const T v = Ops::shfl(my_val, first_lane + j);
            if (G == 32 || first + j < count) {
#pragma unroll
              for (int k = 0; k < CPL; ++k) {
                const int r = g + k * G;
                if (r < R) y[k] = Ops::fma(v, Ops::load(in + std::int64_t(c) * R + r), y[k]);
              }
            }
          }
        }
      } else if (active) {
#pragma unroll 4
        for (int j = 0; j < count; ++j) {
          const std::int64_t e = begin + std::int64_t(j) * stride;
          const int c = __ldg(columns + e);
          const T v = Ops::load(values + e);
#pragma unroll
          for (int k = 0; k < CPL; ++k) {
            const int r = g + k * G;
            if (r < R) y[k] = Ops::fma(v, Ops::load(in + std::int64_t(c) * R + r), y[k]);
          }
        }
      }
      if (active) {
#pragma unroll
        for (int k = 0; k < CPL; ++k) {
          const int r = g + k * G;
          if (r >= R) continue;
          const std::int64_t at = std::int64_t(i) * R + r;
          const T vin = (Dots || beta != 0) ? Ops::load(in + at) : Ops::zero();
          T o = Ops::add(Ops::scale(alpha, y[k]), Ops::scale(beta, vin));
          if (gamma != 0) o = Ops::add(o, Ops::scale(gamma, out[at]));
          out[at] = o;
          if (Dots) {
            vv[k] += Ops::norm2(vin);
            wv[k] += Ops::real_dot(o, vin);
          }
        }
      }
    }
  }
  if constexpr (Dots) {
    // Groups of a warp that own the same columns: shuffle reduction over lanes g, g + G, ...
#pragma unroll
    for (int k = 0; k < CPL; ++k)
      for (int offset = G; offset < 32; offset *= 2) {
        vv[k] += __shfl_xor_sync(full_mask, vv[k], offset);
        wv[k] += __shfl_xor_sync(full_mask, wv[k], offset);
      }
    // Warps of the block: shared memory, then one atomic per block and column.
    __shared__ double partial[warps][2][G * CPL];
    if (lane < G)
#pragma unroll
      for (int k = 0; k < CPL; ++k) {
        partial[warp][0][g + k * G] = vv[k];
        partial[warp][1][g + k * G] = wv[k];
      }
    __syncthreads();
    for (int q = threadIdx.x; q < 2 * R; q += block_threads) {
      const int which = q / R, r = q - which * R;
      double s = 0;
      for (int w = 0; w < warps; ++w) s += partial[w][which][r];
      atomicAdd(eta + std::int64_t(2 * step + which) * eta_ld + r, s);
    }
  }
  if (counter) {
    __syncthreads();
    // Every block has taken its last chunk once all have counted themselves out.
    if (threadIdx.x == 0 && atomicAdd(counter + 1, 1u) == gridDim.x - 1) {
      atomicExch(counter, 0u);
      atomicExch(counter + 1, 0u);
    }
  }
}

/// Chunk counters of the dynamically scheduled launches, zero between launches. A launch takes
/// the next slot in turn, so launches in flight on different streams at once do not share one
/// unless 64 others were started in between.
constexpr int counter_slots = 64;
__device__ unsigned chunk_counters[counter_slots][2];

/// The next slot's two counters, or null when the device symbol cannot be found (the launch then
/// schedules statically). One device per process, as Kokkos runs.
unsigned* next_counter_slot() {
  static unsigned* const base = [] {
    void* p = nullptr;
    if (cudaGetSymbolAddress(&p, chunk_counters) == cudaSuccess) return static_cast<unsigned*>(p);
    (void)cudaGetLastError();  // not sticky: leave no error for the launch check
    return static_cast<unsigned*>(nullptr);
  }();
  static std::atomic<unsigned> turn{0};
  if (!base) return nullptr;
  return base + 2 * (turn.fetch_add(1, std::memory_order_relaxed) % counter_slots);
}

using nearsparse::detail::cuda::check;

/// Windows of `window` rows per chunk: tuning.chunk_rows (rounded to whole windows) when set;
/// else the most windows, up to 512 rows, whose rows divide the period.
int chunk_windows(const cuda_aug_args& a, const cuda_tuning& tuning, int window) {
  if (tuning.chunk_rows > 0) return std::max(1, (tuning.chunk_rows + window / 2) / window);
  int best = 1;
  for (int k = 1; a.period > 0 && k * window <= 512; ++k)
    if (a.period % (k * window) == 0) best = k;
  return best;
}

/// Kokkos sets the device's cache preference to shared memory when it initializes
/// (cudaDeviceSetCacheConfig), which leaves this kernel a small L1 for its gathers. Ask for just
/// the shared memory that 4 resident blocks need, so the gathers hit L1 more often. The kernel's
/// own cache preference (L1) is set as well, so the device-wide one never applies to it.
template <class Kernel>
void prefer_l1(Kernel* kernel, const char* function) {
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, kernel), function, "cudaFuncGetAttributes");
  int device = 0, per_sm = 0;
  check(cudaGetDevice(&device), function, "cudaGetDevice");
  check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
        function, "cudaDeviceGetAttribute");
  const double needed = 4.0 * (double(attributes.sharedSizeBytes) + 1024);  // 1 KiB per block
  const int percent = per_sm > 0 ? std::min(100, int(std::ceil(100 * needed / per_sm))) : 100;
  check(cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1), function, "cudaFuncSetCacheConfig");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent),
        function, "cudaFuncSetAttribute");
}

/// Whether groups of G lanes broadcast a row's entries (aug_kernel): for CRS with 4 lanes and
/// more, where one load per G entries saves more than the shuffles cost (with 2 lanes it does
/// not); for SELL, whose entries lie a chunk height apart, the group's loads touch a cache line
/// each, so SELL keeps one load per entry below 32 lanes (perf/RESULTS.md, kpm/step).
template <class Access, int G>
constexpr bool broadcast_group = G == 32 || (std::is_same_v<Access, crs_access> && G >= 4);

template <class Ops, class Access, int G, int CPL>
void launch(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a,
            const cuda_tuning& tuning) {
  using T = typename Ops::type;
  const long long rows = a.row_end - a.row_begin;
  constexpr int groups_per_block = block_threads / G;
  // A grid of at most a few waves: every block loops over rows, so the dot products need one
  // atomic per block and column however large the matrix.
  static int sms = 0;
  if (sms == 0) {
    int device = 0;
    check(cudaGetDevice(&device), a.function, "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), a.function,
          "cudaDeviceGetAttribute");
  }
  const int chunk_iters = chunk_windows(a, tuning, groups_per_block);
  const long long run_rows = (long long)(groups_per_block)*chunk_iters;
  // Two periods walked together (see the kernel) unless tuning.pair_periods is off.
  const bool paired = G == 16 && tuning.pair_periods && chunk_iters > 1 && run_rows == a.period;
  auto run_fixed = [&](auto dots, auto lines, auto fixed_r) {
    constexpr int Lines = decltype(lines)::value;
    constexpr auto kernel = aug_kernel<Ops, Access, G, CPL, decltype(dots)::value, Lines,
                                       broadcast_group<Access, G>, decltype(fixed_r)::value>;
    static const bool carved = (prefer_l1(kernel, a.function), true);
    (void)carved;
    // Chunks of several windows (a stencil period) go to blocks dynamically, over one wave of
    // resident blocks; one-window chunks keep the static order over 8 waves.
    long long grid = 8LL * sms;
    unsigned* counter = nullptr;
    if (chunk_iters > 1) {
      static const int resident = [&] {
        int n = 0;
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block_threads, 0),
              a.function, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        return std::max(1, n);
      }();
      counter = next_counter_slot();
      if (counter) grid = (long long)(resident)*sms;
    }
    const long long chunk_rows = run_rows * Lines;
    const long long needed = (rows + chunk_rows - 1) / chunk_rows;
    const int blocks = int(std::max<long long>(1, std::min<long long>(needed, grid)));
    kernel<<<blocks, block_threads, 0, exec.cuda_stream()>>>(
        access, a.columns, static_cast<const T*>(a.values), static_cast<const T*>(a.in),
        static_cast<T*>(a.out), a.R, a.row_begin, a.row_end, a.alpha, a.beta, a.gamma, a.eta,
        a.eta_ld, a.step, chunk_iters, counter);
  };
  // R filling every lane (the shapes shape_for picks for powers of two) gets a kernel compiled
  // for it (see FixedR) unless tuning.compiled_width is off, except one lane per row of a CRS
  // matrix (R = 1), which is slower that way (perf/RESULTS.md, kpm/step).
  auto run = [&](auto dots, auto lines) {
    if constexpr (!(std::is_same_v<Access, crs_access> && G == 1 && CPL == 1)) {
      if (tuning.compiled_width && a.R == G * CPL)
        return run_fixed(dots, lines, std::integral_constant<int, G * CPL>{});
    }
    run_fixed(dots, lines, std::integral_constant<int, 0>{});
  };
  using one = std::integral_constant<int, 1>;
  using two = std::integral_constant<int, 2>;
  auto run_lines = [&](auto lines) {
    if (a.eta)
      run(std::true_type{}, lines);
    else
      run(std::false_type{}, lines);
  };
  if constexpr (G == 16) {
    if (paired)
      run_lines(two{});
    else
      run_lines(one{});
  } else {
    run_lines(one{});
  }
  nearsparse::detail::cuda::check_launch(a.function, "aug_kernel");
}

template <class Ops, class Access, int CPL>
void dispatch_group(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a,
                    const cuda_tuning& tuning, int G) {
  switch (G) {
    case 1:
      return launch<Ops, Access, 1, CPL>(exec, access, a, tuning);
    case 2:
      return launch<Ops, Access, 2, CPL>(exec, access, a, tuning);
    case 4:
      return launch<Ops, Access, 4, CPL>(exec, access, a, tuning);
    case 8:
      return launch<Ops, Access, 8, CPL>(exec, access, a, tuning);
    case 16:
      return launch<Ops, Access, 16, CPL>(exec, access, a, tuning);
    default:
      return launch<Ops, Access, 32, CPL>(exec, access, a, tuning);
  }
}

/// (G, CPL) for R columns; tuning.lanes_per_row and columns_per_lane override it where both are
/// set (the entry points' check_tuning has refused a shape the kernel cannot take).
std::pair<int, int> shape_for(int R, const cuda_tuning& tuning) {
  const int tg = tuning.lanes_per_row, tc = tuning.columns_per_lane;
  if (tg > 0 && tc > 0 && tg * tc >= R) return {tg, tc};
  // Two columns per lane for 2 <= R <= 64: two independent loads in flight per lane and entry,
  // which beats both one column on twice the lanes and four on half (perf/RESULTS.md, kpm/step).
  if (R == 1) return {1, 1};
  const int cpl = R <= 64 ? 2 : 4;
  int g = 1;
  while (g * cpl < R) g *= 2;
  return {g, cpl};
}

template <class Ops, class Access>
void dispatch_width(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a,
                    const cuda_tuning& tuning) {
  const auto [G, CPL] = shape_for(a.R, tuning);
  if (CPL == 1) return dispatch_group<Ops, Access, 1>(exec, access, a, tuning, G);
  if (CPL == 2) return dispatch_group<Ops, Access, 2>(exec, access, a, tuning, G);
  return dispatch_group<Ops, Access, 4>(exec, access, a, tuning, G);
}

template <class Ops>
void dispatch_format(const Kokkos::Cuda& exec, const cuda_aug_args& a, const cuda_tuning& tuning) {
  if (a.chunk_offsets)
    dispatch_width<Ops>(exec, sell_access{a.chunk_offsets, a.chunk_lengths, a.chunk_height}, a,
                        tuning);
  else
    dispatch_width<Ops>(exec, crs_access{a.row_map}, a, tuning);
}

}  // namespace

void cuda_aug_spmmv(const Kokkos::Cuda& exec, const cuda_aug_args& a, const cuda_tuning& tuning) {
  if (a.row_end <= a.row_begin || a.R <= 0) return;
  if (a.R > cuda_aug_max_columns)
    nearsparse::detail::throw_invalid_argument(
        a.function, "options.num_vectors",
        nearsparse::detail::concat("is ", a.R, ", more than the ", cuda_aug_max_columns,
                                   " vectors the CUDA kernel takes"));
  if (a.complex_values)
    dispatch_format<complex_ops>(exec, a, tuning);
  else
    dispatch_format<real_ops>(exec, a, tuning);
}

}  // namespace nearsparse::kpm::detail
