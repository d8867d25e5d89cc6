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

/// out = a * x + b * I (out may be x).
template <class ExecSpace, class OutView, class XView>
void scale_shift(const ExecSpace& exec, const OutView& out, double a, const XView& x, double b) {
  using value = typename OutView::non_const_value_type;
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(
      exec, "nearsparse::spamm::scale_shift", n, m, second_index_contiguous(out),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const double v = a * static_cast<double>(x(i, j)) + (i == j ? b : 0.0);
        out(i, j) = static_cast<value>(v);
      });
}

/// out = a * x + b * y + c * I (out may be x or y).
template <class ExecSpace, class OutView, class XView, class YView>
void combine(const ExecSpace& exec, const OutView& out, double a, const XView& x, double b,
             const YView& y, double c) {
  using value = typename OutView::non_const_value_type;
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(
      exec, "nearsparse::spamm::combine", n, m, second_index_contiguous(out),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const double v = a * static_cast<double>(x(i, j)) + b * static_cast<double>(y(i, j)) +
                         (i == j ? c : 0.0);
        out(i, j) = static_cast<value>(v);
      });
}

/// out = I.
template <class ExecSpace, class OutView>
void set_identity(const ExecSpace& exec, const OutView& out) {
  using value = typename OutView::non_const_value_type;
  const std::int64_t n = out.extent(0), m = out.extent(1);
  if (n == 0 || m == 0) return;
  for_each_element(
      exec, "nearsparse::spamm::set_identity", n, m, second_index_contiguous(out),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        out(i, j) = value(i == j ? 1 : 0);
      });
}

/// trace(x) of a square matrix.
template <class ExecSpace, class XView>
double trace(const ExecSpace& exec, const XView& x) {
  const int n = static_cast<int>(x.extent(0));
  if (n == 0) return 0.0;
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::trace", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const int i, double& s) { s += static_cast<double>(x(i, i)); }, sum);
  return sum;
}

/// ||a * x + b * y + c * I||_F, without forming the combination.
template <class ExecSpace, class XView, class YView>
double combination_norm(const ExecSpace& exec, double a, const XView& x, double b, const YView& y,
                        double c) {
  const std::int64_t n = x.extent(0), m = x.extent(1);
  if (n == 0 || m == 0) return 0.0;
  const double sum = sum_elements(
      exec, "nearsparse::spamm::combination_norm", n, m, second_index_contiguous(x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        const double v = a * static_cast<double>(x(i, j)) + b * static_cast<double>(y(i, j)) +
                         (i == j ? c : 0.0);
        return v * v;
      });
  return std::sqrt(sum);
}

/// ||x - c I||_F.
template <class ExecSpace, class XView>
double shifted_norm(const ExecSpace& exec, const XView& x, double c) {
  return combination_norm(exec, 1.0, x, 0.0, x, -c);
}

}  // namespace nearsparse::spamm::detail
