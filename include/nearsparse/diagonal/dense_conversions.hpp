#pragma once
// HM <-> dense conversions. Dense matrices the conversions return are column-major (LayoutLeft,
// as BLAS and LAPACK take them); dense inputs may have any layout.

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/diagonal/detail/from_entries.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace nearsparse::diagonal {

/// Column-major dense matrix in the memory space of a diagonal-format matrix.
template <class Scalar, class MemorySpace>
using dense_matrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace>;

namespace detail {

template <class DenseView>
void check_dense_extents(const char* function, const DenseView& a) {
  if (a.extent(0) > std::size_t(std::numeric_limits<int>::max()) ||
      a.extent(1) > std::size_t(std::numeric_limits<int>::max()))
    nearsparse::detail::throw_invalid_argument(
        function, "A",
        nearsparse::detail::concat("(", nearsparse::detail::extents_string(a),
                                   ") has more rows or columns than an int can count"));
}

/// One team per stored diagonal: its entries copied out of the dense matrix a.
template <class ExecSpace, class Scalar, class Mem, class DenseView>
struct gather_diagonals_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  DenseView a;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int d = offsets(t);
    const auto begin = starts(t);
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, starts(t + 1) - begin),
        [&](const std::int64_t p) { values(begin + p) = Scalar(a(row_of(d, p), col_of(d, p))); });
  }
};

/// Copies the stored diagonals of `out` out of the dense matrix `a`, one team per diagonal.
template <class ExecSpace, class Scalar, class Mem, class DenseView>
void gather_diagonals(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& out,
                      const DenseView& a) {
  const auto offsets = out.offsets();
  const auto starts = out.starts();
  const auto values = out.values();
  Kokkos::parallel_for(
      "nearsparse::diagonal::gather_diagonals",
      Kokkos::TeamPolicy<ExecSpace>(exec, out.diagonal_count(), Kokkos::AUTO),
      gather_diagonals_kernel<ExecSpace, Scalar, Mem, DenseView>{offsets, starts, values, a});
}

/// One team per stored diagonal: its entries written into the dense matrix out.
template <class ExecSpace, class Scalar, class Mem>
struct hm_to_dense_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  dense_matrix<Scalar, Mem> out;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int d = offsets(t);
    const auto begin = starts(t);
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, starts(t + 1) - begin),
        [&](const std::int64_t p) { out(row_of(d, p), col_of(d, p)) = values(begin + p); });
  }
};

/// Flags the diagonal (j - i + rows - 1) of a nonzero a(i, j).
template <class DenseView, class Mem>
struct mark_dense_diagonals_element {
  using scalar = typename DenseView::non_const_value_type;
  DenseView a;
  Kokkos::View<int*, Mem> flags;
  int rows;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j) const {
    if (a(i, j) != scalar(0)) flags(j - i + rows - 1) = 1;
  }
};

/// The position i * cols + j of a nonzero a(i, j) off the stored diagonals, folded into first_off
/// by an atomic minimum.
template <class DenseView, class Mem>
struct dense_structure_element {
  using scalar = typename DenseView::non_const_value_type;
  DenseView a;
  Kokkos::View<int*, Mem> map;
  Kokkos::View<std::int64_t, Mem> first_off;
  int rows, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j) const {
    if (a(i, j) != scalar(0) && map(j - i + rows - 1) < 0)
      Kokkos::atomic_fetch_min(&first_off(), std::int64_t(i) * cols + j);
  }
};

}  // namespace detail

/// The dense form of an HM matrix, in its memory space (column-major, dense_matrix).
template <class ExecSpace, class Scalar, class Mem>
dense_matrix<Scalar, Mem> to_dense(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& m) {
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
      "nearsparse::diagonal::to_dense: the execution space cannot reach the matrix's memory");
  dense_matrix<Scalar, Mem> out(Kokkos::view_alloc(exec, "nearsparse::diagonal::dense"),
                                std::size_t(m.rows()), std::size_t(m.cols()));
  const auto offsets = m.offsets();
  const auto starts = m.starts();
  const auto values = m.values();
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_to_dense",
      Kokkos::TeamPolicy<ExecSpace>(exec, m.diagonal_count(), Kokkos::AUTO),
      detail::hm_to_dense_kernel<ExecSpace, Scalar, Mem>{offsets, starts, values, out});
  exec.fence();
  return out;
}

/// HM form of a dense matrix (any layout), storing every diagonal that holds a nonzero. Throws
/// nearsparse::invalid_argument if A holds NaN or Inf.
template <class ExecSpace, class DenseView>
hm_matrix<typename DenseView::non_const_value_type, typename DenseView::memory_space> hm_from_dense(
    const ExecSpace& exec, const DenseView& a) {
  static_assert_matrix<ExecSpace, DenseView>();
  using scalar = typename DenseView::non_const_value_type;
  using mem = typename DenseView::memory_space;
  detail::check_dense_extents("nearsparse::diagonal::hm_from_dense", a);
  require_finite(exec, "nearsparse::diagonal::hm_from_dense", "A", a);
  const int rows = int(a.extent(0)), cols = int(a.extent(1));
  const std::size_t span = rows + cols > 0 ? std::size_t(rows) + std::size_t(cols) - 1 : 0;
  Kokkos::View<int*, mem> flags(Kokkos::view_alloc(exec, "nearsparse::diagonal::flags"), span);
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::mark_dense_diagonals", rows, cols,
      nearsparse::detail::second_index_contiguous(a),
      detail::mark_dense_diagonals_element<DenseView, mem>{a, flags, rows});
  hm_matrix<scalar, mem> out(exec, rows, cols, detail::flagged_offsets(exec, flags, rows));
  detail::gather_diagonals(exec, out, a);
  exec.fence();
  return out;
}

/// HM form of a dense matrix (any layout) on the given diagonals (zeros on them are stored too), as
/// for a banded or triangular structure. Throws nearsparse::invalid_argument if A holds a nonzero
/// off those diagonals, or NaN or Inf.
template <class ExecSpace, class DenseView>
hm_matrix<typename DenseView::non_const_value_type, typename DenseView::memory_space> hm_from_dense(
    const ExecSpace& exec, const DenseView& a, std::vector<int> offsets) {
  static_assert_matrix<ExecSpace, DenseView>();
  using scalar = typename DenseView::non_const_value_type;
  using mem = typename DenseView::memory_space;
  detail::check_dense_extents("nearsparse::diagonal::hm_from_dense", a);
  require_finite(exec, "nearsparse::diagonal::hm_from_dense", "A", a);
  const int rows = int(a.extent(0)), cols = int(a.extent(1));
  hm_matrix<scalar, mem> out(exec, rows, cols,
                             detail::checked_offsets("nearsparse::diagonal::hm_from_dense",
                                                     "offsets", rows, cols, std::move(offsets)));
  const auto map = detail::diagonal_map(exec, out);
  // The first nonzero off the stored diagonals (as i * cols + j), if any: an atomic minimum,
  // taken only at such nonzeros, so the loop can follow the layout of A.
  const std::int64_t total = std::int64_t(rows) * cols;
  Kokkos::View<std::int64_t, mem> first_off(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::diagonal::first_off"));
  Kokkos::deep_copy(exec, first_off, total);
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::check_dense_structure", rows, cols,
      nearsparse::detail::second_index_contiguous(a),
      detail::dense_structure_element<DenseView, mem>{a, map, first_off, rows, cols});
  std::int64_t first = total;
  Kokkos::deep_copy(
      exec,
      Kokkos::View<std::int64_t, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          &first),
      first_off);
  exec.fence();
  if (first < total) {
    const std::int64_t i = first / cols, j = first % cols;
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::hm_from_dense", "A",
        nearsparse::detail::concat("(", rows, " x ", cols, ") has a nonzero at (", i, ", ", j,
                                   "), on diagonal ", j - i, ", which is not in 'offsets'"));
  }
  detail::gather_diagonals(exec, out, a);
  exec.fence();
  return out;
}

}  // namespace nearsparse::diagonal
