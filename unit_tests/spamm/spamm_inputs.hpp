#pragma once
// Inputs of the SpAMM tests: random matrices that decay away from the diagonal, so that tile
// norms spread over a range and thresholds cut between them.

#include <nearsparse/core/random.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::test::spamm {

template <class Exec, class T = double>
using matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::memory_space>;

/// Uniform in [-1, 1] times 1 / (1 + strength * |i - j|^2); the same for the same seed on every
/// backend and process.
template <class Exec>
matrix<Exec> decaying_random(const Exec& exec, std::size_t rows, std::size_t cols,
                             std::uint64_t seed, double strength = 0.05) {
  matrix<Exec> a("a", rows, cols);
  nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {long(rows), long(cols)}),
      KOKKOS_LAMBDA(const long i, const long j) {
        const double d = static_cast<double>(i > j ? i - j : j - i);
        a(i, j) *= 1.0 / (1.0 + strength * d * d);
      });
  exec.fence();
  return a;
}

}  // namespace nearsparse::test::spamm
