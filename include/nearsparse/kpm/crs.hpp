#pragma once
// The CRS type of the KPM family (Kokkos Kernels' CrsMatrix with int offsets and columns) and the
// checks every KPM entry point runs on a matrix it is given.

#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>

#include <nearsparse/core/crs_matrix.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nearsparse::kpm {

/// Complex double, the scalar of the topological-insulator Hamiltonian.
using complex_double = Kokkos::complex<double>;

/// CRS matrix on ExecSpace with int row offsets and columns (core/crs_matrix.hpp).
using nearsparse::crs_matrix;

/// True for the scalars the KPM kernels take: double and Kokkos::complex<double>.
template <class Scalar>
inline constexpr bool is_kpm_scalar_v =
    std::is_same_v<Scalar, double> || std::is_same_v<Scalar, complex_double>;

namespace detail {

/// |x|^2 and Re(conj(x) y) for real and complex scalars.
KOKKOS_INLINE_FUNCTION double norm2(double x) {
  return x * x;
}
KOKKOS_INLINE_FUNCTION double norm2(const complex_double& x) {
  return x.real() * x.real() + x.imag() * x.imag();
}
KOKKOS_INLINE_FUNCTION double real_dot(double x, double y) {
  return x * y;
}
KOKKOS_INLINE_FUNCTION double real_dot(const complex_double& x, const complex_double& y) {
  return x.real() * y.real() + x.imag() * y.imag();
}

/// Row i's share of validate_crs: bad(0) counts broken row offsets, bad(1) columns outside
/// [0, cols), bad(2) non-finite values.
template <class RowMap, class Entries, class Values, class Bad>
struct validate_crs_kernel {
  RowMap row_map;
  Entries entries;
  Values values;
  Bad bad;
  std::int64_t rows, cols, count;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t lo = row_map(i), hi = row_map(i + 1);
    if ((i == 0 && lo != 0) || hi < lo || hi > count || (i == rows - 1 && hi != count)) {
      Kokkos::atomic_add(&bad(0), std::int64_t(1));
      return;
    }
    for (std::int64_t e = lo; e < hi; ++e) {
      if (entries(e) < 0 || entries(e) >= cols) Kokkos::atomic_add(&bad(1), std::int64_t(1));
      if (!nearsparse::detail::is_finite_value(values(e)))
        Kokkos::atomic_add(&bad(2), std::int64_t(1));
    }
  }
};

/// Validates a CRS matrix: square (when `square`), row offsets that start at 0, never decrease
/// and end at the entry count, columns inside the matrix, finite values. Throws
/// nearsparse::invalid_argument naming `function` and `name` with the extents otherwise.
template <class ExecSpace, class Crs>
void validate_crs(const ExecSpace& exec, const Crs& h, const char* function, const char* name,
                  bool square = true) {
  using scalar = typename Crs::non_const_value_type;
  static_assert(is_kpm_scalar_v<scalar>,
                "nearsparse::kpm: the matrix scalar must be double or Kokkos::complex<double>");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Crs::memory_space>::accessible,
                "nearsparse::kpm: the execution space cannot reach the matrix's memory");
  const std::int64_t rows = h.numRows(), cols = h.numCols();
  const auto row_map = h.graph.row_map;
  const auto entries = h.graph.entries;
  const auto values = h.values;
  const std::int64_t count = std::int64_t(entries.extent(0));
  using nearsparse::detail::concat;
  using nearsparse::detail::throw_invalid_argument;
  if (square && rows != cols)
    throw_invalid_argument(function, name,
                           concat("is ", rows, " x ", cols, ", but must be square"));
  if (rows > 0 && std::int64_t(row_map.extent(0)) != rows + 1)
    throw_invalid_argument(
        function, name,
        concat("has ", row_map.extent(0), " row offsets for ", rows, " rows (needs rows + 1)"));
  if (std::int64_t(values.extent(0)) != count)
    throw_invalid_argument(function, name,
                           concat("has ", values.extent(0), " values but ", count, " columns"));
  if (rows == 0) {
    if (count != 0)
      throw_invalid_argument(function, name, concat("has ", count, " entries but no rows"));
    return;
  }
  // One pass: broken offsets, columns outside [0, cols), non-finite values.
  Kokkos::View<std::int64_t[3], typename Crs::memory_space> bad("nearsparse::kpm::crs_check");
  Kokkos::parallel_for(
      "nearsparse::kpm::validate_crs", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
      validate_crs_kernel<decltype(h.graph.row_map), decltype(h.graph.entries), decltype(h.values),
                          decltype(bad)>{row_map, entries, values, bad, rows, cols, count});
  auto h_bad = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bad);
  if (h_bad(0) > 0)
    throw_invalid_argument(function, name,
                           concat("(", rows, " x ", cols, ", ", count,
                                  " entries) has row offsets that do not start at 0, decrease or "
                                  "end past the entries (",
                                  h_bad(0), " row(s))"));
  if (h_bad(1) > 0)
    throw_invalid_argument(function, name,
                           concat("(", rows, " x ", cols, ") has ", h_bad(1),
                                  " column index(es) outside [0, ", cols, ")"));
  if (h_bad(2) > 0)
    throw_invalid_argument(
        function, name,
        concat("(", rows, " x ", cols, ") has ", h_bad(2), " non-finite value(s) (NaN or Inf)"));
}

}  // namespace detail

}  // namespace nearsparse::kpm
