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
      nearsparse::detail::second_index_contiguous(values), KOKKOS_LAMBDA(const int t, const int p) {
        const int k = compact(t);
        const int d = p < n - k ? k : k - n;  // superdiagonal part, then subdiagonal part
        const int s = map(d + n - 1);
        values(t, p) = s < 0 ? Scalar(0) : hm_values(starts(s) + (d >= 0 ? p : p + d));
      });
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
      nearsparse::detail::second_index_contiguous(values), KOKKOS_LAMBDA(const int t, const int p) {
        const int k = compact(t);
        if (values(t, p) != Scalar(0)) flags((p < n - k ? k : k - n) + n - 1) = 1;
      });
  hm_matrix<Scalar, Mem> out(exec, n, n, detail::flagged_offsets(exec, flags, n));
  const auto lookup = m.lookup();
  const auto offsets = out.offsets();
  const auto starts = out.starts();
  const auto hm_values = out.values();
  using team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "nearsparse::diagonal::cdm_to_hm",
      Kokkos::TeamPolicy<ExecSpace>(exec, out.diagonal_count(), Kokkos::AUTO),
      KOKKOS_LAMBDA(const team& member) {
        const int t = member.league_rank();
        const int d = offsets(t);
        const int row = lookup(detail::compact_of(d, n));
        const auto begin = starts(t);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, starts(t + 1) - begin),
                             [&](const std::int64_t p) {
                               // Element (i, j) is entry i of its compact diagonal.
                               hm_values(begin + p) = values(row, detail::row_of(d, p));
                             });
      });
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
      nearsparse::detail::second_index_contiguous(values), KOKKOS_LAMBDA(const int t, const int p) {
        out(p, detail::wrap(p + compact(t), n)) = values(t, p);
      });
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
