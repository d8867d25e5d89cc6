// CUDA kernel of HM products in dense tiles over the band (see
// include/nearsparse/diagonal/detail/hm_band_tiles.hpp), and the CUDA overload of the product
// with a plan, which takes it (include/nearsparse/diagonal/detail/hm_product_dispatch.hpp).
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/hm_product.hpp>

#include "../core/cuda/async_copy.hpp"
#include "../core/cuda/check.hpp"
#include "../core/cuda/mma_f64.hpp"
#include "cuda_hm_product.hpp"

#include <cuda_runtime.h>

#include <limits>
#include <mutex>
#include <type_traits>

namespace nearsparse::diagonal::detail {

namespace {

constexpr int tile = hm_band_tile;                  // C tile is tile x tile
constexpr int slice = hm_band_slice;                // inner indices staged at a time
constexpr int threads = 256;                        // 8 warps
constexpr int per_thread = tile * slice / threads;  // values of A (and of B) a thread stages
constexpr int stages = 4;                           // slices in flight or being summed
// Entries of missing diagonals on each side of A's and B's tables: a slice reaches at most
// tile + slice - 2 offsets past an operand's range, so staging needs no range test.
constexpr int table_pad = tile + slice;
constexpr index_type missing = std::numeric_limits<index_type>::min();

template <class Scalar>
struct params {
  int m, k, n;
  hm_band_operand a, b, c;
  const Scalar* a_values;
  const Scalar* b_values;
  Scalar* c_values;
  Scalar alpha, beta;
  bool c_is_band;      // C stores every diagonal of its range: its table from a formula
  int* c_offsets_out;  // if not null, C's offsets and starts are written here
  index_type* c_starts_out;
};

// How a block sums its tile from the staged slices. Each path says where value (row ii, inner
// index jj) of A's slice and (inner index jj, column kk) of B's go in shared memory, sums one
// slice into its accumulators and puts them into C's staged tile (row-major, leading dimension
// c_ld).
//
// fma_path: 16 x 16 threads with 4 x 4 elements of C each, from slices stored inner index major
// (float, and double where the fp64 tensor-core path cannot run).
template <class Scalar>
struct fma_path {
  static constexpr int micro = 4;
  static constexpr int c_ld = tile;
  static constexpr int slice_values = slice * tile;  // of one operand's slice
  using accumulators = Scalar[micro][micro];
  __device__ static int a_at(int ii, int jj) { return jj * tile + ii; }
  __device__ static int b_at(int jj, int kk) { return jj * tile + kk; }
  __device__ static void load4(const double* p, double (&v)[micro]) {
    const double2 x = reinterpret_cast<const double2*>(p)[0];
    const double2 y = reinterpret_cast<const double2*>(p)[1];
    v[0] = x.x, v[1] = x.y, v[2] = y.x, v[3] = y.y;
  }
  __device__ static void load4(const float* p, float (&v)[micro]) {
    const float4 x = reinterpret_cast<const float4*>(p)[0];
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  }
  __device__ static void sum(accumulators& acc, const Scalar* sa, const Scalar* sb, int tid) {
    const int tx = tid % (tile / micro), ty = tid / (tile / micro);
#pragma unroll
    for (int jj = 0; jj < slice; ++jj) {
      Scalar av[micro], bv[micro];
      load4(sa + jj * tile + ty * micro, av);
      load4(sb + jj * tile + tx * micro, bv);
#pragma unroll
      for (int r = 0; r < micro; ++r)
#pragma unroll
        for (int c = 0; c < micro; ++c) acc[r][c] = fma(av[r], bv[c], acc[r][c]);
    }
  }
  __device__ static void put(const accumulators& acc, Scalar* c_tile, int tid) {
    const int tx = tid % (tile / micro), ty = tid / (tile / micro);
#pragma unroll
    for (int r = 0; r < micro; ++r)
#pragma unroll
      for (int c = 0; c < micro; ++c) c_tile[(ty * micro + r) * c_ld + tx * micro + c] = acc[r][c];
  }
};

// dmma_path: double on the fp64 tensor cores (mma.sync m16n8k16, compute capability 9.0;
// src/core/cuda/mma_f64.hpp), which on an H100 do twice the multiply-adds of the FMA units and
// need an eighth of the shared-memory loads: each warp owns 32 x 16 elements of C (2 x 2 MMA
// tiles), one MMA per slice each. Slices are stored row major (A) and column major (B) with rows
// of 16 + 2 doubles.
struct dmma_path {
  using mma = nearsparse::detail::mma_f64_m16n8k16;
  static_assert(mma::MK == slice, "one MMA spans a slice");
  static constexpr int ld = slice + 2;
  static constexpr int c_ld = tile + 2;
  static constexpr int slice_values = tile * ld;
  using accumulators = double[2][2][mma::CR];
  __device__ static int a_at(int ii, int jj) { return ii * ld + jj; }
  __device__ static int b_at(int jj, int kk) { return kk * ld + jj; }
  // The warp's first row of C and first column.
  __device__ static int row0(int warp) { return warp % 2 * 2 * mma::MM; }
  __device__ static int col0(int warp) { return warp / 2 * 2 * mma::MN; }
  __device__ static void sum(accumulators& acc, const double* sa, const double* sb, int tid) {
    const int lane = tid % 32, warp = tid / 32;
    double b[2][mma::BR];
#pragma unroll
    for (int v = 0; v < 2; ++v) mma::load_b(b[v], sb + (col0(warp) + v * mma::MN) * ld, ld, lane);
      // One 16-row half of the warp's A at a time, for registers.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      double a[mma::AR];
      mma::load_a(a, sa + (row0(warp) + h * mma::MM) * ld, ld, lane);
#pragma unroll
      for (int v = 0; v < 2; ++v) mma::mma(acc[h][v], a, b[v]);
    }
  }
  __device__ static void put(const accumulators& acc, double* c_tile, int tid) {
    const int lane = tid % 32, warp = tid / 32;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int v = 0; v < 2; ++v)
#pragma unroll
        for (int e = 0; e < mma::CR; ++e)
          c_tile[(row0(warp) + h * mma::MM + mma::c_row(lane, e)) * c_ld + col0(warp) +
                 v * mma::MN + mma::c_col(lane, e)] = acc[h][v][e];
  }
};

// Values of the tile area: `stages` slices of A and of B, or C's staged tile.
template <class Path>
inline constexpr int tile_values =
    2 * stages* Path::slice_values > tile* Path::c_ld ? 2 * stages* Path::slice_values
                                                      : tile* Path::c_ld;

// table[x - lo] = where logical diagonal x of the operand has its "row 0", so that its element
// in row r is values[table[x - lo] + r] (a position is the smaller of row and column, whether or
// not the operand is transposed), or `missing` where no diagonal is stored. `table` may point
// past a padding of `missing` entries.
__device__ void fill_table(index_type* table, const hm_band_operand& op) {
  for (int t = int(threadIdx.x); t < op.range.count; t += threads) {
    const int stored = __ldg(op.offsets + t);
    const int d = op.transposed ? -stored : stored;
    table[d - op.range.lo] = __ldg(op.starts + t) + (d < 0 ? d : 0);
  }
}

// C's table when C stores every diagonal of its range, from the closed form of its starts.
__device__ void fill_band_table(index_type* table, int m, int n, const hm_band_range& range) {
  for (int x = int(threadIdx.x); x < range.span(); x += threads) {
    const int d = range.lo + x;
    table[x] = band_diagonal_start(m, n, range.lo, d) + (d < 0 ? d : 0);
  }
}

// Block (row tile, column tile within the band). Shared memory: `stages` slices of A and of B
// (a ring the asynchronous copies fill stages - 1 slices ahead of the one being summed), reused
// for C's tile at the end, then the three diagonal tables.
//
// Staging walks along diagonals so a warp's global loads are contiguous: A's value number x of a
// slice is row ii = x mod 64 at inner index (ii + x / 64) mod 16, so 16 consecutive rows read one
// diagonal; B's is inner index jj = x mod 16 at column (jj + x / 16) mod 64. C's tile leaves the
// same way. The shared-memory writes along those diagonals fall on distinct banks.
template <class Scalar, class Path>
__global__ void __launch_bounds__(threads, 2) band_tiles(const params<Scalar> p) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Scalar* const a_slices = reinterpret_cast<Scalar*>(shared_bytes);  // [stages][slice_values]
  Scalar* const b_slices = a_slices + stages * Path::slice_values;   // [stages][slice_values]
  Scalar* const c_tile = a_slices;                                   // [tile][c_ld], at the end
  // A's and B's tables with table_pad entries before and after, then C's.
  index_type* const tables = reinterpret_cast<index_type*>(a_slices + tile_values<Path>);
  index_type* const a_table = tables + table_pad;
  index_type* const b_table = a_table + p.a.range.span() + 2 * table_pad;
  index_type* const c_table = b_table + p.b.range.span() + table_pad;

  const int tid = int(threadIdx.x);
  if (p.c_offsets_out != nullptr && blockIdx.y == 0) {
    // A whole product: the first column of blocks writes C's structure, so C needs no copy.
    const int count = p.c.range.count;
    for (int t = int(blockIdx.x) * threads + tid; t <= count; t += int(gridDim.x) * threads) {
      if (t < count) p.c_offsets_out[t] = p.c.range.lo + t;
      p.c_starts_out[t] = band_diagonal_start(p.m, p.n, p.c.range.lo, p.c.range.lo + t);
    }
  }
  const int i0 = int(blockIdx.x) * tile;
  const int i1 = min(i0 + tile, p.m) - 1;
  const int k0 = (max(0, i0 + p.c.range.lo) / tile + int(blockIdx.y)) * tile;
  if (k0 > min(p.n - 1, i1 + p.c.range.hi)) return;  // past the band (the whole block)
  const int k1 = min(k0 + tile, p.n) - 1;
  // Inner indices where some row of A's tile and some column of B's meet a stored value.
  const int jlo = max(max(i0 + p.a.range.lo, k0 - p.b.range.hi), 0);
  const int jhi = min(min(i1 + p.a.range.hi, k1 - p.b.range.lo), p.k - 1);
  const int slices = jhi >= jlo ? (jhi - jlo) / slice + 1 : 0;

  const int entries = p.a.range.span() + p.b.range.span() + p.c.range.span() + 4 * table_pad;
  for (int x = tid; x < entries; x += threads) tables[x] = missing;
  __syncthreads();
  fill_table(a_table, p.a);
  fill_table(b_table, p.b);
  if (p.c_is_band)
    fill_band_table(c_table, p.m, p.n, p.c.range);
  else
    fill_table(c_table, p.c);
  __syncthreads();

  // What a thread stages does not change from slice to slice but for the inner index: its row
  // of A (threads is a multiple of tile) and inner index of B (of slice), and for each of its
  // values the other index and the place in a stage. Only the table lookups move, 16 entries a
  // slice; the padded tables make the range tests unnecessary.
  const int a_row = tid % tile, b_inner = tid % slice;
  const int i = i0 + a_row;
  const bool a_row_in = i < p.m;
  const index_type a_at_row = i;
  int a_inner[per_thread], a_place[per_thread], b_col[per_thread], b_place[per_thread];
#pragma unroll
  for (int r = 0; r < per_thread; ++r) {
    const int x = tid + r * threads;
    a_inner[r] = (a_row + x / tile) % slice;
    a_place[r] = Path::a_at(a_row, a_inner[r]);
    b_col[r] = (b_inner + x / slice) % tile;
    b_place[r] = Path::b_at(b_inner, b_col[r]);
  }
  const index_type* const a_lookup = a_table - p.a.range.lo - i;   // [ja] for diagonal ja - i
  const index_type* const b_lookup = b_table - p.b.range.lo + k0;  // [kk - jb] for column k0 + kk

  // Queues slice number `at` into its stage of the ring; a group is committed even past the last
  // slice, so that every thread counts the same groups.
  const auto issue = [&](const int at) {
    if (at < slices) {
      const int j0 = jlo + at * slice;
      Scalar* const sa = a_slices + (at % stages) * Path::slice_values;
      Scalar* const sb = b_slices + (at % stages) * Path::slice_values;
      const int jb = j0 + b_inner;
      const bool b_row_in = jb < p.k;
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        const int ja = j0 + a_inner[r];
        const index_type a_base = a_lookup[ja];
        const bool a_in = a_row_in && ja < p.k && a_base != missing;
        nearsparse::detail::cp_async_or_zero(
            sa + a_place[r], a_in ? p.a_values + a_base + a_at_row : nullptr, p.a_values);
        const index_type b_base = b_lookup[b_col[r] - jb];
        const bool b_in = b_row_in && k0 + b_col[r] < p.n && b_base != missing;
        nearsparse::detail::cp_async_or_zero(sb + b_place[r],
                                             b_in ? p.b_values + b_base + jb : nullptr, p.b_values);
      }
    }
    nearsparse::detail::cp_async_commit();
  };

  typename Path::accumulators acc = {};
#pragma unroll
  for (int at = 0; at < stages - 1; ++at) issue(at);
  for (int s = 0; s < slices; ++s) {
    nearsparse::detail::cp_async_wait<stages - 2>();  // this thread's copies of slice s have landed
    __syncthreads();  // everyone's have, and slice s - 1's stage is free
    issue(s + stages - 1);
    Path::sum(acc, a_slices + (s % stages) * Path::slice_values,
              b_slices + (s % stages) * Path::slice_values, tid);
  }
  nearsparse::detail::cp_async_wait<0>();
  __syncthreads();  // the last sums have read their stages

  // C's tile through shared memory, then out along its diagonals.
  Path::put(acc, c_tile, tid);
  __syncthreads();
  for (int x = tid; x < tile * tile; x += threads) {
    const int ii = x % tile, kk = (ii + x / tile) % tile;
    const int i = i0 + ii, col = k0 + kk, e = col - i;
    if (i >= p.m || col >= p.n || e < p.c.range.lo || e > p.c.range.hi) continue;
    const index_type base = c_table[e - p.c.range.lo];
    if (base == missing) continue;
    Scalar* const out = p.c_values + base + i;
    const Scalar sum = c_tile[ii * Path::c_ld + kk];
    *out = p.beta == Scalar(0) ? p.alpha * sum : p.alpha * sum + p.beta * *out;
  }
}

// Whether the tensor-core kernel runs on the current device (a build for an older GPU reaching
// Hopper through its PTX has only the trap).
bool dmma_runs() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  return nearsparse::detail::mma_f64_runs(
      reinterpret_cast<const void*>(band_tiles<double, dmma_path>), device);
}

template <class Scalar, class Path>
void launch_path(const Kokkos::Cuda& exec, const params<Scalar>& p, int spans) {
  const std::size_t tiles_bytes = std::size_t(tile_values<Path>) * sizeof(Scalar);
  const std::size_t shared = tiles_bytes + std::size_t(spans + 4 * table_pad) * sizeof(index_type);
  static std::once_flag attribute;
  std::call_once(attribute, [tiles_bytes] {
    nearsparse::detail::cuda::check(
        cudaFuncSetAttribute(
            band_tiles<Scalar, Path>, cudaFuncAttributeMaxDynamicSharedMemorySize,
            int(tiles_bytes + std::size_t(hm_band_max_range + 4 * table_pad) * sizeof(index_type))),
        multiply_name, "cudaFuncSetAttribute(band_tiles)");
  });
  // Column tiles a row tile can meet: its 64 rows reach tile - 1 + span(C) columns.
  const unsigned columns = unsigned((tile - 1 + p.c.range.span()) / tile + 2);
  const unsigned rows = unsigned((p.m + tile - 1) / tile);
  band_tiles<Scalar, Path><<<dim3(rows, columns), threads, shared, exec.cuda_stream()>>>(p);
}

template <class Scalar>
void launch(const Kokkos::Cuda& exec, const cuda_hm_band_args<Scalar>& args) {
  const int spans = args.a.range.span() + args.b.range.span() + args.c.range.span();
  if (args.a.range.count < 1 || args.b.range.count < 1 || args.c.range.count < 1 ||
      spans > hm_band_max_range)
    throw nearsparse::invalid_argument(nearsparse::detail::concat(
        "nearsparse::diagonal::multiply (CUDA band tiles): the diagonal ranges of A, B and C "
        "must each be non-empty and span at most ",
        hm_band_max_range, " offsets together; got ", args.a.range.span(), ", ",
        args.b.range.span(), " and ", args.c.range.span()));
  if (args.m == 0 || args.n == 0) return;
  const bool c_is_band = args.c.range.whole();
  if (args.c_offsets_out != nullptr && (!c_is_band || args.c_starts_out == nullptr))
    throw nearsparse::invalid_argument(nearsparse::detail::concat(
        "nearsparse::diagonal::multiply (CUDA band tiles): C's structure can be written only for "
        "a C that stores every diagonal of its range, into both arrays; C has ",
        args.c.range.count, " diagonals in a range of ", args.c.range.span()));
  const params<Scalar> p{args.m,
                         args.k,
                         args.n,
                         args.a,
                         args.b,
                         args.c,
                         args.a_values,
                         args.b_values,
                         args.c_values,
                         args.alpha,
                         args.beta,
                         c_is_band,
                         args.c_offsets_out,
                         args.c_starts_out};
  if constexpr (std::is_same_v<Scalar, double>) {
    if (args.tensor_cores && dmma_runs())
      launch_path<Scalar, dmma_path>(exec, p, spans);
    else
      launch_path<Scalar, fma_path<Scalar>>(exec, p, spans);
  } else {
    launch_path<Scalar, fma_path<Scalar>>(exec, p, spans);
  }
  nearsparse::detail::cuda::check_launch(multiply_name, "band_tiles");
}

}  // namespace

void cuda_hm_band_tiles(const Kokkos::Cuda& exec, const cuda_hm_band_args<double>& args) {
  launch(exec, args);
}

void cuda_hm_band_tiles(const Kokkos::Cuda& exec, const cuda_hm_band_args<float>& args) {
  launch(exec, args);
}

template <class Scalar, class Mem>
void hm_multiply_with_plan(const Kokkos::Cuda& exec, const hm_product_plan<Scalar, Mem>& plan,
                           Scalar alpha, const hm_matrix<Scalar, Mem>& a,
                           const hm_matrix<Scalar, Mem>& b, Scalar beta,
                           const hm_matrix<Scalar, Mem>& c, const product_options& options) {
  // automatic takes the tiles where they pay (the plan's band_tiles()), specialized wherever the
  // band kernel can run the product.
  const bool output_stationary = options.algorithm == hm_algorithm::output_stationary;
  const bool available = output_stationary &&
                         (options.implementation == nearsparse::implementation::specialized
                              ? cuda_hm_band_fits(a, plan.op_a(), b, plan.op_b(), plan.c_offsets())
                              : plan.band_tiles());
  if (nearsparse::detail::take_specialized(multiply_name, options.implementation, available,
                                           exec.name(),
                                           cuda_hm_declined(options.algorithm, false))) {
    cuda_hm_band_tiles(exec, cuda_hm_band_args_of(alpha, a, plan.op_a(), b, plan.op_b(), beta, c,
                                                  options.tensor_cores, false));
    return;
  }
  hm_multiply_with_plan_portable(exec, plan, alpha, a, b, beta, c, options.algorithm);
}

#define NEARSPARSE_INSTANTIATE_WITH_PLAN(S, M)                                                    \
  template void hm_multiply_with_plan<S, M>(const Kokkos::Cuda&, const hm_product_plan<S, M>&, S, \
                                            const hm_matrix<S, M>&, const hm_matrix<S, M>&, S,    \
                                            const hm_matrix<S, M>&, const product_options&);
NEARSPARSE_DIAGONAL_CUDA_INSTANTIATE(NEARSPARSE_INSTANTIATE_WITH_PLAN)
#undef NEARSPARSE_INSTANTIATE_WITH_PLAN

}  // namespace nearsparse::diagonal::detail
