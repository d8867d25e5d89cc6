// Damping kernels and the density of states: it integrates to N, it matches the eigenvalue count
// of the cubic lattice within the Jackson kernel's resolution, and bad options are rejected.

#include "kpm_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace nk = nearsparse::kpm;
namespace ref = nearsparse::test::kpm;
using Catch::Matchers::Contains;

TEST_CASE("damping factors", "[kpm]") {
  const auto j = nk::damping_factors(nk::damping::jackson, 64);
  REQUIRE(j[0] == Approx(1.0).epsilon(1e-14));
  for (std::size_t n = 1; n < j.size(); ++n) REQUIRE(j[n] < j[n - 1]);  // decreasing
  REQUIRE(j.back() > 0);
  const auto l = nk::damping_factors(nk::damping::lorentz, 64, 4.0);
  REQUIRE(l[0] == Approx(1.0));
  REQUIRE(l[32] == Approx(std::sinh(2.0) / std::sinh(4.0)));
  REQUIRE(nk::damping_factors(nk::damping::none, 5) == std::vector<double>(5, 1.0));
  REQUIRE_THROWS_WITH(nk::damping_factors(nk::damping::lorentz, 8, -1), Contains("lambda"));
  REQUIRE_THROWS_WITH(nk::damping_factors(nk::damping::jackson, 0), Contains("num_moments"));
  REQUIRE_THROWS_WITH(nk::parse_damping("gauss"), Contains("gauss"));
}

NEARSPARSE_SPACE_TEST_CASE("the density of states integrates to N and counts the eigenvalues",
                           "[kpm]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  nk::cubic_lattice c;
  c.nx = 13;
  c.ny = 11;
  c.nz = 9;  // 1287 rows
  const auto h = nk::make_cubic_lattice<double>(exec, c);
  const auto s = nk::scaling_for(nk::lanczos_bounds(exec, h), 0.01);
  nk::moments_options o;
  o.num_moments = 128;
  o.num_vectors = 24;
  o.seed = seed;
  const auto m = nk::moments(exec, h, s, o);
  const double N = double(c.rows());
  for (auto kernel : {nk::damping::jackson, nk::damping::lorentz}) {
    nk::dos_options d;
    d.damping = kernel;
    const auto dos = nk::density_of_states(m, d);
    REQUIRE(dos.energies.size() == 256);
    REQUIRE(std::is_sorted(dos.energies.begin(), dos.energies.end()));
    REQUIRE(dos.integral() == Approx(N).epsilon(1e-10));
  }
  // Jackson: the cumulative count up to E matches the eigenvalue count within the states that lie
  // within the kernel's resolution (about pi/M in x) of E, plus the stochastic error.
  const auto eig = nk::cubic_lattice_eigenvalues(c);
  nk::dos_options d;
  d.points = 4096;
  const auto dos = nk::density_of_states(m, d);
  double cumulative = 0;
  const double resolution = 3.14159 / 128 / s.a * 3;  // three kernel widths in energy
  std::size_t checked = 0;
  for (std::size_t k = 0; k < dos.energies.size(); ++k) {
    cumulative += dos.weights[k] * dos.density[k];
    if (k % 256 != 0) continue;
    const double e = dos.energies[k];
    const auto below = double(std::lower_bound(eig.begin(), eig.end(), e) - eig.begin());
    const auto lo = double(std::lower_bound(eig.begin(), eig.end(), e - resolution) - eig.begin());
    const auto hi = double(std::lower_bound(eig.begin(), eig.end(), e + resolution) - eig.begin());
    INFO("E = " << e << ": KPM count " << cumulative << ", eigenvalues below " << below);
    REQUIRE(cumulative >= lo - 0.05 * N);
    REQUIRE(cumulative <= hi + 0.05 * N);
    ++checked;
  }
  REQUIRE(checked == 16);
  // Exact moments (from the eigenvalues) give the same density up to the stochastic error.
  nk::chebyshev_moments exact = m;
  exact.mu = ref::exact_moments(eig, 128, s.a, s.b);
  const auto dos_exact = nk::density_of_states(exact, d);
  double diff = 0, total = 0;
  for (std::size_t k = 0; k < dos.density.size(); ++k) {
    diff += dos.weights[k] * std::abs(dos.density[k] - dos_exact.density[k]);
    total += dos.weights[k] * dos_exact.density[k];
  }
  INFO("L1 difference " << diff / total);
  REQUIRE(diff / total < 0.05);  // R N = 30888 samples: about 1 / sqrt(R N) per moment
}

TEST_CASE("density of states options are checked", "[kpm]") {
  nk::chebyshev_moments m;
  m.mu = {1, 0, -0.5, 0};
  m.rows = 10;
  m.map = {0.5, 1.0};  // spectrum inside [-1, 3]
  nk::dos_options d;
  d.grid = nk::energy_grid::uniform;
  d.points = 101;
  d.emin = -1;
  d.emax = 3;
  const auto dos = nk::density_of_states(m, d);
  REQUIRE(dos.energies.front() == Approx(-1).margin(1e-9));
  REQUIRE(dos.energies.back() == Approx(3).margin(1e-9));
  d.emax = 4;  // outside the scaled interval
  REQUIRE_THROWS_WITH(nk::density_of_states(m, d), Contains("emax") && Contains("[-1, 3]"));
  d.emax = 3;
  d.points = -2;
  REQUIRE_THROWS_WITH(nk::density_of_states(m, d), Contains("points"));
  nk::chebyshev_moments none;
  REQUIRE_THROWS_WITH(nk::density_of_states(none, {}), Contains("no moments"));
}

TEST_CASE("the step cost model gives the paper's code balance", "[kpm]") {
  // 13 entries per row, complex double: B_min(R) = (260 / R + 48) / 138 bytes per flop (eq. 5).
  const std::int64_t n = 1000, nnz = 13 * n;
  for (int R : {1, 8, 32}) {
    const auto c = nk::step_cost_of(nk::algorithm::aug_spmmv, n, nnz, R);
    REQUIRE(c.flops == Approx(138.0 * R * n));
    REQUIRE(c.min_bytes / c.flops == Approx((260.0 / R + 48) / 138));
    // The per-vector stages read the matrix once per vector; naive moves 13 vectors (Table I).
    REQUIRE(nk::step_cost_of(nk::algorithm::aug_spmv, n, nnz, R).min_bytes ==
            Approx(R * (260.0 + 48) * n));
    REQUIRE(nk::step_cost_of(nk::algorithm::naive, n, nnz, R).min_bytes ==
            Approx(R * (260.0 + 208) * n));
  }
  // Double: S_d = 8, F_a = F_m = 1: 2 flops per entry and 9 per row.
  const auto d = nk::step_cost_of(nk::algorithm::aug_spmmv, n, nnz, 1, false);
  REQUIRE(d.flops == Approx((26.0 + 9) * n));
  REQUIRE(d.min_bytes == Approx((13.0 * 12 + 24) * n));
}
