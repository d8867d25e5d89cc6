// The KPM checks (kpm/checks.hpp): they pass on a correctly scaled run and each fails on a
// deliberately wrong input (a scaling whose interval holds only half the spectrum, moments above
// 1, a negative density).

#include "kpm_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace nk = nearsparse::kpm;
namespace ref = nearsparse::test::kpm;
using Catch::Matchers::Contains;

NEARSPARSE_SPACE_TEST_CASE("KPM checks pass on a scaled run and fail on a wrong scaling",
                           "[kpm][checks]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  // Eigenvalues of the periodic cubic lattice: -2t (cos kx + cos ky + cos kz), within [-6t, 6t].
  auto c = ref::lattice(9, 4, 5);
  c.t = 1.0;
  const auto h = nk::make_cubic_lattice<double>(exec, c);
  nk::moments_options o;
  o.num_moments = 128;
  o.num_vectors = 3;
  o.seed = seed;

  SECTION("the whole spectrum inside [-1, 1]") {
    const auto right = nk::scaling_for({-6, 6}, 0.01);
    const auto s = nk::check_spectrum(exec, h, right);
    CHECK(s.inside);
    CHECK(s.scaled_highest <= 1.0);
    CHECK(s.scaled_lowest >= -1.0);
    // The Ritz values reach the extreme eigenvalues of this small lattice.
    const auto eigenvalues = nk::cubic_lattice_eigenvalues(c);
    CHECK(s.ritz.lowest == Approx(*std::min_element(eigenvalues.begin(), eigenvalues.end())));
    CHECK(s.ritz.highest == Approx(*std::max_element(eigenvalues.begin(), eigenvalues.end())));
    const auto m = nk::moments(exec, h, right, o);
    const auto mc = nk::check_moments(m);
    CHECK(mc.bounded);
    CHECK(mc.largest == Approx(1.0));  // mu_0
    for (auto kind : {nk::damping::jackson, nk::damping::lorentz}) {
      nk::dos_options d;
      d.damping = kind;
      const auto dc = nk::check_density(nk::density_of_states(m, d), kind);
      CHECK(dc.applies);
      CHECK(dc.non_negative);
    }
  }

  SECTION("a scaling that holds half the spectrum fails the spectrum check") {
    const auto wrong = nk::scaling_for({-3, 3}, 0.01);
    const auto s = nk::check_spectrum(exec, h, wrong);
    CHECK_FALSE(s.inside);
    CHECK(s.scaled_lowest < -1.5);
    // (kpm::moments refuses such a scaling itself once the recurrence grows.)
    CHECK_THROWS_AS(nk::moments(exec, h, wrong, o), nearsparse::invalid_argument);
  }
}

TEST_CASE("KPM moment and density checks fail on the moments of a spectrum outside [-1, 1]",
          "[kpm][checks]") {
  // One eigenvalue at x0 = 1.2: mu_n = T_n(x0) = cosh(n arccosh x0) grows without bound, and the
  // Jackson-damped density of such moments oscillates below zero.
  nk::chebyshev_moments m;
  m.num_moments = 64;
  m.num_vectors = 1;
  m.rows = 1;
  m.map = nk::scaling{1.0, 0.0};
  for (int n = 0; n < m.num_moments; ++n) m.mu.push_back(std::cosh(n * std::acosh(1.2)));
  m.mu_per_vector = m.mu;
  const auto mc = nk::check_moments(m);
  CHECK_FALSE(mc.bounded);
  CHECK(mc.at_moment == m.num_moments - 1);
  const auto dc = nk::check_density(nk::density_of_states(m), nk::damping::jackson);
  CHECK_FALSE(dc.non_negative);
  CHECK(dc.lowest < 0);
  // The same eigenvalue at x0 = 0.6, inside: both checks pass.
  for (int n = 0; n < m.num_moments; ++n) m.mu[std::size_t(n)] = std::cos(n * std::acos(0.6));
  m.mu_per_vector = m.mu;
  CHECK(nk::check_moments(m).bounded);
  CHECK(nk::check_density(nk::density_of_states(m), nk::damping::jackson).non_negative);
}

TEST_CASE("KPM moment and density checks on made-up input", "[kpm][checks]") {
  nk::chebyshev_moments m;
  m.num_moments = 4;
  m.num_vectors = 2;
  m.mu = {1.0, 0.2, -0.1, 0.05};
  m.mu_per_vector = {1.0, 1.0, 0.3, 0.1, -0.2, 0.0, 0.1, 0.0};
  CHECK(nk::check_moments(m).bounded);
  // One start vector's moment above 1 fails even where the mean stays below it.
  m.mu_per_vector[6] = 1.5;
  const auto mc = nk::check_moments(m);
  CHECK_FALSE(mc.bounded);
  CHECK(mc.largest == 1.5);
  CHECK(mc.at_moment == 3);
  m.mu_per_vector[6] = std::nan("");
  CHECK_FALSE(nk::check_moments(m).bounded);
  m.mu_per_vector.clear();
  CHECK(nk::check_moments(m).bounded);  // the mean only
  m.mu[2] = -1.01;
  CHECK_FALSE(nk::check_moments(m).bounded);

  nk::dos_curve dos;
  dos.energies = {-1, 0, 1};
  dos.density = {0.5, 2.0, 1e-9};
  CHECK(nk::check_density(dos, nk::damping::jackson).non_negative);
  dos.density[2] = -0.1;
  const auto dc = nk::check_density(dos, nk::damping::jackson);
  CHECK_FALSE(dc.non_negative);
  CHECK(dc.lowest == -0.1);
  CHECK(dc.lowest_energy == 1.0);
  // The Dirichlet kernel is not positive: nothing to check.
  const auto none = nk::check_density(dos, nk::damping::none);
  CHECK_FALSE(none.applies);
  CHECK(none.non_negative);

  CHECK_THROWS_WITH(nk::check_moments(m, -1), Contains("tolerance"));
  CHECK_THROWS_WITH(nk::check_density(dos, nk::damping::jackson, std::nan("")),
                    Contains("tolerance"));
}
