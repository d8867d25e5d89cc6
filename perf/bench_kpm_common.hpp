#pragma once
// What the KPM benchmarks share: the insulator built once per execution space, the bandwidth
// measured in the same process, and the paper's traffic and flop counts.
#include "support/harness.hpp"

#include <nearsparse/kpm.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

namespace nearsparse::perf::kpm {

namespace nk = nearsparse::kpm;

/// The paper's 100 x 100 x 40 insulator (6 x 5 x 4 in smoke runs), in CRS and SELL-32-1,
/// scaled by its Gershgorin interval; freed when Kokkos finalizes.
template <class Exec>
struct problem {
  nk::crs_matrix<nk::complex_double, Exec> crs;
  nk::sell_matrix<nk::complex_double, typename Exec::memory_space> sell;
  nk::scaling map;
  double bandwidth = 0;

  static problem& get() {
    static std::unique_ptr<problem> p;
    if (!p) {
      const Exec exec;
      p = std::make_unique<problem>();
      nk::topological_insulator ti;
      ti.nx = pick(100, 6);
      ti.ny = pick(100, 5);
      ti.nz = pick(40, 4);
      ti.dot_period = pick(20, 3);
      ti.dot_radius = pick(5.0, 1.0);
      ti.dot_potential = 0.1;
      ti.disorder = 0.5;
      p->crs = nk::make_topological_insulator(exec, ti);
      p->sell = nk::make_sell(exec, p->crs, {32, 1});
      p->map = nk::scaling_for(nk::gershgorin_bounds(exec, p->crs), 0.01);
      p->bandwidth = copy_bandwidth(exec);
      Kokkos::push_finalize_hook([] { p.reset(); });
    }
    return *p;
  }
};

/// One aug_spmmv step for R complex vectors in the paper's model (kpm::step_cost_of).
inline workload step_workload(std::int64_t n, std::int64_t nnz, int R) {
  const auto c = nk::step_cost_of(nk::algorithm::aug_spmmv, n, nnz, R);
  return {c.flops, c.min_bytes};
}

inline void set_kpm_counters(benchmark::State& state, std::int64_t n, std::int64_t nnz, int R,
                             double bandwidth) {
  if (!state.counters.count("t")) return;
  const auto w = step_workload(n, nnz, R);
  const double t = state.counters["t"];
  const double bmin = w.bytes / w.flops;
  state.counters["t_per_vector"] = t / R;
  state.counters["B_min"] = bmin;
  state.counters["bandwidth_GBs"] = bandwidth * 1e-9;
  state.counters["roofline"] = (w.flops / t) / (bandwidth / bmin);
  // The equation-4 bytes per second as a fraction of the copy bandwidth, for ours and the
  // variants timed beside it.
  state.counters["copy_fraction"] = (w.bytes / t) / bandwidth;
  if (state.counters.count("t_baseline_isa"))
    state.counters["copy_fraction_baseline_isa"] =
        (w.bytes / state.counters["t_baseline_isa"]) / bandwidth;
  if (state.counters.count("t_portable"))
    state.counters["portable_over_ours"] = state.counters["t_portable"] / t;
}

}  // namespace nearsparse::perf::kpm
