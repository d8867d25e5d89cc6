#pragma once
// The stencil period of a sparse matrix: the smallest column distance d >= 16 that at least half
// of the rows couple to (row i has an entry in column i + d). For a lattice Hamiltonian with its
// sites in lexicographic order it is the length of the fastest line: 160 rows for the insulator's
// 40-site z lines of 4 orbitals. The CUDA kernel gives each block chunks of consecutive rows whose
// length divides the period (cuda_aug_spmmv.hpp): the rows a block walks one after another share
// their near neighbours in L1, and the chunks that read the same far neighbours run at the same
// phase. Chunks whose length does not divide the period are slower than chunks of one window,
// which is why the period is found, not guessed (perf/RESULTS.md, kpm/step).

#include <nearsparse/kpm/detail/matrix_rows.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace nearsparse::kpm::detail {

/// From the first rows of a CRS structure (row_map: rows + 1 offsets from 0, columns: the
/// entries); 0 when no distance qualifies.
inline int stencil_period(const std::vector<std::int64_t>& row_map,
                          const std::vector<int>& columns) {
  constexpr int min_distance = 16;
  const std::int64_t rows = std::int64_t(row_map.size()) - 1;
  if (rows <= 0) return 0;
  std::map<std::int64_t, std::int64_t> rows_with;  // distance -> rows that have it
  std::vector<std::int64_t> seen;
  for (std::int64_t i = 0; i < rows; ++i) {
    seen.clear();
    for (std::int64_t e = row_map[std::size_t(i)]; e < row_map[std::size_t(i) + 1]; ++e) {
      const std::int64_t d = std::int64_t(columns[std::size_t(e)]) - i;
      if (d >= min_distance) seen.push_back(d);
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const auto d : seen) ++rows_with[d];
  }
  for (const auto& [d, count] : rows_with)  // ascending distance
    if (2 * count >= rows) return d <= (1 << 24) ? int(d) : 0;
  return 0;
}

/// The period of a matrix from its first rows (at most 4096, copied to the host once); SELL-C-sigma
/// matrices, whose rows may be permuted, get 0 (chunks of one window).
template <class Rows>
int stencil_period_of(const Rows& rows) {
  if constexpr (Rows::is_sell) {
    return 0;
  } else {
    const std::int64_t n = std::min<std::int64_t>(rows.rows, 4096);
    if (n <= 0) return 0;
    auto rm = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(rows.row_map, std::make_pair(std::int64_t(0), n + 1)));
    const std::int64_t nnz = std::int64_t(rm(n));
    auto en = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(rows.entries, std::make_pair(std::int64_t(0), nnz)));
    std::vector<std::int64_t> row_map(std::size_t(n) + 1);
    std::vector<int> columns(static_cast<std::size_t>(nnz));
    for (std::int64_t i = 0; i <= n; ++i) row_map[std::size_t(i)] = std::int64_t(rm(i));
    for (std::int64_t e = 0; e < nnz; ++e) columns[std::size_t(e)] = int(en(e));
    return stencil_period(row_map, columns);
  }
}

}  // namespace nearsparse::kpm::detail
