#pragma once
// Random-phase start vectors for the stochastic trace: every entry has modulus 1 (a phase
// e^{i phi} for complex scalars, +-1 for real ones), so <v|v> = N exactly and the trace estimate
// has the smallest variance among common choices. Entry (global row g, vector r) is a hash of
// (seed, g, r): the same vectors on every backend, thread count, storage order and row
// distribution, which is what lets the naive, augmented, blocked, SELL, heterogeneous and
// distributed runs be compared to rounding.

#include <nearsparse/core/random.hpp>
#include <nearsparse/kpm/crs.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nearsparse::kpm::detail {

template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar start_entry(std::uint64_t seed, std::int64_t global_row, int r) {
  const std::uint64_t index = (std::uint64_t(r) << 34) ^ std::uint64_t(global_row);
  const double u = nearsparse::detail::uniform01(seed, index, 0x4b);
  if constexpr (std::is_same_v<Scalar, double>) {
    return u < 0.5 ? -1.0 : 1.0;
  } else {
    const double phi = 6.283185307179586 * u;
    return Scalar(::cos(phi), ::sin(phi));
  }
}

/// block(i, r) = start_entry of global row row_offset + (permuted ? permutation(i) : i), column
/// r0 + r.
template <class Block, class Perm>
struct fill_start_vectors_kernel {
  Block block;
  Perm permutation;
  bool permuted;
  std::int64_t row_offset;
  int r0;
  std::uint64_t seed;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int r) const {
    const std::int64_t g = row_offset + (permuted ? permutation(i) : i);
    block(i, r) = start_entry<typename Block::non_const_value_type>(seed, g, r0 + r);
  }
};

/// block(i, r) = entry of global row (permutation ? permutation(i) : i) + row_offset, column
/// r0 + r, for the first `rows` rows of the block.
template <class Exec, class Block, class Perm>
void fill_start_vectors(const Exec& exec, const Block& block, int rows, std::uint64_t seed,
                        std::int64_t row_offset, int r0, const Perm& permutation, bool permuted) {
  const int R = int(block.extent(1));
  if (rows == 0 || R == 0) return;
  // A two-dimensional range, not a team per row (core/detail/elementwise.hpp): rows of a vector
  // block hold only R entries, too few to occupy a team, and the range's stride of one such row
  // stays within a few cache lines.
  Kokkos::parallel_for(
      "nearsparse::kpm::start_vectors",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {rows, R}),
      fill_start_vectors_kernel<Block, Perm>{block, permutation, permuted, row_offset, r0, seed});
}

}  // namespace nearsparse::kpm::detail
