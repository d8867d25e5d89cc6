// CUDA kernel of the augmented SpMMV; see include/nearsparse/kpm/detail/cuda_aug_spmmv.hpp.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/detail/cuda_aug_spmmv.hpp>

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
/// resident blocks of 256 threads, i.e. 64 registers: with 8 (32 registers) one column per lane
/// spilled and took R = 1 from 0.18 to 0.23 ms per step on an H100; with 2 or 4 columns, more
/// than 4 resident blocks spills and measured 1.5x-3x slower.
///
/// Rows go to blocks in chunks: Lines runs of chunk_iters * rows_per_window consecutive rows
/// each, walked together window by window (each window takes rows_per_window / Lines rows of
/// every run). A block thus visits rows that read the same nearby vector rows one after another
/// (in L1), and chunks that share far neighbours run at the same phase (row_period.hpp). Where a
/// run is the matrix's stencil period, two runs walked together also share the neighbours one
/// period apart (Lines = 2, taken for 16 lanes per row only, where it measured 0.7 % faster on
/// the whole recurrence at R = 32; the 32-lane shape spilled with it and ran slower).
/// With `counter` null, block b takes chunks b, b + gridDim.x, ...; otherwise each block takes the
/// next chunk from counter[0] when it is done with one (the last block to finish resets both
/// counters for the next launch), so chunks run in nearly global order and blocks finish
/// together: R = 64 went from 3.13 to 2.76 ms per step on an H100 (perf/RESULTS.md).
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
  // A compile-time R lets the compiler drop the column checks and fold the addressing: at R = 32
  // on an H100 a step took 1.33-1.35 ms with it and 1.44-1.45 ms without (perf/RESULTS.md).
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

  // Row arithmetic stays in 32 bits inside a chunk (rows < 2^31); a 64-bit division per window
  // cost about 1 % of a step at R = 32.
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

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw nearsparse::runtime_error(std::string("nearsparse::kpm::aug_spmmv (CUDA): ") + what +
                                    ": " + cudaGetErrorString(e));
}

/// Windows of `window` rows per chunk: NEARSPARSE_KPM_CUDA_CHUNK=<rows> (rounded to whole windows)
/// when set, for tuning; else the most windows, up to 512 rows, whose rows divide the period.
int chunk_windows(const cuda_aug_args& a, int window) {
  static const int env = [] {
    const char* e = std::getenv("NEARSPARSE_KPM_CUDA_CHUNK");
    int v = 0;
    return e && std::sscanf(e, "%d", &v) == 1 && v > 0 ? v : 0;
  }();
  if (env > 0) return std::max(1, (env + window / 2) / window);
  int best = 1;
  for (int k = 1; a.period > 0 && k * window <= 512; ++k)
    if (a.period % (k * window) == 0) best = k;
  return best;
}

/// Kokkos sets the device's cache preference to shared memory when it initializes
/// (cudaDeviceSetCacheConfig), which leaves this kernel a small L1 for its gathers. Ask for just
/// the shared memory that 4 resident blocks need: at R = 32 on an H100 that took a step from
/// 1.72 to 1.54 ms (L1 hit rate of the gathers 33 % -> 58 %, Nsight Compute). The kernel's own
/// cache preference (L1) is set as well, so the device-wide one never applies to it; with the
/// carveout in place that measured the same as the carveout alone.
template <class Kernel>
void prefer_l1(Kernel* kernel) {
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
  int device = 0, per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
        "cudaDeviceGetAttribute");
  const double needed = 4.0 * (double(attributes.sharedSizeBytes) + 1024);  // 1 KiB per block
  const int percent = per_sm > 0 ? std::min(100, int(std::ceil(100 * needed / per_sm))) : 100;
  check(cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1), "cudaFuncSetCacheConfig");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent),
        "cudaFuncSetAttribute");
}

/// Whether groups of G lanes broadcast a row's entries (aug_kernel). On an H100 that made CRS
/// steps faster with 4 lanes and more (R = 8: 0.58 -> 0.55 ms) and slower with 2 (R = 4: 0.35 ->
/// 0.37 ms); for SELL, whose entries lie a chunk height apart, the group's loads touch a cache line
/// each and R = 16 went from 1.06 to 1.21 ms, so SELL keeps one load per entry below 32 lanes.
template <class Access, int G>
constexpr bool broadcast_group = G == 32 || (std::is_same_v<Access, crs_access> && G >= 4);

template <class Ops, class Access, int G, int CPL>
void launch(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a) {
  using T = typename Ops::type;
  const long long rows = a.row_end - a.row_begin;
  constexpr int groups_per_block = block_threads / G;
  // A grid of at most a few waves: every block loops over rows, so the dot products need one
  // atomic per block and column however large the matrix.
  static int sms = 0;
  if (sms == 0) {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute");
  }
  const int chunk_iters = chunk_windows(a, groups_per_block);
  const long long run_rows = (long long)(groups_per_block)*chunk_iters;
  // Two periods walked together (see the kernel); NEARSPARSE_KPM_CUDA_LINES=1 turns it off.
  static const bool pair_periods = [] {
    const char* e = std::getenv("NEARSPARSE_KPM_CUDA_LINES");
    return !(e && std::string(e) == "1");
  }();
  const bool paired = G == 16 && pair_periods && chunk_iters > 1 && run_rows == a.period;
  auto run_fixed = [&](auto dots, auto lines, auto fixed_r) {
    constexpr int Lines = decltype(lines)::value;
    constexpr auto kernel = aug_kernel<Ops, Access, G, CPL, decltype(dots)::value, Lines,
                                       broadcast_group<Access, G>, decltype(fixed_r)::value>;
    static const bool carved = (prefer_l1(kernel), true);
    (void)carved;
    // Chunks of several windows (a stencil period) go to blocks dynamically, over one wave of
    // resident blocks; one-window chunks keep the static order over 8 waves.
    long long grid = 8LL * sms;
    unsigned* counter = nullptr;
    if (chunk_iters > 1) {
      static const int resident = [] {
        int n = 0;
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block_threads, 0),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
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
  // for it (see FixedR), except one lane per row of a CRS matrix (R = 1), which measured slower
  // that way on an H100 (0.256 against 0.237 ms per step); NEARSPARSE_KPM_CUDA_FIXED=0 turns it
  // off, for comparison.
  static const bool fixed_width = [] {
    const char* e = std::getenv("NEARSPARSE_KPM_CUDA_FIXED");
    return !(e && std::string(e) == "0");
  }();
  auto run = [&](auto dots, auto lines) {
    if constexpr (!(std::is_same_v<Access, crs_access> && G == 1 && CPL == 1)) {
      if (fixed_width && a.R == G * CPL)
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
  check(cudaGetLastError(), "kernel launch");
}

template <class Ops, class Access, int CPL>
void dispatch_group(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a, int G) {
  switch (G) {
    case 1:
      return launch<Ops, Access, 1, CPL>(exec, access, a);
    case 2:
      return launch<Ops, Access, 2, CPL>(exec, access, a);
    case 4:
      return launch<Ops, Access, 4, CPL>(exec, access, a);
    case 8:
      return launch<Ops, Access, 8, CPL>(exec, access, a);
    case 16:
      return launch<Ops, Access, 16, CPL>(exec, access, a);
    default:
      return launch<Ops, Access, 32, CPL>(exec, access, a);
  }
}

/// (G, CPL) for R columns; NEARSPARSE_KPM_CUDA_SHAPE="G,CPL" overrides it (for tuning).
std::pair<int, int> shape_for(int R) {
  static const char* env = std::getenv("NEARSPARSE_KPM_CUDA_SHAPE");
  if (env) {
    int g = 0, c = 0;
    if (std::sscanf(env, "%d,%d", &g, &c) == 2 && g >= 1 && g <= 32 && (g & (g - 1)) == 0 &&
        (c == 1 || c == 2 || c == 4) && g * c >= R)
      return {g, c};
  }
  // Two columns per lane measured fastest on an H100 for 2 <= R <= 64 (two independent loads
  // in flight per lane and entry; perf/RESULTS.md): R = 32 took 2.0 ms per step with 16 lanes x 2
  // columns against 2.4 ms with 32 x 1 and 2.5 ms with 8 x 4.
  if (R == 1) return {1, 1};
  const int cpl = R <= 64 ? 2 : 4;
  int g = 1;
  while (g * cpl < R) g *= 2;
  return {g, cpl};
}

template <class Ops, class Access>
void dispatch_width(const Kokkos::Cuda& exec, const Access& access, const cuda_aug_args& a) {
  const auto [G, CPL] = shape_for(a.R);
  if (CPL == 1) return dispatch_group<Ops, Access, 1>(exec, access, a, G);
  if (CPL == 2) return dispatch_group<Ops, Access, 2>(exec, access, a, G);
  return dispatch_group<Ops, Access, 4>(exec, access, a, G);
}

template <class Ops>
void dispatch_format(const Kokkos::Cuda& exec, const cuda_aug_args& a) {
  if (a.chunk_offsets)
    dispatch_width<Ops>(exec, sell_access{a.chunk_offsets, a.chunk_lengths, a.chunk_height}, a);
  else
    dispatch_width<Ops>(exec, crs_access{a.row_map}, a);
}

}  // namespace

void cuda_aug_spmmv(const Kokkos::Cuda& exec, const cuda_aug_args& a) {
  if (a.row_end <= a.row_begin || a.R <= 0) return;
  if (a.R > cuda_aug_max_columns)
    throw nearsparse::invalid_argument(
        "nearsparse::kpm::cuda_aug_spmmv: R = " + std::to_string(a.R) + " exceeds " +
        std::to_string(cuda_aug_max_columns));
  if (a.complex_values)
    dispatch_format<complex_ops>(exec, a);
  else
    dispatch_format<real_ops>(exec, a);
}

}  // namespace nearsparse::kpm::detail
