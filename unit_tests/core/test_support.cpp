// The test helpers are themselves checked: a reference that is wrong would pass wrong kernels.
#include "support/host_reference.hpp"

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

using nearsparse::test::host_matrix;

TEST_CASE("reference_gemm matches a hand-computed product", "[core][support]") {
  host_matrix<double> a(2, 3), b(3, 2), c(2, 2);
  const double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {7, 8, 9, 10, 11, 12}, cv[] = {1, -1, 2, 0.5};
  a.data.assign(av, av + 6);
  b.data.assign(bv, bv + 6);
  c.data.assign(cv, cv + 4);
  // A B = [[58, 64], [139, 154]]; 2 A B - 3 C:
  const auto r = nearsparse::test::reference_gemm(2.0, a, b, -3.0, c);
  CHECK(r(0, 0) == 113);
  CHECK(r(0, 1) == 131);
  CHECK(r(1, 0) == 272);
  CHECK(r(1, 1) == 306.5);
  CHECK_THROWS(nearsparse::test::reference_gemm(1.0, a, a, 0.0, c));
}

TEST_CASE("relative_error sees every difference and NaN", "[core][support]") {
  host_matrix<double> x(3, 3), y(3, 3);
  for (std::size_t k = 0; k < 9; ++k) x.data[k] = y.data[k] = double(k + 1);
  CHECK(nearsparse::test::relative_error(x, y) == 0.0);
  y(2, 2) += 1e-3;
  const double e = nearsparse::test::relative_error(x, y);
  CHECK(e > 0.5e-4);
  CHECK(e < 1e-4);
  y(0, 0) = std::nan("");
  CHECK_FALSE(nearsparse::test::relative_error(x, y) <= 1.0);
  CHECK_THROWS(nearsparse::test::relative_error(x, host_matrix<double>(3, 2)));
}

TEST_CASE("to_host widens any layout and scalar", "[core][support]") {
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> m("m", 2, 3);
  m(1, 2) = 0.5f;
  m(0, 1) = -2.0f;
  const auto h = nearsparse::test::to_host(m);
  CHECK(h.rows == 2);
  CHECK(h.cols == 3);
  CHECK(h(1, 2) == 0.5);
  CHECK(h(0, 1) == -2.0);
  CHECK(h(0, 0) == 0.0);
}
