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
#include <functional>
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

/// A baseline for compare_many: `run` must finish its work before returning (fence its own
/// space); only the first `samples` iterations time it (0: every one), for slow CPU baselines.
struct contender {
  std::string name;
  std::function<void()> run;
  int samples = 0;
  int warmup = 1;
  /// False for another variant of ours (reported as t_<name> only, without a speedup).
  bool baseline = true;
  /// True for a CPU baseline next to GPU contenders: timed in a loop of its own after the
  /// interleaved one. OpenMP workers keep spinning for a while after each parallel region and the
  /// sequential ones sweep the host caches, which would slow the host side of the next GPU call
  /// (the whole cost of a small one) and so favour neither side fairly.
  bool separate = false;
};

/// How compare_many times each call.
enum class call_timing {
  cold,  ///< one fenced call right after the previous contender's
  warm,  ///< one untimed call first, so that no contender pays for the state the one before it
         ///< left (memory it freed, host caches it swept): what a loop of the same call sees
};

/// Times `ours` against several baselines in one process, interleaved call by call. Counters:
/// t (ours), t_<name> and speedup_<name> = t_<name> / t for each baseline, plus the rates of ours.
template <class Exec, class Ours>
void compare_many(benchmark::State& state, const Exec& exec, Ours&& ours,
                  const std::vector<contender>& baselines, const workload& work, int warmup = 2,
                  call_timing timing = call_timing::cold) {
  const auto timed = [&](const auto& f) {
    if (timing == call_timing::warm) time_call(exec, f);
    return time_call(exec, f);
  };
  for (int i = 0; i < warmup; ++i) time_call(exec, ours);
  for (const auto& b : baselines)
    for (int i = 0; i < b.warmup; ++i) time_call(exec, b.run);
  std::vector<double> t_ours;
  std::vector<std::vector<double>> t_base(baselines.size());
  int iteration = 0;
  for (auto _ : state) {
    const double a = timed(ours);
    state.SetIterationTime(a);
    t_ours.push_back(a);
    for (std::size_t k = 0; k < baselines.size(); ++k)
      if (!baselines[k].separate && (baselines[k].samples == 0 || iteration < baselines[k].samples))
        t_base[k].push_back(timed(baselines[k].run));
    ++iteration;
  }
  for (std::size_t k = 0; k < baselines.size(); ++k)
    if (baselines[k].separate)
      for (int i = 0; i < iteration && (baselines[k].samples == 0 || i < baselines[k].samples); ++i)
        t_base[k].push_back(time_call(exec, baselines[k].run));
  const double m_ours = median(t_ours);
  state.counters["t"] = m_ours;
  std::string label = Exec::name();
  for (std::size_t k = 0; k < baselines.size(); ++k) {
    const double m = median(t_base[k]);
    state.counters["t_" + baselines[k].name] = m;
    if (!baselines[k].baseline) continue;
    state.counters["speedup_" + baselines[k].name] = m / m_ours;
    label += (label.find(" vs ") == std::string::npos ? " vs " : ", ") + baselines[k].name;
  }
  set_rate_counters(state, m_ours, work);
  state.SetLabel(label);
}

/// y(k) = x(k): the copy kernel of measure_copy_bandwidth. A named functor, not a lambda: in a
/// CUDA build an extended lambda in a header template that two translation units instantiate for
/// a host space can make the host backend call through a null pointer.
template <class View>
struct copy_elements {
  View x, y;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t k) const { y(k) = x(k); }
};

/// Copy bandwidth (bytes read + written per second) of a large array on exec: the memory floor
/// of the benchmarks that print one. The better of a copy kernel and Kokkos::deep_copy (cudaMemcpy
/// on a GPU), median of 10 copies of 512 MiB (4 MiB in smoke runs) each.
template <class Exec>
double measure_copy_bandwidth(const Exec& exec) {
  const std::size_t n = pick<std::size_t>(std::size_t(64) << 20, std::size_t(1) << 19);
  Kokkos::View<double*, typename Exec::memory_space> a("bw.a", n), b("bw.b", n);
  Kokkos::deep_copy(exec, a, 1.0);
  std::vector<double> t;
  for (int i = 0; i < 12; ++i) {
    exec.fence();
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::parallel_for("nearsparse::perf::copy", Kokkos::RangePolicy<Exec>(exec, 0, n),
                         copy_elements<decltype(a)>{a, b});
    exec.fence();
    if (i >= 2)
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> t_copy;
  for (int i = 0; i < 12; ++i) {
    exec.fence();
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::deep_copy(exec, b, a);
    exec.fence();
    if (i >= 2)
      t_copy.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * 8.0 * double(n) / std::min(median(t), median(t_copy));
}

/// measure_copy_bandwidth, measured once per process and execution space type.
template <class Exec>
double copy_bandwidth(const Exec& exec) {
  static const double measured = measure_copy_bandwidth(exec);
  return measured;
}

}  // namespace nearsparse::perf
