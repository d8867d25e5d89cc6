// Block-sparse SpAMM benchmarks: C = A A on block-CSR storage (spamm/block_sparse.hpp), the whole
// call spamm::multiply(exec, 1, A, A, 0, C, opt) with tau = 0 (every product of stored tiles) and
// a fresh C per call, as users pay.
//
//   spamm/block_sparse/<space>/<case>/<precision>/tile<T>/<N>
//       ours. Cases (spamm/sparse_models.hpp): chain = overlap_chain_crs(N, 0.1, 1e-6) (the band
//       |i - j| <= 138), lattice = overlap_lattice_crs(nx, ny, nz, 3.0, 1e-6) (L1 distance <= 4,
//       129 entries per row)
//       with nx = ny = 64, nz = N / 4096 (nx = ny = sqrt(N), nz = 1 below N = 4096).
//       Precisions fp64 and fp32; tile 64, and 32 for the chain at the largest N.
//       N: 2^14 .. 2^20 on CUDA, 2^12 .. 2^16 on host backends, one small N in smoke runs.
//   spamm/block_sparse_baseline/cuda/cublas_batched/<case>/<precision>/tile<T>/<N>
//       the same tile products A[i,k] A[k,j] as stacks of cuBLAS batched GEMMs over the tiles
//       (DBCSR's GPU backend): the products of each C tile numbered, round r = the r-th product
//       of every C tile (so one batch writes distinct C tiles), C zeroed and then one batched
//       GEMM per round with beta = 1. The products are enumerated on the host from A's structure,
//       the pointer arrays built and C's tiles allocated once, outside the timed loop (what the
//       timed call does not pay). Its C is checked once against ours (relative Frobenius
//       difference < 1e-12 fp64, 1e-5 fp32, counter rel_diff_vs_ours; else the benchmark reports
//       an error). Counter rounds: batched calls per product.
//   spamm/block_sparse_baseline/cuda/cusparse_spgemm/<case>/<precision>/tile<T>/<N>
//       cuSPARSE SpGEMM (whole call sequence) on the CRS form of A, N <= 65536 (cuSPARSE fails
//       above); the tile only names the row.
//   spamm/block_sparse_baseline/<space>/kk_spgemm/<case>/<precision>/tile<T>/<N>
//       host backends: Kokkos Kernels spgemm (symbolic + numeric) on the CRS form of A.
// Counters: t (median seconds), a_tiles_per_row (A's kept tiles per tile row), kept_products,
// c_tiles_with_product (tiles of C with a kept product, what the batched baseline writes), and
// for ours c_tiles (C's stored tiles: those products that come out exactly zero, of tiles whose
// nonzero columns and rows do not meet, are not stored), a_bytes and c_bytes (memory_bytes()),
// a_bytes_ratio and c_bytes_ratio (memory_bytes() over the bytes of the stored tiles' values,
// column indices and norms), rel_error (fp32 only: ||C32 - C64||_F / ||C64||_F against an fp64
// tau = 0 product computed once per benchmark), bandwidth_GBs (a copy in this process), floor_ms
// and floor_fraction = floor / t: the floor is max(kept products 2 T^3 / peak, (A's and B's kept
// tiles read + C's tiles with a product written) / bandwidth), the peak counted on CUDA only
// (below), the bandwidth floor alone on host backends.
// Sizes whose C would not fit (or, on the host, whose products exceed 10^12 flops) report an
// error naming the estimate instead of running; so does a lattice whose CRS form exceeds int.
#include "baselines/cublas_batched.hpp"
#include "baselines/cusparse.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/spamm.hpp>

#include <benchmark/benchmark.h>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

namespace spamm = nearsparse::spamm;
using nearsparse::perf::pick;
using nearsparse::perf::workload;

// Peak rate of the tile products on the GPU: 67 TFLOP/s, both the fp64 tensor-core rate and the
// fp32 rate without tensor cores of an H100 SXM (NVIDIA H100 Tensor Core GPU datasheet; the H200
// SXM datasheet gives the same two figures).
constexpr double gpu_peak_flops = 67e12;

// Memory the case may take (A, our C and the baseline's C): beyond, it reports an error.
constexpr double device_budget_bytes = 48.0 * (1ull << 30);
constexpr double host_budget_bytes = 6.0 * (1ull << 30);
// Host backends skip cases above this many flops of tile products (minutes per call).
constexpr double host_flop_limit = 1e12;

struct bs_case {
  bool lattice;
  long n;
  int tile;
  int nx() const { return lattice ? int(n >= 4096 ? 64 : std::lround(std::sqrt(double(n)))) : 0; }
  int nz() const { return lattice ? int(n / (long(nx()) * nx())) : 0; }
  std::string name(const std::string& precision) const {
    return std::string(lattice ? "lattice" : "chain") + "/" + precision + "/tile" +
           std::to_string(tile) + "/" + std::to_string(n);
  }
};

template <class Scalar>
const char* precision_name() {
  return std::is_same<Scalar, double>::value ? "fp64" : "fp32";
}

template <class Scalar, class Exec>
nearsparse::crs_matrix<Scalar, Exec> make_crs(const Exec& exec, const bs_case& c) {
  if (c.lattice) return spamm::overlap_lattice_crs<Scalar>(exec, c.nx(), c.nx(), c.nz(), 3.0, 1e-6);
  return spamm::overlap_chain_crs<Scalar>(exec, c.n, 0.1, 1e-6);
}

/// A's structure on the host and the counts of the product A A (tau = 0).
struct host_structure {
  int tile_rows = 0;
  std::vector<std::int64_t> row_map;
  std::vector<int> cols;
  std::int64_t products = 0;
  std::int64_t c_tiles = 0;
};

template <class Scalar, class Exec>
host_structure structure_of(const spamm::block_sparse_matrix<Scalar, Exec>& a) {
  host_structure s;
  s.tile_rows = a.tile_rows();
  const auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.column_indices());
  s.row_map.assign(rm.data(), rm.data() + rm.extent(0));
  s.cols.assign(ci.data(), ci.data() + ci.extent(0));
  std::vector<int> last(std::size_t(a.tile_cols()), -1);
  for (int i = 0; i < s.tile_rows; ++i)
    for (std::int64_t p = s.row_map[i]; p < s.row_map[i + 1]; ++p) {
      const int k = s.cols[p];
      s.products += s.row_map[k + 1] - s.row_map[k];
      for (std::int64_t q = s.row_map[k]; q < s.row_map[k + 1]; ++q)
        if (last[s.cols[q]] != i) {
          last[s.cols[q]] = i;
          ++s.c_tiles;
        }
    }
  return s;
}

template <class Exec>
constexpr bool is_cuda() {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same<Exec, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

template <class Exec>
std::string space_name() {
  std::string s = Exec::name();
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

/// Everything a benchmark of one case needs: A in CRS and block-sparse form, its structure.
template <class Scalar, class Exec>
struct setup {
  nearsparse::crs_matrix<Scalar, Exec> crs;
  spamm::block_sparse_matrix<Scalar, Exec> a;
  host_structure s;
  std::string error;  // why the case cannot run, or empty

  setup(const Exec& exec, const bs_case& c) {
    const bool loud = c.n >= (1L << 18);
    const std::string name = c.name(precision_name<Scalar>());
    if (loud) std::fprintf(stderr, "block_sparse %s: building A\n", name.c_str());
    // A CRS form beyond int entries is refused (nearsparse::invalid_argument); a failed
    // allocation (std::bad_alloc) ends the case the same way.
    try {
      crs = make_crs<Scalar>(exec, c);
      spamm::block_sparse_options opt;
      opt.tile = c.tile;
      a = spamm::from_crs(exec, crs, opt);
    } catch (const std::exception& e) {
      error = e.what();
      return;
    }
    if (loud) std::fprintf(stderr, "block_sparse %s: enumerating the products\n", name.c_str());
    s = structure_of(a);
    const double tt = double(c.tile) * c.tile;
    const double c_bytes = double(s.c_tiles) * tt * sizeof(Scalar);
    const double need = double(a.memory_bytes()) + 2.0 * c_bytes;
    const double flops = double(s.products) * 2.0 * tt * c.tile;
    if (need > (is_cuda<Exec>() ? device_budget_bytes : host_budget_bytes))
      error = "C would take " + std::to_string(c_bytes / (1 << 30)) + " GiB (" +
              std::to_string(s.c_tiles) + " tiles), beyond this benchmark's memory budget";
    else if (!is_cuda<Exec>() && flops > host_flop_limit)
      error = "the product takes " + std::to_string(flops) + " flops, too slow for the host";
  }
};

/// The structural counters and the floor, for every benchmark of a case.
template <class Scalar, class Exec>
void set_case_counters(benchmark::State& state, const Exec& exec, const bs_case& c,
                       const setup<Scalar, Exec>& su,
                       const spamm::block_sparse_matrix<Scalar, Exec>* c_ours = nullptr) {
  const double tt = double(c.tile) * c.tile;
  const double kept = double(su.a.kept_tiles());
  state.counters["a_tiles_per_row"] = su.s.tile_rows > 0 ? kept / su.s.tile_rows : 0.0;
  state.counters["kept_products"] = double(su.s.products);
  state.counters["c_tiles_with_product"] = double(su.s.c_tiles);
  const double per_tile = tt * sizeof(Scalar) + sizeof(int) + sizeof(double);
  state.counters["a_bytes"] = double(su.a.memory_bytes());
  state.counters["a_bytes_ratio"] = kept > 0 ? double(su.a.memory_bytes()) / (kept * per_tile) : 0;
  if (c_ours) {
    const double c_bytes = double(c_ours->memory_bytes()), c_kept = double(c_ours->kept_tiles());
    state.counters["c_tiles"] = c_kept;
    state.counters["c_bytes"] = c_bytes;
    if (c_kept > 0) state.counters["c_bytes_ratio"] = c_bytes / (c_kept * per_tile);
  }
  const double bandwidth = nearsparse::perf::copy_bandwidth(exec);
  const double bytes = (2.0 * kept + double(su.s.c_tiles)) * tt * sizeof(Scalar);
  double floor = bytes / bandwidth;
  if (is_cuda<Exec>())
    floor = std::max(floor, double(su.s.products) * 2.0 * tt * c.tile / gpu_peak_flops);
  state.counters["bandwidth_GBs"] = bandwidth * 1e-9;
  state.counters["floor_ms"] = floor * 1e3;
  const double t = state.counters["t"];
  if (t > 0) state.counters["floor_fraction"] = floor / t;
}

template <class Scalar, class Exec>
workload work_of(const bs_case& c, const setup<Scalar, Exec>& su) {
  const double tt = double(c.tile) * c.tile;
  return {double(su.s.products) * 2.0 * tt * c.tile,
          (2.0 * double(su.a.kept_tiles()) + double(su.s.c_tiles)) * tt * sizeof(Scalar)};
}

/// A block-CSR structure on the host.
struct tile_structure {
  std::vector<std::int64_t> row_map;
  std::vector<int> cols;
};

template <class Scalar, class Exec>
tile_structure tiles_of(const spamm::block_sparse_matrix<Scalar, Exec>& m) {
  const auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.row_map());
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.column_indices());
  return {std::vector<std::int64_t>(rm.data(), rm.data() + rm.extent(0)),
          std::vector<int>(ci.data(), ci.data() + ci.extent(0))};
}

/// ||X - Y||_F / ||Y||_F for tile values x of structure sx and y of structure sy (same tile and
/// tile rows; a tile missing from one counts as zero there).
template <class Exec, class XValues, class YValues>
double relative_difference(const Exec& exec, const XValues& x, const tile_structure& sx,
                           const YValues& y, const tile_structure& sy, int tile) {
  using mem = typename Exec::memory_space;
  const std::size_t nx = sx.cols.size(), ny = sy.cols.size();
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> hmap("map", nx);
  Kokkos::View<int*, Kokkos::HostSpace> hcovered("covered", ny);
  for (std::size_t i = 0; i + 1 < sx.row_map.size(); ++i) {
    std::int64_t q = sy.row_map[i];
    for (std::int64_t p = sx.row_map[i]; p < sx.row_map[i + 1]; ++p) {
      while (q < sy.row_map[i + 1] && sy.cols[q] < sx.cols[p]) ++q;
      const bool found = q < sy.row_map[i + 1] && sy.cols[q] == sx.cols[p];
      hmap(p) = found ? q : -1;
      if (found) hcovered(q) = 1;
    }
  }
  const auto map = Kokkos::create_mirror_view_and_copy(mem(), hmap);
  const auto covered = Kokkos::create_mirror_view_and_copy(mem(), hcovered);
  const std::int64_t tt = std::int64_t(tile) * tile;
  double d = 0, r = 0, d_missing = 0;
  Kokkos::parallel_reduce(
      "nearsparse::perf::block_sparse_diff",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, std::int64_t(nx) * tt),
      KOKKOS_LAMBDA(const std::int64_t k, double& s) {
        const std::int64_t q = map(k / tt);
        const double b = q >= 0 ? double(y(q * tt + k % tt)) : 0.0;
        const double e = double(x(k)) - b;
        s += e * e;
      },
      d);
  Kokkos::parallel_reduce(
      "nearsparse::perf::block_sparse_norm",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, std::int64_t(ny) * tt),
      KOKKOS_LAMBDA(const std::int64_t k, double& s) { s += double(y(k)) * double(y(k)); }, r);
  Kokkos::parallel_reduce(
      "nearsparse::perf::block_sparse_missing",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, std::int64_t(ny) * tt),
      KOKKOS_LAMBDA(const std::int64_t k, double& s) {
        if (!covered(k / tt)) s += double(y(k)) * double(y(k));
      },
      d_missing);
  exec.fence();
  d += d_missing;
  return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

template <class Scalar, class Exec>
spamm::block_sparse_matrix<Scalar, Exec> product(
    const Exec& exec, const spamm::block_sparse_matrix<Scalar, Exec>& a) {
  spamm::block_sparse_matrix<Scalar, Exec> c(exec, a.rows(), a.cols(), a.tile());
  spamm::multiply(exec, Scalar(1), a, a, Scalar(0), c, spamm::block_sparse_multiply_options{});
  return c;
}

int iterations_of(const bs_case& c, bool cuda) {
  return cuda ? 10 : (c.n >= 65536 ? 3 : 5);
}

/// Ours: the whole multiply call, C fresh each call.
template <class Scalar, class Exec>
void bench_ours(benchmark::State& state, const bs_case& c) {
  const Exec exec;
  const setup<Scalar, Exec> su(exec, c);
  if (!su.error.empty()) {
    state.SkipWithError(su.error.c_str());
    return;
  }
  const auto a = su.a;
  auto ours = [=] { benchmark::DoNotOptimize(product(exec, a).kept_tiles()); };
  nearsparse::perf::measure(state, exec, ours, work_of(c, su), is_cuda<Exec>() ? 2 : 1);
  const auto c_ours = product(exec, a);
  set_case_counters(state, exec, c, su, &c_ours);
  if constexpr (std::is_same<Scalar, float>::value) {
    // The fp64 product of the same matrix, tau = 0, computed once.
    spamm::block_sparse_options opt;
    opt.tile = c.tile;
    const auto c64 = product(exec, spamm::from_crs(exec, make_crs<double>(exec, c), opt));
    state.counters["rel_error"] = relative_difference(exec, c_ours.values(), tiles_of(c_ours),
                                                      c64.values(), tiles_of(c64), c.tile);
  }
}

/// Kokkos Kernels spgemm (symbolic + numeric) on the CRS form.
template <class Scalar, class Exec>
void bench_kk(benchmark::State& state, const bs_case& c) {
  const Exec exec;
  const setup<Scalar, Exec> su(exec, c);
  if (!su.error.empty()) {
    state.SkipWithError(su.error.c_str());
    return;
  }
  const auto a = su.crs;
  auto run = [=] {
    using handle_t = KokkosKernels::Experimental::KokkosKernelsHandle<
        int, int, Scalar, Exec, typename Exec::memory_space, typename Exec::memory_space>;
    handle_t kh;
    kh.set_team_work_size(16);
    kh.set_dynamic_scheduling(true);
    kh.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
    nearsparse::crs_matrix<Scalar, Exec> m;
    KokkosSparse::spgemm_symbolic(kh, a, false, a, false, m);
    KokkosSparse::spgemm_numeric(kh, a, false, a, false, m);
    exec.fence();
  };
  nearsparse::perf::measure(state, exec, run, work_of(c, su), 1);
  set_case_counters(state, exec, c, su);
}

#ifdef KOKKOS_ENABLE_CUDA
/// The tile products as rounds of cuBLAS batched GEMMs (see the top of this file).
template <class Scalar>
struct batched_products {
  using mem = Kokkos::CudaSpace;
  Kokkos::View<Scalar*, mem> c;  // C's tiles, in the order of c_row_map / c_cols
  static_assert(sizeof(std::uintptr_t) == sizeof(void*), "addresses must fit std::uintptr_t");
  // Tile addresses per product, the rounds one after the other.
  Kokkos::View<std::uintptr_t*, mem> a_ptr, b_ptr, c_ptr;
  std::vector<std::int64_t> round_start;  // products of round r: round_start[r] .. [r + 1]
  std::vector<std::int64_t> c_row_map;
  std::vector<int> c_cols;
  int tile = 0;

  batched_products(const Kokkos::Cuda& exec,
                   const spamm::block_sparse_matrix<Scalar, Kokkos::Cuda>& a,
                   const host_structure& s) {
    tile = a.tile();
    const std::int64_t tt = std::int64_t(tile) * tile;
    // C's structure: the distinct tile columns of each tile row, ascending, as ours stores them.
    std::vector<std::int64_t> slot(std::size_t(a.tile_cols()), -1);
    std::vector<int> js;
    std::vector<std::int64_t> count;  // products per C tile
    c_row_map.push_back(0);
    for (int i = 0; i < s.tile_rows; ++i) {
      js.clear();
      for (std::int64_t p = s.row_map[i]; p < s.row_map[i + 1]; ++p)
        for (std::int64_t q = s.row_map[s.cols[p]]; q < s.row_map[s.cols[p] + 1]; ++q)
          if (slot[s.cols[q]] < 0) {
            slot[s.cols[q]] = 0;
            js.push_back(s.cols[q]);
          }
      std::sort(js.begin(), js.end());
      for (std::size_t t = 0; t < js.size(); ++t) {
        slot[js[t]] = std::int64_t(c_cols.size());
        c_cols.push_back(js[t]);
        count.push_back(0);
      }
      for (std::int64_t p = s.row_map[i]; p < s.row_map[i + 1]; ++p)
        for (std::int64_t q = s.row_map[s.cols[p]]; q < s.row_map[s.cols[p] + 1]; ++q)
          ++count[slot[s.cols[q]]];
      for (int j : js) slot[j] = -1;
      c_row_map.push_back(std::int64_t(c_cols.size()));
    }
    // Products of each C tile, in CSR form (pairs of A's tile p and B's tile q).
    const std::size_t nc = c_cols.size();
    std::vector<std::int64_t> start(nc + 1, 0);
    for (std::size_t t = 0; t < nc; ++t) start[t + 1] = start[t] + count[t];
    const std::size_t np = std::size_t(start[nc]);
    std::vector<std::int64_t> pa(np), pb(np);
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (int i = 0; i < s.tile_rows; ++i) {
      for (std::int64_t t = c_row_map[i]; t < c_row_map[i + 1]; ++t) slot[c_cols[t]] = t;
      for (std::int64_t p = s.row_map[i]; p < s.row_map[i + 1]; ++p)
        for (std::int64_t q = s.row_map[s.cols[p]]; q < s.row_map[s.cols[p] + 1]; ++q) {
          const std::int64_t t = slot[s.cols[q]];
          pa[std::size_t(next[t])] = p;
          pb[std::size_t(next[t]++)] = q;
        }
      for (std::int64_t t = c_row_map[i]; t < c_row_map[i + 1]; ++t) slot[c_cols[t]] = -1;
    }
    // Rounds: C tiles by product count, descending; round r takes the r-th product of each C
    // tile with more than r.
    std::vector<std::int64_t> order(nc);
    for (std::size_t t = 0; t < nc; ++t) order[t] = std::int64_t(t);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return count[x] > count[y]; });
    const std::int64_t rounds = nc > 0 ? count[order[0]] : 0;
    c = Kokkos::View<Scalar*, mem>(Kokkos::view_alloc(exec, std::string("cublas_batched.c")),
                                   std::size_t(nc) * tt);
    a_ptr = Kokkos::View<std::uintptr_t*, mem>(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("cublas_batched.a")), np);
    b_ptr = Kokkos::View<std::uintptr_t*, mem>(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("cublas_batched.b")), np);
    c_ptr = Kokkos::View<std::uintptr_t*, mem>(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("cublas_batched.cp")),
        np);
    auto ha = Kokkos::create_mirror_view(a_ptr);
    auto hb = Kokkos::create_mirror_view(b_ptr);
    auto hc = Kokkos::create_mirror_view(c_ptr);
    const Scalar* av = a.values().data();
    Scalar* cv = c.data();
    std::size_t k = 0;
    for (std::int64_t r = 0; r < rounds; ++r) {
      round_start.push_back(std::int64_t(k));
      for (std::size_t o = 0; o < nc && count[order[o]] > r; ++o) {
        const std::int64_t t = order[o];
        ha(k) = reinterpret_cast<std::uintptr_t>(av + pa[std::size_t(start[t] + r)] * tt);
        hb(k) = reinterpret_cast<std::uintptr_t>(av + pb[std::size_t(start[t] + r)] * tt);
        hc(k) = reinterpret_cast<std::uintptr_t>(cv + t * tt);
        ++k;
      }
    }
    round_start.push_back(std::int64_t(k));
    Kokkos::deep_copy(exec, a_ptr, ha);
    Kokkos::deep_copy(exec, b_ptr, hb);
    Kokkos::deep_copy(exec, c_ptr, hc);
    exec.fence();
  }

  void run(const Kokkos::Cuda& exec) const {
    Kokkos::deep_copy(exec, c, Scalar(0));
    for (std::size_t r = 0; r + 1 < round_start.size(); ++r) {
      const std::int64_t b = round_start[r];
      nearsparse::perf::cublas::gemm_batched_tiles(
          exec, std::is_same<Scalar, float>::value, tile,
          reinterpret_cast<const void* const*>(a_ptr.data() + b),
          reinterpret_cast<const void* const*>(b_ptr.data() + b),
          reinterpret_cast<void* const*>(c_ptr.data() + b), int(round_start[r + 1] - b));
    }
  }
};

template <class Scalar>
void bench_cublas_batched(benchmark::State& state, const bs_case& c) {
  const Kokkos::Cuda exec;
  const setup<Scalar, Kokkos::Cuda> su(exec, c);
  if (!su.error.empty()) {
    state.SkipWithError(su.error.c_str());
    return;
  }
  if (c.n >= (1L << 18))
    std::fprintf(stderr, "block_sparse %s: cuBLAS pointer arrays\n",
                 c.name(precision_name<Scalar>()).c_str());
  const auto vendor = std::make_shared<batched_products<Scalar>>(exec, su.a, su.s);
  // Once: the batched product against ours, same structure and tile order.
  vendor->run(exec);
  const auto ours = product(exec, su.a);
  {
    // The batched product writes every tile with a product; ours drops those that come out
    // exactly zero (products of tiles whose nonzero columns and rows do not meet).
    const tile_structure sv{vendor->c_row_map, vendor->c_cols};
    const double diff =
        relative_difference(exec, vendor->c, sv, ours.values(), tiles_of(ours), c.tile);
    state.counters["rel_diff_vs_ours"] = diff;
    const double limit = std::is_same<Scalar, double>::value ? 1e-12 : 1e-5;
    if (!(diff < limit)) {
      state.SkipWithError(("cublas_batched: relative difference " + std::to_string(diff) +
                           " from spamm::multiply's C")
                              .c_str());
      return;
    }
  }
  auto run = [=] { vendor->run(exec); };
  nearsparse::perf::measure(state, exec, run, work_of(c, su), 2);
  state.counters["rounds"] = double(vendor->round_start.size() - 1);
  set_case_counters(state, exec, c, su);
}

template <class Scalar>
void bench_cusparse(benchmark::State& state, const bs_case& c) {
  const Kokkos::Cuda exec;
  const setup<Scalar, Kokkos::Cuda> su(exec, c);
  if (!su.error.empty()) {
    state.SkipWithError(su.error.c_str());
    return;
  }
  using spgemm = nearsparse::perf::cusparse::csr_spgemm;
  const auto& m = su.crs;
  const spgemm::csr csr{int(m.numRows()),       int(m.numCols()),       int(m.nnz()),
                        m.graph.row_map.data(), m.graph.entries.data(), m.values.data()};
  auto vendor = std::make_shared<spgemm>(exec, csr, csr, std::is_same<Scalar, float>::value);
  // cuSPARSE refuses large products (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES): a first call
  // outside the timed loop turns that into this benchmark's error instead of ending the run.
  try {
    vendor->run();
    exec.fence();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto run = [=] { vendor->run(); };
  nearsparse::perf::measure(state, exec, run, work_of(c, su), 2);
  state.counters["c_nnz_cusparse"] = double(vendor->c_nnz());
  set_case_counters(state, exec, c, su);
}
#endif

template <class F>
void add(const std::string& name, F fn, int iterations) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(pick(iterations, 1));
}

std::vector<bs_case> cases_of(bool cuda) {
  std::vector<long> sizes;
  if (nearsparse::perf::smoke_mode())
    sizes = {cuda ? 4096L : 1024L};
  else if (cuda)
    sizes = {1L << 14, 1L << 16, 1L << 18, 1L << 20};
  else
    sizes = {1L << 12, 1L << 14, 1L << 16};
  std::vector<bs_case> out;
  for (bool lattice : {false, true})
    for (long n : sizes) {
      out.push_back({lattice, n, 64});
      if (!lattice && n == sizes.back() && !nearsparse::perf::smoke_mode())
        out.push_back({lattice, n, 32});
    }
  return out;
}

template <class Scalar, class Exec>
void register_space() {
  constexpr bool cuda = is_cuda<Exec>();
  const std::string space = space_name<Exec>();
  const std::string precision = precision_name<Scalar>();
  for (const auto& c : cases_of(cuda)) {
    const std::string tail = c.name(precision);
    const int it = iterations_of(c, cuda);
    add(
        "spamm/block_sparse/" + space + "/" + tail,
        [c](benchmark::State& st) { bench_ours<Scalar, Exec>(st, c); }, it);
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (cuda) {
      add(
          "spamm/block_sparse_baseline/cuda/cublas_batched/" + tail,
          [c](benchmark::State& st) { bench_cublas_batched<Scalar>(st, c); }, it);
      if (c.n <= 65536)
        add(
            "spamm/block_sparse_baseline/cuda/cusparse_spgemm/" + tail,
            [c](benchmark::State& st) { bench_cusparse<Scalar>(st, c); }, it);
    }
#endif
    if constexpr (!cuda)
      add(
          "spamm/block_sparse_baseline/" + space + "/kk_spgemm/" + tail,
          [c](benchmark::State& st) { bench_kk<Scalar, Exec>(st, c); }, it);
  }
}

template <class Exec>
void register_exec() {
  // Host backends but Serial (as the other families' host cases; not even instantiated for it),
  // and CUDA.
#ifdef KOKKOS_ENABLE_SERIAL
  constexpr bool serial = std::is_same<Exec, Kokkos::Serial>::value;
#else
  constexpr bool serial = false;
#endif
  if constexpr (!serial) {
    if (!is_cuda<Exec>() &&
        !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible)
      return;
    register_space<double, Exec>();
    register_space<float, Exec>();
  }
}

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_exec<Spaces>(), ...);
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
