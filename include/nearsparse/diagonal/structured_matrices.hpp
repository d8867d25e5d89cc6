#pragma once
// Diagonal sets and random matrices on them: bands and randomly placed diagonals (the test and
// benchmark matrices of the published experiments), with values uniform in [-1, 1).

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace nearsparse::diagonal {

/// Offsets -lower..upper of a band (clipped to a rows x cols matrix).
std::vector<int> banded_offsets(int rows, int cols, int lower, int upper);

/// `count` distinct offsets of a rows x cols matrix drawn uniformly at random from the seed, the
/// main diagonal first among them when `with_main` (clipped to what the matrix has).
std::vector<int> random_offsets(int rows, int cols, int count, std::uint64_t seed,
                                bool with_main = true);

namespace detail {

/// Zeroes entry p of compact diagonal t where it lies outside the band (more than `lower` below
/// or `upper` above the main diagonal).
template <class Scalar, class Mem>
struct clip_band_element {
  typename cdm_matrix<Scalar, Mem>::indices_view indices;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  int n, lower, upper;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, const int p) const {
    const int k = indices(t);
    const int d = p < n - k ? k : k - n;
    if (d > upper || -d > lower) values(t, p) = Scalar(0);
  }
};

}  // namespace detail

/// HM matrix on `offsets` with values uniform in [-1, 1) from the seed.
template <class Scalar, class ExecSpace, class Mem = typename ExecSpace::memory_space>
hm_matrix<Scalar, Mem> random_hm(const ExecSpace& exec, int rows, int cols,
                                 std::vector<int> offsets, std::uint64_t seed) {
  hm_matrix<Scalar, Mem> m(exec, rows, cols, std::move(offsets));
  fill_random(exec, m.values(), seed, -1.0, 1.0);
  exec.fence();
  return m;
}

/// CDM matrix holding a random band with `lower` subdiagonals and `upper` superdiagonals; the
/// parts of its compact diagonals outside the band are zero.
template <class Scalar, class ExecSpace, class Mem = typename ExecSpace::memory_space>
cdm_matrix<Scalar, Mem> random_banded_cdm(const ExecSpace& exec, int n, int lower, int upper,
                                          std::uint64_t seed) {
  cdm_matrix<Scalar, Mem> m(exec, n, banded_compact_indices(n, lower, upper));
  fill_random(exec, m.values(), seed, -1.0, 1.0);
  const auto indices = m.indices();
  const auto values = m.values();
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::clip_band", m.diagonal_count(), n,
      nearsparse::detail::second_index_contiguous(values),
      detail::clip_band_element<Scalar, Mem>{indices, values, n, lower, upper});
  exec.fence();
  return m;
}

}  // namespace nearsparse::diagonal
