#pragma once
// Frobenius norms of matrices and of their differences, accumulated in double: the error
// measures of approximate products (||C_exact - C||_F against ||C_exact||_F).

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace nearsparse {

namespace detail {

/// |x(i, j)|^2 in double: a term of ||X||_F^2.
template <class XView>
struct frobenius_norm_element {
  XView x;

  KOKKOS_INLINE_FUNCTION double operator()(const std::int64_t i, const std::int64_t j) const {
    const double v = static_cast<double>(x(i, j));
    return v * v;
  }
};

/// |x(i, j) - y(i, j)|^2 in double: a term of ||X - Y||_F^2.
template <class XView, class YView>
struct frobenius_distance_element {
  XView x;
  YView y;

  KOKKOS_INLINE_FUNCTION double operator()(const std::int64_t i, const std::int64_t j) const {
    const double d = static_cast<double>(x(i, j)) - static_cast<double>(y(i, j));
    return d * d;
  }
};

}  // namespace detail

/// ||X||_F of a rank-2 View, computed on exec.
template <class ExecSpace, class XView>
double frobenius_norm(const ExecSpace& exec, const XView& x) {
  static_assert_matrix<ExecSpace, XView>();
  const std::int64_t rows = x.extent(0), cols = x.extent(1);
  if (rows == 0 || cols == 0) return 0.0;
  const double sum = detail::sum_elements(exec, "nearsparse::core::frobenius_norm", rows, cols,
                                          detail::second_index_contiguous(x),
                                          detail::frobenius_norm_element<XView>{x});
  return std::sqrt(sum);
}

/// ||X - Y||_F of two rank-2 Views of equal extents, computed on exec.
template <class ExecSpace, class XView, class YView>
double frobenius_distance(const ExecSpace& exec, const XView& x, const YView& y) {
  static_assert_matrix<ExecSpace, XView>();
  static_assert_matrix<ExecSpace, YView>();
  require_extents("nearsparse::frobenius_distance", "Y", y, x.extent(0), x.extent(1));
  const std::int64_t rows = x.extent(0), cols = x.extent(1);
  if (rows == 0 || cols == 0) return 0.0;
  const double sum = detail::sum_elements(exec, "nearsparse::core::frobenius_distance", rows, cols,
                                          detail::second_index_contiguous(x),
                                          detail::frobenius_distance_element<XView, YView>{x, y});
  return std::sqrt(sum);
}

}  // namespace nearsparse
