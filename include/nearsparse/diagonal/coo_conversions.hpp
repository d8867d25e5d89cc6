#pragma once
// HM <-> COO (coordinate) conversions.

#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/diagonal/detail/from_entries.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace nearsparse::diagonal {

/// A matrix as a list of (row, column, value) entries.
template <class Scalar, class MemorySpace>
struct coo_matrix {
  int rows = 0;
  int cols = 0;
  Kokkos::View<int*, MemorySpace> row_indices;
  Kokkos::View<int*, MemorySpace> col_indices;
  Kokkos::View<Scalar*, MemorySpace> values;
};

namespace detail {

/// One team per stored diagonal: its entries' rows, columns and values into the COO lists.
template <class ExecSpace, class Scalar, class Mem>
struct hm_to_coo_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  Kokkos::View<int*, Mem> ri, ci;
  Kokkos::View<Scalar*, Mem> vo;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int d = offsets(t);
    const auto begin = starts(t);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, starts(t + 1) - begin),
                         [&](const std::int64_t p) {
                           ri(begin + p) = int(row_of(d, p));
                           ci(begin + p) = int(col_of(d, p));
                           vo(begin + p) = values(begin + p);
                         });
  }
};

}  // namespace detail

/// Every stored entry of an HM matrix (explicit zeros included), diagonal by diagonal.
template <class ExecSpace, class Scalar, class Mem>
coo_matrix<Scalar, Mem> to_coo(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& m) {
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
      "nearsparse::diagonal::to_coo: the execution space cannot reach the matrix's memory");
  const auto count = std::size_t(m.stored_count());
  coo_matrix<Scalar, Mem> out;
  out.rows = m.rows();
  out.cols = m.cols();
  out.row_indices = Kokkos::View<int*, Mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::coo.rows"), count);
  out.col_indices = Kokkos::View<int*, Mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::coo.cols"), count);
  out.values = Kokkos::View<Scalar*, Mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::coo.values"), count);
  const auto offsets = m.offsets();
  const auto starts = m.starts();
  const auto values = m.values();
  const auto ri = out.row_indices, ci = out.col_indices;
  const auto vo = out.values;
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_to_coo",
      Kokkos::TeamPolicy<ExecSpace>(exec, m.diagonal_count(), Kokkos::AUTO),
      detail::hm_to_coo_kernel<ExecSpace, Scalar, Mem>{offsets, starts, values, ri, ci, vo});
  exec.fence();
  return out;
}

/// HM matrix from COO entries in the views' memory space. Entries may come in any order;
/// entries naming the same element are summed (the assembly convention). Throws
/// nearsparse::invalid_argument for an index outside rows x cols, lists of different lengths,
/// or NaN/Inf values.
template <class ExecSpace, class RowView, class ColView, class ValView>
auto hm_from_coo(const ExecSpace& exec, int rows, int cols, const RowView& row_indices,
                 const ColView& col_indices, const ValView& values) {
  static_assert_vector<ExecSpace, RowView>();
  static_assert_vector<ExecSpace, ColView>();
  static_assert_vector<ExecSpace, ValView>();
  static_assert(std::is_integral_v<typename RowView::value_type> &&
                    std::is_integral_v<typename ColView::value_type>,
                "nearsparse::diagonal::hm_from_coo: row and column indices must be integers");
  using scalar = typename ValView::non_const_value_type;
  using mem = typename ValView::memory_space;
  return detail::hm_from_entries<scalar, mem>(exec, "nearsparse::diagonal::hm_from_coo", rows, cols,
                                              row_indices, col_indices, values,
                                              detail::duplicates::sum);
}

}  // namespace nearsparse::diagonal
