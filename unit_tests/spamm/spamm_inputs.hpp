#pragma once
// Inputs of the SpAMM tests: random matrices that decay away from the diagonal, so that tile
// norms spread over a range and thresholds cut between them.

#include <nearsparse/core/random.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace nearsparse::test::spamm {

template <class Exec, class T = double>
using matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::memory_space>;

/// Element (i, j) of a times 1 / (1 + strength * |i - j|^2).
template <class View>
struct decay_scaling {
  View a;
  double strength;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const double d = static_cast<double>(i > j ? i - j : j - i);
    a(i, j) *= 1.0 / (1.0 + strength * d * d);
  }
};

/// Uniform in [-1, 1] times 1 / (1 + strength * |i - j|^2); the same for the same seed on every
/// backend and process.
template <class Exec>
matrix<Exec> decaying_random(const Exec& exec, std::size_t rows, std::size_t cols,
                             std::uint64_t seed, double strength = 0.05) {
  matrix<Exec> a("a", rows, cols);
  nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {long(rows), long(cols)}),
      decay_scaling<matrix<Exec>>{a, strength});
  exec.fence();
  return a;
}

/// n eigenvalues in [-1, 1], shuffled: `occupied` of them in [-1, mu - g], the others in
/// [mu + g, 1], mu = -1 + 2 occupied / n, with both ends and both edges of the gap present. The
/// gap 2g is g of the spectrum's width. 0 < occupied < n.
struct split_spectrum {
  std::vector<double> values;
  double mu = 0;
  /// Whether eigenvalue i is occupied.
  bool occupied(std::size_t i) const { return values[i] < mu; }
};

inline split_spectrum split_spectrum_of(int n, int occupied, double g, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  split_spectrum s;
  s.mu = -1 + 2.0 * occupied / n;
  s.values.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    const bool occ = i < occupied;
    const double lo = occ ? -1.0 : s.mu + g, hi = occ ? s.mu - g : 1.0;
    s.values[std::size_t(i)] = lo + (hi - lo) * u(gen);
  }
  s.values[0] = -1.0;
  s.values[std::size_t(occupied) - 1] = s.mu - g;
  s.values[std::size_t(occupied)] = s.mu + g;
  s.values[std::size_t(n) - 1] = 1.0;
  std::shuffle(s.values.begin(), s.values.end(), gen);
  return s;
}

}  // namespace nearsparse::test::spamm
