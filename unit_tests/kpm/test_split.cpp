// Runs split between two execution spaces (CUDA + a host space where CUDA is built, two host
// spaces otherwise) give the moments of one space to rounding, for any weight.

#include "kpm_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

#include <tuple>

namespace nk = nearsparse::kpm;
using Catch::Matchers::Contains;

namespace {

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
using pairs =
    std::tuple<std::pair<Kokkos::Cuda, Kokkos::OpenMP>, std::pair<Kokkos::Cuda, Kokkos::Serial>>;
#elif defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
using pairs = std::tuple<std::pair<Kokkos::OpenMP, Kokkos::Serial>,
                         std::pair<Kokkos::Serial, Kokkos::OpenMP>>;
#else
using pairs = std::tuple<>;
#endif

}  // namespace

NEARSPARSE_SPACE_LIST_TEST_CASE("split runs equal single-space runs", "[kpm]", pairs) {
  using first_space = typename TestType::first_type;
  using second_space = typename TestType::second_type;
  const first_space first;
  const second_space second;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed << ", " << first_space::name() << " + " << second_space::name());
  // 480 rows; a split cuts between y planes of 120 rows or inside one
  const auto p = nearsparse::test::kpm::insulator(5, 4, 6, seed, 1.0);
  const auto h = nk::make_topological_insulator(first, p);
  const auto s = nk::scaling_for(nk::gershgorin_bounds(first, h), 0.01);
  nk::moments_options o;
  o.num_moments = 60;
  o.num_vectors = 7;
  o.seed = seed;
  const auto single = nk::moments(first, h, s, o);
  for (double w : {-1.0, 0.0, 0.37, 0.5, 1.0}) {
    INFO("weight " << w);
    nk::split_options so;
    so.weight = w;
    const auto r = nk::split_moments(first, second, h, s, o, so);
    REQUIRE(r.rows_first + r.rows_second == p.rows());
    if (w > 0 && w < 1) REQUIRE(r.halo_first > 0);
    if (w < 0) REQUIRE((r.rate_first > 0 && r.rate_second > 0));
    REQUIRE(r.moments.mu.size() == single.mu.size());
    for (std::size_t n = 0; n < single.mu.size(); ++n)
      REQUIRE(r.moments.mu[n] == Approx(single.mu[n]).margin(1e-12));
  }
  nk::split_options bad;
  bad.weight = 1.5;
  REQUIRE_THROWS_WITH(nk::split_moments(first, second, h, s, o, bad), Contains("weight"));
  o.method = nk::algorithm::naive;
  REQUIRE_THROWS_WITH(nk::split_moments(first, second, h, s, o), Contains("aug_spmmv"));
}
