#include "spamm_inputs.hpp"
#include "spamm_reference.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/detail/tau_search.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using nearsparse::implementation;
using nearsparse::test::host_matrix;
using spamm_precision = nearsparse::spamm::precision;
namespace ref = nearsparse::test::spamm;
namespace spamm = nearsparse::spamm;

namespace {

const std::vector<spamm_precision> all_precisions = {spamm_precision::fp64, spamm_precision::fp32,
                                                     spamm_precision::tf32, spamm_precision::fp16,
                                                     spamm_precision::bf16};

using nearsparse::test::spamm::decaying_random;
template <class Exec, class T = double>
using matrix = nearsparse::test::spamm::matrix<Exec, T>;

// Whether Exec is Kokkos::Cuda, where the automatic kernels with and without wgmma can differ.
template <class Exec>
constexpr bool on_cuda() {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same_v<Exec, Kokkos::Cuda>;
#else
  return false;
#endif
}

// Whether Exec is Kokkos::OpenMP or Kokkos::Serial, where the host BLAS path can run.
template <class Exec>
constexpr bool on_host() {
  bool host = false;
#ifdef KOKKOS_ENABLE_OPENMP
  host = host || std::is_same_v<Exec, Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  host = host || std::is_same_v<Exec, Kokkos::Serial>;
#endif
  return host;
}

// Which kernels run: the implementation, and on CUDA whether the wgmma kernel may.
struct kernel_choice {
  implementation how;
  bool wgmma;
};
std::ostream& operator<<(std::ostream& out, const kernel_choice& k) {
  return out << nearsparse::to_string(k.how) << (k.wgmma ? "" : " without wgmma");
}

template <class Exec>
std::vector<int> to_host_ints(const Kokkos::View<int*, typename Exec::memory_space>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<int>(h.data(), h.data() + h.extent(0));
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("spamm with tau = 0 equals the dense product in every precision",
                           "[spamm]") {
  using exec_space = TestType;
  const exec_space exec;
  struct shape {
    std::size_t m, k, n;
  };
  const shape s =
      GENERATE(shape{1, 1, 1}, shape{77, 131, 45}, shape{200, 37, 161}, shape{129, 258, 130});
  const int tile = GENERATE(32, 64, 128);
  const auto kernel = GENERATE(kernel_choice{implementation::automatic, true},
                               kernel_choice{implementation::portable, true},
                               kernel_choice{implementation::automatic, false});
  // wgmma = false differs from automatic only on CUDA (where a Hopper GPU takes wgmma otherwise).
  if (!kernel.wgmma && !on_cuda<exec_space>()) return;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  matrix<exec_space> a("A", s.m, s.k), b("B", s.k, s.n);
  nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
  nearsparse::fill_random(exec, b, seed + 1, -1.0, 1.0);
  const auto ha = nearsparse::test::to_host(a), hb = nearsparse::test::to_host(b);
  for (const auto precision : all_precisions) {
    INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n << ", tile " << tile
                            << ", " << spamm::to_string(precision) << ", kernel " << kernel
                            << ", seed " << seed);
    spamm::options opt;
    opt.precision = precision;
    opt.tile = tile;
    opt.implementation = kernel.how;
    opt.wgmma = kernel.wgmma;
    matrix<exec_space, double> c("C", s.m, s.n);
    nearsparse::fill_random(exec, c, seed + 2, -1.0, 1.0);
    const auto hc = nearsparse::test::to_host(c);
    const double alpha = 0.75, beta = -1.5;
    const auto report = spamm::multiply(exec, alpha, a, b, beta, c, opt);
    CHECK(report.valid_ratio == 1.0);
    const auto got = nearsparse::test::to_host(c);
    const auto exact = nearsparse::test::reference_gemm(alpha, ha, hb, beta, hc);
    const auto of_rounded = nearsparse::test::reference_gemm(alpha, ref::rounded(ha, precision),
                                                             ref::rounded(hb, precision), beta, hc);
    const auto ha_r = ref::rounded(ha, precision), hb_r = ref::rounded(hb, precision);
    const double acc_error = ref::frobenius_distance(got, of_rounded);
    const double acc_bound = ref::accumulation_error_bound(precision, alpha, ha_r, hb_r) +
                             1e-15 * nearsparse::test::frobenius_norm(of_rounded);
    INFO("error against the rounded inputs' product " << acc_error << ", bound " << acc_bound);
    CHECK(acc_error <= acc_bound);
    // Against the product of the unrounded inputs the input rounding dominates.
    const double error = ref::frobenius_distance(got, exact);
    const double bound =
        ref::input_error_bound(precision, alpha, ha, hb) +
        ref::accumulation_tolerance(precision, s.k) * nearsparse::test::frobenius_norm(exact);
    INFO("error against the unrounded product " << error << ", bound " << bound);
    CHECK(error <= bound);
  }
}

NEARSPARSE_SPACE_TEST_CASE("spamm with tau > 0 sums exactly the kept tile products", "[spamm]") {
  using exec_space = TestType;
  const exec_space exec;
  const int tile = GENERATE(32, 64, 128);
  const auto precision =
      GENERATE(spamm_precision::fp64, spamm_precision::fp32, spamm_precision::tf32,
               spamm_precision::fp16, spamm_precision::bf16);
  const int stride = GENERATE(1, 3);
  const std::size_t m = 301, k = 419, n = 263;  // no extent a multiple of any tile
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", tile " << tile << ", " << spamm::to_string(precision) << ", stride "
                          << stride << ", seed " << seed);
  const auto a = decaying_random(exec, m, k, seed);
  const auto b = decaying_random(exec, k, n, seed + 1);
  const auto ha = ref::rounded(nearsparse::test::to_host(a), precision);
  const auto hb = ref::rounded(nearsparse::test::to_host(b), precision);

  spamm::options opt;
  opt.precision = precision;
  opt.tile = tile;
  opt.load_balance_stride = stride;
  spamm::plan plan(exec, a, b, opt);

  // The norm maps equal the host's tile norms of the rounded inputs.
  const auto an = nearsparse::test::to_host(plan.a_norms());
  const auto bn = nearsparse::test::to_host(plan.b_norms());
  const double norm_tol = precision == spamm_precision::fp64 ? 1e-13 : 1e-5;
  NEARSPARSE_CHECK_RELATIVE_ERROR(an, ref::tile_norms(ha, tile), norm_tol);
  NEARSPARSE_CHECK_RELATIVE_ERROR(bn, ref::tile_norms(hb, tile), norm_tol);

  // A threshold between the smallest and largest norm products: some pairs kept, some not.
  std::vector<double> products;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t l = 0; l < an.cols; ++l)
      for (std::size_t j = 0; j < bn.cols; ++j) products.push_back(an(i, l) * bn(l, j));
  std::sort(products.begin(), products.end());
  // Halfway between two well-separated products near the 60th percentile, so no product sits
  // within rounding of tau (the CUDA get-norm kernel sums in float, the host in double).
  std::size_t cut = products.size() * 6 / 10;
  while (cut + 1 < products.size() && products[cut + 1] < products[cut] * (1 + 1e-3)) ++cut;
  REQUIRE(cut + 1 < products.size());
  const double tau = 0.5 * (products[cut] + products[cut + 1]);
  plan.set_tau(exec, tau);
  const auto kept = ref::kept_set(an, bn, tau);
  std::size_t kept_count = 0;
  for (char x : kept) kept_count += x;
  REQUIRE(kept_count > 0);
  REQUIRE(kept_count < kept.size());
  CHECK(plan.kept_count() == static_cast<std::int64_t>(kept_count));
  CHECK(plan.valid_ratio() == Approx(double(kept_count) / kept.size()).epsilon(1e-15));

  // The work matrix V and the kept lists agree with the host's set.
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.work_matrix());
  const auto lists = plan.kept_products(exec);
  const auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lists.offsets);
  const auto ks = to_host_ints<exec_space>(lists.ks);
  std::size_t v_bad = 0, list_bad = 0;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t j = 0; j < bn.cols; ++j) {
      std::vector<int> expected;
      for (std::size_t l = 0; l < an.cols; ++l)
        if (kept[(i * bn.cols + j) * an.cols + l]) expected.push_back(int(l));
      if (v(i, j) != int(expected.size())) ++v_bad;
      const std::size_t t = i * bn.cols + j;
      const std::vector<int> got(ks.begin() + offsets(t), ks.begin() + offsets(t + 1));
      if (got != expected) ++list_bad;
    }
  CHECK(v_bad == 0);
  CHECK(list_bad == 0);

  // The product over the kept pairs, with alpha and beta, on both kernels.
  matrix<exec_space, float> c0("C0", m, n);
  nearsparse::fill_random(exec, c0, seed + 2, -1.0, 1.0);
  const auto hc = nearsparse::test::to_host(c0);
  const auto expected = ref::kept_product(-1.25, ha, hb, 0.5, hc, tile, kept);
  matrix<exec_space, float> c("C", m, n);
  Kokkos::deep_copy(c, c0);
  plan.multiply(exec, -1.25f, 0.5f, c);
  const double tol = ref::accumulation_tolerance(precision, k) + 4 * 0x1p-24;  // float C
  NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(c), expected, tol);

  // Another kernel from a plan at the same tau keeps the same pairs and agrees with the host and
  // with the automatic kernel.
  const auto check_kernel = [&](kernel_choice kind) {
    spamm::options other = opt;
    other.implementation = kind.how;
    other.wgmma = kind.wgmma;
    other.tau = tau;
    spamm::plan plan_other(exec, a, b, other);
    CHECK(plan_other.kept_count() == plan.kept_count());
    matrix<exec_space, float> co("Co", m, n);
    Kokkos::deep_copy(co, c0);
    plan_other.multiply(exec, -1.25f, 0.5f, co);
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(co), expected, tol);
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(co), nearsparse::test::to_host(c),
                                    2 * tol);
  };
  check_kernel({implementation::portable, true});
  // On CUDA, the mma.sync kernels too, which a Hopper GPU otherwise leaves for wgmma.
  if (on_cuda<exec_space>()) check_kernel({implementation::automatic, false});
}

NEARSPARSE_SPACE_TEST_CASE("tau search meets its target valid ratio", "[spamm][search]") {
  using exec_space = TestType;
  const exec_space exec;
  const double target = GENERATE(0.05, 0.1, 0.3, 0.75, 1.0);
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", target " << target << ", seed " << seed);
  const std::size_t n = 1000;
  matrix<exec_space> a("A", n, n);
  spamm::fill_algebraic_decay(exec, a);
  const auto b = decaying_random(exec, n, n, seed);
  spamm::options opt;
  opt.tile = 32;
  opt.target_valid_ratio = target;
  opt.search.tolerance = 0.005;
  spamm::plan plan(exec, a, b, opt);
  CHECK(std::abs(plan.valid_ratio() - target) <= 0.005);
  // Searching again on the same plan gives a consistent result and sets it.
  const auto found = plan.search_tau(exec, target, opt.search);
  CHECK(found.converged);
  CHECK(found.valid_ratio == plan.valid_ratio());
  CHECK(found.tau == plan.tau());
  CHECK(found.iterations >= (target < 1.0 ? 1 : 0));
  // The valid ratio is non-increasing in tau.
  plan.set_tau(exec, found.tau * 1.5);
  CHECK(plan.valid_ratio() <= found.valid_ratio);
}

NEARSPARSE_SPACE_TEST_CASE("the one-launch tau search lands where the host-driven search does",
                           "[spamm][search]") {
  // search_tau_in_one_team (a GPU's search for up to 2^21 norm products) against the search that
  // counts with one launch per step: both start from the same sum of norm products and count the
  // same products, so tau, the evaluations, the valid ratio and V must agree exactly. Sizes off
  // the tile, rectangular, a k much longer than m and n; targets from 2 % to 90 %; and the
  // algebraic decay matrix, whose tile norms depend on |i - k| only and so tie exactly (the
  // one-launch search sorts B's norms and must place ties apart).
  using exec_space = TestType;
  const exec_space exec;
  struct shape {
    std::size_t m, k, n;
    int tile;
    bool ties;
  };
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  for (const shape s : {shape{333, 250, 401, 32, false}, shape{1000, 777, 555, 64, false},
                        shape{70, 1000, 65, 32, false}, shape{700, 700, 700, 32, true}}) {
    INFO(exec_space::name() << ", " << s.m << " x " << s.k << " x " << s.n << ", tile " << s.tile
                            << (s.ties ? ", algebraic decay" : "") << ", seed " << seed);
    auto a = decaying_random(exec, s.m, s.k, seed);
    auto b = decaying_random(exec, s.k, s.n, seed + 1);
    if (s.ties) {
      spamm::fill_algebraic_decay(exec, a);
      spamm::fill_algebraic_decay(exec, b);
    }
    spamm::options opt;
    opt.tile = s.tile;
    spamm::plan plan(exec, a, b, opt);
    for (const double target : {0.02, 0.1, 0.37, 0.9}) {
      INFO("target " << target);
      auto search = opt.search;
      search.launch = spamm::search_launch::one_launch;
      REQUIRE(plan.searches_in_one_launch(search));
      const auto one = plan.search_tau(exec, target, search);
      const auto v_one = nearsparse::test::to_host(plan.work_matrix());
      search.launch = spamm::search_launch::launch_per_count;
      REQUIRE_FALSE(plan.searches_in_one_launch(search));
      const auto many = plan.search_tau(exec, target, search);
      const auto v_many = nearsparse::test::to_host(plan.work_matrix());
      CHECK(one.tau == many.tau);
      CHECK(one.iterations == many.iterations);
      CHECK(one.valid_ratio == many.valid_ratio);
      CHECK(one.converged == many.converged);
      if (!s.ties) CHECK(one.converged);  // ties can leave no tau within the tolerance
      CHECK(v_one.data == v_many.data);
      CHECK(plan.tau() == many.tau);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("a plan reports non-finite operands after its one wait",
                           "[spamm][errors]") {
  // Packing counts non-finite values on the device and the plan reads the count once, after its
  // other work: the error still names the operand, on every way of setting tau, and a plan given
  // a finite operand again works again.
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, 130, 70, seed);
  const auto b = decaying_random(exec, 70, 90, seed + 1);
  matrix<exec_space> bad_b("bad_b", 70, 90);
  Kokkos::deep_copy(bad_b, b);
  Kokkos::deep_copy(Kokkos::subview(bad_b, 69, 3), std::numeric_limits<double>::quiet_NaN());
  Kokkos::deep_copy(Kokkos::subview(bad_b, 0, 89), -std::numeric_limits<double>::infinity());
  spamm::options opt;
  opt.tile = 32;
  opt.target_valid_ratio = 0.3;
  CHECK_THROWS_WITH(spamm::plan<exec_space>(exec, a, bad_b, opt),
                    Contains("'B'") && Contains("70 x 90") && Contains("2 non-finite"));
  spamm::plan plan(exec, a, b, opt);
  for (const auto launch :
       {spamm::search_launch::one_launch, spamm::search_launch::launch_per_count}) {
    auto search = opt.search;
    search.launch = launch;
    INFO("search in one launch: " << plan.searches_in_one_launch(search));
    CHECK_THROWS_WITH(plan.update_b(exec, bad_b), Contains("'B'") && Contains("2 non-finite"));
    CHECK_THROWS_WITH(plan.search_tau(exec, 0.2, search), Contains("'B'"));  // still held
    plan.update_b(exec, b);
    CHECK(std::abs(plan.search_tau(exec, 0.2, search).valid_ratio - 0.2) <= search.tolerance);
  }
  // With the check off, nothing is counted (and nothing thrown).
  opt.check_finite = false;
  opt.target_valid_ratio = 0;
  CHECK_NOTHROW(spamm::plan<exec_space>(exec, a, bad_b, opt));
}

NEARSPARSE_SPACE_TEST_CASE("spamm error helpers and matrix powers with a reused plan",
                           "[spamm][plan]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::size_t n = 150;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, n, n, seed);
  spamm::options opt;
  opt.precision = spamm_precision::fp64;
  opt.tile = 32;
  spamm::plan plan(exec, a, a, opt);
  // A^3 by two products that reuse A's packing and norms: B <- A * B.
  matrix<exec_space> p("P", n, n), q("Q", n, n);
  plan.multiply(exec, 1.0, 0.0, p);
  plan.update_b(exec, p);
  plan.multiply(exec, 1.0, 0.0, q);
  const auto ha = nearsparse::test::to_host(a);
  host_matrix<double> zero(n, n);
  const auto a2 = nearsparse::test::reference_gemm(1.0, ha, ha, 0.0, zero);
  const auto a3 = nearsparse::test::reference_gemm(1.0, ha, a2, 0.0, zero);
  NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(q), a3, 1e-12);

  // measure_error against the host's Frobenius norms.
  matrix<exec_space> approx("approx", n, n);
  spamm::options loose = opt;
  loose.target_valid_ratio = 0.3;
  spamm::multiply(exec, 1.0, a, a, 0.0, approx, loose);
  const auto e = spamm::measure_error(exec, p, approx);
  const auto happrox = nearsparse::test::to_host(approx);
  const auto hp = nearsparse::test::to_host(p);
  CHECK(e.reference_norm == Approx(nearsparse::test::frobenius_norm(hp)).epsilon(1e-12));
  CHECK(e.relative() == Approx(nearsparse::test::relative_error(happrox, hp)).epsilon(1e-9));
  CHECK(e.relative() > 0);
  CHECK(e.relative() < 1);
}

NEARSPARSE_SPACE_TEST_CASE("spamm handles empty extents", "[spamm][edge]") {
  using exec_space = TestType;
  const exec_space exec;
  // K = 0: C = beta * C.
  matrix<exec_space> a("A", 5, 0), b("B", 0, 3), c("C", 5, 3);
  Kokkos::deep_copy(c, 2.0);
  const auto s = spamm::multiply(exec, 1.0, a, b, 0.5, c);
  CHECK(s.valid_ratio == 0.0);
  const auto hc = nearsparse::test::to_host(c);
  for (double x : hc.data) CHECK(x == 1.0);
  // M = 0 and N = 0: nothing to do, no error.
  matrix<exec_space> a0("A0", 0, 4), b0("B0", 4, 3), c0("C0", 0, 3);
  CHECK_NOTHROW(spamm::multiply(exec, 1.0, a0, b0, 0.0, c0));
  matrix<exec_space> a1("A1", 2, 4), b1("B1", 4, 0), c1("C1", 2, 0);
  spamm::options opt;
  opt.target_valid_ratio = 0.5;
  CHECK_NOTHROW(spamm::multiply(exec, 1.0, a1, b1, 0.0, c1, opt));
}

NEARSPARSE_SPACE_TEST_CASE("spamm rejects bad input with clear errors", "[spamm][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  matrix<exec_space> a("A", 3, 4), b("B", 4, 2), c("C", 3, 2);
  Kokkos::deep_copy(a, 1.0);
  Kokkos::deep_copy(b, 1.0);
  matrix<exec_space> bad_b("B", 5, 2), bad_c("C", 2, 3);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, bad_b, 0.0, c),
                    Contains("'B'") && Contains("5 x 2") && Contains("3 x 4"));
  CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, bad_b, 0.0, c), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, bad_c),
                    Contains("'C'") && Contains("2 x 3") && Contains("expected 3 x 2"));
  spamm::options opt;
  opt.tile = 48;
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt),
                    Contains("options.tile") && Contains("48"));
  opt = {};
  opt.tau = -1;
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), Contains("options.tau"));
  opt.tau = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), nearsparse::invalid_argument);
  opt = {};
  opt.target_valid_ratio = 1.5;
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), Contains("target_valid_ratio"));
  opt = {};
  opt.load_balance_stride = 0;
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), Contains("load_balance_stride"));
  CHECK_THROWS_WITH(spamm::multiply(exec, std::nan(""), a, b, 0.0, c), Contains("alpha"));
  // Non-finite values in A or B.
  Kokkos::deep_copy(Kokkos::subview(a, 1, 2), std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c),
                    Contains("'A'") && Contains("3 x 4") && Contains("1 non-finite"));
  Kokkos::deep_copy(a, 1.0);
  Kokkos::deep_copy(Kokkos::subview(b, 0, 1), std::numeric_limits<double>::quiet_NaN());
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c), Contains("'B'"));
  Kokkos::deep_copy(b, 1.0);
  // A plan rejects replacements of the wrong extents and searches with bad targets.
  spamm::plan plan(exec, a, b);
  CHECK_THROWS_WITH(plan.update_b(exec, bad_b), Contains("'B'") && Contains("5 x 2"));
  CHECK_THROWS_WITH(plan.search_tau(exec, 0.0), Contains("target valid ratio"));
  spamm::search_options bad_search;
  bad_search.launch = static_cast<spamm::search_launch>(7);
  CHECK_THROWS_WITH(plan.search_tau(exec, 0.5, bad_search),
                    Contains("search.launch") && Contains("is 7"));
  opt = {};
  opt.host_grouping = static_cast<spamm::host_grouping>(7);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt),
                    Contains("options.host_grouping") && Contains("is 7"));
  CHECK_THROWS_WITH(spamm::parse_host_grouping("per-tile", "--host-grouping"),
                    Contains("--host-grouping") && Contains("'per-tile'") &&
                        Contains("automatic, merged or per_tile"));
  CHECK(spamm::parse_host_grouping("Per_Tile") == spamm::host_grouping::per_tile);
  CHECK(std::string(spamm::to_string(spamm::host_grouping::merged)) == "merged");
  opt = {};
  opt.target_valid_ratio = 0.5;
  opt.search = bad_search;
  CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(plan.set_tau(exec, -0.5), Contains("tau"));
  CHECK_THROWS_AS(spamm::parse_precision("fp8"), nearsparse::invalid_argument);
  CHECK(spamm::parse_precision("BF16") == spamm_precision::bf16);
}

NEARSPARSE_SPACE_TEST_CASE(
    "implementation::specialized runs the CUDA kernels or the host BLAS path and is refused "
    "elsewhere",
    "[spamm][implementation]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, 70, 90, seed);
  const auto b = decaying_random(exec, 90, 50, seed + 1);
  matrix<exec_space> c("C", 70, 50);
  spamm::options opt;
  opt.tile = 32;
  opt.implementation = implementation::specialized;
  // The host path (OpenMP and Serial) runs where the build has the host BLAS.
  const bool host_path = on_host<exec_space>() && nearsparse::detail::host_blas::available();
  if (on_cuda<exec_space>() || host_path) {
    CHECK_NOTHROW(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt));
    CHECK_NOTHROW(spamm::plan<exec_space>(exec, a, b, opt));
  } else {
    // No specialized path on this space: the error names the entry point that was called.
    CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), nearsparse::unsupported);
    CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt),
                      Contains("nearsparse::spamm::multiply") && Contains("specialized") &&
                          Contains(exec_space::name()));
    CHECK_THROWS_AS(spamm::plan<exec_space>(exec, a, b, opt), nearsparse::unsupported);
    CHECK_THROWS_WITH(spamm::plan<exec_space>(exec, a, b, opt),
                      Contains("nearsparse::spamm::plan") && Contains("specialized"));
  }
  // A value outside the enumeration is an invalid argument everywhere.
  opt.implementation = static_cast<implementation>(9);
  CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, c, opt), nearsparse::invalid_argument);
}

NEARSPARSE_SPACE_TEST_CASE("implementation::portable and automatic agree",
                           "[spamm][implementation]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  const std::size_t m = 150, k = 200, n = 130;
  const auto a = decaying_random(exec, m, k, seed);
  const auto b = decaying_random(exec, k, n, seed + 1);
  for (const auto precision : all_precisions) {
    INFO(exec_space::name() << ", " << spamm::to_string(precision) << ", seed " << seed);
    spamm::options opt;
    opt.precision = precision;
    opt.tile = 32;
    matrix<exec_space> c_auto("C_automatic", m, n), c_portable("C_portable", m, n);
    opt.implementation = implementation::automatic;
    spamm::plan<exec_space> automatic(exec, a, b, opt);
    automatic.multiply(exec, 1.0, 0.0, c_auto);
    opt.implementation = implementation::portable;
    spamm::plan<exec_space> portable(exec, a, b, opt);
    portable.multiply(exec, 1.0, 0.0, c_portable);
    CHECK(automatic.valid_ratio() == 1.0);
    CHECK(portable.valid_ratio() == 1.0);
    // The norm maps agree up to the order of summation (the CUDA get-norm kernel sums in float).
    const double norm_tol = precision == spamm_precision::fp64 ? 1e-13 : 1e-5;
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(automatic.a_norms()),
                                    nearsparse::test::to_host(portable.a_norms()), norm_tol);
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(automatic.b_norms()),
                                    nearsparse::test::to_host(portable.b_norms()), norm_tol);
    // The products differ only in the order of accumulation.
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(c_auto),
                                    nearsparse::test::to_host(c_portable),
                                    2 * ref::accumulation_tolerance(precision, k));
  }
}

TEST_CASE("the tau search returns the closest ratio it evaluated and stops within tolerance",
          "[spamm][search]") {
  // A valid ratio that falls in steps of 1/20 as tau grows (as kept counts do), and every tau the
  // search evaluates.
  std::vector<std::pair<double, double>> seen;
  auto ratio_at = [&](double tau) {
    const double r = std::max(0.0, std::floor((1.0 - tau / 10.0) * 20.0) / 20.0);
    seen.push_back({tau, r});
    return r;
  };
  const double target = 0.33;
  spamm::search_options search;
  SECTION("tolerance 0: the closest of all the ratios evaluated, whichever came last") {
    search.tolerance = 0;
    search.max_iterations = 7;
    const auto found = nearsparse::spamm::detail::bisect_tau(target, search, 1.0, ratio_at);
    REQUIRE(found.iterations == int(seen.size()));
    double best = 1.0;
    for (const auto& s : seen) best = std::min(best, std::abs(s.second - target));
    const double found_distance = std::abs(ratio_at(found.tau) - target);
    CHECK(found_distance == best);
    CHECK(found_distance <= 0.025);  // one step of 1/20 holds the target
  }
  SECTION("tolerance > 0: stops at the first ratio within it") {
    search.tolerance = 0.04;
    const auto found = nearsparse::spamm::detail::bisect_tau(target, search, 1.0, ratio_at);
    REQUIRE(!seen.empty());
    CHECK(std::abs(seen.back().second - target) <= search.tolerance);
    for (std::size_t i = 0; i + 1 < seen.size(); ++i)
      CHECK(std::abs(seen[i].second - target) > search.tolerance);
    CHECK(found.tau == seen.back().first);
  }
}
