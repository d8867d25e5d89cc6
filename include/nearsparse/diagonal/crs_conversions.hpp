#pragma once
// HM <-> CSR conversions, with Kokkos Kernels' KokkosSparse::CrsMatrix as the CSR type.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/from_entries.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <nearsparse/core/crs_matrix.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace nearsparse::diagonal {

/// The CSR type the conversions produce (core/crs_matrix.hpp).
using nearsparse::crs_matrix;

namespace detail {

/// Row i's entry count into row_map(i + 1): one per stored diagonal d with 0 <= i + d < cols.
template <class Scalar, class Mem, class Crs>
struct crs_row_counts_kernel {
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename Crs::row_map_type::non_const_type row_map;
  int diagonals, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    int n = 0;
    for (int t = 0; t < diagonals; ++t) {
      const int j = i + offsets(t);
      n += (j >= 0 && j < cols) ? 1 : 0;
    }
    row_map(i + 1) = n;
  }
};

/// Inclusive prefix sum of the row counts in place: the row offsets.
template <class Crs>
struct crs_row_offsets_kernel {
  typename Crs::row_map_type::non_const_type row_map;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& sum, const bool final) const {
    sum += row_map(i);
    if (final) row_map(i) = sum;
  }
};

/// Row i's columns and values, diagonal by diagonal from its row offset.
template <class Scalar, class Mem, class Crs>
struct crs_fill_kernel {
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  typename Crs::row_map_type::non_const_type row_map;
  typename Crs::index_type::non_const_type entries;
  typename Crs::values_type::non_const_type crs_values;
  int diagonals, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    int at = row_map(i);
    for (int t = 0; t < diagonals; ++t) {
      const int j = i + offsets(t);
      if (j < 0 || j >= cols) continue;
      entries(at) = j;
      crs_values(at) = values(starts(t) + (i < j ? i : j));
      ++at;
    }
  }
};

/// Counts row i's invalid offsets into `bad`: a first offset other than 0, a decrease, or a last
/// offset other than the entry count.
template <class RowMap>
struct check_row_map_kernel {
  RowMap row_map;
  int rows;
  std::int64_t count;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& bad) const {
    const auto lo = std::int64_t(row_map(i)), hi = std::int64_t(row_map(i + 1));
    if ((i == 0 && lo != 0) || hi < lo || (i == rows - 1 && hi != count)) ++bad;
  }
};

/// The row of each of row i's entries.
template <class RowMap, class Mem>
struct expand_row_map_kernel {
  RowMap row_map;
  Kokkos::View<int*, Mem> row_of_entry;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    for (auto e = row_map(i); e < row_map(i + 1); ++e) row_of_entry(e) = i;
  }
};

}  // namespace detail

/// CSR form of an HM matrix (explicit zeros kept), columns ascending within each row. Throws
/// nearsparse::invalid_argument if it holds more entries than int offsets can count.
template <class ExecSpace, class Scalar, class Mem>
crs_matrix<Scalar, ExecSpace, Mem> to_crs(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& m) {
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
      "nearsparse::diagonal::to_crs: the execution space cannot reach the matrix's memory");
  if (m.stored_count() > std::numeric_limits<int>::max())
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::to_crs", "m",
        nearsparse::detail::concat("(", m.rows(), " x ", m.cols(), ") stores ", m.stored_count(),
                                   " entries, more than int row offsets can count"));
  using crs = crs_matrix<Scalar, ExecSpace, Mem>;
  const int rows = m.rows(), cols = m.cols(), diagonals = m.diagonal_count();
  typename crs::row_map_type::non_const_type row_map(
      Kokkos::view_alloc(exec, "nearsparse::crs.row_map"), std::size_t(rows) + 1);
  const auto offsets = m.offsets();
  const auto starts = m.starts();
  const auto values = m.values();
  // Row i holds one entry of every stored diagonal d with 0 <= i + d < cols.
  Kokkos::parallel_for(
      "nearsparse::diagonal::crs_row_counts", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
      detail::crs_row_counts_kernel<Scalar, Mem, crs>{offsets, row_map, diagonals, cols});
  Kokkos::parallel_scan("nearsparse::diagonal::crs_row_offsets",
                        Kokkos::RangePolicy<ExecSpace>(exec, 0, rows + 1),
                        detail::crs_row_offsets_kernel<crs>{row_map});
  const auto count = std::size_t(m.stored_count());
  typename crs::index_type::non_const_type entries(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::crs.entries"), count);
  typename crs::values_type::non_const_type crs_values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::crs.values"), count);
  // Offsets ascend, so each row's columns come out sorted.
  Kokkos::parallel_for("nearsparse::diagonal::crs_fill",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
                       detail::crs_fill_kernel<Scalar, Mem, crs>{
                           offsets, starts, values, row_map, entries, crs_values, diagonals, cols});
  exec.fence();
  return crs("nearsparse::crs", rows, cols, int(count), crs_values, row_map, entries);
}

/// HM matrix from any KokkosSparse::CrsMatrix. Throws nearsparse::invalid_argument for an
/// invalid matrix (row offsets that do not start at 0, decrease, or end past the entries; a
/// column outside the matrix; a column repeated within a row) or NaN/Inf values.
template <class ExecSpace, class CrsType>
hm_matrix<typename CrsType::non_const_value_type, typename CrsType::memory_space> hm_from_crs(
    const ExecSpace& exec, const CrsType& a) {
  using scalar = typename CrsType::non_const_value_type;
  using mem = typename CrsType::memory_space;
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, mem>::accessible,
      "nearsparse::diagonal::hm_from_crs: the execution space cannot reach the matrix's memory");
  const int rows = int(a.numRows()), cols = int(a.numCols());
  const auto row_map = a.graph.row_map;
  const auto entries = a.graph.entries;
  const std::int64_t count = std::int64_t(entries.extent(0));
  if (rows > 0 && std::int64_t(row_map.extent(0)) != std::int64_t(rows) + 1)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::hm_from_crs", "A.graph.row_map",
        nearsparse::detail::concat("has ", row_map.extent(0), " entries for ", rows,
                                   " rows (needs rows + 1)"));
  if (std::int64_t(a.values.extent(0)) != count)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::hm_from_crs", "A.values",
        nearsparse::detail::concat("has ", a.values.extent(0), " entries, the column list ",
                                   count));
  if (rows == 0 && count != 0)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::hm_from_crs", "A.graph.entries",
        nearsparse::detail::concat("has ", count, " entries for a matrix with no rows"));
  // Row offsets: start at 0, never decrease, end at the entry count.
  int bad_rows = 0;
  Kokkos::parallel_reduce(
      "nearsparse::diagonal::check_row_map", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
      detail::check_row_map_kernel<decltype(a.graph.row_map)>{row_map, rows, count}, bad_rows);
  if (bad_rows > 0)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::hm_from_crs", "A.graph.row_map",
        nearsparse::detail::concat("is not valid for ", rows, " rows and ", count,
                                   " entries: it must start at 0, never decrease and end at ",
                                   count, " (", bad_rows, " row(s) break this)"));
  Kokkos::View<int*, mem> row_of_entry(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::diagonal::entry_rows"),
      std::size_t(count));
  Kokkos::parallel_for(
      "nearsparse::diagonal::expand_row_map", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
      detail::expand_row_map_kernel<decltype(a.graph.row_map), mem>{row_map, row_of_entry});
  return detail::hm_from_entries<scalar, mem>(exec, "nearsparse::diagonal::hm_from_crs", rows, cols,
                                              row_of_entry, entries, a.values,
                                              detail::duplicates::reject);
}

}  // namespace nearsparse::diagonal
