#pragma once
// Benchmark harness: every nearsparse benchmark times its kernel and a baseline (cuBLAS,
// cuSPARSE, Kokkos Kernels or the naive algorithm) in the same process, interleaved call by
// call so clock and thermal drift hit both alike, and reports medians and their ratio.
//
// Per benchmark: `warmup` untimed calls of each, then per iteration one fenced call of each,
// timed on the host clock around exec.fence(). Counters (all from medians):
//   t and baseline_t (seconds; shown with SI prefixes, 2.3u = 2.3 us), speedup = baseline_t / t,
//   GFLOP/s and GB/s of our kernel.
// Google Benchmark's own time column is the manual time of our kernel (UseManualTime).

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace nearsparse::perf {

/// Work one call does, for the rate counters. Bytes: the fewest that must cross device memory.
struct workload {
  double flops = 0;
  double bytes = 0;
};

/// True when NEARSPARSE_BENCH_SMOKE is set: the ctest smoke run, with the smallest sizes.
bool smoke_mode();

/// `full` in a normal run, `smoke` in a smoke run.
template <class T>
T pick(T full, T smoke) {
  return smoke_mode() ? std::move(smoke) : std::move(full);
}

double median(std::vector<double> samples);

/// Seconds one fenced call of f takes on exec.
template <class Exec, class F>
double time_call(const Exec& exec, F& f) {
  exec.fence();
  const auto start = std::chrono::steady_clock::now();
  f();
  exec.fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void set_rate_counters(benchmark::State& state, double seconds, const workload& work);

/// Times `ours` against `baseline` (named in the label), both on `exec`.
template <class Exec, class Ours, class Baseline>
void compare(benchmark::State& state, const Exec& exec, Ours&& ours,
             const std::string& baseline_name, Baseline&& baseline, const workload& work,
             int warmup = 2) {
  for (int i = 0; i < warmup; ++i) {
    time_call(exec, ours);
    time_call(exec, baseline);
  }
  std::vector<double> t_ours, t_base;
  for (auto _ : state) {
    const double a = time_call(exec, ours);
    const double b = time_call(exec, baseline);
    state.SetIterationTime(a);
    t_ours.push_back(a);
    t_base.push_back(b);
  }
  const double m_ours = median(t_ours), m_base = median(t_base);
  state.counters["t"] = m_ours;
  state.counters["baseline_t"] = m_base;
  state.counters["speedup"] = m_base / m_ours;
  set_rate_counters(state, m_ours, work);
  state.SetLabel(std::string(Exec::name()) + " vs " + baseline_name);
}

/// Times one implementation alone: for vendor anchors (the ceilings our kernels are judged by).
template <class Exec, class F>
void measure(benchmark::State& state, const Exec& exec, F&& f, const workload& work,
             int warmup = 2) {
  for (int i = 0; i < warmup; ++i) time_call(exec, f);
  std::vector<double> t;
  for (auto _ : state) {
    const double a = time_call(exec, f);
    state.SetIterationTime(a);
    t.push_back(a);
  }
  state.counters["t"] = median(t);
  set_rate_counters(state, median(t), work);
  state.SetLabel(Exec::name());
}

}  // namespace nearsparse::perf
