#pragma once
// The element-wise and reduction kernels the SpAMM matrix functions run between their products:
// identity shifts, linear combinations, traces and distances to the identity, all on the
// execution-space instance they are given and accumulated in double, each line of memory by a
// team (core/detail/elementwise.hpp).

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace nearsparse::spamm::detail {

using nearsparse::detail::for_each_element;
using nearsparse::detail::second_index_contiguous;
using nearsparse::detail::sum_elements;

/// Element (i, j) of out = a * x + b * I.
template <class OutView, class XView>
struct dense_scale_shift_element {
  OutView out;
  XView x;
  double a, b;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    const double v = a * static_cast<double>(x(i, j)) + (i == j ? b : 0.0);
    out(i, j) = static_cast<typename OutView::non_const_value_type>(v);
  }
};

/// out = a * x + b * I (out may be x).
template <class ExecSpace, class OutView, class XView>
void scale_shift(const ExecSpace& exec, const OutView& out, double a, const XView& x, double b) {
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(exec, "nearsparse::spamm::scale_shift", n, m, second_index_contiguous(out),
                   dense_scale_shift_element<OutView, XView>{out, x, a, b});
}

/// a * x(i, j) + b * y(i, j) + (c at i == j), in double.
template <class XView, class YView>
struct dense_combination {
  double a;
  XView x;
  double b;
  YView y;
  double c;

  KOKKOS_INLINE_FUNCTION double operator()(const std::int64_t i, const std::int64_t j) const {
    return a * static_cast<double>(x(i, j)) + b * static_cast<double>(y(i, j)) + (i == j ? c : 0.0);
  }
};

/// Element (i, j) of out = a * x + b * y + c * I.
template <class OutView, class XView, class YView>
struct dense_combine_element {
  OutView out;
  dense_combination<XView, YView> v;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    out(i, j) = static_cast<typename OutView::non_const_value_type>(v(i, j));
  }
};

/// out = a * x + b * y + c * I (out may be x or y).
template <class ExecSpace, class OutView, class XView, class YView>
void combine(const ExecSpace& exec, const OutView& out, double a, const XView& x, double b,
             const YView& y, double c) {
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(exec, "nearsparse::spamm::combine", n, m, second_index_contiguous(out),
                   dense_combine_element<OutView, XView, YView>{
                       out, dense_combination<XView, YView>{a, x, b, y, c}});
}

/// Element (i, j) of the identity.
template <class OutView>
struct dense_identity_element {
  OutView out;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    out(i, j) = typename OutView::non_const_value_type(i == j ? 1 : 0);
  }
};

/// out = I.
template <class ExecSpace, class OutView>
void set_identity(const ExecSpace& exec, const OutView& out) {
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(exec, "nearsparse::spamm::set_identity", n, m, second_index_contiguous(out),
                   dense_identity_element<OutView>{out});
}

/// Diagonal element i of x added to the trace.
template <class XView>
struct dense_trace_kernel {
  XView x;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& s) const {
    s += static_cast<double>(x(i, i));
  }
};

/// trace(x) of a square matrix.
template <class ExecSpace, class XView>
double trace(const ExecSpace& exec, const XView& x) {
  const int n = static_cast<int>(x.extent(0));
  if (n == 0) return 0.0;
  double sum = 0.0;
  Kokkos::parallel_reduce("nearsparse::spamm::trace", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                          dense_trace_kernel<XView>{x}, sum);
  return sum;
}

/// The square of element (i, j) of a * x + b * y + c * I.
template <class XView, class YView>
struct dense_combination_square {
  dense_combination<XView, YView> v;

  KOKKOS_INLINE_FUNCTION double operator()(const std::int64_t i, const std::int64_t j) const {
    const double e = v(i, j);
    return e * e;
  }
};

/// ||a * x + b * y + c * I||_F, without forming the combination.
template <class ExecSpace, class XView, class YView>
double combination_norm(const ExecSpace& exec, double a, const XView& x, double b, const YView& y,
                        double c) {
  const std::int64_t n = x.extent(0), m = x.extent(1);
  if (n == 0 || m == 0) return 0.0;
  const double sum = sum_elements(
      exec, "nearsparse::spamm::combination_norm", n, m, second_index_contiguous(x),
      dense_combination_square<XView, YView>{dense_combination<XView, YView>{a, x, b, y, c}});
  return std::sqrt(sum);
}

/// ||x - c I||_F.
template <class ExecSpace, class XView>
double shifted_norm(const ExecSpace& exec, const XView& x, double c) {
  return combination_norm(exec, 1.0, x, 0.0, x, -c);
}

}  // namespace nearsparse::spamm::detail
