#pragma once
// Matrix-vector and matrix-multivector products in both formats: y = alpha op(A) x + beta y, with
// x and y rank-1 Views, or rank-2 Views holding one vector per column (any layout). One thread
// per element of y walks the stored diagonals; reads of A, x and y are unit-stride across
// threads. With beta = 0, y is not read.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/detail/product_checks.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::diagonal {

namespace detail {

inline constexpr const char spmv_name[] = "nearsparse::diagonal::spmv";

/// Element (i, r) of a rank-1 (r = 0) or rank-2 View.
template <class View>
KOKKOS_INLINE_FUNCTION auto& vector_element(const View& v, std::int64_t i, std::int64_t r) {
  if constexpr (View::rank == 1) {
    (void)r;
    return v(i);
  } else {
    return v(i, r);
  }
}

template <class ExecSpace, class XView, class YView>
void check_spmv_extents(const char* function, int op_rows, int op_cols, const XView& x,
                        const YView& y) {
  static_assert_vector_or_matrix<ExecSpace, XView>();
  static_assert_vector_or_matrix<ExecSpace, YView>();
  static_assert(int(XView::rank) == int(YView::rank),
                "nearsparse::diagonal::spmv: x and y must both be vectors or both be "
                "multivectors");
  static_assert(!std::is_const_v<typename YView::value_type>,
                "nearsparse::diagonal::spmv: y must be writable");
  const bool ok = std::int64_t(x.extent(0)) == op_cols && std::int64_t(y.extent(0)) == op_rows &&
                  (XView::rank == 1 || x.extent(1) == y.extent(1));
  if (!ok)
    nearsparse::detail::throw_invalid_argument(
        function, "x/y",
        nearsparse::detail::concat("do not conform with op(A) (", op_rows, " x ", op_cols,
                                   "): x is ", nearsparse::detail::extents_string(x), ", y is ",
                                   nearsparse::detail::extents_string(y)));
}

/// Element (i, r) of y = alpha op(A) x + beta y for an HM matrix (f = i + r rows).
template <class Scalar, class Mem, class XView, class YView>
struct hm_spmv_kernel {
  using y_scalar = typename YView::non_const_value_type;

  typename hm_matrix<Scalar, Mem>::offsets_view offsets;
  typename hm_matrix<Scalar, Mem>::starts_view starts;
  typename hm_matrix<Scalar, Mem>::values_view values;
  XView x;
  YView y;
  int rows, cols, diagonals, sign;
  y_scalar al, be;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t f) const {
    const std::int64_t i = f % rows, r = f / rows;
    y_scalar sum = 0;
    for (int s = 0; s < diagonals; ++s) {
      const std::int64_t j = i + sign * offsets(s);
      if (j < 0 || j >= cols) continue;
      sum += values(starts(s) + (i < j ? i : j)) * vector_element(x, j, r);
    }
    auto& out = vector_element(y, i, r);
    out = be == y_scalar(0) ? al * sum : al * sum + be * out;
  }
};

}  // namespace detail

/// y = alpha op(A) x + beta y for an HM matrix; alpha and beta have y's value type.
template <class ExecSpace, class Scalar, class Mem, class XView, class YView>
void spmv(const ExecSpace& exec, op operation, typename YView::non_const_value_type alpha,
          const hm_matrix<Scalar, Mem>& a, const XView& x,
          typename YView::non_const_value_type beta, const YView& y) {
  const bool t = operation == op::transpose;
  const int rows = t ? a.cols() : a.rows(), cols = t ? a.rows() : a.cols();
  detail::check_spmv_extents<ExecSpace>(detail::spmv_name, rows, cols, x, y);
  detail::require_finite_scalar(detail::spmv_name, "alpha", alpha);
  detail::require_finite_scalar(detail::spmv_name, "beta", beta);
  const std::int64_t vectors = YView::rank == 2 ? std::int64_t(y.extent(1)) : 1;
  const auto offsets = a.offsets();
  const auto starts = a.starts();
  const auto values = a.values();
  const int diagonals = a.diagonal_count();
  const int sign = t ? -1 : 1;
  using y_scalar = typename YView::non_const_value_type;
  const y_scalar al = alpha, be = beta;
  Kokkos::parallel_for("nearsparse::diagonal::hm_spmv",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, rows * vectors),
                       detail::hm_spmv_kernel<Scalar, Mem, XView, YView>{
                           offsets, starts, values, x, y, rows, cols, diagonals, sign, al, be});
}

namespace detail {

/// Element (p, r) of y = alpha op(A) x + beta y for a CDM matrix (f = p + r n).
template <class Scalar, class Mem, class XView, class YView>
struct cdm_spmv_kernel {
  using y_scalar = typename YView::non_const_value_type;

  typename cdm_matrix<Scalar, Mem>::indices_view indices;
  typename cdm_matrix<Scalar, Mem>::values_view values;
  XView x;
  YView y;
  int n, diagonals;
  bool t;
  y_scalar al, be;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t f) const {
    const int p = int(f % n);
    const std::int64_t r = f / n;
    y_scalar sum = 0;
    for (int s = 0; s < diagonals; ++s) {
      const int k = indices(s);
      // A(p, p + k) is entry p; A^T(p, j) = A(j, p) with j = p - k is entry j.
      const int j = t ? wrap(p - k, n) : wrap(p + k, n);
      sum += values(s, t ? j : p) * vector_element(x, j, r);
    }
    auto& out = vector_element(y, p, r);
    out = be == y_scalar(0) ? al * sum : al * sum + be * out;
  }
};

}  // namespace detail

/// y = alpha op(A) x + beta y for a CDM matrix; alpha and beta have y's value type.
template <class ExecSpace, class Scalar, class Mem, class XView, class YView>
void spmv(const ExecSpace& exec, op operation, typename YView::non_const_value_type alpha,
          const cdm_matrix<Scalar, Mem>& a, const XView& x,
          typename YView::non_const_value_type beta, const YView& y) {
  const int n = a.size();
  detail::check_spmv_extents<ExecSpace>(detail::spmv_name, n, n, x, y);
  detail::require_finite_scalar(detail::spmv_name, "alpha", alpha);
  detail::require_finite_scalar(detail::spmv_name, "beta", beta);
  const std::int64_t vectors = YView::rank == 2 ? std::int64_t(y.extent(1)) : 1;
  const auto indices = a.indices();
  const auto values = a.values();
  const int diagonals = a.diagonal_count();
  const bool t = operation == op::transpose;
  using y_scalar = typename YView::non_const_value_type;
  const y_scalar al = alpha, be = beta;
  Kokkos::parallel_for("nearsparse::diagonal::cdm_spmv",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, n * vectors),
                       detail::cdm_spmv_kernel<Scalar, Mem, XView, YView>{indices, values, x, y, n,
                                                                          diagonals, t, al, be});
}

}  // namespace nearsparse::diagonal
