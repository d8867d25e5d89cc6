// CDM (banded) products against the dense product in double precision: bands of several widths,
// bandwidth 0, full bandwidth, random compact diagonal sets, sizes that are not multiples of the
// tile, every transposed form, float and double, alpha and beta.

#include "diagonal_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace nd = nearsparse::diagonal;
namespace ref = nearsparse::test::diagonal;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nearsparse::test::host_matrix;

namespace {

template <class Scalar, class Exec>
void check_cdm(const Exec& exec, const std::string& name,
               const nd::cdm_matrix<Scalar, typename Exec::memory_space>& a,
               const nd::cdm_matrix<Scalar, typename Exec::memory_space>& b, nd::op op_a,
               nd::op op_b, std::uint64_t seed) {
  INFO(name << ", op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b) << ", seed "
            << seed);
  const nd::cdm_product_plan<Scalar, typename Exec::memory_space> plan(exec, a, b, op_a, op_b);
  auto c = plan.make_c(exec);
  nearsparse::fill_random(exec, c.values(), seed + 5, -1.0, 1.0);
  const auto c0 = ref::dense_of(exec, c);  // C's stored compact diagonals, wholly random
  const double alpha = -0.75, beta = 2.0;
  nd::multiply(exec, plan, alpha, a, b, beta, c);
  const auto ha = ref::apply_op(ref::dense_of(exec, a), op_a);
  const auto hb = ref::apply_op(ref::dense_of(exec, b), op_b);
  ref::check_product<Scalar>(ref::dense_of(exec, c), alpha, ha, hb, beta, c0);
  const auto fresh = nd::multiply(exec, a, b, op_a, op_b);
  CHECK(fresh.host_indices() == plan.c_indices());
  ref::check_product<Scalar>(ref::dense_of(exec, fresh), 1.0, ha, hb, 0.0,
                             host_matrix<double>(ha.rows, hb.cols));
}

template <class Scalar, class Exec>
void run_cases(const Exec& exec, nd::op op_a, nd::op op_b, std::uint64_t seed) {
  using matrix = nd::cdm_matrix<Scalar, typename Exec::memory_space>;
  const auto banded = [&](int n, int lower, int upper, std::uint64_t s) {
    return nd::random_banded_cdm<Scalar>(exec, n, lower, upper, s);
  };
  check_cdm<Scalar>(exec, "band 77, (3, 2) x (1, 4)", banded(77, 3, 2, seed),
                    banded(77, 1, 4, seed + 1), op_a, op_b, seed);
  check_cdm<Scalar>(exec, "band 100, half-band 5 x 5", banded(100, 5, 5, seed),
                    banded(100, 5, 5, seed + 1), op_a, op_b, seed);
  check_cdm<Scalar>(exec, "bandwidth 0", banded(41, 0, 0, seed), banded(41, 0, 0, seed + 1), op_a,
                    op_b, seed);
  check_cdm<Scalar>(exec, "full bandwidth (dense) 21", banded(21, 20, 20, seed),
                    banded(21, 20, 20, seed + 1), op_a, op_b, seed);
  // Random compact diagonals, wholly filled: wrap-around entries too.
  matrix a(exec, 35, {0, 3, 17, 34}), b(exec, 35, {1, 20, 33});
  nearsparse::fill_random(exec, a.values(), seed + 2);
  nearsparse::fill_random(exec, b.values(), seed + 3);
  check_cdm<Scalar>(exec, "random compact diagonals 35", a, b, op_a, op_b, seed);
  check_cdm<Scalar>(exec, "one element", banded(1, 0, 0, seed), banded(1, 0, 0, seed + 1), op_a,
                    op_b, seed);
}

// `count` distinct indices of [0, n) in random order.
std::vector<int> random_indices(std::mt19937_64& random, int n, int count) {
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), random);
  all.resize(std::size_t(count));
  return all;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("CDM products equal the dense product", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  const auto op_a = GENERATE(nd::op::none, nd::op::transpose);
  const auto op_b = GENERATE(nd::op::none, nd::op::transpose);
  run_cases<double>(exec, op_a, op_b, seed);
  run_cases<float>(exec, op_a, op_b, seed);
}

NEARSPARSE_SPACE_TEST_CASE("CDM products of empty matrices and mismatched operands", "[diagonal]") {
  const TestType exec;
  using matrix = nd::cdm_matrix<double, typename TestType::memory_space>;
  const matrix e(exec, 0, {});
  CHECK(nd::multiply(exec, e, e).size() == 0);
  const matrix none(exec, 8, {}), some(exec, 8, {0, 1});
  CHECK(nd::multiply(exec, none, some).diagonal_count() == 0);
  const matrix a(exec, 8, {0, 1}), b(exec, 9, {0});
  CHECK_THROWS_WITH(nd::multiply(exec, a, b), Contains("8 x 8") && Contains("9 x 9"));
  const nd::cdm_product_plan<double, typename TestType::memory_space> plan(exec, a, some);
  auto c = plan.make_c(exec);
  const matrix wrong_c(exec, 8, {0});
  CHECK_THROWS_WITH(nd::multiply(exec, plan, 1.0, a, some, 0.0, wrong_c), Contains("'C'"));
}

NEARSPARSE_SPACE_TEST_CASE("CDM products take the implementation the options ask for",
                           "[diagonal]") {
  using nearsparse::implementation;
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  nd::product_options portable, specialized_options, bad_implementation;
  portable.implementation = implementation::portable;
  specialized_options.implementation = implementation::specialized;
  bad_implementation.implementation = static_cast<implementation>(7);
  // portable and automatic agree (up to rounding: automatic takes the host kernel on host
  // backends); specialized runs the host kernel on OpenMP and Serial and is refused elsewhere.
  constexpr bool host_kernel = std::is_same_v<mem, Kokkos::HostSpace> &&
                               Kokkos::SpaceAccessibility<TestType, Kokkos::HostSpace>::accessible;
  const auto ca = nd::random_banded_cdm<double>(exec, 200, 3, 4, seed + 4);
  const auto cb = nd::random_banded_cdm<double>(exec, 200, 5, 2, seed + 5);
  const nd::cdm_product_plan<double, mem> cplan(exec, ca, cb);
  auto cc_portable = cplan.make_c(exec), cc_automatic = cplan.make_c(exec);
  nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc_portable, portable);
  nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc_automatic);
  exec.fence();
  const auto differ = [](const auto& x, const auto& y) {
    const auto xv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.values());
    const auto yv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.values());
    std::size_t count = 0;
    for (std::size_t t = 0; t < xv.extent(0); ++t)
      for (std::size_t p = 0; p < xv.extent(1); ++p)
        count += !(std::abs(xv(t, p) - yv(t, p)) <=
                   64 * ref::roundoff<double>() * std::max(1.0, std::abs(yv(t, p))));
    return count;
  };
  CHECK(differ(cc_automatic, cc_portable) == 0);
  if constexpr (host_kernel) {
    auto cc_specialized = cplan.make_c(exec);
    nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc_specialized, specialized_options);
    const auto whole = nd::multiply(exec, ca, cb, nd::op::none, nd::op::none, specialized_options);
    exec.fence();
    CHECK(differ(cc_specialized, cc_portable) == 0);
    CHECK(differ(whole, cc_portable) == 0);
  } else {
    CHECK_THROWS_AS(nd::multiply(exec, cplan, 1.0, ca, cb, 0.0, cc_portable, specialized_options),
                    nearsparse::unsupported);
    CHECK_THROWS_AS(nd::multiply(exec, ca, cb, nd::op::none, nd::op::none, specialized_options),
                    nearsparse::unsupported);
    CHECK_THROWS_WITH(nd::multiply(exec, ca, cb, nd::op::none, nd::op::none, specialized_options),
                      StartsWith("nearsparse::diagonal::multiply: "));
  }

  CHECK_THROWS_AS(nd::multiply(exec, ca, cb, nd::op::none, nd::op::none, bad_implementation),
                  nearsparse::invalid_argument);
}

NEARSPARSE_SPACE_TEST_CASE("the team-tile CDM kernel and the host kernel agree on every backend",
                           "[diagonal]") {
  // Each backend runs one of the two forms through multiply(); here both run on this one, so the
  // form a backend does not pick is still checked against the dense product.
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto a = nd::random_banded_cdm<double>(exec, 53, 4, 3, seed);
  const auto b = nd::random_banded_cdm<double>(exec, 53, 2, 6, seed + 1);
  for (const auto op_a : {nd::op::none, nd::op::transpose}) {
    for (const auto op_b : {nd::op::none, nd::op::transpose}) {
      const nd::cdm_product_plan<double, mem> plan(exec, a, b, op_a, op_b);
      auto team = plan.make_c(exec), host = plan.make_c(exec);
      const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
      nd::detail::cdm_banded_multiply(exec, 53, 1.0, a.values(), plan.a_logical(), ta, b.values(),
                                      b.lookup(), tb, 0.0, team.values(), team.indices());
      nd::detail::cdm_banded_multiply_host(exec, 53, 1.0, a.values(), plan.a_logical(), ta,
                                           b.values(), b.lookup(), tb, 0.0, host.values(),
                                           host.indices());
      exec.fence();
      const auto ha = ref::apply_op(ref::dense_of(exec, a), op_a);
      const auto hb = ref::apply_op(ref::dense_of(exec, b), op_b);
      const host_matrix<double> zero(53, 53);
      ref::check_product<double>(ref::dense_of(exec, team), 1.0, ha, hb, 0.0, zero);
      ref::check_product<double>(ref::dense_of(exec, host), 1.0, ha, hb, 0.0, zero);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the lookup kernel of CDM plans matches the host's lookup",
                           "[diagonal]") {
  // GPU plans fill C's lookup with this kernel; plans in host memory write it directly, so the
  // kernel is compared with the host's lookup here, on every backend.
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  for (const int n : {0, 1, 37, 1000}) {
    for (const int count : {0, 1, 5, n}) {
      if (count > n) continue;
      INFO("n " << n << ", " << count << " compact diagonals");
      std::vector<int> indices(static_cast<std::size_t>(n));
      std::iota(indices.begin(), indices.end(), 0);
      std::shuffle(indices.begin(), indices.end(),
                   std::mt19937_64(seed + std::uint64_t(n + count)));
      indices.resize(std::size_t(count));
      const nd::cdm_matrix<double, mem> c(exec, n, indices);
      Kokkos::View<int*, mem> lookup("lookup", std::size_t(n));
      nd::detail::cdm_fill_lookup(exec, c.indices(), lookup);
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lookup);
      for (int k = 0; k < n; ++k) REQUIRE(host(k) == c.host_lookup()[std::size_t(k)]);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the host CDM kernel equals the portable kernel and the dense product",
                           "[diagonal]") {
  // Odd sizes past the kernel's 512-position blocks, so that the shifted reads of A and B wrap
  // inside blocks; enough compact diagonals for groups of four terms and a remainder.
  using nearsparse::implementation;
  const TestType exec;
  using mem = typename TestType::memory_space;
  if constexpr (std::is_same_v<mem, Kokkos::HostSpace> &&
                Kokkos::SpaceAccessibility<TestType, Kokkos::HostSpace>::accessible) {
    const auto seed = nearsparse::test::fresh_seed();
    nd::product_options portable, specialized;
    portable.implementation = implementation::portable;
    specialized.implementation = implementation::specialized;
    const auto compare = [&](const auto& x, const auto& y, double tolerance) {
      const auto xv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.values());
      const auto yv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.values());
      REQUIRE(x.host_indices() == y.host_indices());
      std::size_t bad = 0;
      for (std::size_t t = 0; t < xv.extent(0); ++t)
        for (std::size_t p = 0; p < xv.extent(1); ++p)
          bad += !(std::abs(double(xv(t, p)) - double(yv(t, p))) <=
                   tolerance * std::max(1.0, std::abs(double(yv(t, p)))));
      CHECK(bad == 0);
    };
    const auto run = [&](auto scalar, int n, const std::vector<int>& ia, const std::vector<int>& ib,
                         bool dense, std::uint64_t s) {
      using Scalar = decltype(scalar);
      using matrix = nd::cdm_matrix<Scalar, mem>;
      matrix a(exec, n, ia), b(exec, n, ib);  // wholly random compact diagonals
      nearsparse::fill_random(exec, a.values(), s, -1.0, 1.0);
      nearsparse::fill_random(exec, b.values(), s + 1, -1.0, 1.0);
      for (const auto op_a : {nd::op::none, nd::op::transpose})
        for (const auto op_b : {nd::op::none, nd::op::transpose}) {
          INFO("n " << n << ", " << ia.size() << " x " << ib.size() << " compact diagonals, op(A) "
                    << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b) << ", "
                    << (std::is_same_v<Scalar, float> ? "float" : "double") << ", seed " << s);
          const nd::cdm_product_plan<Scalar, mem> plan(exec, a, b, op_a, op_b);
          auto c_host = plan.make_c(exec), c_portable = plan.make_c(exec);
          nearsparse::fill_random(exec, c_host.values(), s + 2, -1.0, 1.0);
          Kokkos::deep_copy(exec, c_portable.values(), c_host.values());
          const auto c0 = dense ? ref::dense_of(exec, c_host) : host_matrix<double>(0, 0);
          nd::multiply(exec, plan, Scalar(-0.75), a, b, Scalar(2), c_host, specialized);
          nd::multiply(exec, plan, Scalar(-0.75), a, b, Scalar(2), c_portable, portable);
          const auto w_host = nd::multiply(exec, a, b, op_a, op_b, specialized);
          const auto w_portable = nd::multiply(exec, a, b, op_a, op_b, portable);
          exec.fence();
          // The same order of sums: at most the compiler's contraction of multiply-adds apart.
          compare(c_host, c_portable, 64 * ref::roundoff<Scalar>());
          compare(w_host, w_portable, 64 * ref::roundoff<Scalar>());
          if (dense) {
            const auto ha = ref::apply_op(ref::dense_of(exec, a), op_a);
            const auto hb = ref::apply_op(ref::dense_of(exec, b), op_b);
            ref::check_product<Scalar>(ref::dense_of(exec, c_host), -0.75, ha, hb, 2.0, c0);
            ref::check_product<Scalar>(ref::dense_of(exec, w_host), 1.0, ha, hb, 0.0,
                                       host_matrix<double>(std::size_t(n), std::size_t(n)));
          }
        }
    };
    // Random compact diagonals (wrapping everywhere), a band, and fewer than four terms.
    std::mt19937_64 random(seed);
    const auto pick = [&](int n, int count) { return random_indices(random, n, count); };
    run(double(), 613, pick(613, 11), pick(613, 6), true, seed + 1);
    run(float(), 613, pick(613, 9), pick(613, 7), true, seed + 2);
    run(double(), 1031, nd::banded_compact_indices(1031, 7, 5),
        nd::banded_compact_indices(1031, 4, 6), false, seed + 3);
    run(double(), 1297, pick(1297, 3), pick(1297, 2), false, seed + 4);
    run(float(), 2053, pick(2053, 17), pick(2053, 13), false, seed + 5);
  }
}

NEARSPARSE_SPACE_TEST_CASE("the host CDM kernel does not read C with beta = 0", "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  if constexpr (std::is_same_v<mem, Kokkos::HostSpace> &&
                Kokkos::SpaceAccessibility<TestType, Kokkos::HostSpace>::accessible) {
    const auto seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    const auto a = nd::random_banded_cdm<double>(exec, 701, 6, 3, seed);
    const auto b = nd::random_banded_cdm<double>(exec, 701, 2, 5, seed + 1);
    const nd::cdm_product_plan<double, mem> plan(exec, a, b);
    auto c = plan.make_c(exec);
    Kokkos::deep_copy(exec, c.values(), std::nan(""));
    nd::product_options specialized;
    specialized.implementation = nearsparse::implementation::specialized;
    nd::multiply(exec, plan, 1.5, a, b, 0.0, c, specialized);
    exec.fence();
    ref::check_product<double>(ref::dense_of(exec, c), 1.5, ref::dense_of(exec, a),
                               ref::dense_of(exec, b), 0.0, host_matrix<double>(701, 701));
    // An empty product on the host kernel: no compact diagonals in A.
    const nd::cdm_matrix<double, mem> none(exec, 9, {}), some(exec, 9, {0, 4});
    CHECK(
        nd::multiply(exec, none, some, nd::op::none, nd::op::none, specialized).diagonal_count() ==
        0);
  }
}

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
NEARSPARSE_SPACE_TEST_CASE("every vector copy of the host CDM kernel equals the dense product",
                           "[diagonal]") {
  // The host kernel sums groups of compact diagonals in registers, compiled at the baseline
  // instruction set and for wider vectors, the widest the processor runs taken at run time: each
  // copy is run here (those the processor lacks fall back to narrower ones). Odd sizes past one
  // 512-position block leave positions past the last whole vector step; counts of C's compact
  // diagonals that are not a multiple of the group; bands whose reads wrap inside some blocks
  // and not in others; a product with fewer positions than one vector step; and empty operands.
  // The portable kernel against the dense product where it is cheap, every copy against the
  // portable kernel.
  using nearsparse::implementation;
  const TestType exec;
  using mem = typename TestType::memory_space;
  if constexpr (nd::detail::cdm_specialized<TestType, mem>::value) {
    const auto seed = nearsparse::test::fresh_seed();
    nd::product_options portable;
    portable.implementation = implementation::portable;
    const auto run = [&](auto scalar, int n, const std::vector<int>& ia, const std::vector<int>& ib,
                         bool dense, std::uint64_t s) {
      using Scalar = decltype(scalar);
      using matrix = nd::cdm_matrix<Scalar, mem>;
      matrix a(exec, n, ia), b(exec, n, ib);
      nearsparse::fill_random(exec, a.values(), s, -1.0, 1.0);
      nearsparse::fill_random(exec, b.values(), s + 1, -1.0, 1.0);
      for (const auto op_a : {nd::op::none, nd::op::transpose})
        for (const auto op_b : {nd::op::none, nd::op::transpose}) {
          const nd::cdm_product_plan<Scalar, mem> plan(exec, a, b, op_a, op_b);
          const auto ha =
              dense ? ref::apply_op(ref::dense_of(exec, a), op_a) : host_matrix<double>(0, 0);
          const auto hb =
              dense ? ref::apply_op(ref::dense_of(exec, b), op_b) : host_matrix<double>(0, 0);
          auto c_portable = plan.make_c(exec);
          nearsparse::fill_random(exec, c_portable.values(), s + 2, -1.0, 1.0);
          const auto c0 = ref::dense_of(exec, c_portable);
          nd::multiply(exec, plan, Scalar(-0.75), a, b, Scalar(2), c_portable, portable);
          const auto expected = ref::dense_of(exec, c_portable);
          // The portable kernel against the dense product (where cheap), then every copy against
          // the portable kernel: each is checked against the dense product through it.
          if (dense) ref::check_product<Scalar>(expected, -0.75, ha, hb, 2.0, c0);
          for (const int widest : {0, 1, 2}) {
            INFO("n " << n << ", " << ia.size() << " x " << ib.size()
                      << " compact diagonals, op(A) " << nd::to_string(op_a) << ", op(B) "
                      << nd::to_string(op_b) << ", "
                      << (std::is_same_v<Scalar, float> ? "float" : "double") << ", widest "
                      << widest << ", seed " << s);
            auto c = plan.make_c(exec), c_zero = plan.make_c(exec);
            nearsparse::fill_random(exec, c.values(), s + 2, -1.0, 1.0);
            Kokkos::deep_copy(exec, c_zero.values(), Scalar(std::nan("")));  // beta = 0: unread
            nd::detail::cdm_multiply_host(exec, plan, Scalar(-0.75), a, b, Scalar(2), c, widest);
            nd::detail::cdm_multiply_host(exec, plan, Scalar(-0.75), a, b, Scalar(0), c_zero,
                                          widest);
            exec.fence();
            const auto got = ref::dense_of(exec, c), got_zero = ref::dense_of(exec, c_zero);
            // The same order of sums as the portable kernel: at most the compiler's contraction
            // of multiply-adds apart.
            std::size_t bad = 0;
            for (std::size_t i = 0; i < got.rows; ++i)
              for (std::size_t j = 0; j < got.cols; ++j)
                bad += !(std::abs(got(i, j) - expected(i, j)) <=
                         64 * ref::roundoff<Scalar>() * std::max(1.0, std::abs(expected(i, j))));
            CHECK(bad == 0);
            // beta = 0: the same sums, C's old values (NaN) never read.
            std::size_t bad_zero = 0;
            for (std::size_t i = 0; i < got.rows; ++i)
              for (std::size_t j = 0; j < got.cols; ++j) {
                const double want = got(i, j) - 2 * c0(i, j);
                bad_zero += !(std::abs(got_zero(i, j) - want) <=
                              64 * ref::roundoff<Scalar>() * std::max(1.0, std::abs(c0(i, j))));
              }
            CHECK(bad_zero == 0);
          }
        }
    };
    std::mt19937_64 random(seed);
    const auto pick = [&](int n, int count) { return random_indices(random, n, count); };
    run(double(), 557, nd::banded_compact_indices(557, 7, 5), nd::banded_compact_indices(557, 4, 6),
        true, seed + 1);
    run(float(), 541, nd::banded_compact_indices(541, 3, 8), nd::banded_compact_indices(541, 6, 2),
        true, seed + 2);
    run(double(), 1543, nd::banded_compact_indices(1543, 20, 20),
        nd::banded_compact_indices(1543, 20, 20), false, seed + 3);
    run(float(), 1031, pick(1031, 10), pick(1031, 7), false, seed + 4);
    // A's logical offsets at most 0: its reads wrap only in the first block, so the last one,
    // shorter than a block, takes the register form with positions past its last vector step.
    run(double(), 557, nd::banded_compact_indices(557, 3, 0), nd::banded_compact_indices(557, 2, 5),
        true, seed + 8);
    run(float(), 557, nd::banded_compact_indices(557, 5, 0), nd::banded_compact_indices(557, 3, 3),
        true, seed + 9);
    run(double(), 37, {0}, nd::banded_compact_indices(37, 2, 2), true, seed + 10);
    run(double(), 13, nd::banded_compact_indices(13, 2, 3), nd::banded_compact_indices(13, 1, 1),
        true, seed + 5);
    run(double(), 211, {}, nd::banded_compact_indices(211, 2, 2), true, seed + 6);
    run(double(), 0, {}, {}, true, seed + 7);
  }
}
#endif
