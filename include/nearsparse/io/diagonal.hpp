#pragma once
// Matrix Market files in and out of HM diagonal storage (nearsparse::diagonal::hm_matrix),
// through coordinate entries: every stored entry of the file (symmetric files expanded) becomes an
// entry of the HM matrix, whose stored diagonals are those the entries touch.

#include <nearsparse/diagonal/coo_conversions.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/io/matrix_market.hpp>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::io {

/// Reads a Matrix Market file into an HM matrix of Scalar (double or float) in exec's memory
/// space. Duplicates are summed; explicit zeros keep their diagonal stored.
template <class Scalar, class ExecSpace>
diagonal::hm_matrix<Scalar, typename ExecSpace::memory_space> read_hm(
    const ExecSpace& exec, const std::string& path, const read_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::read_hm: the first argument must be an execution space instance");
  static_assert(std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float>,
                "nearsparse::io::read_hm: HM matrices hold double or float");
  using mem = typename ExecSpace::memory_space;
  const auto h = detail::read_host_crs<Scalar>(path, options);
  const std::size_t nnz = h.values.size();
  Kokkos::View<int*, mem> rows(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::io::hm_rows")),
      nnz);
  Kokkos::View<int*, mem> cols(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::io::hm_cols")),
      nnz);
  Kokkos::View<Scalar*, mem> values(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                                                       std::string("nearsparse::io::hm_values")),
                                    nnz);
  auto host_rows = Kokkos::create_mirror_view(rows);
  auto host_cols = Kokkos::create_mirror_view(cols);
  auto host_values = Kokkos::create_mirror_view(values);
  exec.fence();
  for (std::int64_t i = 0; i < h.rows; ++i)
    for (std::int64_t k = h.row_offsets[std::size_t(i)]; k < h.row_offsets[std::size_t(i) + 1]; ++k)
      host_rows(std::size_t(k)) = int(i);
  if (nnz > 0) {
    std::memcpy(host_cols.data(), h.columns.data(), nnz * sizeof(int));
    std::memcpy(host_values.data(), h.values.data(), nnz * sizeof(Scalar));
  }
  Kokkos::deep_copy(exec, rows, host_rows);
  Kokkos::deep_copy(exec, cols, host_cols);
  Kokkos::deep_copy(exec, values, host_values);
  exec.fence();
  return diagonal::hm_from_coo(exec, int(h.rows), int(h.cols), rows, cols, values);
}

/// Writes an HM matrix as a coordinate Matrix Market file: every stored value, explicit zeros
/// included, row by row.
template <class ExecSpace, class Scalar, class Mem>
void write_hm(const ExecSpace& exec, const std::string& path,
              const diagonal::hm_matrix<Scalar, Mem>& a, const write_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::write_hm: the first argument must be an execution space instance");
  const auto coo = diagonal::to_coo(exec, a);
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), coo.row_indices);
  auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), coo.col_indices);
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), coo.values);
  // Compressed rows, by a counting sort on the row.
  host_crs<Scalar> h;
  h.path = path;
  h.rows = a.rows();
  h.cols = a.cols();
  const std::size_t nnz = v.extent(0);
  h.row_offsets.assign(std::size_t(h.rows) + 1, 0);
  for (std::size_t k = 0; k < nnz; ++k) ++h.row_offsets[std::size_t(r(k)) + 1];
  for (std::size_t i = 0; i < std::size_t(h.rows); ++i) h.row_offsets[i + 1] += h.row_offsets[i];
  h.columns.resize(nnz);
  h.values.resize(nnz);
  std::vector<std::int64_t> at(h.row_offsets.begin(), h.row_offsets.end() - 1);
  // Diagonals ascend in offset, so visiting them in stored order puts each row's columns in
  // ascending order.
  for (std::size_t k = 0; k < nnz; ++k) {
    const auto p = std::size_t(at[std::size_t(r(k))]++);
    h.columns[p] = c(k);
    h.values[p] = v(k);
  }
  detail::write_host_crs<Scalar>(path, h, options);
}

}  // namespace nearsparse::io
