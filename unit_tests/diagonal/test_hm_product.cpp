// HM products against the dense product in double precision: random diagonal sets, bandwidth 0,
// full bandwidth (dense), single far-off diagonals, rectangular and empty matrices, every
// transposed form, both kernels, float and double, alpha and beta.

#include "diagonal_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nd = nearsparse::diagonal;
namespace ref = nearsparse::test::diagonal;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nearsparse::test::host_matrix;

namespace {

struct hm_case {
  std::string name;
  int m, k, n;                 // op(A) is m x k, op(B) is k x n
  std::vector<int> a_offsets;  // of op(A); negated for a stored A^T
  std::vector<int> b_offsets;
};

/// Uniform integers in [lo, hi] from a fresh seed (the tests report `seed` to replay a failure).
struct uniform_ints {
  std::uint64_t seed = nearsparse::test::fresh_seed();
  std::mt19937_64 random{seed};
  int operator()(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random); }
};

/// Two symbolic products describe the same C: range, offsets, starts, pair and chunk pointers
/// and multiply-adds.
void require_same_symbolic(const nd::detail::hm_symbolic_product& x,
                           const nd::detail::hm_symbolic_product& y) {
  REQUIRE(x.c_lo == y.c_lo);
  REQUIRE(x.c_range == y.c_range);
  REQUIRE(x.c_offsets == y.c_offsets);
  REQUIRE(x.c_starts == y.c_starts);
  REQUIRE(x.pair_ptr == y.pair_ptr);
  REQUIRE(x.chunk_ptr == y.chunk_ptr);
  REQUIRE(x.multiply_adds == y.multiply_adds);
}

/// Product options with this algorithm and implementation (the rest defaults).
nd::product_options options_for(
    nd::hm_algorithm algorithm,
    nearsparse::implementation implementation = nearsparse::implementation::automatic) {
  nd::product_options options;
  options.algorithm = algorithm;
  options.implementation = implementation;
  return options;
}

std::vector<int> negated(std::vector<int> v) {
  for (int& d : v) d = -d;
  return v;
}

template <class Scalar, class Exec>
void check_case(const Exec& exec, const hm_case& c, nd::op op_a, nd::op op_b,
                nd::hm_algorithm algorithm, std::uint64_t seed) {
  const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
  INFO(c.name << ", op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b) << ", "
              << nd::to_string(algorithm) << ", seed " << seed);
  const auto a = nd::random_hm<Scalar>(exec, ta ? c.k : c.m, ta ? c.m : c.k,
                                       ta ? negated(c.a_offsets) : c.a_offsets, seed);
  const auto b = nd::random_hm<Scalar>(exec, tb ? c.n : c.k, tb ? c.k : c.n,
                                       tb ? negated(c.b_offsets) : c.b_offsets, seed + 1);
  const nd::hm_product_plan<Scalar, typename Exec::memory_space> plan(exec, a, b, op_a, op_b);
  CHECK(plan.rows() == c.m);
  CHECK(plan.cols() == c.n);
  auto cm = plan.make_c(exec);
  nearsparse::fill_random(exec, cm.values(), seed + 2, -1.0, 1.0);
  const auto c0 = ref::dense_of(exec, cm);
  const double alpha = 1.25, beta = -0.5;
  nd::multiply(exec, plan, alpha, a, b, beta, cm, options_for(algorithm));
  const auto ha = ref::apply_op(ref::dense_of(exec, a), op_a);
  const auto hb = ref::apply_op(ref::dense_of(exec, b), op_b);
  ref::check_product<Scalar>(ref::dense_of(exec, cm), alpha, ha, hb, beta, c0);

  // The one-call form: C = op(A) op(B) with C allocated on the symbolic structure.
  const auto fresh = nd::multiply(exec, a, b, op_a, op_b, options_for(algorithm));
  CHECK(fresh.host_offsets() == plan.c_offsets());
  ref::check_product<Scalar>(ref::dense_of(exec, fresh), 1.0, ha, hb, 0.0,
                             host_matrix<double>(std::size_t(c.m), std::size_t(c.n)));
}

std::vector<hm_case> cases(std::uint64_t seed) {
  return {
      {"random 77 x 77, 9 x 6 diagonals", 77, 77, 77, nd::random_offsets(77, 77, 9, seed),
       nd::random_offsets(77, 77, 6, seed + 7, false)},
      {"bandwidth 0 (diagonal matrices)", 33, 33, 33, {0}, {0}},
      {"full bandwidth (dense)", 19, 19, 19, nd::banded_offsets(19, 19, 18, 18),
       nd::banded_offsets(19, 19, 18, 18)},
      {"single far-off diagonals", 50, 50, 50, {47}, {-45}},
      {"far-off diagonals that never meet", 50, 50, 50, {40}, {30}},
      {"rectangular 45 x 70 x 33", 45, 70, 33, nd::random_offsets(45, 70, 12, seed + 1),
       nd::random_offsets(70, 33, 8, seed + 2)},
      {"banded 131, half-bands 3 and 5", 131, 131, 131, nd::banded_offsets(131, 131, 3, 3),
       nd::banded_offsets(131, 131, 5, 5)},
      {"one element", 1, 1, 1, {0}, {0}},
  };
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("HM products equal the dense product", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  const auto op_a = GENERATE(nd::op::none, nd::op::transpose);
  const auto op_b = GENERATE(nd::op::none, nd::op::transpose);
  const auto algorithm = GENERATE(nd::hm_algorithm::output_stationary, nd::hm_algorithm::atomic);
  for (const auto& c : cases(seed)) {
    check_case<double>(exec, c, op_a, op_b, algorithm, seed);
    check_case<float>(exec, c, op_a, op_b, algorithm, seed);
  }
}

NEARSPARSE_SPACE_TEST_CASE("HM A A^T is symmetric and equals the dense product", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto a = nd::random_hm<double>(exec, 60, 90, nd::random_offsets(60, 90, 14, seed), seed);
  const auto c = nd::multiply(exec, a, a, nd::op::none, nd::op::transpose);
  const auto hc = ref::dense_of(exec, c);
  const auto ha = ref::dense_of(exec, a);
  ref::check_product<double>(hc, 1.0, ha, ref::apply_op(ha, nd::op::transpose), 0.0,
                             host_matrix<double>(60, 60));
  for (int d : c.host_offsets()) CHECK(c.find_diagonal(-d) >= 0);
}

NEARSPARSE_SPACE_TEST_CASE("HM products of empty matrices", "[diagonal]") {
  const TestType exec;
  using matrix = nd::hm_matrix<double, typename TestType::memory_space>;
  const matrix a(exec, 0, 0, {}), b(exec, 0, 0, {});
  CHECK(nd::multiply(exec, a, b).rows() == 0);
  // K = 0: C is 5 x 4 with no diagonals at all.
  const matrix a2(exec, 5, 0, {}), b2(exec, 0, 4, {});
  const auto c = nd::multiply(exec, a2, b2);
  CHECK(c.rows() == 5);
  CHECK(c.cols() == 4);
  CHECK(c.diagonal_count() == 0);
  // A with no diagonals at all.
  const matrix a3(exec, 6, 6, {}), b3(exec, 6, 6, {0, 2});
  CHECK(
      nd::multiply(exec, a3, b3, nd::op::none, nd::op::none, options_for(nd::hm_algorithm::atomic))
          .diagonal_count() == 0);
}

NEARSPARSE_SPACE_TEST_CASE("HM products reject mismatched operands", "[diagonal]") {
  const TestType exec;
  using matrix = nd::hm_matrix<double, typename TestType::memory_space>;
  const matrix a(exec, 5, 7, {0, 1}), b(exec, 6, 5, {0}), b_ok(exec, 7, 5, {0, -2});
  CHECK_THROWS_WITH(nd::multiply(exec, a, b), StartsWith("nearsparse::diagonal::multiply: ") &&
                                                  Contains("5 x 7") && Contains("6 x 5"));
  CHECK_NOTHROW(nd::multiply(exec, a, b, nd::op::transpose, nd::op::transpose));  // 7x5 * 5x6
  const nd::hm_product_plan<double, typename TestType::memory_space> plan(exec, a, b_ok);
  auto c = plan.make_c(exec);
  const matrix other(exec, 7, 5, {0, 1});
  CHECK_THROWS_WITH(
      nd::multiply(exec, plan, 1.0, a, other, 0.0, c),
      StartsWith("nearsparse::diagonal::multiply: ") && Contains("'B'") && Contains("structure"));
  CHECK_THROWS_WITH(nd::multiply(exec, plan, std::nan(""), a, b_ok, 0.0, c), Contains("alpha"));
  CHECK_THROWS_WITH(nd::multiply(exec, plan, 1.0, a, b_ok, INFINITY, c), Contains("beta"));
}

namespace {

/// Largest |x - y| over two products of one structure, and the largest |y|.
template <class Matrix>
std::pair<double, double> difference(const Matrix& x, const Matrix& y) {
  REQUIRE(x.host_offsets() == y.host_offsets());
  const auto xv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.values());
  const auto yv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.values());
  REQUIRE(xv.extent(0) == yv.extent(0));
  double worst = 0, scale = 0;
  for (std::size_t e = 0; e < xv.extent(0); ++e) {
    worst = std::max(worst, std::abs(double(xv(e)) - double(yv(e))));
    scale = std::max(scale, std::abs(double(yv(e))));
  }
  return {worst, scale};
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("HM products take the implementation the options ask for",
                           "[diagonal]") {
  // portable and automatic compute the same C (up to rounding: automatic takes the specialized
  // kernels where they serve the product); specialized throws nearsparse::unsupported where there
  // is no specialized path (the atomic algorithm) and otherwise runs the host kernel (OpenMP,
  // Serial) or, on CUDA, the band tiles or the fused kernel. (test_cdm_product.cpp checks CDM
  // products: each product template is instantiated in one test file, as nvcc's extended lambdas
  // need.)
  using nearsparse::implementation;
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const std::vector<hm_case> shapes = {
      {"random 300, 17 x 11 diagonals", 300, 300, 300, nd::random_offsets(300, 300, 17, seed),
       nd::random_offsets(300, 300, 11, seed + 1)},
      {"band 900, half-bands 40 and 30", 900, 900, 900, nd::banded_offsets(900, 900, 40, 40),
       nd::banded_offsets(900, 900, 30, 30)},
  };
  const auto os = nd::hm_algorithm::output_stationary;
  for (const auto& c : shapes)
    for (const auto algorithm : {os, nd::hm_algorithm::atomic}) {
      INFO(c.name << ", " << nd::to_string(algorithm));
      const auto a = nd::random_hm<double>(exec, c.m, c.k, c.a_offsets, seed + 2);
      const auto b = nd::random_hm<double>(exec, c.k, c.n, c.b_offsets, seed + 3);
      const nd::hm_product_plan<double, mem> plan(exec, a, b);
      auto c_portable = plan.make_c(exec), c_automatic = plan.make_c(exec);
      nd::multiply(exec, plan, 1.5, a, b, 0.0, c_portable,
                   options_for(algorithm, implementation::portable));
      nd::multiply(exec, plan, 1.5, a, b, 0.0, c_automatic, options_for(algorithm));
      const auto w_portable = nd::multiply(exec, a, b, nd::op::none, nd::op::none,
                                           options_for(algorithm, implementation::portable));
      const auto w_automatic = nd::multiply(exec, a, b, nd::op::none, nd::op::none,
                                            options_for(algorithm, implementation::automatic));
      exec.fence();
      const auto check_close = [&](const auto& x, const auto& y, bool exact) {
        const auto [worst, scale] = difference(x, y);
        if (exact)
          CHECK(worst == 0);
        else  // the atomic kernel's order of additions, or CUDA's kernels
          CHECK(worst <= 64 * ref::roundoff<double>() * std::max(scale, 1.0));
      };
      check_close(c_automatic, c_portable, false);
      check_close(w_automatic, w_portable, false);
      const auto specialized = options_for(algorithm, implementation::specialized);
      auto c_specialized = plan.make_c(exec);
      if (algorithm != os) {
        CHECK_THROWS_AS(nd::multiply(exec, plan, 1.5, a, b, 0.0, c_specialized, specialized),
                        nearsparse::unsupported);
        CHECK_THROWS_WITH(nd::multiply(exec, plan, 1.5, a, b, 0.0, c_specialized, specialized),
                          StartsWith("nearsparse::diagonal::multiply: ") &&
                              Contains("implementation::specialized") &&
                              Contains(TestType::name()));
        CHECK_THROWS_AS(nd::multiply(exec, a, b, nd::op::none, nd::op::none, specialized),
                        nearsparse::unsupported);
        CHECK_THROWS_WITH(nd::multiply(exec, a, b, nd::op::none, nd::op::none, specialized),
                          StartsWith("nearsparse::diagonal::multiply: ") &&
                              Contains("implementation::specialized") &&
                              Contains(TestType::name()));
      } else {
        // Host backends: the host kernel. CUDA: the band tiles with a plan, the band tiles or the
        // fused kernel whole.
        nd::multiply(exec, plan, 1.5, a, b, 0.0, c_specialized, specialized);
        const auto w_specialized =
            nd::multiply(exec, a, b, nd::op::none, nd::op::none, specialized);
        exec.fence();
        check_close(c_specialized, c_portable, false);
        check_close(w_specialized, w_portable, false);
      }
    }

  // Values outside the enumerations are refused, naming the field.
  const nd::hm_matrix<double, mem> small(exec, 8, 8, {-1, 0, 2});
  nd::product_options bad_implementation;
  bad_implementation.implementation = static_cast<implementation>(7);
  CHECK_THROWS_AS(nd::multiply(exec, small, small, nd::op::none, nd::op::none, bad_implementation),
                  nearsparse::invalid_argument);
  nd::product_options bad_algorithm;
  bad_algorithm.algorithm = static_cast<nd::hm_algorithm>(7);
  CHECK_THROWS_WITH(
      nd::multiply(exec, small, small, nd::op::none, nd::op::none, bad_algorithm),
      StartsWith("nearsparse::diagonal::multiply: ") && Contains("options.algorithm"));
}

NEARSPARSE_SPACE_TEST_CASE("the team HM kernel and the host HM kernel agree on host backends",
                           "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<TestType, Kokkos::HostSpace>::accessible) {
    // multiply() picks the host form here; the team form (what GPUs run) is checked directly.
    const auto seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    const auto a =
        nd::random_hm<double>(exec, 300, 280, nd::random_offsets(300, 280, 17, seed), seed);
    const auto b =
        nd::random_hm<double>(exec, 280, 310, nd::random_offsets(280, 310, 11, seed + 1), seed + 2);
    const nd::hm_product_plan<double, mem> plan(exec, a, b);
    auto c = plan.make_c(exec);
    nd::detail::hm_output_stationary_device(exec, plan.device(), 1.0, a.values(), b.values(), 0.0,
                                            c.values());
    exec.fence();
    ref::check_product<double>(ref::dense_of(exec, c), 1.0, ref::dense_of(exec, a),
                               ref::dense_of(exec, b), 0.0, host_matrix<double>(300, 310));
  }
}

NEARSPARSE_SPACE_TEST_CASE("the device pass of the HM symbolic phase writes the host pass's pairs",
                           "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<TestType, Kokkos::HostSpace>::accessible) {
    // Plans in host memory take their pairs from the host pass; GPUs run the kernel checked here.
    const auto seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    const std::tuple<int, int, int, int, int> shapes[] = {
        {300, 280, 310, 17, 11}, {97, 97, 97, 193, 193}, {45, 130, 1, 40, 3}, {64, 1, 70, 1, 1}};
    for (const auto& [m, k, n, da, db] : shapes) {
      for (const auto op_a : {nd::op::none, nd::op::transpose})
        for (const auto op_b : {nd::op::none, nd::op::transpose}) {
          INFO(m << " x " << k << " x " << n << ", op(A) " << nd::to_string(op_a) << ", op(B) "
                 << nd::to_string(op_b));
          const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
          const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
          const auto a = nd::random_hm<double>(
              exec, ar, ac, nd::random_offsets(ar, ac, std::min(da, ar + ac - 1), seed), seed);
          const auto b = nd::random_hm<double>(
              exec, br, bc, nd::random_offsets(br, bc, std::min(db, br + bc - 1), seed + 1),
              seed + 2);
          const nd::hm_product_plan<double, mem> plan(exec, a, b, op_a, op_b);
          auto pairs = plan.device();
          const auto n_pairs = pairs.pairs.extent(0);
          Kokkos::View<nd::detail::index_type*, mem> fresh("pairs", 4 * n_pairs);
          pairs.pairs =
              decltype(pairs.pairs)(reinterpret_cast<nd::detail::hm_pair*>(fresh.data()), n_pairs);
          Kokkos::View<int*, mem> offsets("offsets", plan.c_offsets().size());
          Kokkos::View<int*, mem> chunk_diagonal("chunk_diagonal", pairs.chunk_diagonal.extent(0));
          Kokkos::View<int*, mem> c_index("c_index", pairs.c_index.extent(0));
          pairs.chunk_diagonal = chunk_diagonal;
          pairs.c_index = c_index;
          nd::detail::hm_fill_pairs_device(exec, pairs, offsets, a.offsets(), a.starts(),
                                           b.offsets(), b.starts());
          exec.fence();
          REQUIRE(n_pairs == std::size_t(plan.pair_count()));
          for (std::size_t p = 0; p < n_pairs; ++p) {
            const auto& want = plan.device().pairs(p);
            const auto& got = pairs.pairs(p);
            INFO("pair " << p);
            REQUIRE(got.a_base == want.a_base);
            REQUIRE(got.b_base == want.b_base);
            REQUIRE(got.c_start == want.c_start);
            REQUIRE(got.qlo == want.qlo);
            REQUIRE(got.qhi == want.qhi);
          }
          for (std::size_t t = 0; t < plan.c_offsets().size(); ++t) {
            REQUIRE(offsets(t) == plan.c_offsets()[t]);
            REQUIRE(c_index(plan.c_offsets()[t] - pairs.c_lo) == int(t));
          }
          REQUIRE(chunk_diagonal.extent(0) == std::size_t(pairs.chunks));
          for (std::size_t t = 0; t < chunk_diagonal.extent(0); ++t)
            REQUIRE(chunk_diagonal(t) == plan.device().chunk_diagonal(t));
        }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the one-call HM product and the plan's product agree", "[diagonal]") {
  // On a GPU the one-call product of a small C runs the fused CUDA kernel (C's structure in the
  // kernel's parameters, pairs found per block, C's device offsets and starts written by the
  // kernel), a wide band the band tiles, and larger ones the portable kernel, which computes
  // `want` here. All sum the pairs in the same order. Shapes: several 256-position chunks per
  // diagonal, each capacity of the fused kernel (up to 64, 512 and 2048 diagonals of C), and
  // operands past its limits.
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const std::vector<hm_case> shapes = {
      {"band 700, half-bands 2 and 1", 700, 700, 700, nd::banded_offsets(700, 700, 2, 2),
       nd::banded_offsets(700, 700, 1, 1)},
      {"random 650 x 700 x 610, 23 x 14 diagonals", 650, 700, 610,
       nd::random_offsets(650, 700, 23, seed), nd::random_offsets(700, 610, 14, seed + 1)},
      {"1100, 3 x 801 diagonals (about 1800 of C)",
       1100,
       1100,
       1100,
       {-500, 0, 500},
       nd::banded_offsets(1100, 1100, 400, 400)},
      {"1200, B of 1101 diagonals",
       1200,
       1200,
       1200,
       {0, 3},
       nd::banded_offsets(1200, 1200, 550, 550)},
      {"1300, 60 x 50 diagonals (C past 2048)", 1300, 1300, 1300,
       nd::random_offsets(1300, 1300, 60, seed + 2), nd::random_offsets(1300, 1300, 50, seed + 3)},
      {"band 900, half-bands 40 and 30 (band tiles on CUDA)", 900, 900, 900,
       nd::banded_offsets(900, 900, 40, 40), nd::banded_offsets(900, 900, 30, 30)},
  };
  for (const auto& c : shapes)
    for (const auto op_a : {nd::op::none, nd::op::transpose})
      for (const auto op_b : {nd::op::none, nd::op::transpose}) {
        INFO(c.name << ", op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b));
        const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
        const auto a = nd::random_hm<double>(exec, ta ? c.k : c.m, ta ? c.m : c.k,
                                             ta ? negated(c.a_offsets) : c.a_offsets, seed + 4);
        const auto b = nd::random_hm<double>(exec, tb ? c.n : c.k, tb ? c.k : c.n,
                                             tb ? negated(c.b_offsets) : c.b_offsets, seed + 5);
        const nd::hm_product_plan<double, mem> plan(exec, a, b, op_a, op_b);
        auto want = plan.make_c(exec);
        // The portable pair kernel, whichever kernel automatic would pick.
        nd::multiply(
            exec, plan, 1.0, a, b, 0.0, want,
            options_for(nd::hm_algorithm::output_stationary, nearsparse::implementation::portable));
        const auto got = nd::multiply(exec, a, b, op_a, op_b);
        REQUIRE(got.host_offsets() == plan.c_offsets());
        REQUIRE(got.host_starts() == want.host_starts());
        const auto offsets =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.offsets());
        const auto starts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.starts());
        REQUIRE(offsets.extent(0) == got.host_offsets().size());
        REQUIRE(starts.extent(0) == got.host_starts().size());
        for (std::size_t t = 0; t < offsets.extent(0); ++t)
          REQUIRE(offsets(t) == got.host_offsets()[t]);
        for (std::size_t t = 0; t < starts.extent(0); ++t)
          REQUIRE(starts(t) == got.host_starts()[t]);
        const auto gv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.values());
        const auto wv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), want.values());
        REQUIRE(gv.extent(0) == wv.extent(0));
        double scale = 0, worst = 0;
        for (std::size_t e = 0; e < wv.extent(0); ++e) {
          scale = std::max(scale, std::abs(wv(e)));
          worst = std::max(worst, std::abs(gv(e) - wv(e)));
        }
        // The same sums in the same order; only contraction into FMAs may differ.
        CHECK(worst <= 1e-14 * std::max(scale, 1.0));
      }
}

#ifdef KOKKOS_ENABLE_CUDA
namespace {

// The band tiles (CUDA) against the pair kernel and the dense product: C = alpha op(A) op(B) +
// beta C on a C with random values.
template <class Scalar>
void check_band_tiles(const Kokkos::Cuda& exec, const hm_case& c, nd::op op_a, nd::op op_b,
                      bool tensor_cores, std::uint64_t seed) {
  using mem = Kokkos::Cuda::memory_space;
  const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
  INFO(c.name << ", op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b)
              << (sizeof(Scalar) == 8 ? ", double" : ", float")
              << (tensor_cores ? "" : ", FMA form") << ", seed " << seed);
  const auto a = nd::random_hm<Scalar>(exec, ta ? c.k : c.m, ta ? c.m : c.k,
                                       ta ? negated(c.a_offsets) : c.a_offsets, seed);
  const auto b = nd::random_hm<Scalar>(exec, tb ? c.n : c.k, tb ? c.k : c.n,
                                       tb ? negated(c.b_offsets) : c.b_offsets, seed + 1);
  const nd::hm_product_plan<Scalar, mem> plan(exec, a, b, op_a, op_b);
  auto tiles = plan.make_c(exec), pairs = plan.make_c(exec);
  nearsparse::fill_random(exec, tiles.values(), seed + 2, -1.0, 1.0);
  Kokkos::deep_copy(exec, pairs.values(), tiles.values());
  const auto c0 = ref::dense_of(exec, tiles);
  const double alpha = -0.75, beta = 1.5;
  // The band tiles through implementation::specialized (wherever the band kernel can run the
  // product, not only where automatic takes it), the pair kernel through portable.
  auto tiles_options =
      options_for(nd::hm_algorithm::output_stationary, nearsparse::implementation::specialized);
  tiles_options.tensor_cores = tensor_cores;
  nd::multiply(exec, plan, alpha, a, b, beta, tiles, tiles_options);
  nd::multiply(
      exec, plan, alpha, a, b, beta, pairs,
      options_for(nd::hm_algorithm::output_stationary, nearsparse::implementation::portable));
  exec.fence();
  const auto tv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tiles.values());
  const auto pv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pairs.values());
  double scale = 0, worst = 0;
  for (std::size_t e = 0; e < pv.extent(0); ++e) {
    scale = std::max(scale, std::abs(double(pv(e))));
    worst = std::max(worst, std::abs(double(tv(e)) - double(pv(e))));
  }
  // The same terms (the tiles add exact zeros besides); in double the tensor cores sum each
  // 16-wide slice in an order of their own.
  CHECK(worst <= 64 * ref::roundoff<Scalar>() * std::max(scale, 1.0));
  ref::check_product<Scalar>(ref::dense_of(exec, tiles), alpha,
                             ref::apply_op(ref::dense_of(exec, a), op_a),
                             ref::apply_op(ref::dense_of(exec, b), op_b), beta, c0);
}

}  // namespace
#endif

NEARSPARSE_SPACE_TEST_CASE("the CUDA band tiles equal the pair kernel and the dense product",
                           "[diagonal]") {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<TestType, Kokkos::Cuda>) {
    // Both forms of double (fp64 tensor cores where they run, and FMA). Sizes off the 64 x 64
    // tiles and 16-wide slices; missing diagonals inside the ranges (zeros in the tiles); bands off
    // the main diagonal; an inner extent shorter than a tile, so that some tiles of C meet no term
    // and only scale C; a dense product.
    const TestType exec;
    const auto seed = nearsparse::test::fresh_seed();
    const auto offsets_from = [](const int lo, const int hi) {
      std::vector<int> v;
      for (int d = lo; d <= hi; ++d) v.push_back(d);
      return v;
    };
    std::vector<int> holes = nd::banded_offsets(150, 200, 20, 35);
    holes.erase(std::remove_if(holes.begin(), holes.end(),
                               [](const int d) { return d == 3 || d == 10 || d == -7; }),
                holes.end());
    const std::vector<hm_case> shapes = {
        {"band 333, half-bands 7 and 20", 333, 333, 333, nd::banded_offsets(333, 333, 7, 7),
         nd::banded_offsets(333, 333, 20, 20)},
        {"150 x 200 x 90, A's band with holes, B's lopsided", 150, 200, 90, holes,
         nd::banded_offsets(200, 90, 5, 12)},
        {"upper bands 5..40 and 0..17", 211, 211, 211, offsets_from(5, 40), offsets_from(0, 17)},
        {"inner extent 10", 200, 10, 190, nd::banded_offsets(200, 10, 5, 5),
         nd::banded_offsets(10, 190, 3, 3)},
        {"dense 97", 97, 97, 97, nd::banded_offsets(97, 97, 96, 96),
         nd::banded_offsets(97, 97, 96, 96)},
        {"bandwidth 0", 70, 70, 70, {0}, {0}},
        {"one element", 1, 1, 1, {0}, {0}},
        // C with a gap between two bands: its diagonal table comes from its stored starts.
        {"two bands apart", 260, 250, 240,
         [&] {
           auto v = offsets_from(-40, -25);
           for (const int d : offsets_from(20, 35)) v.push_back(d);
           return v;
         }(),
         offsets_from(-2, 4)},
    };
    // The kernel refuses operands without diagonals and ranges past its shared memory.
    nd::detail::cuda_hm_band_args<double> empty;
    CHECK_THROWS_AS(nd::detail::cuda_hm_band_tiles(exec, empty), nearsparse::invalid_argument);
    CHECK_THROWS_WITH(nd::detail::cuda_hm_band_tiles(exec, empty), Contains("non-empty"));
    auto wide = empty;
    wide.m = wide.k = wide.n = 4000;
    wide.a.range = {-3000, 3000, 6001};
    wide.b.range = {0, 0, 1};
    wide.c.range = {-3000, 3000, 6001};
    CHECK_THROWS_WITH(nd::detail::cuda_hm_band_tiles(exec, wide),
                      Contains("6001, 1 and 6001") && Contains("4096"));
    // Only a C that stores every diagonal of its range can have its structure written.
    auto gap = empty;
    gap.m = gap.k = gap.n = 10;
    gap.a.range = gap.b.range = {0, 0, 1};
    gap.c.range = {-2, 2, 3};
    int offset = 0;
    nd::detail::index_type start = 0;
    gap.c_offsets_out = &offset;
    gap.c_starts_out = &start;
    CHECK_THROWS_WITH(
        nd::detail::cuda_hm_band_tiles(exec, gap),
        Contains("every diagonal of its range") && Contains("3 diagonals in a range of 5"));
    for (const auto& c : shapes)
      for (const auto op_a : {nd::op::none, nd::op::transpose})
        for (const auto op_b : {nd::op::none, nd::op::transpose}) {
          for (const bool tensor_cores : {true, false})
            check_band_tiles<double>(exec, c, op_a, op_b, tensor_cores, seed);
          check_band_tiles<float>(exec, c, op_a, op_b, true, seed);
        }
  }
#endif
}

TEST_CASE("band tiles are chosen for wide, full bands only", "[diagonal]") {
  namespace dd = nd::detail;
  const auto range = [](const std::vector<int>& offsets) {
    return dd::hm_band_range_of(offsets, false);
  };
  // One 64 x 64 tile of a diagonal matrix: four 16-wide slices, every element of the tile.
  const dd::hm_band_range zero{0, 0, 1};
  CHECK(dd::hm_band_tile_work(64, 64, 64, zero, zero, zero) == 64.0 * 64 * 64);
  CHECK(dd::hm_band_tile_work(65, 65, 65, zero, zero, zero) == 64.0 * 64 * 64 + 64.0 * 64 * 16);
  // A transposed operand's range is its stored range reversed.
  const auto t = dd::hm_band_range_of({-3, 1, 8}, true);
  CHECK(t.lo == -8);
  CHECK(t.hi == 3);
  CHECK(t.count == 3);

  const auto band = [&](int n, int w) {
    const auto r = range(nd::banded_offsets(n, n, w, w));
    const auto c = range(nd::banded_offsets(n, n, 2 * w, 2 * w));
    const double madds = double(2 * w + 1) * (2 * w + 1) * n;  // up to the corners
    return dd::hm_band_tiles_pay(n, n, n, r, r, c, madds);
  };
  CHECK(band(10240, 100));
  CHECK(band(10240, 50));
  CHECK(band(1024, 15));        // 1M multiply-adds
  CHECK_FALSE(band(1024, 5));   // too little work for the tiles' fixed cost
  CHECK_FALSE(band(40000, 1));  // too narrow: the tiles would be mostly zeros
  // The same range with a third of its diagonals: the tiles would mostly multiply zeros.
  std::vector<int> sparse;
  for (int d = -300; d <= 300; d += 3) sparse.push_back(d);
  const auto s = range(sparse);
  CHECK_FALSE(dd::hm_band_tiles_pay(10000, 10000, 10000, s, s,
                                    range(nd::banded_offsets(10000, 10000, 600, 600)), 1e9));
  // Ranges past what a block keeps in shared memory.
  const auto wide = range(nd::banded_offsets(20000, 20000, 1500, 1500));
  CHECK_FALSE(dd::hm_band_tiles_pay(20000, 20000, 20000, wide, wide, wide, 1e12));
}

TEST_CASE("the closed-form symbolic phase of two bands equals the pairwise one", "[diagonal]") {
  // Both operands store every diagonal of their ranges: C's diagonals, starts, pair counts and
  // multiply-adds come from a formula per diagonal of C. The pairwise pass visits each pair and
  // calls hm_make_pair, the kernels' own test of where a pair meets. Shapes: square, tall, wide,
  // inner extents of 0, 1 and 2, bands partly or wholly past the matrix's corner, transposes.
  namespace dd = nd::detail;
  uniform_ints uniform;
  const auto seed = uniform.seed;
  INFO("seed " << seed);
  // A contiguous range of offsets inside a rows x cols matrix (at least one diagonal).
  const auto band = [&](int rows, int cols) {
    const int lo = uniform(1 - rows, cols - 1);
    const int hi = uniform(lo, std::min(cols - 1, lo + uniform(0, rows + cols)));
    std::vector<int> offsets;
    for (int d = lo; d <= hi; ++d) offsets.push_back(d);
    return offsets;
  };
  int compared = 0, nonempty = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int m = uniform(1, trial % 3 == 0 ? 8 : 90), k = uniform(1, trial % 5 == 0 ? 3 : 90),
              n = uniform(1, trial % 7 == 0 ? 8 : 90);
    const auto op_a = trial % 2 ? nd::op::transpose : nd::op::none;
    const auto op_b = trial / 2 % 2 ? nd::op::transpose : nd::op::none;
    const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
    const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const auto a_offsets = band(ar, ac), b_offsets = band(br, bc);
    const auto a_starts = dd::diagonal_starts(ar, ac, a_offsets);
    const auto b_starts = dd::diagonal_starts(br, bc, b_offsets);
    const dd::hm_operand_structure a{ar, ac, &a_offsets, &a_starts, op_a};
    const dd::hm_operand_structure b{br, bc, &b_offsets, &b_starts, op_b};
    const auto closed = dd::hm_symbolic("test", a, b);
    const auto pairwise = dd::hm_symbolic("test", a, b, true);
    INFO(m << " x " << k << " x " << n << ", A offsets " << a_offsets.front() << ".."
           << a_offsets.back() << " op " << nd::to_string(op_a) << ", B offsets "
           << b_offsets.front() << ".." << b_offsets.back() << " op " << nd::to_string(op_b));
    require_same_symbolic(closed, pairwise);
    ++compared;
    nonempty += closed.c_offsets.empty() ? 0 : 1;
  }
  // The trials must have exercised products with diagonals in C.
  CHECK(nonempty > compared / 2);

  // A band at n = 10240, half-bands 100: 401 diagonals of C and (2 * 100 + 1)^2 pairs.
  const auto wide = nd::banded_offsets(10240, 10240, 100, 100);
  const auto starts = dd::diagonal_starts(10240, 10240, wide);
  const dd::hm_operand_structure w{10240, 10240, &wide, &starts, nd::op::none};
  const auto s = dd::hm_symbolic("test", w, w);
  CHECK(s.c_offsets.size() == 401);
  CHECK(s.pair_ptr.back() == 201 * 201);
  CHECK(s.multiply_adds == dd::hm_symbolic("test", w, w, true).multiply_adds);
}

TEST_CASE("the symbolic phase of many scattered diagonals equals an element count", "[diagonal]") {
  // Thousands of pairs of randomly placed diagonals, rectangular shapes, every transposition.
  // The reference counts, for every pair of logical diagonals, the rows i with (i, i + a) inside
  // op(A) and (i + a, i + a + b) inside op(B): no formula of the symbolic phase is used.
  namespace dd = nd::detail;
  uniform_ints uniform;
  const auto seed = uniform.seed;
  INFO("seed " << seed);
  for (int trial = 0; trial < 12; ++trial) {
    const int m = uniform(40, 333), k = uniform(40, 333), n = uniform(40, 333);
    const auto op_a = trial % 2 ? nd::op::transpose : nd::op::none;
    const auto op_b = trial / 2 % 2 ? nd::op::transpose : nd::op::none;
    const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
    const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int na = std::min(ar + ac - 1, uniform(70, 200)), nb = std::min(br + bc - 1, 90);
    const auto a_offsets = nd::random_offsets(ar, ac, na, seed + 2 * std::uint64_t(trial));
    const auto b_offsets = nd::random_offsets(br, bc, nb, seed + 2 * std::uint64_t(trial) + 1);
    REQUIRE(a_offsets.size() * b_offsets.size() >= 4000);
    const auto a_starts = dd::diagonal_starts(ar, ac, a_offsets);
    const auto b_starts = dd::diagonal_starts(br, bc, b_offsets);
    const dd::hm_operand_structure a{ar, ac, &a_offsets, &a_starts, op_a};
    const dd::hm_operand_structure b{br, bc, &b_offsets, &b_starts, op_b};
    const auto s = dd::hm_symbolic("test", a, b);
    INFO(m << " x " << k << " x " << n << ", " << na << " x " << nb << " diagonals, op "
           << nd::to_string(op_a) << " " << nd::to_string(op_b));

    std::vector<int> pairs_on(std::size_t(m + n - 1), 0);  // by c + m - 1
    double multiply_adds = 0;
    for (const int stored_a : a_offsets)
      for (const int stored_b : b_offsets) {
        const int da = ta ? -stored_a : stored_a, db = tb ? -stored_b : stored_b;
        int rows = 0;
        for (int i = 0; i < m; ++i)
          rows += i + da >= 0 && i + da < k && i + da + db >= 0 && i + da + db < n ? 1 : 0;
        if (rows == 0) continue;
        ++pairs_on[std::size_t(da + db + m - 1)];
        multiply_adds += rows;
      }
    std::vector<int> offsets;
    std::vector<std::int64_t> starts{0}, pair_ptr{0}, chunk_ptr{0};
    for (int c = 1 - m; c < n; ++c) {
      const int count = pairs_on[std::size_t(c + m - 1)];
      if (count == 0) continue;
      const std::int64_t len = std::min(c >= 0 ? m : m + c, c >= 0 ? n - c : n);
      offsets.push_back(c);
      starts.push_back(starts.back() + len);
      pair_ptr.push_back(pair_ptr.back() + count);
      chunk_ptr.push_back(chunk_ptr.back() + (len + dd::hm_chunk - 1) / dd::hm_chunk);
    }
    REQUIRE(s.c_offsets == offsets);
    REQUIRE(s.c_starts == starts);
    REQUIRE(s.pair_ptr == pair_ptr);
    REQUIRE(s.chunk_ptr == chunk_ptr);
    REQUIRE(s.multiply_adds == multiply_adds);
  }
}

/// The device pass's result against the host pass's: C's host arrays, its multiply-adds, and
/// C's arrays as the device pass left them in device memory.
template <class Mem>
void check_device_pass(const nd::detail::hm_symbolic_result<Mem>& on_device,
                       const nd::detail::hm_symbolic_product& on_host) {
  const auto& s = on_device.host;
  REQUIRE(on_device.device.storage.data() != nullptr);
  require_same_symbolic(s, on_host);
  const std::size_t nc = s.c_offsets.size();
  const auto copy = [](const auto& v, std::size_t count) {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<std::int64_t>(h.data(), h.data() + count);
  };
  const auto widen = [](const auto& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };
  const auto& dev = on_device.device;
  CHECK(copy(dev.c_offsets(), nc) == widen(s.c_offsets));
  CHECK(copy(dev.c_starts(), nc + 1) == widen(s.c_starts));
  CHECK(copy(dev.pair_ptr(), nc + 1) == widen(s.pair_ptr));
  CHECK(copy(dev.chunk_ptr(), nc + 1) == widen(s.chunk_ptr));
}

NEARSPARSE_SPACE_TEST_CASE("the device pass of the HM symbolic phase equals the host pass",
                           "[diagonal]") {
  // The device pass (detail/hm_device_symbolic.hpp) on every backend against the host pass: C's
  // host and device arrays, a plan made from it (its pairs, chunks and index by offset against
  // the host-made plan's) and that plan's product against the dense one. Shapes: rectangular,
  // every transposition, scattered diagonals past a 256-offset team of the counting kernel,
  // diagonals that never meet, a C range that is empty, full bands.
  namespace dd = nd::detail;
  const TestType exec;
  using mem = typename TestType::memory_space;
  uniform_ints uniform;
  const auto seed = uniform.seed;
  INFO("seed " << seed);
  std::vector<hm_case> shapes;
  for (int trial = 0; trial < 6; ++trial) {
    const int m = uniform(40, 700), k = uniform(40, 700), n = uniform(40, 700);
    shapes.push_back({"random " + std::to_string(trial), m, k, n,
                      nd::random_offsets(m, k, std::min(m + k - 1, uniform(1, 120)), seed + trial),
                      nd::random_offsets(k, n, std::min(k + n - 1, uniform(1, 120)),
                                         seed + 100 + std::uint64_t(trial))});
  }
  shapes.push_back({"far-off diagonals that never meet", 50, 60, 50, {40, 45}, {-59, 30, 31}});
  shapes.push_back({"no offset of C inside C", 50, 50, 50, {40}, {30}});
  shapes.push_back({"bands 300, half-bands 7 and 4", 300, 300, 300,
                    nd::banded_offsets(300, 300, 7, 7), nd::banded_offsets(300, 300, 4, 4)});
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    const auto& c = shapes[t];
    const auto op_a = t % 2 ? nd::op::transpose : nd::op::none;
    const auto op_b = t / 2 % 2 ? nd::op::transpose : nd::op::none;
    const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
    INFO(c.name << ", " << c.m << " x " << c.k << " x " << c.n << ", " << c.a_offsets.size()
                << " x " << c.b_offsets.size() << " diagonals, op(A) " << nd::to_string(op_a)
                << ", op(B) " << nd::to_string(op_b));
    const auto a = nd::random_hm<double>(exec, ta ? c.k : c.m, ta ? c.m : c.k,
                                         ta ? negated(c.a_offsets) : c.a_offsets, seed + 7 * t);
    const auto b = nd::random_hm<double>(exec, tb ? c.n : c.k, tb ? c.k : c.n,
                                         tb ? negated(c.b_offsets) : c.b_offsets, seed + 7 * t + 1);
    auto on_device = dd::hm_symbolic_for(exec, "test", a, b, op_a, op_b, true);
    const auto on_host = dd::hm_symbolic_for(exec, "test", a, b, op_a, op_b).host;
    const auto s = on_device.host;  // a copy: the plan below takes on_device
    check_device_pass(on_device, on_host);
    const std::size_t nc = s.c_offsets.size();
    const auto copy = [](const auto& v, std::size_t count) {
      const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      return std::vector<std::int64_t>(h.data(), h.data() + count);
    };
    const auto widen = [](const auto& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };

    // A plan made from the device pass against one made from the host pass.
    const auto plan =
        dd::hm_product_access::make_plan(exec, a, b, op_a, op_b, std::move(on_device));
    const auto host_made = dd::hm_product_access::make_plan(
        exec, a, b, op_a, op_b, dd::hm_symbolic_result<mem>{on_host, {}});
    const auto& pd = plan.device();
    const auto& hd = host_made.device();
    REQUIRE(pd.pairs.extent(0) == hd.pairs.extent(0));
    REQUIRE(pd.chunks == hd.chunks);
    const auto pairs_of = [](const auto& v) {
      const auto h = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace(),
          Kokkos::View<const std::int64_t*, mem, Kokkos::MemoryUnmanaged>(
              reinterpret_cast<const std::int64_t*>(v.data()), 4 * v.extent(0)));
      return std::vector<std::int64_t>(h.data(), h.data() + h.extent(0));
    };
    CHECK(pairs_of(pd.pairs) == pairs_of(hd.pairs));
    CHECK(copy(pd.chunk_diagonal, std::size_t(pd.chunks)) ==
          copy(hd.chunk_diagonal, std::size_t(hd.chunks)));
    const auto index = copy(pd.c_index, std::size_t(s.c_range));
    for (std::size_t ci = 0; ci < nc; ++ci)
      REQUIRE(index[std::size_t(s.c_offsets[ci] - s.c_lo)] == std::int64_t(ci));

    auto cm = plan.make_c(exec);
    CHECK(copy(cm.starts(), nc + 1) == widen(cm.host_starts()));
    CHECK(copy(cm.offsets(), nc) == widen(cm.host_offsets()));
    nearsparse::fill_random(exec, cm.values(), seed + 3, -1.0, 1.0);
    const auto c0 = ref::dense_of(exec, cm);
    nd::multiply(exec, plan, 0.5, a, b, 2.0, cm);
    ref::check_product<double>(ref::dense_of(exec, cm), 0.5,
                               ref::apply_op(ref::dense_of(exec, a), op_a),
                               ref::apply_op(ref::dense_of(exec, b), op_b), 2.0, c0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("the device pass of the HM symbolic phase over a range of many rounds",
                           "[diagonal]") {
  // C's range here (about 2 x 70000 offsets) is longer than one offset per thread of the most
  // teams the pass takes, so each team scans several rounds of offsets and sums the totals of up
  // to 1023 teams before it. Only the symbolic arrays are compared (a dense reference of this
  // size is out of reach); the product of the shapes above covers the values.
  namespace dd = nd::detail;
  const TestType exec;
  uniform_ints uniform;
  INFO("seed " << uniform.seed);
  const int m = 70000 + uniform(0, 999), k = 69000 + uniform(0, 999), n = 70000 + uniform(0, 999);
  // Random diagonals plus two of A near its corners and B's main diagonal, so that C's range
  // spans about m + k offsets whatever the draw.
  const auto with = [](std::vector<int> offsets, std::initializer_list<int> more) {
    offsets.insert(offsets.end(), more);
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    return offsets;
  };
  const auto a_offsets =
      with(nd::random_offsets(m, k, 23, uniform.seed), {-(m - 1) + 100, k - 1 - 100});
  const auto b_offsets = with(nd::random_offsets(k, n, 17, uniform.seed + 1), {0});
  for (int t = 0; t < 4; ++t) {
    const auto op_a = t % 2 ? nd::op::transpose : nd::op::none;
    const auto op_b = t / 2 ? nd::op::transpose : nd::op::none;
    const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
    INFO("op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b));
    const nd::hm_matrix<double, typename TestType::memory_space> a(
        exec, ta ? k : m, ta ? m : k, ta ? negated(a_offsets) : a_offsets);
    const nd::hm_matrix<double, typename TestType::memory_space> b(
        exec, tb ? n : k, tb ? k : n, tb ? negated(b_offsets) : b_offsets);
    const auto on_device = dd::hm_symbolic_for(exec, "test", a, b, op_a, op_b, true);
    const auto on_host = dd::hm_symbolic_of("test", a, b, op_a, op_b);
    REQUIRE(on_host.c_range > 128 * dd::hm_symbolic_partition::max_teams);
    check_device_pass(on_device, on_host);
  }
}

TEST_CASE("the device symbolic pass splits C's range into bounded teams", "[diagonal]") {
  // Every offset of the range belongs to exactly one (team, round, thread); teams stay within
  // the bound; a range of 0 still has one team (the one that writes C's closing entries).
  using part_t = nd::detail::hm_symbolic_partition;
  for (const int threads : {1, 128}) {
    for (const int range :
         {0, 1, 127, 128, 129, 5000, 128 * 1024 - 1, 128 * 1024, 128 * 1024 + 1, 140001, 2000000}) {
      INFO("range " << range << ", threads " << threads);
      const auto p = part_t::of(range, threads);
      CHECK(p.threads == threads);
      CHECK(p.teams >= 1);
      CHECK(p.teams <= part_t::max_teams);
      CHECK(p.rounds >= 1);
      CHECK(long(p.teams) * p.per_team() >= range);
      // No team is wholly past the range (except the one team of an empty range).
      if (range > 0) CHECK(long(p.teams - 1) * p.per_team() < range);
    }
  }
}

TEST_CASE("a band's diagonal starts in closed form equal the stored starts", "[diagonal]") {
  // band_diagonal_start lets a kernel find where each diagonal of a band starts without reading
  // the starts; compared with diagonal_starts on every band of small shapes and a large one.
  namespace dd = nd::detail;
  const auto check_band = [](int rows, int cols, int lo, int hi) {
    std::vector<int> offsets;
    for (int d = lo; d <= hi; ++d) offsets.push_back(d);
    const auto starts = dd::diagonal_starts(rows, cols, offsets);
    for (int d = lo; d <= hi + 1; ++d) {
      INFO(rows << " x " << cols << ", band " << lo << ".." << hi << ", diagonal " << d);
      REQUIRE(dd::band_diagonal_start(rows, cols, lo, d) == starts[std::size_t(d - lo)]);
    }
  };
  for (int rows = 1; rows <= 9; ++rows)
    for (int cols = 1; cols <= 9; ++cols)
      for (int lo = 1 - rows; lo < cols; ++lo)
        for (int hi = lo; hi < cols; ++hi) check_band(rows, cols, lo, hi);
  check_band(10240, 9000, -300, 250);
  check_band(70000, 70000, -69999, 69999);  // past 2^31 values
}

namespace {

/// Whether multiply() on this space and memory has the host kernel (OpenMP, Serial, HostSpace).
template <class Exec>
constexpr bool has_host_kernel() {
  return std::is_same_v<typename Exec::memory_space, Kokkos::HostSpace> &&
         Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
}

/// The union of two offset lists.
std::vector<int> merged(std::vector<int> x, const std::vector<int>& y) {
  x.insert(x.end(), y.begin(), y.end());
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
  return x;
}

/// The host kernel (implementation::specialized) against the portable kernel, with a plan
/// (alpha, beta and a random C) and whole; against the dense product where `dense`.
template <class Scalar, class Exec>
void check_host_kernel(const Exec& exec, const hm_case& c, nd::op op_a, nd::op op_b, bool dense,
                       std::uint64_t seed) {
  using nearsparse::implementation;
  using mem = typename Exec::memory_space;
  const bool ta = op_a == nd::op::transpose, tb = op_b == nd::op::transpose;
  INFO(c.name << ", op(A) " << nd::to_string(op_a) << ", op(B) " << nd::to_string(op_b) << ", "
              << (std::is_same_v<Scalar, float> ? "float" : "double") << ", seed " << seed);
  const auto a = nd::random_hm<Scalar>(exec, ta ? c.k : c.m, ta ? c.m : c.k,
                                       ta ? negated(c.a_offsets) : c.a_offsets, seed);
  const auto b = nd::random_hm<Scalar>(exec, tb ? c.n : c.k, tb ? c.k : c.n,
                                       tb ? negated(c.b_offsets) : c.b_offsets, seed + 1);
  const auto os = nd::hm_algorithm::output_stationary;
  const auto specialized = options_for(os, implementation::specialized);
  const auto portable = options_for(os, implementation::portable);
  const nd::hm_product_plan<Scalar, mem> plan(exec, a, b, op_a, op_b);
  auto c_host = plan.make_c(exec), c_portable = plan.make_c(exec);
  nearsparse::fill_random(exec, c_host.values(), seed + 2, -1.0, 1.0);
  Kokkos::deep_copy(exec, c_portable.values(), c_host.values());
  const auto c0 = dense ? ref::dense_of(exec, c_host) : host_matrix<double>(0, 0);
  const Scalar alpha = 1.25, beta = -0.5;
  nd::multiply(exec, plan, alpha, a, b, beta, c_host, specialized);
  nd::multiply(exec, plan, alpha, a, b, beta, c_portable, portable);
  const auto w_host = nd::multiply(exec, a, b, op_a, op_b, specialized);
  const auto w_portable = nd::multiply(exec, a, b, op_a, op_b, portable);
  exec.fence();
  // Both sum each element's pairs in the same order: they differ at most by the compiler's
  // contraction of multiply-adds.
  const double tolerance = 64 * ref::roundoff<Scalar>();
  const auto [worst, scale] = difference(c_host, c_portable);
  CHECK(worst <= tolerance * std::max(scale, 1.0));
  CHECK(w_host.host_offsets() == plan.c_offsets());
  CHECK(w_host.host_starts() == w_portable.host_starts());
  const auto [w_worst, w_scale] = difference(w_host, w_portable);
  CHECK(w_worst <= tolerance * std::max(w_scale, 1.0));
  if (dense) {
    const auto ha = ref::apply_op(ref::dense_of(exec, a), op_a);
    const auto hb = ref::apply_op(ref::dense_of(exec, b), op_b);
    ref::check_product<Scalar>(ref::dense_of(exec, c_host), alpha, ha, hb, beta, c0);
    ref::check_product<Scalar>(ref::dense_of(exec, w_host), 1.0, ha, hb, 0.0,
                               host_matrix<double>(std::size_t(c.m), std::size_t(c.n)));
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("the host HM kernel equals the portable kernel and the dense product",
                           "[diagonal]") {
  const TestType exec;
  if constexpr (has_host_kernel<TestType>()) {
    const auto seed = nearsparse::test::fresh_seed();
    // Sizes past the kernel's 512-position blocks and not multiples of them or of a vector:
    // bands (many pairs per diagonal of C, fused four at a time, the rest one by one, ranges
    // that end inside a block), scattered diagonals, a band with scattered diagonals, lone
    // diagonals (one pair per diagonal of C, written directly when beta = 0).
    const std::vector<hm_case> shapes = {
        {"band 531, half-bands 9 and 6", 531, 531, 531, nd::banded_offsets(531, 531, 9, 9),
         nd::banded_offsets(531, 531, 6, 6)},
        {"random 541 x 523 x 557, 23 x 19 diagonals", 541, 523, 557,
         nd::random_offsets(541, 523, 23, seed + 3), nd::random_offsets(523, 557, 19, seed + 4)},
        {"band 3 with scattered diagonals, 1037", 1037, 1037, 1037,
         merged(nd::banded_offsets(1037, 1037, 3, 3), nd::random_offsets(1037, 1037, 9, seed + 5)),
         merged(nd::banded_offsets(1037, 1037, 2, 4), nd::random_offsets(1037, 1037, 7, seed + 6))},
        {"lone diagonals 1100", 1100, 1100, 1100, {5}, {-7}},
        {"wide band 1533 x 1201 x 1389, half-bands 31 and 17", 1533, 1201, 1389,
         nd::banded_offsets(1533, 1201, 31, 31), nd::banded_offsets(1201, 1389, 17, 17)},
    };
    int round = 0;
    for (const auto& c : shapes)
      for (const auto op_a : {nd::op::none, nd::op::transpose})
        for (const auto op_b : {nd::op::none, nd::op::transpose}) {
          // The dense product (O(n^3)) for every third form of the small shapes.
          const bool dense = c.m <= 560 && round++ % 3 == 0;
          check_host_kernel<double>(exec, c, op_a, op_b, dense, seed);
          check_host_kernel<float>(exec, c, op_a, op_b, dense, seed + 10);
        }
  }
}

NEARSPARSE_SPACE_TEST_CASE(
    "the host HM kernel does not read C with beta = 0, and handles empty "
    "products",
    "[diagonal]") {
  using nearsparse::implementation;
  const TestType exec;
  if constexpr (has_host_kernel<TestType>()) {
    using mem = typename TestType::memory_space;
    using matrix = nd::hm_matrix<double, mem>;
    const auto seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    const auto specialized =
        options_for(nd::hm_algorithm::output_stationary, implementation::specialized);
    // Lone diagonals (the direct write) and a band (the summed blocks) into a C full of NaN.
    for (const auto& offsets : {std::vector<int>{3}, nd::banded_offsets(777, 777, 5, 5)}) {
      const auto a = nd::random_hm<double>(exec, 777, 777, offsets, seed);
      const auto b = nd::random_hm<double>(exec, 777, 777, offsets, seed + 1);
      const nd::hm_product_plan<double, mem> plan(exec, a, b);
      auto c = plan.make_c(exec), expected = plan.make_c(exec);
      Kokkos::deep_copy(exec, c.values(), std::nan(""));
      nd::multiply(exec, plan, 2.0, a, b, 0.0, c, specialized);
      nd::multiply(exec, plan, 2.0, a, b, 0.0, expected,
                   options_for(nd::hm_algorithm::output_stationary, implementation::portable));
      exec.fence();
      const auto [worst, scale] = difference(c, expected);
      CHECK(worst <= 64 * ref::roundoff<double>() * std::max(scale, 1.0));  // NaN fails
    }
    // Empty products: no rows, no inner extent, no diagonals, diagonals that never meet.
    const matrix e(exec, 0, 0, {});
    CHECK(nd::multiply(exec, e, e, nd::op::none, nd::op::none, specialized).rows() == 0);
    const matrix a2(exec, 5, 0, {}), b2(exec, 0, 4, {});
    CHECK(nd::multiply(exec, a2, b2, nd::op::none, nd::op::none, specialized).diagonal_count() ==
          0);
    const matrix a3(exec, 6, 6, {}), b3(exec, 6, 6, {0, 2});
    CHECK(nd::multiply(exec, a3, b3, nd::op::none, nd::op::none, specialized).diagonal_count() ==
          0);
    const matrix far_a(exec, 50, 50, {40}), far_b(exec, 50, 50, {30});
    const auto never = nd::multiply(exec, far_a, far_b, nd::op::none, nd::op::none, specialized);
    CHECK(never.diagonal_count() == 0);
    CHECK(never.rows() == 50);
    const nd::hm_product_plan<double, mem> empty_plan(exec, far_a, far_b);
    auto empty_c = empty_plan.make_c(exec);
    CHECK_NOTHROW(nd::multiply(exec, empty_plan, 1.0, far_a, far_b, 0.5, empty_c, specialized));
    // The atomic algorithm has no host kernel.
    CHECK_THROWS_WITH(
        nd::multiply(exec, far_a, far_b, nd::op::none, nd::op::none,
                     options_for(nd::hm_algorithm::atomic, implementation::specialized)),
        StartsWith("nearsparse::diagonal::multiply: ") && Contains("atomic"));
  }
}

NEARSPARSE_SPACE_TEST_CASE("products keep their C while a later product reuses freed values",
                           "[diagonal]") {
  // C's values come from the allocation cache: a C still held is never handed out again.
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto offsets = nd::random_offsets(500, 500, 13, seed);
  const auto a = nd::random_hm<double>(exec, 500, 500, offsets, seed + 1);
  const auto b = nd::random_hm<double>(exec, 500, 500, offsets, seed + 2);
  const auto b2 = nd::random_hm<double>(exec, 500, 500, offsets, seed + 3);
  const auto first = nd::multiply(exec, a, b);
  const auto before = ref::dense_of(exec, first);
  for (int round = 0; round < 3; ++round) {
    const auto other = nd::multiply(exec, a, b2);  // freed at the end of each round
    exec.fence();
    CHECK(other.values().data() != first.values().data());
  }
  const auto after = ref::dense_of(exec, first);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < before.rows; ++i)
    for (std::size_t j = 0; j < before.cols; ++j) changed += before(i, j) != after(i, j);
  CHECK(changed == 0);
  ref::check_product<double>(after, 1.0, ref::dense_of(exec, a), ref::dense_of(exec, b), 0.0,
                             host_matrix<double>(500, 500));
}
