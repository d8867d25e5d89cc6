#pragma once
// One view of a sparse row for the kernels, whatever the storage: row i's entries sit at
// begin + j * stride for j < count. CRS rows are contiguous (stride 1); a SELL-C-sigma row is
// strided by C through its chunk, padding included. The KPM kernels are written once over this.

#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/sell_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace nearsparse::kpm::detail {

struct row_span {
  std::int64_t begin;
  int stride;
  int count;
};

template <class Scalar, class RowMap, class Entries, class Values>
struct crs_rows {
  using scalar_type = Scalar;
  static constexpr bool is_sell = false;
  /// int offsets and columns: what the CUDA kernel reads.
  static constexpr bool int_indices =
      std::is_same_v<std::remove_const_t<typename RowMap::value_type>, int> &&
      std::is_same_v<std::remove_const_t<typename Entries::value_type>, int>;
  RowMap row_map;
  Entries entries;
  Values values;
  int rows, cols;
  KOKKOS_INLINE_FUNCTION row_span span(int i) const {
    const std::int64_t b = row_map(i);
    return {b, 1, int(std::int64_t(row_map(i + 1)) - b)};
  }
  KOKKOS_INLINE_FUNCTION int column(std::int64_t e) const { return entries(e); }
  const void* columns_data() const { return entries.data(); }
  KOKKOS_INLINE_FUNCTION const Scalar& value(std::int64_t e) const { return values(e); }
};

template <class Scalar, class Mem>
struct sell_rows {
  using scalar_type = Scalar;
  static constexpr bool is_sell = true;
  static constexpr bool int_indices = true;
  Kokkos::View<const std::int64_t*, Mem> chunk_offsets;
  Kokkos::View<const int*, Mem> chunk_lengths;
  Kokkos::View<const int*, Mem> columns;
  Kokkos::View<const Scalar*, Mem> values;
  int chunk_height;
  int rows, cols;
  /// Each row's entries before padding (the host kernel skips the padding).
  Kokkos::View<const int*, Mem> row_lengths;
  KOKKOS_INLINE_FUNCTION row_span span(int i) const {
    const int c = i / chunk_height;
    return {chunk_offsets(c) + (i - c * chunk_height), chunk_height, chunk_lengths(c)};
  }
  KOKKOS_INLINE_FUNCTION int column(std::int64_t e) const { return columns(e); }
  const void* columns_data() const { return columns.data(); }
  KOKKOS_INLINE_FUNCTION const Scalar& value(std::int64_t e) const { return values(e); }
};

template <class T>
struct is_crs : std::false_type {};
template <class S, class O, class D, class M, class Sz>
struct is_crs<KokkosSparse::CrsMatrix<S, O, D, M, Sz>> : std::true_type {};

template <class T>
struct is_sell : std::false_type {};
template <class S, class M>
struct is_sell<sell_matrix<S, M>> : std::true_type {};

template <class Crs, std::enable_if_t<is_crs<Crs>::value, int> = 0>
auto rows_of(const Crs& h) {
  using scalar = typename Crs::non_const_value_type;
  using row_map_t = decltype(h.graph.row_map);
  using entries_t = decltype(h.graph.entries);
  using values_t = decltype(h.values);
  return crs_rows<scalar, row_map_t, entries_t, values_t>{
      h.graph.row_map, h.graph.entries, h.values, int(h.numRows()), int(h.numCols())};
}

template <class Scalar, class Mem>
sell_rows<Scalar, Mem> rows_of(const sell_matrix<Scalar, Mem>& s) {
  return {s.chunk_offsets(), s.chunk_lengths(), s.columns(), s.values(),
          s.chunk_height(),  s.rows(),          s.cols(),    s.row_lengths()};
}

/// Rows, columns and scalar of either storage.
template <class Matrix>
struct matrix_traits;
template <class S, class O, class D, class M, class Sz>
struct matrix_traits<KokkosSparse::CrsMatrix<S, O, D, M, Sz>> {
  using scalar = std::remove_const_t<S>;
  using memory_space = typename KokkosSparse::CrsMatrix<S, O, D, M, Sz>::memory_space;
  static int rows(const KokkosSparse::CrsMatrix<S, O, D, M, Sz>& h) { return int(h.numRows()); }
  static int cols(const KokkosSparse::CrsMatrix<S, O, D, M, Sz>& h) { return int(h.numCols()); }
  static std::int64_t nonzeros(const KokkosSparse::CrsMatrix<S, O, D, M, Sz>& h) {
    return std::int64_t(h.nnz());
  }
  static constexpr bool is_sell = false;
};
template <class S, class M>
struct matrix_traits<sell_matrix<S, M>> {
  using scalar = S;
  using memory_space = M;
  static int rows(const sell_matrix<S, M>& h) { return h.rows(); }
  static int cols(const sell_matrix<S, M>& h) { return h.cols(); }
  static std::int64_t nonzeros(const sell_matrix<S, M>& h) { return h.nonzeros(); }
  static constexpr bool is_sell = true;
};

}  // namespace nearsparse::kpm::detail
