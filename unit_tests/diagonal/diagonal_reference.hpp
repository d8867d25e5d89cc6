#pragma once
// Host references for the diagonal-format tests: dense copies in double precision, transposes,
// and an elementwise check of a product against alpha op(A) op(B) + beta C0 with the standard
// bound for K-term sums, gamma_K * (|alpha| |op(A)| |op(B)| + |beta| |C0|).

#include "support/host_reference.hpp"

#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace nearsparse::test::diagonal {

template <class ExecSpace, class Matrix>
host_matrix<double> dense_of(const ExecSpace& exec, const Matrix& m) {
  return to_host(nearsparse::diagonal::to_dense(exec, m));
}

inline host_matrix<double> apply_op(const host_matrix<double>& m, nearsparse::diagonal::op o) {
  if (o == nearsparse::diagonal::op::none) return m;
  host_matrix<double> t(m.cols, m.rows);
  for (std::size_t i = 0; i < m.rows; ++i)
    for (std::size_t j = 0; j < m.cols; ++j) t(j, i) = m(i, j);
  return t;
}

template <class Scalar>
constexpr double roundoff() {
  return std::is_same_v<Scalar, float> ? 0x1p-24 : 0x1p-53;
}

/// Checks every element of `actual` against alpha a b + beta c0 (a, b already op-applied).
template <class Scalar>
void check_product(const host_matrix<double>& actual, double alpha, const host_matrix<double>& a,
                   const host_matrix<double>& b, double beta, const host_matrix<double>& c0) {
  REQUIRE(actual.rows == a.rows);
  REQUIRE(actual.cols == b.cols);
  const double gamma = 4.0 * double(a.cols + 2) * roundoff<Scalar>();
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t j = 0; j < b.cols; ++j) {
      double sum = 0, magnitude = 0;
      for (std::size_t l = 0; l < a.cols; ++l) {
        sum += a(i, l) * b(l, j);
        magnitude += std::abs(a(i, l) * b(l, j));
      }
      const double expected = alpha * sum + beta * c0(i, j);
      const double bound =
          gamma * (std::abs(alpha) * magnitude + std::abs(beta * c0(i, j))) + 1e-300;
      const double err = std::abs(actual(i, j) - expected);
      if (!(err <= bound)) ++bad;  // NaN counts as bad
      worst = std::max(worst, err / bound);
    }
  }
  INFO("elements outside the bound: " << bad << ", worst error / bound " << worst);
  CHECK(bad == 0);
}

}  // namespace nearsparse::test::diagonal
