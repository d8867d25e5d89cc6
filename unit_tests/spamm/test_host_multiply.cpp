// The host path of SpAMM (Kokkos::OpenMP and Kokkos::Serial: tile norms by plain loops, kept tile
// products through the host BLAS) against the portable kernels and the double-precision product
// over the same kept tile pairs.
#include "spamm_inputs.hpp"
#include "spamm_reference.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using nearsparse::implementation;
using spamm_precision = nearsparse::spamm::precision;
namespace ref = nearsparse::test::spamm;
namespace spamm = nearsparse::spamm;
using nearsparse::test::spamm::decaying_random;

namespace {

// Whether Exec has the host path's overloads (OpenMP or Serial).
template <class Exec>
constexpr bool host_space() {
  bool host = false;
#ifdef KOKKOS_ENABLE_OPENMP
  host = host || std::is_same<Exec, Kokkos::OpenMP>::value;
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  host = host || std::is_same<Exec, Kokkos::Serial>::value;
#endif
  return host;
}

const std::vector<spamm_precision> all_precisions = {spamm_precision::fp64, spamm_precision::fp32,
                                                     spamm_precision::tf32, spamm_precision::fp16,
                                                     spamm_precision::bf16};

// A threshold between two well-separated norm products near the given fraction of them, so no
// product sits within rounding of tau (the portable and host norms sum in different orders).
double threshold_at(const nearsparse::test::host_matrix<double>& an,
                    const nearsparse::test::host_matrix<double>& bn, double fraction) {
  std::vector<double> products;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t l = 0; l < an.cols; ++l)
      for (std::size_t j = 0; j < bn.cols; ++j) products.push_back(an(i, l) * bn(l, j));
  std::sort(products.begin(), products.end());
  std::size_t cut = std::size_t(double(products.size()) * fraction);
  while (cut + 1 < products.size() && products[cut + 1] < products[cut] * (1 + 1e-3)) ++cut;
  if (cut + 1 >= products.size()) return 0.0;
  return 0.5 * (products[cut] + products[cut + 1]);
}

// Whether some output tile keeps k that are not one consecutive run (the host path then makes
// several gemms for that tile).
bool some_tile_has_gaps(const std::vector<char>& kept, std::size_t tiles, std::size_t kt) {
  for (std::size_t t = 0; t < tiles; ++t) {
    int runs = 0;
    for (std::size_t k = 0; k < kt; ++k)
      if (kept[t * kt + k] && (k == 0 || !kept[t * kt + k - 1])) ++runs;
    if (runs > 1) return true;
  }
  return false;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("the host path sums exactly the kept tile products in every precision",
                           "[spamm][host]") {
  using exec_space = TestType;
  if constexpr (host_space<exec_space>()) {
    using matrix = ref::matrix<exec_space>;
    using memory = typename exec_space::memory_space;
    const exec_space exec;
    struct shape {
      std::size_t m, k, n;
      int tile;
      double fraction;  // of norm products below tau
    };
    const shape s = GENERATE(shape{301, 419, 263, 32, 0.6}, shape{301, 419, 263, 64, 0.3},
                             shape{130, 700, 129, 128, 0.5}, shape{77, 131, 45, 32, 0.0},
                             shape{1, 1, 1, 32, 0.0}, shape{200, 37, 161, 64, 0.0});
    const std::uint64_t seed = nearsparse::test::fresh_seed();
    const auto a = decaying_random(exec, s.m, s.k, seed);
    const auto b = decaying_random(exec, s.k, s.n, seed + 1);
    matrix c0("C0", s.m, s.n);
    nearsparse::fill_random(exec, c0, seed + 2, -1.0, 1.0);
    Kokkos::deep_copy(Kokkos::subview(c0, 0, 0), std::numeric_limits<double>::quiet_NaN());
    const auto hc = nearsparse::test::to_host(c0);
    const bool blas = nearsparse::detail::host_blas::available();
    for (const auto precision : all_precisions) {
      INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n << ", tile " << s.tile
                              << ", " << spamm::to_string(precision) << ", seed " << seed
                              << (blas ? "" : ", no host BLAS"));
      spamm::options opt;
      opt.precision = precision;
      opt.tile = s.tile;
      opt.implementation = blas ? implementation::specialized : implementation::automatic;
      spamm::plan plan(exec, a, b, opt);
      const auto ha = ref::rounded(nearsparse::test::to_host(a), precision);
      const auto hb = ref::rounded(nearsparse::test::to_host(b), precision);
      const auto an = nearsparse::test::to_host(plan.a_norms());
      const auto bn = nearsparse::test::to_host(plan.b_norms());
      const double norm_tol = precision == spamm_precision::fp64 ? 1e-13 : 1e-6;
      NEARSPARSE_CHECK_RELATIVE_ERROR(an, ref::tile_norms(ha, s.tile), norm_tol);
      NEARSPARSE_CHECK_RELATIVE_ERROR(bn, ref::tile_norms(hb, s.tile), norm_tol);
      const double tau = s.fraction > 0 ? threshold_at(an, bn, s.fraction) : 0.0;
      plan.set_tau(exec, tau);
      const auto kept = ref::kept_set(an, bn, tau);
      std::int64_t kept_count = 0;
      for (char x : kept) kept_count += x;
      CHECK(plan.kept_count() == kept_count);
      if (s.fraction > 0 && s.tile == 32)
        CHECK(some_tile_has_gaps(kept, an.rows * bn.cols, an.cols));

      // The portable kernels from a plan at the same tau keep the same pairs.
      spamm::options portable_opt = opt;
      portable_opt.implementation = implementation::portable;
      portable_opt.tau = tau;
      spamm::plan portable(exec, a, b, portable_opt);
      REQUIRE(portable.kept_count() == kept_count);

      const double alpha = -1.25, beta = 0.5;
      const auto expected = ref::kept_product(alpha, ha, hb, beta, hc, s.tile, kept);
      const auto expected_beta0 = ref::kept_product(
          alpha, ha, hb, 0.0, nearsparse::test::host_matrix<double>(s.m, s.n), s.tile, kept);
      const double tol = ref::accumulation_tolerance(precision, s.k) + 4 * 0x1p-24;  // float C
      // C in each layout and type the host path treats differently: the packed type with a unit
      // stride (gemm straight into C, row- or column-major, with a leading dimension larger
      // than the extent), another type or no unit stride (a tile buffer).
      const auto run = [&](const char* what, auto c, auto c_portable) {
        INFO("C: " << what);
        Kokkos::deep_copy(c, c0);
        Kokkos::deep_copy(c_portable, c0);
        using c_value = typename decltype(c)::non_const_value_type;
        plan.multiply(exec, c_value(alpha), c_value(beta), c);
        portable.multiply(exec, c_value(alpha), c_value(beta), c_portable);
        // beta = 0 writes C without reading it: element (0, 0) held NaN.
        const auto got = nearsparse::test::to_host(c);
        const auto got_portable = nearsparse::test::to_host(c_portable);
        // NaN * beta: both the expected product and ours carry it at (0, 0); compare the rest.
        auto strip = [](nearsparse::test::host_matrix<double> x) {
          x(0, 0) = 0;
          return x;
        };
        CHECK(std::isnan(got(0, 0)));
        NEARSPARSE_CHECK_RELATIVE_ERROR(strip(got), strip(expected), tol);
        NEARSPARSE_CHECK_RELATIVE_ERROR(strip(got), strip(got_portable), 2 * tol);
        Kokkos::deep_copy(c, c0);
        plan.multiply(exec, c_value(alpha), c_value(0), c);
        const auto got0 = nearsparse::test::to_host(c);
        bool finite = true;
        for (double x : got0.data) finite = finite && std::isfinite(x);
        CHECK(finite);
        NEARSPARSE_CHECK_RELATIVE_ERROR(got0, expected_beta0, tol);
      };
      const std::size_t m = s.m, n = s.n;
      run("double, LayoutRight", Kokkos::View<double**, Kokkos::LayoutRight, memory>("C", m, n),
          Kokkos::View<double**, Kokkos::LayoutRight, memory>("Cp", m, n));
      run("float, LayoutLeft", Kokkos::View<float**, Kokkos::LayoutLeft, memory>("C", m, n),
          Kokkos::View<float**, Kokkos::LayoutLeft, memory>("Cp", m, n));
      {
        Kokkos::View<float**, Kokkos::LayoutRight, memory> wide("wide", m, n + 5);
        Kokkos::View<double**, Kokkos::LayoutLeft, memory> tall("tall", m + 3, n);
        run("float, a subview with a leading dimension",
            Kokkos::subview(wide, Kokkos::ALL, std::make_pair(std::size_t(0), n)),
            Kokkos::View<float**, Kokkos::LayoutRight, memory>("Cp", m, n));
        run("double, a column-major subview with a leading dimension",
            Kokkos::subview(tall, std::make_pair(std::size_t(0), m), Kokkos::ALL),
            Kokkos::View<double**, Kokkos::LayoutLeft, memory>("Cp", m, n));
      }
      {
        Kokkos::View<double*, memory> buffer("buffer", 2 * m * n);
        Kokkos::View<double**, Kokkos::LayoutStride, memory> strided(
            buffer.data(), Kokkos::LayoutStride(m, 2, n, 2 * m));
        run("double, no unit stride", strided,
            Kokkos::View<double**, Kokkos::LayoutRight, memory>("Cp", m, n));
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the host path takes a tau search and repeated products",
                           "[spamm][host]") {
  // The whole call as a user makes it (a target valid ratio, so the search runs on the host
  // norms), then a power A^3 through a reused plan, against the double reference.
  using exec_space = TestType;
  if constexpr (host_space<exec_space>()) {
    const exec_space exec;
    const std::uint64_t seed = nearsparse::test::fresh_seed();
    INFO(exec_space::name() << ", seed " << seed);
    const std::size_t n = 333;
    const auto a = decaying_random(exec, n, n, seed);
    ref::matrix<exec_space> c("C", n, n), p("P", n, n);
    spamm::options opt;
    opt.precision = spamm_precision::fp64;
    opt.tile = 32;
    opt.target_valid_ratio = 0.3;
    opt.search.tolerance = 0.02;
    const auto report = spamm::multiply(exec, 1.0, a, a, 0.0, c, opt);
    CHECK(std::abs(report.valid_ratio - 0.3) <= 0.02);
    opt.implementation = implementation::portable;
    const auto portable = spamm::multiply(exec, 1.0, a, a, 0.0, p, opt);
    CHECK(portable.tau == Approx(report.tau).epsilon(1e-12));
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(c), nearsparse::test::to_host(p),
                                    1e-13);
    // Powers with a reused plan (tau = 0: the dense products).
    spamm::options dense;
    dense.precision = spamm_precision::fp64;
    dense.tile = 64;
    spamm::plan plan(exec, a, a, dense);
    ref::matrix<exec_space> q("Q", n, n);
    plan.multiply(exec, 1.0, 0.0, p);
    plan.update_b(exec, p);
    plan.multiply(exec, 1.0, 0.0, q);
    const auto ha = nearsparse::test::to_host(a);
    nearsparse::test::host_matrix<double> zero(n, n);
    const auto a2 = nearsparse::test::reference_gemm(1.0, ha, ha, 0.0, zero);
    const auto a3 = nearsparse::test::reference_gemm(1.0, ha, a2, 0.0, zero);
    NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(q), a3, 1e-12);
  }
}

NEARSPARSE_SPACE_TEST_CASE("the host path handles empty products and says when it cannot run",
                           "[spamm][host][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  if constexpr (host_space<exec_space>()) {
    const exec_space exec;
    const bool blas = nearsparse::detail::host_blas::available();
    spamm::options opt;
    opt.implementation = implementation::specialized;
    ref::matrix<exec_space> a("A", 5, 0), b("B", 0, 3), c("C", 5, 3);
    Kokkos::deep_copy(c, 2.0);
    if (!blas) {
      CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.5, c, opt), nearsparse::unsupported);
      CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.5, c, opt),
                        Contains("nearsparse::spamm::multiply") && Contains("host BLAS"));
      ref::matrix<exec_space> x("X", 40, 40);
      CHECK_THROWS_WITH(spamm::plan<exec_space>(exec, x, x, opt),
                        Contains("nearsparse::spamm::plan") && Contains("host BLAS"));
      return;
    }
    // K = 0: C = beta * C; M = 0 or N = 0: nothing.
    spamm::multiply(exec, 1.0, a, b, 0.5, c, opt);
    for (double x : nearsparse::test::to_host(c).data) CHECK(x == 1.0);
    ref::matrix<exec_space> a0("A0", 0, 4), b0("B0", 4, 3), c0("C0", 0, 3);
    CHECK_NOTHROW(spamm::multiply(exec, 1.0, a0, b0, 0.0, c0, opt));
    ref::matrix<exec_space> a1("A1", 2, 4), b1("B1", 4, 0), c1("C1", 2, 0);
    opt.target_valid_ratio = 0.5;
    CHECK_NOTHROW(spamm::multiply(exec, 1.0, a1, b1, 0.0, c1, opt));
    // A threshold above every norm product keeps nothing: C = beta * C, and beta = 0 writes 0
    // over NaN.
    ref::matrix<exec_space> x("X", 70, 50), y("Y", 50, 90), z("Z", 70, 90);
    Kokkos::deep_copy(x, 1.0);
    Kokkos::deep_copy(y, 1.0);
    spamm::options high;
    high.implementation = implementation::specialized;
    high.tile = 32;
    high.tau = 1e30;
    Kokkos::deep_copy(z, 4.0);
    const auto r = spamm::multiply(exec, 1.0, x, y, -0.5, z, high);
    CHECK(r.valid_ratio == 0.0);
    for (double v : nearsparse::test::to_host(z).data) CHECK(v == -2.0);
    Kokkos::deep_copy(z, std::numeric_limits<double>::quiet_NaN());
    spamm::multiply(exec, 1.0, x, y, 0.0, z, high);
    for (double v : nearsparse::test::to_host(z).data) CHECK(v == 0.0);
    // Bad input keeps its errors on the host path.
    ref::matrix<exec_space> bad_b("B", 51, 90);
    CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, x, bad_b, 0.0, z, high),
                      Contains("'B'") && Contains("51 x 90"));
    Kokkos::deep_copy(Kokkos::subview(y, 3, 4), std::numeric_limits<double>::infinity());
    CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, x, y, 0.0, z, high),
                      Contains("'B'") && Contains("1 non-finite"));
  }
}

// The host path runs its tile gemms on one thread each (host_blas::thread_scope), whatever the
// caller set, and leaves the caller's setting, and OpenBLAS's own count, as it found them. N = 256
// with tiles of 64 makes merged gemms above OpenBLAS's small-product limit, so OpenBLAS consults
// its thread count inside the product.
NEARSPARSE_SPACE_TEST_CASE("the host path leaves the threads of BLAS calls as it found them",
                           "[spamm][host]") {
  using exec_space = TestType;
  namespace hb = nearsparse::detail::host_blas;
  if constexpr (host_space<exec_space>()) {
    if (!hb::available() || !hb::threaded()) return;
    const exec_space exec;
    const hb::thread_scope two(2);
    const int blas_threads = hb::threads();
    const int n = 256;
    ref::matrix<exec_space> a("A", n, n), c("C", n, n);
    Kokkos::deep_copy(a, 0.5);
    spamm::options opt;
    opt.implementation = implementation::specialized;
    opt.precision = spamm_precision::fp64;
    opt.tile = 64;
    spamm::multiply(exec, 1.0, a, a, 0.0, c, opt);
    CHECK(hb::call_threads() == 2);
    CHECK(hb::threads() == blas_threads);
    for (double x : nearsparse::test::to_host(c).data) CHECK(x == n * 0.25);
  }
}

NEARSPARSE_SPACE_TEST_CASE("the host path groups tile products into gemms exactly",
                           "[spamm][host]") {
  // Tiles of A and B scaled by 1 (strong) or 1e-3 (weak) after a pattern, tau between the
  // products: tile product (ti, l, tj) is kept exactly where A(ti, l) and B(l, tj) are both
  // strong. The patterns give rectangles of C tiles that keep the same k (the whole of C, groups
  // of columns), tiles of one row that keep the same k next to tiles that keep other k, and bands
  // (each tile its own k), and a corner of C holding every kept product (one block of the work);
  // weak products that were computed, or kept ones that were not, show in the product.
  using exec_space = TestType;
  if constexpr (host_space<exec_space>()) {
    using matrix = ref::matrix<exec_space>;
    using memory = typename exec_space::memory_space;
    const exec_space exec;
    if (!nearsparse::detail::host_blas::available()) return;
    struct shape {
      std::size_t m, k, n;
      int tile;
    };
    // The last has 17 x 17 tiles of C: merged blocks of several tiles even on 16 threads.
    const shape s =
        GENERATE(shape{157, 131, 149, 32}, shape{301, 419, 263, 32}, shape{70, 96, 1333, 32},
                 shape{600, 200, 330, 64}, shape{530, 100, 521, 32});
    enum pattern { dense, column_groups, band, random_tiles, corner };
    const int which =
        GENERATE(int(dense), int(column_groups), int(band), int(random_tiles), int(corner));
    const std::uint64_t seed = nearsparse::test::fresh_seed();
    const int tile = s.tile;
    const int mt = int((s.m + tile - 1) / tile), kt = int((s.k + tile - 1) / tile);
    const int nt = int((s.n + tile - 1) / tile);
    std::vector<char> strong_a(std::size_t(mt) * kt), strong_b(std::size_t(kt) * nt);
    std::mt19937_64 engine(seed + 3);
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (int i = 0; i < mt; ++i)
      for (int l = 0; l < kt; ++l) {
        char x = 1;
        if (which == column_groups) x = (i + l) % 3 != 0;
        if (which == band) x = std::abs(i - l) <= 1;
        if (which == random_tiles) x = coin(engine) < 0.7;
        if (which == corner) x = i < 4 && l < 4;
        strong_a[std::size_t(i) * kt + l] = x;
      }
    for (int l = 0; l < kt; ++l)
      for (int j = 0; j < nt; ++j) {
        // column_groups: the left half of C keeps what its tile row of A allows, the right
        // half in pairs of columns that each keep other k.
        char x = 1;
        if (which == column_groups) x = j < nt / 2 || (l + j / 2) % 3 != 0;
        if (which == band) x = std::abs(l - j) <= 1;
        if (which == random_tiles) x = coin(engine) < 0.7;
        if (which == corner) x = l < 4 && j < 4;
        strong_b[std::size_t(l) * nt + j] = x;
      }
    const auto patterned = [&](std::size_t rows, std::size_t cols, std::uint64_t from,
                               const std::vector<char>& strong, int tiles_c) {
      matrix x("X", rows, cols);
      nearsparse::fill_random(exec, x, from, -1.0, 1.0);
      auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
          if (!strong[(r / tile) * tiles_c + c / tile]) hx(r, c) *= 1e-3;
      Kokkos::deep_copy(x, hx);
      return x;
    };
    const auto a = patterned(s.m, s.k, seed, strong_a, kt);
    const auto b = patterned(s.k, s.n, seed + 1, strong_b, nt);
    matrix c0("C0", s.m, s.n);
    nearsparse::fill_random(exec, c0, seed + 2, -1.0, 1.0);
    const auto hc = nearsparse::test::to_host(c0);
    // Both groupings of the kept products into gemms on each pattern (automatic takes one of
    // them; the other test cases run it).
    const auto grouping = GENERATE(spamm::host_grouping::merged, spamm::host_grouping::per_tile);
    for (const auto precision : {spamm_precision::fp64, spamm_precision::fp32}) {
      INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n << ", tile " << tile
                              << ", pattern " << which << ", " << spamm::to_string(grouping) << ", "
                              << spamm::to_string(precision) << ", seed " << seed);
      spamm::options opt;
      opt.precision = precision;
      opt.tile = tile;
      opt.implementation = implementation::specialized;
      opt.host_grouping = grouping;
      spamm::plan plan(exec, a, b, opt);
      const auto an = nearsparse::test::to_host(plan.a_norms());
      const auto bn = nearsparse::test::to_host(plan.b_norms());
      // tau between the largest product with a weak tile and the smallest of two strong ones.
      double weak = 0, strong = std::numeric_limits<double>::infinity();
      std::vector<char> pattern_kept;
      for (int i = 0; i < mt; ++i)
        for (int j = 0; j < nt; ++j)
          for (int l = 0; l < kt; ++l) {
            const double product = an(i, l) * bn(l, j);
            const bool both =
                strong_a[std::size_t(i) * kt + l] && strong_b[std::size_t(l) * nt + j];
            pattern_kept.push_back(both);
            if (both) {
              strong = std::min(strong, product);
            } else {
              weak = std::max(weak, product);
            }
          }
      REQUIRE(weak < strong);
      const double tau = std::isinf(strong) ? 1.0
                         : weak > 0         ? std::sqrt(weak * strong)
                                            : 0.5 * strong;
      plan.set_tau(exec, tau);
      const auto kept = ref::kept_set(an, bn, tau);
      REQUIRE(kept == pattern_kept);

      const auto ha = ref::rounded(nearsparse::test::to_host(a), precision);
      const auto hb = ref::rounded(nearsparse::test::to_host(b), precision);
      const double alpha = 0.75, beta = -1.5;
      const auto expected = ref::kept_product(alpha, ha, hb, beta, hc, tile, kept);
      const auto expected_beta0 = ref::kept_product(
          alpha, ha, hb, 0.0, nearsparse::test::host_matrix<double>(s.m, s.n), tile, kept);
      const double tol = ref::accumulation_tolerance(precision, s.k) + 4 * 0x1p-24;  // float C
      const auto run = [&](const char* what, auto c) {
        INFO("C: " << what);
        using c_value = typename decltype(c)::non_const_value_type;
        Kokkos::deep_copy(c, c0);
        plan.multiply(exec, c_value(alpha), c_value(beta), c);
        NEARSPARSE_CHECK_RELATIVE_ERROR(nearsparse::test::to_host(c), expected, tol);
        // beta = 0 writes C without reading it: NaN everywhere before.
        Kokkos::deep_copy(c, std::numeric_limits<c_value>::quiet_NaN());
        plan.multiply(exec, c_value(alpha), c_value(0), c);
        const auto got0 = nearsparse::test::to_host(c);
        bool finite = true;
        for (double x : got0.data) finite = finite && std::isfinite(x);
        CHECK(finite);
        NEARSPARSE_CHECK_RELATIVE_ERROR(got0, expected_beta0, tol);
      };
      const std::size_t m = s.m, n = s.n;
      run("double, LayoutRight", Kokkos::View<double**, Kokkos::LayoutRight, memory>("C", m, n));
      run("double, LayoutLeft", Kokkos::View<double**, Kokkos::LayoutLeft, memory>("C", m, n));
      run("float, LayoutRight", Kokkos::View<float**, Kokkos::LayoutRight, memory>("C", m, n));
      run("float, LayoutLeft", Kokkos::View<float**, Kokkos::LayoutLeft, memory>("C", m, n));
      Kokkos::View<double*, memory> buffer("buffer", 2 * m * n);
      run("double, no unit stride", Kokkos::View<double**, Kokkos::LayoutStride, memory>(
                                        buffer.data(), Kokkos::LayoutStride(m, 2, n, 2 * m)));
    }
  }
}
