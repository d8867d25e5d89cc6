// KPM benchmarks on the paper's 100 x 100 x 40 topological insulator (1.6 million rows, complex
// double, 13 entries per row): one Chebyshev step of a block of R vectors,
//
//   kpm/step/<space>/<crs|sell32>/R:<R>   the augmented SpMMV (ours) against, in the same
//       process, the naive stage (SpMV + Kokkos Kernels BLAS-1, R vectors one by one), the
//       augmented SpMV (R vectors one by one) and, on CUDA, cuSPARSE SpMM on the row-major block
//       plus the cuBLAS BLAS-1 chain; also t_portable, the portable kernel, and on host spaces
//       t_baseline_isa, the host kernel's copy for the compiler's baseline instruction set.
//       Counters: t (one step of the block), t_per_vector, GFLOP/s, GB/s of the minimum traffic
//       (equation 4), B_min (equation 5, bytes/flop), bandwidth (a copy measured in the same
//       process on the same threads, bytes read + written per second), copy_fraction = GB/s /
//       bandwidth (the same as roofline = achieved GFLOP/s / (bandwidth / B_min)) and
//       copy_fraction_baseline_isa, portable_over_ours = t_portable / t.
//   kpm/split/R:<R>                       one step with the rows split between Cuda and OpenMP
//       (weight from measured rates) against each space alone: efficiency = split rate / (sum of
//       the single-space rates), the paper's parallel efficiency of a heterogeneous node.
#include "baselines/cublas.hpp"
#include "baselines/cusparse.hpp"
#include "baselines/kpm_vendor.hpp"
#include "bench_kpm_common.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/kpm.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace {

namespace nk = nearsparse::kpm;
namespace bk = nearsparse::perf::kpm;
using nearsparse::perf::contender;
using nearsparse::perf::pick;
using c64 = nk::complex_double;

template <class Exec, class Matrix>
void bench_step(benchmark::State& state, const Matrix& h, int R, bool sell) {
  const Exec exec;
  auto& p = bk::problem<Exec>::get();
  using mem = typename Exec::memory_space;
  using block = Kokkos::View<c64**, Kokkos::LayoutRight, mem>;
  const int n = int(p.crs.numRows());
  const nk::scaling s = p.map;
  // Blocks with 512-byte aligned rows, as kpm::moments allocates them.
  const nk::detail::aligned_block<c64, mem> x_block("x", n, R), y_block("y", n, R);
  const auto x = x_block.view, y = y_block.view;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> eta("eta", 2, R);
  nearsparse::kpm::detail::fill_start_vectors(exec, x, n, 1, 0, 0, Kokkos::View<int*, mem>(),
                                              false);
  nearsparse::kpm::detail::fill_start_vectors(exec, y, n, 2, 0, 0, Kokkos::View<int*, mem>(),
                                              false);
  const auto rows = nk::detail::rows_of(h);
  // The kernel choice and stencil period as kpm::moments makes them.
  const nk::detail::aug_settings settings = nk::detail::aug_period(exec, rows, {});
  nk::detail::aug_settings portable = settings;
  portable.implementation = nearsparse::implementation::portable;
  portable.period = 0;
  auto ours = [&] {
    nk::detail::aug_spmmv(exec, "nearsparse::kpm::aug_spmmv", rows, 0, n, y, x,
                          nk::detail::aug_coefficients{2 * s.a, -2 * s.a * s.b, -1.0}, true, eta, 0,
                          settings);
  };
  // The per-vector stages on single vectors (their time does not depend on the vector's values).
  block x1("x1", n, 1), y1("y1", n, 1), u1("u1", n, 1);
  Kokkos::deep_copy(x1, Kokkos::subview(x, Kokkos::ALL, std::make_pair(0, 1)));
  Kokkos::deep_copy(y1, Kokkos::subview(y, Kokkos::ALL, std::make_pair(0, 1)));
  Kokkos::View<c64*, Kokkos::LayoutRight, mem> v(x1.data(), n), w(y1.data(), n), u(u1.data(), n);
  std::vector<contender> others;
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  const int slow_samples = host ? 3 : 0;
  others.push_back({"naive",
                    [&] {
                      for (int r = 0; r < R; ++r)
                        nk::detail::naive_step(exec, h, v, w, u, s, false);
                      exec.fence();
                    },
                    slow_samples, 1, true});
  others.push_back({"aug_spmv",
                    [&] {
                      for (int r = 0; r < R; ++r)
                        nk::detail::aug_spmmv(
                            exec, "nearsparse::kpm::aug_spmv", rows, 0, n, y1, x1,
                            nk::detail::aug_coefficients{2 * s.a, -2 * s.a * s.b, -1.0}, true, eta,
                            0, settings);
                      exec.fence();
                    },
                    slow_samples, 1, true});
  others.push_back({"portable",
                    [&] {
                      nk::detail::aug_spmmv(
                          exec, "nearsparse::kpm::aug_spmmv", rows, 0, n, y, x,
                          nk::detail::aug_coefficients{2 * s.a, -2 * s.a * s.b, -1.0}, true, eta, 0,
                          portable);
                      exec.fence();
                    },
                    0, 1, false});
  if (host) {
    // The host kernel's copy for the compiler's baseline instruction set (SSE2 on x86-64), which
    // runs where the processor has no AVX2 and FMA.
    nk::detail::aug_settings baseline_isa = settings;
    baseline_isa.host_wide_vectors = false;
    others.push_back({"baseline_isa",
                      [&, baseline_isa] {
                        nk::detail::aug_spmmv(
                            exec, "nearsparse::kpm::aug_spmmv", rows, 0, n, y, x,
                            nk::detail::aug_coefficients{2 * s.a, -2 * s.a * s.b, -1.0}, true, eta,
                            0, baseline_isa);
                        exec.fence();
                      },
                      0, 1, false});
  }
#ifdef KOKKOS_ENABLE_CUDA
  std::unique_ptr<nearsparse::perf::vendor::kpm_step> vendor;
  block uu;
  Kokkos::View<c64*, mem> dots;
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    uu = block("u", n, R);
    dots = Kokkos::View<c64*, mem>("dots", 2 * R);
    auto to_cu = [](c64* ptr) { return reinterpret_cast<cuDoubleComplex*>(ptr); };
    vendor = std::make_unique<nearsparse::perf::vendor::kpm_step>(
        exec, n, int(p.crs.nnz()), p.crs.graph.row_map.data(), p.crs.graph.entries.data(),
        reinterpret_cast<const cuDoubleComplex*>(p.crs.values.data()), R, to_cu(y.data()),
        to_cu(x.data()), to_cu(uu.data()), to_cu(dots.data()));
    others.push_back({"cusparse",
                      [&] {
                        vendor->run(s.a, s.b);
                        exec.fence();
                      },
                      0, 1, true});
  }
#endif
  const auto work = bk::step_workload(n, std::int64_t(p.crs.nnz()), R);
  nearsparse::perf::compare_many(state, exec, ours, others, work);
  bk::set_kpm_counters(state, n, std::int64_t(p.crs.nnz()), R, p.bandwidth);
  state.SetLabel(state.counters.count("t")
                     ? std::string(Exec::name()) + (sell ? " SELL-32" : " CRS")
                     : std::string());
}

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
/// One step of the block on Cuda alone, on OpenMP alone, and split between them (weight from the
/// measured rates), over 20 steps each; efficiency = split rate / (Cuda rate + OpenMP rate).
void bench_split(benchmark::State& state, int R) {
  const Kokkos::Cuda gpu;
  const Kokkos::OpenMP cpu;
  auto& pg = bk::problem<Kokkos::Cuda>::get();
  auto& pc = bk::problem<Kokkos::OpenMP>::get();
  const int steps = pick(20, 3);
  nk::moments_options o;
  o.num_moments = 2 * steps;
  o.num_vectors = R;
  std::vector<double> t_gpu, t_cpu, t_split;
  double weight = 0;
  for (auto _ : state) {
    t_gpu.push_back(nk::moments(gpu, pg.crs, pg.map, o).seconds / steps);
    t_cpu.push_back(nk::moments(cpu, pc.crs, pc.map, o).seconds / steps);
    const auto r = nk::split_moments(gpu, cpu, pg.crs, pg.map, o);
    weight = r.weight;
    t_split.push_back(r.moments.seconds / steps);
    state.SetIterationTime(t_split.back());
  }
  const double g = nearsparse::perf::median(t_gpu), c = nearsparse::perf::median(t_cpu),
               sp = nearsparse::perf::median(t_split);
  state.counters["t"] = sp;
  state.counters["t_cuda"] = g;
  state.counters["t_openmp"] = c;
  state.counters["weight_cuda"] = weight;
  state.counters["speedup_cuda"] = g / sp;
  state.counters["efficiency"] = (1 / sp) / (1 / g + 1 / c);
  state.SetLabel("Cuda + OpenMP vs each alone");
}
#endif

template <class Exec>
void register_space() {
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host && std::string(Exec::name()) == "Serial") return;
  const std::string space = host ? "openmp" : "cuda";
  const std::vector<int> widths =
      host ? std::vector<int>{1, 4, 16, 32, 64} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  for (int R : widths) {
    for (bool sell : {false, true}) {
      if (sell && host && R > 1) continue;  // SELL-32 pays for R = 1 on the GPU; CRS elsewhere
      const std::string name =
          "kpm/step/" + space + (sell ? "/sell32" : "/crs") + "/R:" + std::to_string(R);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [R, sell](benchmark::State& st) {
                                     auto& p = bk::problem<Exec>::get();
                                     if (sell)
                                       bench_step<Exec>(st, p.sell, R, true);
                                     else
                                       bench_step<Exec>(st, p.crs, R, false);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(pick(host ? 5 : 20, 1));
    }
  }
}

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_space<Spaces>(), ...);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
  for (int R : {1, 8, 32})
    benchmark::RegisterBenchmark(("kpm/split/R:" + std::to_string(R)).c_str(),
                                 [R](benchmark::State& st) { bench_split(st, R); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pick(3, 1));
#endif
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
