// Diagonal-storage benchmarks: the banded and structured-sparse cases of the published
// experiments (section 7), fp64.
//
//   diag/banded/cuda/n<n>/w<w>        A and B banded with half-band w (2w + 1 diagonals).
//   diag/structured/cuda/n<n>/<dgA>x<dgB>   A and B with dgA and dgB randomly placed diagonals.
// Ours: the HM product (output-stationary kernel), whole call (symbolic phase, C's allocation,
// kernel; on wide bands the band tiles); on the bands also the CDM product (Algorithm 1), whole
// and with a reused plan.
// Each row times, in the same process, interleaved: cuSPARSE SpGEMM (whole call sequence) and
// Kokkos Kernels spgemm (symbolic + numeric) on the same matrices in CSR; the same algorithm on
// Kokkos::Serial (the published GPU-over-sequential-CPU ratio) and on OpenMP; for nearly dense C,
// cuBLAS DGEMM. Our own variants are reported as times without a speedup: the product with a
// reused plan (kernel only), the other format or kernel. checksum_rel_diff compares the sum of
// C's values with cuSPARSE's. GPU contenders are timed warm (an untimed call before each timed
// one); the CPU baselines after the GPU loop (contender::separate).
// diag/<kind>/openmp/...: the host path (the OpenMP overloads' kernels) against the same call on
// Kokkos::Serial and Kokkos Kernels spgemm, with the memory floor (bench_host).
#include "baselines/cublas.hpp"
#include "baselines/cusparse.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>

#include <benchmark/benchmark.h>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace nd = nearsparse::diagonal;
using nearsparse::perf::contender;
using nearsparse::perf::pick;
using nearsparse::perf::workload;

struct diag_case {
  bool banded;
  int n;
  int a;  // half-band, or number of diagonals of A
  int b;
  std::uint64_t seed;
  std::string name() const {
    return banded ? "n" + std::to_string(n) + "/w" + std::to_string(a)
                  : "n" + std::to_string(n) + "/" + std::to_string(a) + "x" + std::to_string(b);
  }
};

template <class Exec>
using hm = nd::hm_matrix<double, typename Exec::memory_space>;

template <class Exec>
std::tuple<hm<Exec>, hm<Exec>> make_operands(const Exec& exec, const diag_case& c) {
  const auto offsets_a =
      c.banded ? nd::banded_offsets(c.n, c.n, c.a, c.a) : nd::random_offsets(c.n, c.n, c.a, c.seed);
  const auto offsets_b = c.banded ? nd::banded_offsets(c.n, c.n, c.b, c.b)
                                  : nd::random_offsets(c.n, c.n, c.b, c.seed + 1);
  return {nd::random_hm<double>(exec, c.n, c.n, offsets_a, c.seed + 2),
          nd::random_hm<double>(exec, c.n, c.n, offsets_b, c.seed + 3)};
}

/// The whole HM product on one space.
template <class Exec>
struct whole_product {
  Exec exec;
  hm<Exec> a, b;
  whole_product(const Exec& e, const diag_case& c) : exec(e) {
    std::tie(a, b) = make_operands(exec, c);
  }
  void operator()() const {
    const auto c = nd::multiply(exec, a, b);
    exec.fence();
  }
};

/// Kokkos Kernels' spgemm on CSR copies, symbolic and numeric.
template <class Exec>
struct kk_spgemm {
  using crs = nd::crs_matrix<double, Exec>;
  Exec exec;
  crs a, b;
  void operator()() const {
    using handle_t = KokkosKernels::Experimental::KokkosKernelsHandle<
        int, int, double, Exec, typename Exec::memory_space, typename Exec::memory_space>;
    handle_t kh;
    kh.set_team_work_size(16);
    kh.set_dynamic_scheduling(true);
    kh.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
    crs c;
    KokkosSparse::spgemm_symbolic(kh, a, false, b, false, c);
    KokkosSparse::spgemm_numeric(kh, a, false, b, false, c);
    exec.fence();
  }
};

template <class Host>
std::vector<contender> host_contenders(const diag_case& c, int samples) {
  std::vector<contender> out;
  out.push_back({"serial", whole_product<Kokkos::Serial>(Kokkos::Serial(), c), samples, 0});
  if constexpr (!std::is_same_v<Host, Kokkos::Serial>) {
    out.push_back({"openmp", whole_product<Host>(Host(), c), 2 * samples, 1});
  }
  return out;
}

#ifdef KOKKOS_ENABLE_CUDA
double value_sum(const hm<Kokkos::Cuda>& c) {
  double s = 0;
  const auto v = c.values();
  Kokkos::parallel_reduce(
      "nearsparse::perf::value_sum", Kokkos::RangePolicy<Kokkos::Cuda>(0, v.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t k, double& acc) { acc += v(k); }, s);
  return s;
}

void bench_cuda(benchmark::State& state, const diag_case& c) {
  const Kokkos::Cuda exec;
  const whole_product<Kokkos::Cuda> ours(exec, c);
  const auto& a = ours.a;
  const auto& b = ours.b;
  const nd::hm_product_plan<double, Kokkos::CudaSpace> plan(exec, a, b);
  auto c_reused = plan.make_c(exec);
  const auto crs_a = nd::to_crs(exec, a), crs_b = nd::to_crs(exec, b);
  // The slowest CPU baselines get one timed call on the largest cases.
  const int cpu_samples = plan.flops() > 2e9 ? 1 : 3;

  std::vector<contender> others;
  if (c.banded) {
    const auto ca = nd::cdm_from_hm(exec, a), cb = nd::cdm_from_hm(exec, b);
    const nd::cdm_product_plan<double, Kokkos::CudaSpace> cplan(exec, ca, cb);
    auto cc = cplan.make_c(exec);
    others.push_back(
        {"cdm_plan_reused", [=] { nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc); }, 0, 1, false});
    others.push_back({"cdm", [=] { const auto r = nd::multiply(exec, ca, cb); }, 0, 1, false});
  }
  // Where a whole call's time goes beyond the kernel: the host's symbolic phase (with the fence
  // every contender's timing ends in), a plan, C's allocation.
  others.push_back({"hm_symbolic",
                    [=] {
                      const auto s =
                          nd::detail::hm_symbolic_of("bench", a, b, nd::op::none, nd::op::none);
                      benchmark::DoNotOptimize(s.multiply_adds);
                    },
                    0, 1, false});
  // The device's symbolic pass (what whole calls and plans on scattered diagonals take from
  // hm_device_symbolic_min_pairs pairs on), timed on every case.
  others.push_back({"hm_symbolic_device",
                    [=] {
                      const auto s = nd::detail::hm_symbolic_for(exec, "bench", a, b, nd::op::none,
                                                                 nd::op::none, true);
                      benchmark::DoNotOptimize(s.host.multiply_adds);
                    },
                    0, 1, false});
  others.push_back({"hm_plan_build",
                    [=] { const nd::hm_product_plan<double, Kokkos::CudaSpace> p(exec, a, b); }, 0,
                    1, false});
  // The portable route of a whole call (what other backends and large products take); on the
  // small cases "ours" runs the fused CUDA kernel instead.
  others.push_back({"hm_whole_via_plan",
                    [=] {
                      const nd::hm_product_plan<double, Kokkos::CudaSpace> p(exec, a, b);
                      auto m = p.make_c_uninitialized(exec);
                      nd::multiply(exec, p, 1.0, a, b, 0.0, m);
                    },
                    0, 1, false});
  others.push_back(
      {"hm_c_allocation", [=] { const auto m = plan.make_c_uninitialized(exec); }, 0, 1, false});
  others.push_back(
      {"hm_plan_reused", [=] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c_reused); }, 0, 1, false});
  // The portable pair-by-pair kernel with the reused plan, whichever kernel automatic picks (on
  // wide bands "hm_plan_reused" and "ours" run the band tiles).
  nd::product_options portable, atomic;
  portable.implementation = nearsparse::implementation::portable;
  atomic.algorithm = nd::hm_algorithm::atomic;
  others.push_back({"hm_pairs_plan_reused",
                    [=] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c_reused, portable); }, 0, 1,
                    false});
  others.push_back({"hm_atomic_plan_reused",
                    [=] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c_reused, atomic); }, 0, 1,
                    false});
  using spgemm = nearsparse::perf::cusparse::csr_spgemm;
  const auto csr_of = [](const nd::crs_matrix<double, Kokkos::Cuda>& m) {
    return spgemm::csr{int(m.numRows()),       int(m.numCols()),       int(m.nnz()),
                       m.graph.row_map.data(), m.graph.entries.data(), m.values.data()};
  };
  auto vendor = std::make_shared<spgemm>(exec, csr_of(crs_a), csr_of(crs_b), false);
  others.push_back({"cusparse", [vendor] { vendor->run(); }, 0, 1});
  others.push_back(
      {"kokkos_kernels", kk_spgemm<Kokkos::Cuda>{exec, crs_a, crs_b}, cpu_samples == 1 ? 2 : 0, 1});
  const double c_density = double(plan.c_stored_count()) / (double(c.n) * c.n);
  if (c_density > 0.5) {
    // C comes out nearly dense: the dense product is the other natural baseline.
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace> da("A", c.n, c.n),
        db("B", c.n, c.n), dc("C", c.n, c.n);
    nearsparse::fill_random(exec, da, 1);
    nearsparse::fill_random(exec, db, 2);
    others.push_back({"dgemm",
                      [=] {
                        nearsparse::perf::cublas::gemm(
                            exec, nearsparse::perf::cublas::precision::fp64, 1.0, da, db, 0.0, dc);
                      },
                      0, 1});
  }
  for (auto& h : host_contenders<Kokkos::DefaultHostExecutionSpace>(c, cpu_samples)) {
    h.separate = true;
    others.push_back(std::move(h));
  }

  const double bytes = 8.0 * double(a.stored_count() + b.stored_count() + plan.c_stored_count());
  // A small whole product costs tens of microseconds, mostly host work and launch latency: each
  // GPU contender is timed warm (call_timing::warm), as in a loop of the same product.
  nearsparse::perf::compare_many(state, exec, ours, others, workload{plan.flops(), bytes}, 2,
                                 nearsparse::perf::call_timing::warm);

  // Correctness: C's values against cuSPARSE's, summed.
  const auto ours_c = nd::multiply(exec, a, b);
  const double mine = value_sum(ours_c), theirs = vendor->run(true);
  state.counters["checksum_rel_diff"] = std::abs(mine - theirs) / (std::abs(theirs) + 1e-300);
  state.counters["c_stored"] = double(plan.c_stored_count());
  state.counters["c_nnz_cusparse"] = double(vendor->c_nnz());
  state.counters["c_density"] = c_density;
  state.counters["dg_c"] = double(plan.c_offsets().size());
  state.counters["band_tiles"] = plan.band_tiles() ? 1 : 0;
}
#endif

/// The host cases: ours is the whole HM product (the host kernel); the baselines are the same
/// call on Kokkos::Serial and Kokkos Kernels spgemm (symbolic + numeric) on CSR copies. Variants
/// timed alongside: the HM product with a reused plan, the portable kernels (whole and with the
/// plan), and on bands the CDM product (whole and with a reused plan, host kernel and portable).
/// Counters beyond the harness's: cdm_speedup_kokkos_kernels (the whole CDM product against
/// Kokkos Kernels), bandwidth_GBs (a copy, this process), floor_t (A and B read once and C
/// written once at that bandwidth) and floor_fraction = floor_t / t.
template <class Host>
void bench_host(benchmark::State& state, const diag_case& c) {
  using mem = typename Host::memory_space;
  // Each case starts without what earlier cases left in the allocation cache, so its figures do
  // not depend on which cases ran before it (the cache evicts the least recently used Views to
  // make room, but a case should not pay for, or profit from, another case's leftovers).
  nearsparse::release_cached_device_memory();
  const Host exec;
  const whole_product<Host> ours(exec, c);
  const auto a = ours.a, b = ours.b;
  const nd::hm_product_plan<double, mem> plan(exec, a, b);
  auto c_reused = plan.make_c(exec);
  nd::product_options portable;
  portable.implementation = nearsparse::implementation::portable;
  const int slow_samples = plan.flops() > 1e7 ? 1 : 3;
  std::vector<contender> others;
  others.push_back({"serial", whole_product<Kokkos::Serial>(Kokkos::Serial(), c), slow_samples, 0});
  others.push_back(
      {"kokkos_kernels", kk_spgemm<Host>{exec, nd::to_crs(exec, a), nd::to_crs(exec, b)}, 3, 1});
  others.push_back(
      {"hm_plan_reused", [=] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c_reused); }, 0, 1, false});
  others.push_back(
      {"hm_portable",
       [=] { const auto r = nd::multiply(exec, a, b, nd::op::none, nd::op::none, portable); }, 0, 1,
       false});
  others.push_back({"hm_portable_plan_reused",
                    [=] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c_reused, portable); }, 0, 1,
                    false});
  if (c.banded) {
    const auto ca = nd::cdm_from_hm(exec, a), cb = nd::cdm_from_hm(exec, b);
    const nd::cdm_product_plan<double, mem> cplan(exec, ca, cb);
    auto cc = cplan.make_c(exec);
    others.push_back({"cdm", [=] { const auto r = nd::multiply(exec, ca, cb); }, 0, 1, false});
    others.push_back(
        {"cdm_plan_reused", [=] { nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc); }, 0, 1, false});
    others.push_back({"cdm_portable_plan_reused",
                      [=] { nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc, portable); }, 0, 1,
                      false});
  }
  const double bytes = 8.0 * double(a.stored_count() + b.stored_count() + plan.c_stored_count());
  nearsparse::perf::compare_many(state, exec, ours, others, workload{plan.flops(), bytes}, 1);
  const double bandwidth = nearsparse::perf::copy_bandwidth(exec);
  const double t = state.counters["t"];
  state.counters["bandwidth_GBs"] = bandwidth * 1e-9;
  state.counters["floor_t"] = bytes / bandwidth;
  state.counters["floor_fraction"] = bytes / bandwidth / t;
  if (c.banded)
    state.counters["cdm_speedup_kokkos_kernels"] =
        state.counters["t_kokkos_kernels"] / state.counters["t_cdm"];
  state.counters["c_stored"] = double(plan.c_stored_count());
  state.counters["dg_c"] = double(plan.c_offsets().size());
}

std::vector<diag_case> banded_cases() {
  std::vector<diag_case> out;
  if (nearsparse::perf::smoke_mode()) return {{true, 300, 5, 5, 1}};
  for (int n = 1024; n <= 9216; n += 1024)
    for (int w : {5, 10, 15, 20}) out.push_back({true, n, w, w, 1});
  for (int w : {5, 10, 15, 20, 50, 100}) out.push_back({true, 10240, w, w, 1});
  return out;
}

std::vector<diag_case> structured_cases() {
  if (nearsparse::perf::smoke_mode()) return {{false, 300, 9, 5, 7}};
  // Tables 1 and 2: (n, dgA, dgB).
  return {{false, 1000, 9, 5, 7},      {false, 2000, 9, 15, 7},     {false, 3000, 29, 15, 7},
          {false, 4000, 29, 35, 7},    {false, 5000, 59, 35, 7},    {false, 6000, 89, 75, 7},
          {false, 7000, 99, 75, 7},    {false, 8000, 109, 35, 7},   {false, 9000, 59, 75, 7},
          {false, 10000, 109, 35, 7},  {false, 10000, 200, 200, 7}, {false, 10000, 300, 300, 7},
          {false, 10000, 400, 200, 7}, {false, 10000, 500, 500, 7}, {false, 10000, 600, 600, 7}};
}

template <class F>
void add(const std::string& name, F fn, int iterations) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(pick(iterations, 1));
}

template <class Exec>
void register_host() {
  // Serial is the baseline here; device spaces have their own cases below.
  if (std::string(Exec::name()) == "Serial" ||
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible)
    return;
  // Bands up to n = 2048 and the program's default, n = 10240 with half-bands up to 20; the
  // structured cases of Table 1 (n up to 10000).
  for (const auto& c : banded_cases())
    if (c.n <= 2048 || (c.n == 10240 && c.a <= 20) || nearsparse::perf::smoke_mode())
      add(
          "diag/banded/openmp/" + c.name(), [c](benchmark::State& st) { bench_host<Exec>(st, c); },
          5);
  for (const auto& c : structured_cases())
    if (c.a < 200)
      add(
          "diag/structured/openmp/" + c.name(),
          [c](benchmark::State& st) { bench_host<Exec>(st, c); }, 5);
}

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_host<Spaces>(), ...);
#ifdef KOKKOS_ENABLE_CUDA
  for (const auto& c : banded_cases())
    add(
        "diag/banded/cuda/" + c.name(), [c](benchmark::State& st) { bench_cuda(st, c); }, 10);
  for (const auto& c : structured_cases())
    add(
        "diag/structured/cuda/" + c.name(), [c](benchmark::State& st) { bench_cuda(st, c); },
        c.a >= 200 ? 5 : 10);
#endif
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
