#pragma once
// Detection of NaN and Inf in user data. Families that already pass over every element (a norm
// map, a format conversion) fold the check into that pass; these are for the others.

#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace nearsparse {

namespace detail {

/// x - x is 0 for every finite x and NaN for NaN and +-Inf; no <cmath> needed on the device.
template <class T>
KOKKOS_INLINE_FUNCTION bool is_finite_value(const T& x) {
  if constexpr (is_kokkos_complex<T>::value) {
    return is_finite_value(x.real()) && is_finite_value(x.imag());
  } else if constexpr (std::is_floating_point<T>::value) {
    return x - x == T(0);
  } else {
    const float f = static_cast<float>(x);  // reduced-precision types
    return f - f == 0.0f;
  }
}

/// Element k of a rank-1 View, or element (k / cols, k % cols) of a rank-2 View.
template <class View>
KOKKOS_INLINE_FUNCTION typename View::reference_type flat_element(const View& view, std::size_t k,
                                                                  std::size_t cols) {
  if constexpr (View::rank == 1) {
    return view(k);
  } else {
    return view(k / cols, k % cols);
  }
}

/// The number of NaN or infinite elements, the View's elements taken in row-major order.
template <class View>
struct count_non_finite_kernel {
  View view;
  std::size_t cols;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, std::size_t& sum) const {
    if (!is_finite_value(flat_element(view, k, cols))) ++sum;
  }
};

}  // namespace detail

/// Number of NaN or infinite elements of a rank-1 or rank-2 View, counted on `exec`.
template <class ExecSpace, class View>
std::size_t count_non_finite(const ExecSpace& exec, const View& view) {
  static_assert_vector_or_matrix<ExecSpace, View>();
  const std::size_t rows = view.extent(0);
  const std::size_t cols = View::rank == 2 ? view.extent(1) : 1;
  std::size_t count = 0;
  // A 64-bit index: RangePolicy<Kokkos::Cuda> counts in unsigned int by default, which would cut
  // a View of 2^32 elements or more short.
  using policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce("nearsparse::core::count_non_finite",
                          policy(exec, 0, static_cast<std::int64_t>(rows * cols)),
                          detail::count_non_finite_kernel<View>{view, cols}, count);
  // A reduction into a host scalar completes before parallel_reduce returns.
  return count;
}

/// Throws nearsparse::invalid_argument naming the argument, its extents and the count of
/// non-finite values unless every element is finite.
template <class ExecSpace, class View>
void require_finite(const ExecSpace& exec, const char* function, const char* name,
                    const View& view) {
  const std::size_t bad = count_non_finite(exec, view);
  if (bad == 0) return;
  detail::throw_invalid_argument(function, name,
                                 detail::concat("(", detail::extents_string(view), ") holds ", bad,
                                                " non-finite value(s) (NaN or Inf)"));
}

}  // namespace nearsparse
