// CRS validation, SELL-C-sigma conversion and round trip, and spmv in both formats against the
// dense product.

#include "kpm_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

namespace nk = nearsparse::kpm;
namespace ref = nearsparse::test::kpm;
using Catch::Matchers::Contains;

namespace {

/// max_i |y_i - (H x)_i| / (sum_j |h_ij||x_j| eps * 16).
template <class YView, class XView>
void check_product(const ref::dense& h, const XView& x, const YView& y, double alpha) {
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  const int R = int(x.extent(1));
  for (int i = 0; i < h.n; ++i)
    for (int r = 0; r < R; ++r) {
      ref::cplx s = 0;
      double mag = 0;
      for (int j = 0; j < h.n; ++j) {
        s += h(i, j) * ref::to_std(hx(j, r));
        mag += std::abs(h(i, j)) * std::abs(ref::to_std(hx(j, r)));
      }
      INFO("row " << i << ", column " << r);
      REQUIRE(std::abs(ref::to_std(hy(i, r)) - alpha * s) <= 32 * 0x1p-52 * mag * alpha + 1e-300);
    }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("SELL-C-sigma round trips and multiplies like CRS", "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto h = nk::make_topological_insulator(
      exec, ref::insulator(3, 2, 3, seed, 1.5));  // 72 rows, surface rows shorter
  const auto d = ref::dense_of(h);
  for (auto [C, sigma] : {std::pair{1, 1}, {4, 8}, {32, 1}, {5, 5}, {32, 64}}) {
    INFO("SELL-" << C << "-" << sigma);
    const auto s = nk::make_sell(exec, h, {C, sigma});
    REQUIRE(s.nonzeros() == h.nnz());
    REQUIRE(s.stored_count() >= s.nonzeros());
    const auto back = nk::to_crs(exec, s);
    const auto db = ref::dense_of(back);
    REQUIRE(db.a == d.a);

    // spmv on a permuted block equals the permuted CRS product.
    const int R = 3;
    Kokkos::View<nk::complex_double**, Kokkos::LayoutRight, mem> x("x", d.n, R), xp("xp", d.n, R),
        yp("yp", d.n, R), y("y", d.n, R);
    nearsparse::fill_random(exec, x, seed + 1);
    nk::permute_rows(exec, s, x, xp);
    nk::spmv(exec, 0.5, s, xp, 0.0, yp);
    nk::spmv(exec, 0.5, h, x, 0.0, y);
    check_product(d, x, y, 0.5);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    auto hyp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yp);
    auto perm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.permutation());
    for (int i = 0; i < d.n; ++i)
      for (int r = 0; r < R; ++r)
        REQUIRE(std::abs(ref::to_std(hyp(i, r)) - ref::to_std(hy(perm(i), r))) <=
                1e-13 * (1 + std::abs(ref::to_std(hy(perm(i), r)))));
  }
}

NEARSPARSE_SPACE_TEST_CASE("spmv accumulates with beta, takes vectors, and checks extents",
                           "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  auto p = ref::lattice(5, 3, 7);
  const auto h = nk::make_cubic_lattice<double>(exec, p);
  const int n = int(p.rows());
  Kokkos::View<double*, mem> x("x", n), y("y", n);
  Kokkos::deep_copy(x, 1.0);
  Kokkos::deep_copy(y, 2.0);
  nk::spmv(exec, 1.0, h, x, 3.0, y);  // y = H 1 + 6: 6 - (neighbour count)
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int i = 0; i < n; ++i) REQUIRE(hy(i) == Approx(0.0).margin(1e-14));  // 6 neighbours
  Kokkos::View<double*, mem> short_y("y", n - 1);
  REQUIRE_THROWS_WITH(nk::spmv(exec, 1.0, h, x, 0.0, short_y),
                      Contains("'y'") && Contains(std::to_string(n - 1)));
  Kokkos::View<double**, Kokkos::LayoutRight, mem> xb("xb", n, 2), yb("yb", n, 3);
  REQUIRE_THROWS_WITH(nk::spmv(exec, 1.0, h, xb, 0.0, yb), Contains("columns as x"));
}

NEARSPARSE_SPACE_TEST_CASE("invalid CRS matrices and SELL parameters are rejected", "[kpm]") {
  const TestType exec;
  using crs = nk::crs_matrix<double, TestType>;
  auto make = [&](int rows, int cols, std::vector<int> rm, std::vector<int> en,
                  std::vector<double> va) {
    typename crs::row_map_type::non_const_type r("r", rm.size());
    typename crs::index_type::non_const_type e("e", en.size());
    typename crs::values_type::non_const_type v("v", va.size());
    auto hr = Kokkos::create_mirror_view(r);
    auto he = Kokkos::create_mirror_view(e);
    auto hv = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < rm.size(); ++i) hr(i) = rm[i];
    for (std::size_t i = 0; i < en.size(); ++i) he(i) = en[i];
    for (std::size_t i = 0; i < va.size(); ++i) hv(i) = va[i];
    Kokkos::deep_copy(r, hr);
    Kokkos::deep_copy(e, he);
    Kokkos::deep_copy(v, hv);
    return crs("bad", rows, cols, int(en.size()), v, r, e);
  };
  nk::moments_options o;
  o.num_moments = 4;
  o.num_vectors = 1;
  const nk::scaling s{0.5, 0};
  REQUIRE_THROWS_WITH(nk::moments(exec, make(2, 3, {0, 1, 2}, {0, 1}, {1, 1}), s, o),
                      Contains("'H'") && Contains("2 x 3") && Contains("square"));
  REQUIRE_THROWS_WITH(nk::moments(exec, make(2, 2, {0, 1, 2}, {0, 2}, {1, 1}), s, o),
                      Contains("outside [0, 2)"));
  REQUIRE_THROWS_WITH(nk::moments(exec, make(2, 2, {0, 2, 1}, {0, 1}, {1, 1}), s, o),
                      Contains("row offsets"));
  REQUIRE_THROWS_WITH(nk::moments(exec, make(2, 2, {0, 1, 2}, {0, 1}, {1, std::nan("")}), s, o),
                      Contains("non-finite"));
  const auto good = make(2, 2, {0, 1, 2}, {0, 1}, {1, 1});
  REQUIRE_THROWS_WITH(nk::make_sell(exec, good, {0, 1}), Contains("chunk_height"));
  REQUIRE_THROWS_WITH(nk::make_sell(exec, good, {4, 6}), Contains("sigma") && Contains("6"));
}

NEARSPARSE_SPACE_TEST_CASE("bad arguments to bounds, permutations, generators and output",
                           "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  using crs = nk::crs_matrix<double, TestType>;
  // A 2 x 3 matrix (rows 0 and 1 hold one entry each).
  typename crs::row_map_type::non_const_type rm("rm", 3);
  typename crs::index_type::non_const_type en("en", 2);
  typename crs::values_type::non_const_type va("va", 2);
  auto hr = Kokkos::create_mirror_view(rm);
  hr(0) = 0;
  hr(1) = 1;
  hr(2) = 2;
  Kokkos::deep_copy(rm, hr);
  const crs wide("wide", 2, 3, 2, va, rm, en);
  REQUIRE_THROWS_WITH(nk::gershgorin_bounds(exec, wide), Contains("2 x 3") && Contains("square"));
  REQUIRE_THROWS_WITH(nk::lanczos_bounds(exec, wide), Contains("square"));

  const auto h = nk::make_cubic_lattice<double>(exec, ref::lattice(4, 3, 2));
  const auto sell = nk::make_sell(exec, h, {4, 8});
  Kokkos::View<double**, Kokkos::LayoutRight, mem> x("x", 24, 2), y("y", 23, 2);
  REQUIRE_THROWS_WITH(nk::permute_rows(exec, sell, x, y), Contains("24 x R") && Contains("23 x 2"));

  auto bad_lattice = ref::lattice(4, 0, 2);
  REQUIRE_THROWS_WITH(nk::make_cubic_lattice<double>(exec, bad_lattice), Contains("'ny'"));
  auto bad_t = ref::lattice(4, 3, 2);
  bad_t.t = std::nan("");
  REQUIRE_THROWS_WITH(nk::make_cubic_lattice<double>(exec, bad_t), Contains("'t'"));
  auto ti = ref::insulator(3, 3, 2, 1);
  ti.disorder = -1;
  REQUIRE_THROWS_WITH(nk::make_topological_insulator(exec, ti), Contains("disorder"));
  REQUIRE_THROWS_WITH(nk::assemble_rows(ref::insulator(3, 3, 2, 1), 10, 5),
                      Contains("row_begin") && Contains("[10, 5)"));

  nk::chebyshev_moments m;
  m.mu = {1, 0};
  m.rows = 4;
  m.map = {0.5, 0};
  REQUIRE_THROWS_WITH(nk::write_csv(nk::density_of_states(m), "/nonexistent-dir/dos.csv"),
                      Contains("cannot open"));
}
