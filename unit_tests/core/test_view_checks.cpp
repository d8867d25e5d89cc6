#include <nearsparse/core/view_checks.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <limits>

using Catch::Matchers::Contains;

static_assert(nearsparse::is_view_of_rank_v<Kokkos::View<double**>, 2>);
static_assert(!nearsparse::is_view_of_rank_v<Kokkos::View<double*>, 2>);
static_assert(!nearsparse::is_view_of_rank_v<double, 2>);
static_assert(nearsparse::is_accessible_from_v<Kokkos::DefaultHostExecutionSpace,
                                               Kokkos::View<float**, Kokkos::HostSpace>>);
#ifdef KOKKOS_ENABLE_CUDA
static_assert(!nearsparse::is_accessible_from_v<Kokkos::DefaultHostExecutionSpace,
                                                Kokkos::View<float**, Kokkos::CudaSpace>>);
static_assert(
    !nearsparse::is_accessible_from_v<Kokkos::Cuda, Kokkos::View<float**, Kokkos::HostSpace>>);
#endif

TEST_CASE("require_extent_match reports both arguments and their extents", "[core][checks]") {
  Kokkos::View<double**, Kokkos::HostSpace> a("A", 3, 4), b("B", 5, 2), ok("B", 4, 2);
  CHECK_NOTHROW(nearsparse::require_extent_match("nearsparse::f", "B", ok, 0, "A", a, 1));
  CHECK_THROWS_AS(nearsparse::require_extent_match("nearsparse::f", "B", b, 0, "A", a, 1),
                  nearsparse::invalid_argument);
  CHECK_THROWS_WITH(nearsparse::require_extent_match("nearsparse::f", "B", b, 0, "A", a, 1),
                    "nearsparse::f: argument 'B' has extents 5 x 2, but its extent(0) = 5 must "
                    "equal extent(1) of 'A' = 4 (A is 3 x 4)");
}

TEST_CASE("require_extents compares both extents", "[core][checks]") {
  Kokkos::View<double**, Kokkos::HostSpace> c("C", 3, 2);
  CHECK_NOTHROW(nearsparse::require_extents("f", "C", c, 3, 2));
  CHECK_THROWS_WITH(nearsparse::require_extents("f", "C", c, 2, 3),
                    "f: argument 'C' has extents 3 x 2, expected 2 x 3");
  CHECK_THROWS_AS(nearsparse::require_extents("f", "C", c, 3, 3), nearsparse::invalid_argument);
}

TEST_CASE("scalar parameters must be finite and in range", "[core][checks]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_NOTHROW(nearsparse::require_nonnegative("f", "tau", 0.0));
  CHECK_NOTHROW(nearsparse::require_nonnegative("f", "tau", 2.5));
  CHECK_THROWS_WITH(nearsparse::require_nonnegative("f", "tau", -1.0),
                    Contains("'tau'") && Contains(">= 0, got -1"));
  CHECK_THROWS_AS(nearsparse::require_nonnegative("f", "tau", nan), nearsparse::invalid_argument);
  CHECK_THROWS_AS(nearsparse::require_nonnegative("f", "tau", inf), nearsparse::invalid_argument);
  CHECK_NOTHROW(nearsparse::require_positive("f", "n", 1e-300));
  CHECK_THROWS_AS(nearsparse::require_positive("f", "n", 0.0), nearsparse::invalid_argument);
  CHECK_THROWS_AS(nearsparse::require_positive("f", "n", -inf), nearsparse::invalid_argument);
}
