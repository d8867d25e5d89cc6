#pragma once
// Builds an HM matrix from a list of (row, column, value) entries on the device: checks the
// entries, finds the diagonals they occupy, and scatters them. COO and CSR input share it.

#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace nearsparse::diagonal::detail {

enum class duplicates { sum, reject };

/// One int per diagonal of a rows x cols matrix (offset d at index d + rows - 1): the index of the
/// stored diagonal with that offset in `m`, or -1.
template <class ExecSpace, class Scalar, class Mem>
Kokkos::View<int*, Mem> diagonal_map(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& m) {
  const std::size_t span = std::size_t(m.rows()) + std::size_t(m.cols()) - 1;
  Kokkos::View<int*, Mem> map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::diagonal::map"),
      m.rows() + m.cols() > 0 ? span : 0);
  Kokkos::View<int*, Kokkos::HostSpace> host("map", map.extent(0));
  Kokkos::deep_copy(host, -1);
  for (int t = 0; t < m.diagonal_count(); ++t)
    host(std::size_t(m.host_offsets()[t] + m.rows() - 1)) = t;
  Kokkos::deep_copy(exec, map, host);
  exec.fence();
  return map;
}

/// Offsets whose flag (indexed d + rows - 1) is set.
template <class ExecSpace, class Mem>
std::vector<int> flagged_offsets(const ExecSpace& exec, const Kokkos::View<int*, Mem>& flags,
                                 int rows) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flags);
  exec.fence();
  std::vector<int> offsets;
  for (std::size_t k = 0; k < host.extent(0); ++k)
    if (host(k)) offsets.push_back(int(k) - (rows - 1));
  return offsets;
}

/// The least index e of an entry whose row or column lies outside a rows x cols matrix.
template <class RowView, class ColView>
struct first_entry_outside_kernel {
  RowView row;
  ColView col;
  int rows, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e, std::int64_t& first) const {
    const auto i = std::int64_t(row(e)), j = std::int64_t(col(e));
    if ((i < 0 || i >= rows || j < 0 || j >= cols) && e < first) first = e;
  }
};

/// Sets the flag of the diagonal of entry e (indexed d + rows - 1).
template <class Mem, class RowView, class ColView>
struct mark_diagonals_kernel {
  Kokkos::View<int*, Mem> flags;
  RowView row;
  ColView col;
  int rows;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    flags(col(e) - row(e) + rows - 1) = 1;
  }
};

/// Adds entry e's value atomically to its element of the HM matrix (duplicates sum).
template <class Scalar, class Mem, class RowView, class ColView, class ValView>
struct scatter_entries_kernel {
  RowView row;
  ColView col;
  ValView value;
  Kokkos::View<int*, Mem> map;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  int rows;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const int i = int(row(e)), j = int(col(e));
    const auto at = starts(map(j - i + rows - 1)) + position_of(i, j);
    Kokkos::atomic_add(&values(at), Scalar(value(e)));
  }
};

/// Writes entry e's value to its element of the HM matrix, counting the entries that land on an
/// element already written.
template <class Scalar, class Mem, class RowView, class ColView, class ValView>
struct scatter_unique_entries_kernel {
  RowView row;
  ColView col;
  ValView value;
  Kokkos::View<int*, Mem> map;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  Kokkos::View<int*, Mem> seen;
  int rows;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e, std::int64_t& sum) const {
    const int i = int(row(e)), j = int(col(e));
    const auto at = starts(map(j - i + rows - 1)) + position_of(i, j);
    if (Kokkos::atomic_fetch_add(&seen(at), 1) != 0) ++sum;
    values(at) = Scalar(value(e));
  }
};

/// HM matrix holding the entries (row(e), col(e), value(e)), e < row.extent(0).
template <class Scalar, class Mem, class ExecSpace, class RowView, class ColView, class ValView>
hm_matrix<Scalar, Mem> hm_from_entries(const ExecSpace& exec, const char* function, int rows,
                                       int cols, const RowView& row, const ColView& col,
                                       const ValView& value, duplicates policy) {
  check_shape(function, rows, cols);
  const std::int64_t count = std::int64_t(row.extent(0));
  if (std::int64_t(col.extent(0)) != count || std::int64_t(value.extent(0)) != count)
    nearsparse::detail::throw_invalid_argument(
        function, "row/col/value indices",
        nearsparse::detail::concat("must have one length; got ", row.extent(0), ", ", col.extent(0),
                                   " and ", value.extent(0)));
  require_finite(exec, function, "values", value);

  // First entry whose row or column lies outside the matrix, if any.
  std::int64_t first_bad = count;
  Kokkos::parallel_reduce("nearsparse::diagonal::check_entries",
                          Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                          first_entry_outside_kernel<RowView, ColView>{row, col, rows, cols},
                          Kokkos::Min<std::int64_t>(first_bad));
  if (first_bad < count) {
    auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row);
    auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), col);
    nearsparse::detail::throw_invalid_argument(
        function, "row/col indices",
        nearsparse::detail::concat("entry ", first_bad, " is (", std::int64_t(hr(first_bad)), ", ",
                                   std::int64_t(hc(first_bad)), "), outside a ", rows, " x ", cols,
                                   " matrix"));
  }

  const std::size_t span = rows + cols > 0 ? std::size_t(rows) + std::size_t(cols) - 1 : 0;
  Kokkos::View<int*, Mem> flags(Kokkos::view_alloc(exec, "nearsparse::diagonal::flags"), span);
  Kokkos::parallel_for("nearsparse::diagonal::mark_diagonals",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       mark_diagonals_kernel<Mem, RowView, ColView>{flags, row, col, rows});
  hm_matrix<Scalar, Mem> out(exec, rows, cols, flagged_offsets(exec, flags, rows));

  const auto map = diagonal_map(exec, out);
  const auto starts = out.starts();
  const auto values = out.values();
  if (policy == duplicates::sum) {
    Kokkos::parallel_for("nearsparse::diagonal::scatter_entries",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                         scatter_entries_kernel<Scalar, Mem, RowView, ColView, ValView>{
                             row, col, value, map, starts, values, rows});
    exec.fence();
    return out;
  }
  Kokkos::View<int*, Mem> seen(Kokkos::view_alloc(exec, "nearsparse::diagonal::seen"),
                               std::size_t(out.stored_count()));
  std::int64_t repeated = 0;
  Kokkos::parallel_reduce("nearsparse::diagonal::scatter_unique_entries",
                          Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                          scatter_unique_entries_kernel<Scalar, Mem, RowView, ColView, ValView>{
                              row, col, value, map, starts, values, seen, rows},
                          repeated);
  if (repeated > 0)
    nearsparse::detail::throw_invalid_argument(
        function, "col indices",
        nearsparse::detail::concat("name ", repeated,
                                   " element(s) more than once; a valid CSR matrix lists each "
                                   "column of a row at most once"));
  return out;
}

}  // namespace nearsparse::diagonal::detail
