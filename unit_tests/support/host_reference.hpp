#pragma once
// Host references in double precision for the tests: a plain row-major matrix, a copy from any
// rank-2 View into it, the dense product, and the relative Frobenius error every kernel test
// checks against a tolerance derived from the precision.

#include <nearsparse/core/detail/scalar_traits.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace nearsparse::test {

/// Row-major dense matrix on the host; T is double or std::complex<double>.
template <class T = double>
struct host_matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<T> data;

  host_matrix() = default;
  host_matrix(std::size_t r, std::size_t c) : rows(r), cols(c), data(r * c, T(0)) {}
  T& operator()(std::size_t i, std::size_t j) { return data[i * cols + j]; }
  const T& operator()(std::size_t i, std::size_t j) const { return data[i * cols + j]; }
};

namespace detail {
template <class V>
auto widen(const V& v) {
  if constexpr (nearsparse::detail::is_kokkos_complex<V>::value) {
    return std::complex<double>(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  } else if constexpr (std::is_arithmetic<V>::value) {
    return static_cast<double>(v);
  } else {
    return static_cast<double>(static_cast<float>(v));  // reduced-precision types
  }
}
}  // namespace detail

/// Copies a rank-2 View from any memory space, with any layout and scalar type, to the host in
/// double (or complex double) precision.
template <class View>
auto to_host(const View& view) {
  static_assert(View::rank == 2, "to_host copies rank-2 Views");
  using wide = decltype(detail::widen(std::declval<typename View::non_const_value_type>()));
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  host_matrix<wide> out(view.extent(0), view.extent(1));
  for (std::size_t i = 0; i < out.rows; ++i)
    for (std::size_t j = 0; j < out.cols; ++j) out(i, j) = detail::widen(mirror(i, j));
  return out;
}

/// C = alpha * A * B + beta * C, computed naively in double precision: the independent
/// reference the product kernels are checked against.
template <class T>
host_matrix<T> reference_gemm(T alpha, const host_matrix<T>& a, const host_matrix<T>& b, T beta,
                              const host_matrix<T>& c) {
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols)
    throw std::invalid_argument("reference_gemm: extents do not match");
  host_matrix<T> out(c.rows, c.cols);
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t j = 0; j < b.cols; ++j) {
      T sum = 0;
      for (std::size_t l = 0; l < a.cols; ++l) sum += a(i, l) * b(l, j);
      out(i, j) = alpha * sum + beta * c(i, j);
    }
  }
  return out;
}

template <class T>
double frobenius_norm(const host_matrix<T>& m) {
  double sum = 0;
  for (const T& x : m.data) sum += std::norm(x);  // |x|^2 for real and complex alike
  return std::sqrt(sum);
}

/// ||actual - reference||_F / ||reference||_F, or the absolute error when the reference is zero.
/// NaN anywhere gives NaN, which fails every tolerance check.
template <class T>
double relative_error(const host_matrix<T>& actual, const host_matrix<T>& reference) {
  if (actual.rows != reference.rows || actual.cols != reference.cols)
    throw std::invalid_argument("relative_error: extents " + std::to_string(actual.rows) + " x " +
                                std::to_string(actual.cols) + " and " +
                                std::to_string(reference.rows) + " x " +
                                std::to_string(reference.cols) + " differ");
  double diff = 0;
  for (std::size_t k = 0; k < actual.data.size(); ++k)
    diff += std::norm(actual.data[k] - reference.data[k]);
  const double ref = frobenius_norm(reference);
  return ref > 0 ? std::sqrt(diff) / ref : std::sqrt(diff);
}

/// Unit roundoff of the precision a kernel computes in: the basis of every tolerance.
enum class precision { fp64, fp32, tf32, fp16, bf16 };
constexpr double unit_roundoff(precision p) {
  switch (p) {
    case precision::fp64:
      return 0x1p-53;
    case precision::fp32:
      return 0x1p-24;
    case precision::tf32:
      return 0x1p-11;  // 10 stored mantissa bits, as fp16
    case precision::fp16:
      return 0x1p-11;
    case precision::bf16:
      return 0x1p-8;
  }
  return 1.0;
}

}  // namespace nearsparse::test

/// Checks relative_error(actual, reference) <= tolerance and reports both numbers on failure.
#define NEARSPARSE_CHECK_RELATIVE_ERROR(actual, reference, tolerance)                         \
  do {                                                                                        \
    const double nearsparse_err_ = ::nearsparse::test::relative_error((actual), (reference)); \
    const double nearsparse_tol_ = (tolerance);                                               \
    INFO("relative error " << nearsparse_err_ << ", tolerance " << nearsparse_tol_);          \
    CHECK(nearsparse_err_ <= nearsparse_tol_);                                                \
  } while (false)
