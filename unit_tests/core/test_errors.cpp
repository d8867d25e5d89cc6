#include <nearsparse/core/errors.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

using Catch::Matchers::Contains;

TEST_CASE("exception types derive from the standard ones", "[core][errors]") {
  CHECK_THROWS_AS(throw nearsparse::invalid_argument("x"), std::invalid_argument);
  CHECK_THROWS_AS(throw nearsparse::unsupported("x"), std::runtime_error);
  CHECK_THROWS_AS(throw nearsparse::runtime_error("x"), std::runtime_error);
}

TEST_CASE("require names the function and the argument", "[core][errors]") {
  CHECK_NOTHROW(nearsparse::require(true, "nearsparse::f", "x", "unused"));
  CHECK_THROWS_WITH(nearsparse::require(false, "nearsparse::f", "tau", "must be >= 0, got -1"),
                    "nearsparse::f: argument 'tau' must be >= 0, got -1");
  CHECK_THROWS_AS(nearsparse::require(false, "f", "x", "bad"), nearsparse::invalid_argument);
}

TEST_CASE("extents_string lists every extent", "[core][errors]") {
  Kokkos::View<double**, Kokkos::HostSpace> m("m", 3, 4);
  Kokkos::View<double*, Kokkos::HostSpace> v("v", 7);
  Kokkos::View<double***, Kokkos::HostSpace> t("t", 2, 0, 5);
  CHECK(nearsparse::detail::extents_string(m) == "3 x 4");
  CHECK(nearsparse::detail::extents_string(v) == "7");
  CHECK(nearsparse::detail::extents_string(t) == "2 x 0 x 5");
}
