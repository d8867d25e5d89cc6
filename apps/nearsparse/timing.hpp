#pragma once
// Wall-clock timing of work on an execution space, for the commands' reports.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace nearsparse::app {

/// Seconds f takes, fenced on exec before and after.
template <class Exec, class F>
double seconds(const Exec& exec, F&& f) {
  exec.fence();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  exec.fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// "2.5x faster" or "1.43x slower": how `ours` compares with `theirs` (seconds each); a ratio
/// below 1 is never printed as "faster".
inline std::string speed_ratio(double theirs, double ours) {
  char text[64];
  if (theirs >= ours)
    std::snprintf(text, sizeof text, "%.2fx faster", theirs / ours);
  else
    std::snprintf(text, sizeof text, "%.2fx slower", ours / theirs);
  return text;
}

/// The median of `runs` timings of f.
template <class Exec, class F>
double median_seconds(const Exec& exec, F&& f, int runs = 5) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(seconds(exec, f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace nearsparse::app
