#pragma once
// Reproducible random matrices and vectors.
//
// Each element is a hash of (seed, linear index), so the same seed gives the same values on every
// backend and at every thread count: a matrix made on the GPU equals the one a host reference
// makes, and a failing test can be replayed from its seed.

#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace nearsparse {

namespace detail {

/// splitmix64: a bijective 64-bit mixer with good avalanche, cheap on every backend.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) with 53 random bits, from stream `stream` of element `index`.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t index,
                                        std::uint64_t stream) {
  const std::uint64_t bits = mix64(mix64(seed ^ (stream << 56)) ^ index);
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

/// lo + (hi - lo) * u as one correctly rounded fma on every backend. Written as a multiply and
/// an add, nvcc would fuse them (it contracts by default) and a host compiler might not, and the
/// same seed would give values that differ in the last bit.
/// (The C library's fma, which host and device code both have, is correctly rounded.)
KOKKOS_INLINE_FUNCTION double scale_uniform(double u, double lo, double hi) {
  return ::fma(hi - lo, u, lo);
}

/// A value of type T in [lo, hi); complex types get independent real and imaginary parts.
template <class T>
KOKKOS_INLINE_FUNCTION T random_value(std::uint64_t seed, std::uint64_t index, double lo,
                                      double hi) {
  const double re = scale_uniform(uniform01(seed, index, 0), lo, hi);
  if constexpr (is_kokkos_complex<T>::value) {
    using real = typename T::value_type;
    const double im = scale_uniform(uniform01(seed, index, 1), lo, hi);
    return T(static_cast<real>(re), static_cast<real>(im));
  } else if constexpr (std::is_floating_point<T>::value) {
    return static_cast<T>(re);
  } else {
    // Reduced-precision types (Kokkos half_t) are constructed from float.
    return T(static_cast<float>(re));
  }
}

/// Element i of a rank-1 View: the value of (seed, i) in [lo, hi).
template <class View>
struct fill_random_vector_kernel {
  View view;
  std::uint64_t seed;
  double lo, hi;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    view(i) = random_value<typename View::non_const_value_type>(seed, std::uint64_t(i), lo, hi);
  }
};

/// Element k of a rank-2 View in row-major order, (k / cols, k % cols): the value of (seed, k)
/// in [lo, hi).
template <class View>
struct fill_random_matrix_kernel {
  View view;
  std::size_t cols;
  std::uint64_t seed;
  double lo, hi;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const std::size_t i = std::size_t(k) / cols, j = std::size_t(k) % cols;
    view(i, j) = random_value<typename View::non_const_value_type>(seed, std::uint64_t(k), lo, hi);
  }
};

}  // namespace detail

/// Fills a rank-1 or rank-2 View with values uniform in [lo, hi), computed from (seed, i*cols + j).
/// Runs on `exec`; the result depends only on the seed and the extents.
template <class ExecSpace, class View>
void fill_random(const ExecSpace& exec, const View& view, std::uint64_t seed, double lo = -1.0,
                 double hi = 1.0) {
  static_assert_vector_or_matrix<ExecSpace, View>();
  require(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, "nearsparse::fill_random", "lo, hi",
          detail::concat("must be finite with lo <= hi, got [", lo, ", ", hi, ")"));
  // A 64-bit index: RangePolicy<Kokkos::Cuda> counts in unsigned int by default, which would
  // leave the elements from 2^32 on unwritten.
  using policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  if constexpr (View::rank == 1) {
    Kokkos::parallel_for("nearsparse::core::fill_random",
                         policy(exec, 0, static_cast<std::int64_t>(view.extent(0))),
                         detail::fill_random_vector_kernel<View>{view, seed, lo, hi});
  } else {
    const std::size_t cols = view.extent(1);
    Kokkos::parallel_for("nearsparse::core::fill_random",
                         policy(exec, 0, static_cast<std::int64_t>(view.extent(0) * cols)),
                         detail::fill_random_matrix_kernel<View>{view, cols, seed, lo, hi});
  }
}

}  // namespace nearsparse
