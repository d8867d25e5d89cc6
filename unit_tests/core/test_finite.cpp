#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/random.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <limits>
#include <set>

using Catch::Matchers::Contains;

namespace {

// Plants `count` non-finite values at random distinct positions of a rows x cols matrix (host
// side), cycling through NaN, +Inf and -Inf.
template <class HostView>
void plant_non_finite(HostView& m, std::size_t count, std::uint64_t seed) {
  const std::size_t n = m.extent(0) * m.extent(1);
  const double bad[] = {std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  std::set<std::size_t> used;
  for (std::uint64_t k = 0; used.size() < count; ++k) {
    const std::size_t p = nearsparse::detail::mix64(seed + k) % n;
    if (!used.insert(p).second) continue;
    m(p / m.extent(1), p % m.extent(1)) = bad[used.size() % 3];
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("count_non_finite counts NaN and Inf exactly", "[core][finite]") {
  using exec_space = TestType;
  const std::size_t rows = GENERATE(1, 37, 130);
  const std::size_t cols = GENERATE(1, 33, 65);
  const std::size_t planted = GENERATE(0, 1, 3);
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", " << rows << " x " << cols << ", " << planted << " planted, seed "
                          << seed);
  if (planted > rows * cols) return;

  Kokkos::View<double**, typename exec_space::memory_space> m("m", rows, cols);
  nearsparse::fill_random(exec_space(), m, seed);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
  plant_non_finite(h, planted, seed);
  Kokkos::deep_copy(m, h);

  CHECK(nearsparse::count_non_finite(exec_space(), m) == planted);
  if (planted == 0) {
    CHECK_NOTHROW(nearsparse::require_finite(exec_space(), "nearsparse::f", "A", m));
  } else {
    CHECK_THROWS_AS(nearsparse::require_finite(exec_space(), "nearsparse::f", "A", m),
                    nearsparse::invalid_argument);
  }
}

NEARSPARSE_SPACE_TEST_CASE("require_finite names the argument, extents and count",
                           "[core][finite]") {
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  Kokkos::View<float**, memory> m("m", 3, 5);
  auto h = Kokkos::create_mirror_view(m);
  Kokkos::deep_copy(h, 1.0f);
  h(2, 4) = std::numeric_limits<float>::quiet_NaN();
  h(0, 1) = std::numeric_limits<float>::infinity();
  Kokkos::deep_copy(m, h);
  CHECK_THROWS_WITH(nearsparse::require_finite(exec_space(), "nearsparse::spamm", "B", m),
                    "nearsparse::spamm: argument 'B' (3 x 5) holds 2 non-finite value(s) (NaN or "
                    "Inf)");

  Kokkos::View<double*, memory> empty("empty", 0);
  CHECK(nearsparse::count_non_finite(exec_space(), empty) == 0);

  Kokkos::View<Kokkos::complex<double>*, memory> z("z", 4);
  auto hz = Kokkos::create_mirror_view(z);
  Kokkos::deep_copy(hz, Kokkos::complex<double>(1.0, 2.0));
  hz(3) = Kokkos::complex<double>(0.0, std::numeric_limits<double>::infinity());
  Kokkos::deep_copy(z, hz);
  CHECK(nearsparse::count_non_finite(exec_space(), z) == 1);
}
