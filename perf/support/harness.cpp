#include "support/harness.hpp"

#include <cstdlib>

namespace nearsparse::perf {

bool smoke_mode() {
  static const bool smoke = std::getenv("NEARSPARSE_BENCH_SMOKE") != nullptr;
  return smoke;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(samples.begin(), samples.begin() + mid));
}

void set_rate_counters(benchmark::State& state, double seconds, const workload& work) {
  if (seconds <= 0) return;
  if (work.flops > 0) state.counters["GFLOP/s"] = work.flops / seconds * 1e-9;
  if (work.bytes > 0) state.counters["GB/s"] = work.bytes / seconds * 1e-9;
}

}  // namespace nearsparse::perf
