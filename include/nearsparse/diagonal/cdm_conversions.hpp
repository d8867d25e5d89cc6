#pragma once
// CDM <-> HM conversions, and through HM to and from dense, COO and CSR.

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/coo_conversions.hpp>
#include <nearsparse/diagonal/crs_conversions.hpp>
#include <nearsparse/diagonal/dense_conversions.hpp>
#include <nearsparse/diagonal/detail/from_entries.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <vector>

namespace nearsparse::diagonal {

namespace detail {

/// Entry p of compact diagonal t: from the HM diagonal holding it (its superdiagonal part for
/// p < n - k, its subdiagonal part after), or zero where that diagonal is not stored.
template <class Scalar, class Mem>
struct hm_to_cdm_element {
  typename cdm_matrix<Scalar, Mem>::indices_view compact;
  Kokkos::View<int*, Mem> map;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view hm_values;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, const int p) const {
    const int k = compact(t);
    const int d = p < n - k ? k : k - n;  // superdiagonal part, then subdiagonal part
    const int s = map(d + n - 1);
    values(t, p) = s < 0 ? Scalar(0) : hm_values(starts(s) + (d >= 0 ? p : p + d));
  }
};

/// Flags the ordinary diagonal (offset + n - 1) of a nonzero entry p of compact diagonal t.
template <class Scalar, class Mem>
struct mark_cdm_parts_element {
  typename cdm_matrix<Scalar, Mem>::indices_view compact;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  Kokkos::View<int*, Mem> flags;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, const int p) const {
    const int k = compact(t);
    if (values(t, p) != Scalar(0)) flags((p < n - k ? k : k - n) + n - 1) = 1;
  }
};

/// One team per stored HM diagonal: its entries copied out of the compact diagonal holding it.
template <class ExecSpace, class Scalar, class Mem>
struct cdm_to_hm_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view hm_values;
  typename cdm_matrix<Scalar, Mem>::indices_view lookup;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int d = offsets(t);
    const int row = lookup(compact_of(d, n));
    const auto begin = starts(t);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, starts(t + 1) - begin),
                         [&](const std::int64_t p) {
                           // Element (i, j) is entry i of its compact diagonal.
                           hm_values(begin + p) = values(row, row_of(d, p));
                         });
  }
};

/// Entry p of compact diagonal t written to its place (p, (p + k) mod n) of the dense matrix.
template <class Scalar, class Mem>
struct cdm_to_dense_element {
  typename cdm_matrix<Scalar, Mem>::indices_view compact;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  dense_matrix<Scalar, Mem> out;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, const int p) const {
    out(p, wrap(p + compact(t), n)) = values(t, p);
  }
};

}  // namespace detail

/// CDM form of a square HM matrix: compact diagonal k is stored when ordinary diagonal k or
/// k - n is. Throws nearsparse::invalid_argument for a matrix that is not square.
template <class ExecSpace, class Scalar, class Mem>
cdm_matrix<Scalar, Mem> cdm_from_hm(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& m) {
  if (m.rows() != m.cols())
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::cdm_from_hm", "m",
        nearsparse::detail::concat("is ", m.rows(), " x ", m.cols(),
                                   "; compact diagonal storage needs a square matrix"));
  const int n = m.rows();
  std::vector<int> indices;
  for (const int d : m.host_offsets()) indices.push_back(detail::compact_of(d, n));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  cdm_matrix<Scalar, Mem> out(exec, n, indices);
  const auto map = detail::diagonal_map(exec, m);
  const auto starts = m.starts();
  const auto hm_values = m.values();
  const auto compact = out.indices();
  const auto values = out.values();
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::hm_to_cdm", out.diagonal_count(), n,
      nearsparse::detail::second_index_contiguous(values),
      detail::hm_to_cdm_element<Scalar, Mem>{compact, map, starts, hm_values, values, n});
  exec.fence();
  return out;
}

/// HM form of a CDM matrix. A compact diagonal's superdiagonal and subdiagonal parts become
/// diagonals of their own; a part that holds only zeros (the padding of a band) is dropped.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> hm_from_cdm(const ExecSpace& exec, const cdm_matrix<Scalar, Mem>& m) {
  const int n = m.size();
  const auto compact = m.indices();
  const auto values = m.values();
  const std::size_t span = n > 0 ? 2 * std::size_t(n) - 1 : 0;
  Kokkos::View<int*, Mem> flags(Kokkos::view_alloc(exec, "nearsparse::diagonal::flags"), span);
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::mark_cdm_parts", m.diagonal_count(), n,
      nearsparse::detail::second_index_contiguous(values),
      detail::mark_cdm_parts_element<Scalar, Mem>{compact, values, flags, n});
  hm_matrix<Scalar, Mem> out(exec, n, n, detail::flagged_offsets(exec, flags, n));
  const auto lookup = m.lookup();
  const auto offsets = out.offsets();
  const auto starts = out.starts();
  const auto hm_values = out.values();
  Kokkos::parallel_for("nearsparse::diagonal::cdm_to_hm",
                       Kokkos::TeamPolicy<ExecSpace>(exec, out.diagonal_count(), Kokkos::AUTO),
                       detail::cdm_to_hm_kernel<ExecSpace, Scalar, Mem>{offsets, starts, hm_values,
                                                                        lookup, values, n});
  exec.fence();
  return out;
}

/// Dense form of a CDM matrix (column-major, dense_matrix).
template <class ExecSpace, class Scalar, class Mem>
dense_matrix<Scalar, Mem> to_dense(const ExecSpace& exec, const cdm_matrix<Scalar, Mem>& m) {
  const int n = m.size();
  dense_matrix<Scalar, Mem> out(Kokkos::view_alloc(exec, "nearsparse::diagonal::dense"),
                                std::size_t(n), std::size_t(n));
  const auto compact = m.indices();
  const auto values = m.values();
  nearsparse::detail::for_each_element(
      exec, "nearsparse::diagonal::cdm_to_dense", m.diagonal_count(), n,
      nearsparse::detail::second_index_contiguous(values),
      detail::cdm_to_dense_element<Scalar, Mem>{compact, values, out, n});
  exec.fence();
  return out;
}

/// CDM form of a square dense matrix of any layout (every compact diagonal holding a nonzero).
template <class ExecSpace, class DenseView>
auto cdm_from_dense(const ExecSpace& exec, const DenseView& a) {
  return cdm_from_hm(exec, hm_from_dense(exec, a));
}

/// CDM form of a square dense matrix on the given ordinary diagonals (a band, say), which must
/// hold all its nonzeros.
template <class ExecSpace, class DenseView>
auto cdm_from_dense(const ExecSpace& exec, const DenseView& a, std::vector<int> offsets) {
  return cdm_from_hm(exec, hm_from_dense(exec, a, std::move(offsets)));
}

/// CSR and COO forms of a CDM matrix (through HM: padding zeros are not listed).
template <class ExecSpace, class Scalar, class Mem>
auto to_crs(const ExecSpace& exec, const cdm_matrix<Scalar, Mem>& m) {
  return to_crs(exec, hm_from_cdm(exec, m));
}
template <class ExecSpace, class Scalar, class Mem>
auto to_coo(const ExecSpace& exec, const cdm_matrix<Scalar, Mem>& m) {
  return to_coo(exec, hm_from_cdm(exec, m));
}

/// CDM matrix from a square CSR matrix, or from COO entries (summing duplicates).
template <class ExecSpace, class CrsType>
auto cdm_from_crs(const ExecSpace& exec, const CrsType& a) {
  return cdm_from_hm(exec, hm_from_crs(exec, a));
}
template <class ExecSpace, class RowView, class ColView, class ValView>
auto cdm_from_coo(const ExecSpace& exec, int n, const RowView& row_indices,
                  const ColView& col_indices, const ValView& values) {
  return cdm_from_hm(exec, hm_from_coo(exec, n, n, row_indices, col_indices, values));
}

}  // namespace nearsparse::diagonal
