#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

// Reference values computed on the host from the documented formula, independently of any
// execution space: element (i, j) of a rows x cols matrix is fma(hi - lo, u, lo) with u drawn
// for index i * cols + j. Compared for exact equality: every backend must give the same bits.
static double expected_value(std::uint64_t seed, std::size_t i, std::size_t j, std::size_t cols,
                             double lo, double hi) {
  return std::fma(hi - lo, nearsparse::detail::uniform01(seed, i * cols + j, 0), lo);
}

NEARSPARSE_SPACE_TEST_CASE("fill_random gives the same matrix on every backend", "[core][random]") {
  using exec_space = TestType;
  const std::size_t rows = GENERATE(0, 1, 33, 257);
  const std::size_t cols = GENERATE(0, 1, 31, 100);
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", " << rows << " x " << cols << ", seed " << seed);

  Kokkos::View<double**, typename exec_space::memory_space> m("m", rows, cols);
  nearsparse::fill_random(exec_space(), m, seed, -2.0, 3.0);
  const auto host = nearsparse::test::to_host(m);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j)
      if (host(i, j) != expected_value(seed, i, j, cols, -2.0, 3.0)) ++mismatches;
  CHECK(mismatches == 0);
}

NEARSPARSE_SPACE_TEST_CASE("fill_random draws uniformly from [lo, hi)", "[core][random]") {
  using exec_space = TestType;
  const std::size_t n = 100003;  // prime, so no tiling accident can hide a gap
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  Kokkos::View<float*, typename exec_space::memory_space> v("v", n);
  nearsparse::fill_random(exec_space(), v, seed, 0.0, 1.0);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  double sum = 0, sum_sq = 0;
  float lo = 1, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += h(i);
    sum_sq += double(h(i)) * h(i);
    lo = std::min(lo, h(i));
    hi = std::max(hi, h(i));
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  CHECK(lo >= 0.0f);
  CHECK(hi <= 1.0f);
  CHECK(lo < 1e-3f);
  CHECK(hi > 1 - 1e-3f);
  // Mean 1/2 and variance 1/12; the mean's standard error is 0.29 / sqrt(n) ~ 9e-4, so 6 sigma.
  CHECK(std::abs(mean - 0.5) < 6e-3);
  CHECK(std::abs(var - 1.0 / 12.0) < 3e-3);
}

NEARSPARSE_SPACE_TEST_CASE("fill_random handles complex values and distinct seeds",
                           "[core][random]") {
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  Kokkos::View<Kokkos::complex<double>**, memory> z("z", 17, 9);
  nearsparse::fill_random(exec_space(), z, seed);
  const auto hz = nearsparse::test::to_host(z);
  std::size_t equal_parts = 0;
  for (const auto& x : hz.data) {
    CHECK(std::abs(x.real()) <= 1.0);
    CHECK(std::abs(x.imag()) <= 1.0);
    if (x.real() == x.imag()) ++equal_parts;
  }
  CHECK(equal_parts == 0);

  Kokkos::View<double**, memory> a("a", 20, 20), b("b", 20, 20);
  nearsparse::fill_random(exec_space(), a, seed);
  nearsparse::fill_random(exec_space(), b, seed + 1);
  CHECK(nearsparse::test::relative_error(nearsparse::test::to_host(a),
                                         nearsparse::test::to_host(b)) > 0.1);
}

TEST_CASE("fill_random rejects an empty or non-finite range", "[core][random]") {
  Kokkos::View<double*, Kokkos::HostSpace> v("v", 4);
  const Kokkos::DefaultHostExecutionSpace host;
  CHECK_THROWS_AS(nearsparse::fill_random(host, v, 1, 2.0, 1.0), nearsparse::invalid_argument);
  CHECK_THROWS_AS(nearsparse::fill_random(host, v, 1, 0.0, std::nan("")),
                  nearsparse::invalid_argument);
  CHECK_THROWS_WITH(nearsparse::fill_random(host, v, 1, 2.0, 1.0),
                    Catch::Matchers::Contains("'lo, hi'"));
}
