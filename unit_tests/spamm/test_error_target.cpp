// SpAMM driven by an error target (options::target_error, plan::search_error) and the error bound
// of the dropped tile products (plan::error_bound), against host references: the dense double
// product of the inputs, and the bound recomputed on the host from the plan's norm maps.

#include "spamm_inputs.hpp"
#include "spamm_reference.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/detail/error_bound.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using nearsparse::test::host_matrix;
using spamm_precision = nearsparse::spamm::precision;
namespace ref = nearsparse::test::spamm;
namespace spamm = nearsparse::spamm;

namespace {

using nearsparse::test::spamm::decaying_random;
template <class Exec, class T = double>
using matrix = nearsparse::test::spamm::matrix<Exec, T>;

enum class input { random, algebraic, exponential };

const char* name_of(input in) {
  switch (in) {
    case input::random:
      return "random";
    case input::algebraic:
      return "algebraic decay";
    default:
      return "exponential decay";
  }
}

template <class Exec>
matrix<Exec> make_input(const Exec& exec, input in, std::size_t rows, std::size_t cols,
                        std::uint64_t seed) {
  auto a = decaying_random(exec, rows, cols, seed);
  if (in == input::algebraic) spamm::fill_algebraic_decay(exec, a);
  if (in == input::exponential) spamm::fill_exponential_decay(exec, a, 1.0, 0.95);
  exec.fence();
  return a;
}

// The bound recomputed on the host from norm maps (MT x KT and KT x NT), in long double: the
// products < tau dropped.
double host_bound(const host_matrix<double>& an, const host_matrix<double>& bn, double tau) {
  long double sum = 0;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t j = 0; j < bn.cols; ++j) {
      long double d = 0;
      for (std::size_t k = 0; k < an.cols; ++k) {
        const double p = an(i, k) * bn(k, j);
        if (!(p >= tau)) d += static_cast<long double>(an(i, k)) * bn(k, j);
      }
      sum += d * d;
    }
  return static_cast<double>(std::sqrt(sum));
}

double host_frobenius(const host_matrix<double>& m) {
  long double s = 0;
  for (double x : m.data) s += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(s));
}

// The smallest norm product above tau (+inf when none).
double next_product(const host_matrix<double>& an, const host_matrix<double>& bn, double tau) {
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t k = 0; k < an.cols; ++k)
      for (std::size_t j = 0; j < bn.cols; ++j) {
        const double p = an(i, k) * bn(k, j);
        if (p > tau && p < next) next = p;
      }
  return next;
}

// Checks a plan after a search for `target`: its bound against the host's, within the target,
// and the tau the largest that meets it (the next norm product above it misses).
template <class Exec>
void check_search(const Exec& exec, spamm::plan<Exec>& plan, const spamm::search_report& found,
                  double target) {
  const auto an = nearsparse::test::to_host(plan.a_norms());
  const auto bn = nearsparse::test::to_host(plan.b_norms());
  const double norm_product = host_frobenius(an) * host_frobenius(bn);
  const auto bound = plan.error_bound(exec);
  INFO("tau " << found.tau << ", bound " << bound.bound << " of " << bound.norm_product
              << ", relative " << found.error_bound << ", evaluations " << found.iterations);
  CHECK(found.converged);
  CHECK(found.tau == plan.tau());
  CHECK(found.target_error == target);
  CHECK(found.error_bound == bound.relative());
  CHECK(found.error_bound <= target);
  CHECK(bound.norm_product == Approx(norm_product).epsilon(1e-12).margin(1e-300));
  const double host = host_bound(an, bn, found.tau);
  CHECK(bound.bound >= host);
  CHECK(bound.bound <= host * (1 + 1e-11) + 1e-300);
  CHECK(found.valid_ratio == plan.valid_ratio());
  // The largest tau: the next double up drops what the next norm product above tau would (tau
  // and its equals), and misses the target. With nothing kept, tau is above every product.
  if (plan.kept_count() > 0) {
    const double up = std::nextafter(found.tau, std::numeric_limits<double>::infinity());
    const double next = next_product(an, bn, found.tau);
    INFO("next norm product " << next);
    CHECK(host_bound(an, bn, up) > target * norm_product * (1 - 1e-12));
    if (std::isfinite(next)) CHECK(host_bound(an, bn, next) == host_bound(an, bn, up));
    plan.set_tau(exec, up);
    CHECK(plan.error_bound(exec).relative() > target);
    plan.set_tau(exec, found.tau);
  } else {
    CHECK(std::isinf(next_product(an, bn, found.tau)));
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("spamm with an error target: measured error <= bound <= target",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  struct shape {
    std::size_t m, k, n;
  };
  const shape s = GENERATE(shape{1, 1, 1}, shape{77, 53, 91}, shape{150, 200, 130});
  const int tile = GENERATE(32, 64);
  const input in = GENERATE(input::random, input::algebraic, input::exponential);
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  const auto a = make_input(exec, in, s.m, s.k, seed);
  const auto b = make_input(exec, in, s.k, s.n, seed + 1);
  const auto ha = nearsparse::test::to_host(a), hb = nearsparse::test::to_host(b);
  matrix<exec_space> c0("C0", s.m, s.n);
  nearsparse::fill_random(exec, c0, seed + 2, -1.0, 1.0);
  const auto hc = nearsparse::test::to_host(c0);
  const double alpha = 1.0, beta = 0.5;
  const auto exact = nearsparse::test::reference_gemm(alpha, ha, hb, beta, hc);
  struct run {
    spamm_precision precision;
    double target;
  };
  for (const run r : {run{spamm_precision::fp64, 1e-1}, run{spamm_precision::fp64, 1e-3},
                      run{spamm_precision::fp64, 1e-6}, run{spamm_precision::fp32, 1e-2},
                      run{spamm_precision::fp32, 1e-4}, run{spamm_precision::fp32, 1e-6},
                      run{spamm_precision::tf32, 1e-2}, run{spamm_precision::fp16, 3e-3},
                      run{spamm_precision::bf16, 5e-2}}) {
    INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n << ", tile " << tile
                            << ", " << name_of(in) << ", " << spamm::to_string(r.precision)
                            << ", target " << r.target << ", seed " << seed);
    spamm::options opt;
    opt.precision = r.precision;
    opt.tile = tile;
    opt.target_error = r.target;
    matrix<exec_space> c("C", s.m, s.n);
    Kokkos::deep_copy(exec, c, c0);
    const auto report = spamm::multiply(exec, alpha, a, b, beta, c, opt);
    CHECK(report.error_bound <= r.target);
    // The same plan again, to look at its bound and norm maps.
    spamm::plan plan(exec, a, b, opt);
    CHECK(plan.tau() == report.tau);
    CHECK(plan.valid_ratio() == report.valid_ratio);
    const auto bound = plan.error_bound(exec);
    CHECK(bound.relative() == report.error_bound);
    // The measured error of the product against the exact one: within the bound plus the
    // rounding of the inputs (rounding_floor) and of a K-term accumulation (gamma_K = K u of the
    // accumulation format: double for fp64, float otherwise), all relative to ||A||_F ||B||_F.
    const auto got = nearsparse::test::to_host(c);
    const double measured = ref::frobenius_distance(got, exact);
    const double accumulation =
        double(s.k) * (r.precision == spamm_precision::fp64 ? 0x1p-53 : 0x1p-24);
    const double allowed =
        alpha * bound.bound + (spamm::rounding_floor(r.precision) + accumulation) * alpha *
                                  host_frobenius(ha) * host_frobenius(hb);
    INFO("measured " << measured << ", bound " << bound.bound << ", allowed " << allowed
                     << ", valid ratio " << report.valid_ratio);
    CHECK(measured <= allowed + 1e-300);
    const spamm::search_report found = plan.search_error(exec, r.target);
    CHECK(found.tau == report.tau);
    check_search(exec, plan, found, r.target);
  }
}

NEARSPARSE_SPACE_TEST_CASE("spamm with an error target on empty and zero operands",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  struct shape {
    std::size_t m, k, n;
  };
  spamm::options opt;
  opt.target_error = 1e-3;
  for (const shape s : {shape{0, 0, 0}, shape{0, 5, 7}, shape{6, 0, 7}, shape{6, 5, 0}}) {
    INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n);
    matrix<exec_space> a("A", s.m, s.k), b("B", s.k, s.n), c("C", s.m, s.n);
    Kokkos::deep_copy(exec, c, 2.0);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.5, c, opt);
    CHECK(report.error_bound == 0.0);
    CHECK(report.valid_ratio == 0.0);
    const auto hc = nearsparse::test::to_host(c);
    for (double x : hc.data) CHECK(x == 1.0);
    spamm::plan plan(exec, a, b, opt);
    const auto found = plan.search_error(exec, 1e-5);
    CHECK(found.converged);
    CHECK(found.error_bound == 0.0);
    CHECK(plan.error_bound(exec).bound == 0.0);
    CHECK(plan.error_bound(exec).norm_product == 0.0);
  }
  // Zero operands: every norm product is 0 and the bound too; nothing needs keeping.
  matrix<exec_space> a("A", 40, 70), b("B", 70, 35), c("C", 40, 35);
  nearsparse::fill_random(exec, b, nearsparse::test::fresh_seed(), -1.0, 1.0);
  Kokkos::deep_copy(exec, c, 3.0);
  opt.tile = 32;
  const auto report = spamm::multiply(exec, 1.0, a, b, -1.0, c, opt);
  CHECK(report.error_bound == 0.0);
  CHECK(report.valid_ratio == 0.0);
  for (double x : nearsparse::test::to_host(c).data) CHECK(x == -3.0);
}

NEARSPARSE_SPACE_TEST_CASE("spamm with an error target of 1 or more keeps nothing",
                           "[spamm][error_target]") {
  // Dropping every product errs by at most ||A||_F ||B||_F (Cauchy-Schwarz), so target 1 is met
  // with nothing kept: C = beta C.
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, 70, 90, seed);
  const auto b = decaying_random(exec, 90, 45, seed + 1);
  for (const double target : {1.0, 2.5}) {
    spamm::options opt;
    opt.tile = 32;
    opt.target_error = target;
    matrix<exec_space> c("C", 70, 45);
    Kokkos::deep_copy(exec, c, 1.0);
    const auto report = spamm::multiply(exec, 1.0, a, b, 2.0, c, opt);
    CHECK(report.valid_ratio == 0.0);
    CHECK(report.error_bound <= 1.0);
    CHECK(report.error_bound > 0.0);
    for (double x : nearsparse::test::to_host(c).data) CHECK(x == 2.0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("the error search finds the same tau on every space and kernel",
                           "[spamm][error_target]") {
  // From the same norm maps every space computes the same bound bits, so the same tau: the maps
  // of a plan on this space, searched on every enabled space. The portable and automatic
  // kernels' norm maps differ by rounding only, and so do their taus. The algebraic decay
  // matrices tie many norm products exactly.
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  for (const input in : {input::random, input::algebraic}) {
    INFO(exec_space::name() << ", " << name_of(in) << ", seed " << seed);
    const auto a = make_input(exec, in, 333, 301, seed);
    const auto b = make_input(exec, in, 301, 290, seed + 1);
    for (const double target : {1e-1, 1e-3, 1e-5}) {
      INFO("target " << target);
      spamm::options opt;
      opt.tile = 32;
      opt.precision = spamm_precision::fp64;
      opt.target_error = target;
      opt.implementation = nearsparse::implementation::portable;
      spamm::plan portable(exec, a, b, opt);
      opt.implementation = nearsparse::implementation::automatic;
      spamm::plan automatic(exec, a, b, opt);
      CHECK(automatic.tau() == Approx(portable.tau()).epsilon(1e-12));
      CHECK(automatic.error_bound(exec).relative() ==
            Approx(portable.error_bound(exec).relative()).epsilon(1e-10));
      const auto an = nearsparse::test::to_host(portable.a_norms());
      const auto bn = nearsparse::test::to_host(portable.b_norms());
      const double threshold = target * portable.error_bound(exec).norm_product;
      std::apply(
          [&](auto... spaces) {
            (
                [&](auto space) {
                  using other = decltype(space);
                  using mem = typename other::memory_space;
                  INFO("searched on " << other::name());
                  spamm::detail::norm_map<mem> am("am", an.rows, an.cols),
                      bm("bm", bn.rows, bn.cols);
                  Kokkos::deep_copy(am,
                                    Kokkos::create_mirror_view_and_copy(mem(), portable.a_norms()));
                  Kokkos::deep_copy(bm,
                                    Kokkos::create_mirror_view_and_copy(mem(), portable.b_norms()));
                  spamm::detail::error_bound_scratch<mem> scratch;
                  const auto found =
                      spamm::detail::search_error_tau(threshold, 60, [&](double tau) {
                        return spamm::detail::error_bound_at(space, am, bm, tau, scratch);
                      });
                  CHECK(found.tau == portable.tau());
                  CHECK(found.bound == portable.error_bound(exec).bound);
                }(spaces),
                ...);
          },
          nearsparse::enabled_execution_spaces{});
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("search_error after update searches the new operands",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const std::size_t m = 130, k = 99, n = 140;
  const auto a1 = decaying_random(exec, m, k, seed);
  const auto b1 = decaying_random(exec, k, n, seed + 1);
  const auto a2 = make_input(exec, input::exponential, m, k, seed + 2);
  const auto b2 = decaying_random(exec, k, n, seed + 3, 0.5);
  spamm::options opt;
  opt.tile = 32;
  opt.precision = spamm_precision::fp64;
  opt.target_error = 1e-2;
  spamm::plan plan(exec, a1, b1, opt);
  const double tau1 = plan.tau();
  plan.update(exec, a2, b2);
  for (const double target : {1e-2, 1e-4, 1e-6}) {
    INFO("target " << target);
    const auto found = plan.search_error(exec, target);
    opt.target_error = target;
    spamm::plan fresh(exec, a2, b2, opt);
    CHECK(found.tau == fresh.tau());
    CHECK(found.error_bound == fresh.error_bound(exec).relative());
    check_search(exec, plan, found, target);
    matrix<exec_space> c("C", m, n);
    plan.multiply(exec, 1.0, 0.0, c);
    const auto exact = nearsparse::test::reference_gemm(1.0, nearsparse::test::to_host(a2),
                                                        nearsparse::test::to_host(b2), 0.0,
                                                        host_matrix<double>(m, n));
    const double error = ref::frobenius_distance(nearsparse::test::to_host(c), exact);
    CHECK(error <= plan.error_bound(exec).bound + 1e-14 * plan.error_bound(exec).norm_product);
  }
  CHECK(tau1 != plan.tau());
}

NEARSPARSE_SPACE_TEST_CASE("measure_error reports the error of an error-targeted product",
                           "[spamm][error_target]") {
  // spamm::measure_error against an exact product on the device: relative_to(norm_product) is
  // in the measure of the bound and at most it (fp64), relative() in that of ||A B||_F.
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = make_input(exec, input::exponential, 100, 100, seed);
  spamm::options opt;
  opt.tile = 32;
  opt.precision = spamm_precision::fp64;
  matrix<exec_space> exact("exact", 100, 100), c("C", 100, 100);
  spamm::multiply(exec, 1.0, a, a, 0.0, exact, opt);  // tau 0: the dense product
  opt.target_error = 1e-3;
  spamm::plan plan(exec, a, a, opt);
  plan.multiply(exec, 1.0, 0.0, c);
  const auto e = spamm::measure_error(exec, exact, c);
  const auto bound = plan.error_bound(exec);
  CHECK(plan.valid_ratio() < 1.0);
  CHECK(e.error_norm > 0.0);
  CHECK(e.relative_to(bound.norm_product) <= bound.relative() + 1e-14);
  CHECK(e.relative() == Approx(e.error_norm / e.reference_norm));
}

NEARSPARSE_SPACE_TEST_CASE("invalid error targets are refused", "[spamm][error_target][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const auto a = decaying_random(exec, 40, 30, nearsparse::test::fresh_seed());
  const auto b = decaying_random(exec, 30, 20, nearsparse::test::fresh_seed());
  for (const double bad : {-1e-3, std::nan(""), std::numeric_limits<double>::infinity()}) {
    INFO("target_error " << bad);
    spamm::options opt;
    opt.target_error = bad;
    CHECK_THROWS_AS(spamm::plan(exec, a, b, opt), nearsparse::invalid_argument);
    CHECK_THROWS_WITH(spamm::plan(exec, a, b, opt), Contains("options.target_error"));
  }
  spamm::options both;
  both.target_error = 1e-3;
  both.target_valid_ratio = 0.5;
  CHECK_THROWS_WITH(spamm::plan(exec, a, b, both),
                    Contains("target_valid_ratio") && Contains("not both"));
  for (const auto p : {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::tf32,
                       spamm_precision::fp16, spamm_precision::bf16}) {
    INFO(spamm::to_string(p));
    spamm::options opt;
    opt.precision = p;
    opt.target_error = 0.5 * spamm::rounding_floor(p);
    CHECK_THROWS_WITH(spamm::plan(exec, a, b, opt), Contains("nearsparse::spamm::plan") &&
                                                        Contains(spamm::to_string(p)) &&
                                                        Contains("rounding floor"));
    CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, matrix<exec_space>("C", 40, 20), opt),
                    nearsparse::invalid_argument);
    opt.target_error = spamm::rounding_floor(p);  // the floor itself is accepted
    spamm::plan plan(exec, a, b, opt);
    CHECK(plan.error_bound(exec).relative() <= spamm::rounding_floor(p));
    CHECK_THROWS_WITH(
        plan.search_error(exec, 0.5 * spamm::rounding_floor(p)),
        Contains("nearsparse::spamm::plan::search_error") && Contains("rounding floor"));
    CHECK_THROWS_WITH(plan.search_error(exec, 0.0), Contains("target_error"));
    CHECK_THROWS_WITH(plan.search_error(exec, -1.0), Contains("target_error"));
    // Below the floor on request: the bound still meets the target.
    spamm::search_options below;
    below.below_rounding_floor = true;
    const auto found = plan.search_error(exec, 0.5 * spamm::rounding_floor(p), below);
    CHECK(found.error_bound <= 0.5 * spamm::rounding_floor(p));
    CHECK(plan.error_bound(exec).relative() <= 0.5 * spamm::rounding_floor(p));
  }
  // Floors: 4 units of roundoff of the input format.
  CHECK(spamm::rounding_floor(spamm_precision::fp64) == 0x1p-51);
  CHECK(spamm::rounding_floor(spamm_precision::fp32) == 0x1p-22);
  CHECK(spamm::rounding_floor(spamm_precision::tf32) == 0x1p-9);
  CHECK(spamm::rounding_floor(spamm_precision::fp16) == 0x1p-9);
  CHECK(spamm::rounding_floor(spamm_precision::bf16) == 0x1p-6);
}

NEARSPARSE_SPACE_TEST_CASE("an error search out of iterations still meets its target",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, 200, 190, seed);
  const auto b = decaying_random(exec, 190, 210, seed + 1);
  spamm::options opt;
  opt.tile = 32;
  opt.precision = spamm_precision::fp64;
  spamm::plan plan(exec, a, b, opt);
  const auto full = plan.search_error(exec, 1e-3);
  REQUIRE(full.converged);
  CHECK(full.iterations > 2);
  spamm::search_options few;
  few.max_iterations = 1;
  const auto cut = plan.search_error(exec, 1e-3, few);
  CHECK_FALSE(cut.converged);
  CHECK(cut.iterations == 2);
  CHECK(cut.tau <= full.tau);
  CHECK(cut.error_bound <= 1e-3);
  CHECK(plan.error_bound(exec).relative() == cut.error_bound);
}

NEARSPARSE_SPACE_TEST_CASE("spamm::multiply reports an error bound only for an error target",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  matrix<exec_space> a("A", 70, 45), b("B", 45, 33), c("C", 70, 33);
  nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
  nearsparse::fill_random(exec, b, seed + 1, -1.0, 1.0);
  spamm::options opt;
  opt.precision = spamm_precision::fp64;
  opt.tile = 32;
  opt.tau = 0.5;
  // A tau given: the bound would cost a wait, so the call leaves it unknown.
  CHECK(std::isnan(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt).error_bound));
  opt.tau = 0;
  opt.target_error = 1e-2;
  const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c, opt);
  CHECK(report.error_bound >= 0);
  CHECK(report.error_bound <= 1e-2);
}

NEARSPARSE_SPACE_TEST_CASE("the error bound follows tau through a valid-ratio search",
                           "[spamm][error_target]") {
  using exec_space = TestType;
  const exec_space exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  matrix<exec_space> a("A", 150, 140), b("B", 140, 130);
  nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
  nearsparse::fill_random(exec, b, seed + 1, -1.0, 1.0);
  spamm::options opt;
  opt.precision = spamm_precision::fp64;
  opt.tile = 32;
  opt.target_error = 1e-2;
  spamm::plan plan(exec, a, b, opt);
  for (const auto launch :
       {spamm::search_launch::one_launch, spamm::search_launch::launch_per_count}) {
    spamm::search_options search;
    search.launch = launch;
    plan.search_tau(exec, 0.2, search);
    spamm::detail::error_bound_scratch<typename exec_space::memory_space> scratch;
    const auto fresh =
        spamm::detail::error_bound_at(exec, plan.a_norms(), plan.b_norms(), plan.tau(), scratch);
    CHECK(plan.error_bound(exec).bound == fresh.bound);
  }
}
