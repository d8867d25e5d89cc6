// Block-sparse algebra (spamm/block_sparse_algebra.hpp: add, identity, trace, frobenius_norm,
// gershgorin_bounds) against host computations on the dense form in double, and block-sparse
// SP2 (spamm/block_sparse_functions.hpp) against the density matrix of a LAPACK
// eigendecomposition on the host.
#include "block_sparse_support.hpp"
#include "spamm_inputs.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
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
#include <utility>
#include <vector>

namespace spamm = nearsparse::spamm;
namespace host_blas = nearsparse::detail::host_blas;
using nearsparse::test::dense_of;
using nearsparse::test::diff_norm;
using nearsparse::test::host_matrix;
using nearsparse::test::tile_norms;
using nearsparse::test::to_device;

namespace {

/// Random entries in [-1, 1] on a random tile pattern: each tile of `tile` kept with
/// probability `fill`, the others zero; the kept tiles scaled by 10^uniform[-3, 0] so that the
/// tile norms spread.
host_matrix<double> random_tiles(std::size_t rows, std::size_t cols, int tile, double fill,
                                 std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), e(-3.0, 0.0), f(0.0, 1.0);
  const std::size_t tr = (rows + tile - 1) / tile, tc = (cols + tile - 1) / tile;
  std::vector<double> scale(tr * tc);
  for (double& s : scale) s = f(gen) < fill ? std::pow(10.0, e(gen)) : 0.0;
  host_matrix<double> m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) m(i, j) = scale[(i / tile) * tc + j / tile] * u(gen);
  return m;
}

template <class T, class Exec>
spamm::block_sparse_matrix<T, Exec> to_block_sparse(const Exec& exec, const host_matrix<double>& h,
                                                    int tile, double drop = 0.0) {
  spamm::block_sparse_options opt;
  opt.tile = tile;
  opt.drop_tolerance = drop;
  return spamm::from_dense<T>(exec, to_device<Exec, T>(exec, h), opt);
}

double norm(const host_matrix<double>& x) {
  double s = 0;
  for (double v : x.data) s += v * v;
  return std::sqrt(s);
}

/// The dense form of a block-sparse matrix of rows x cols read as the product of the stored
/// values with the host: alpha a + beta b.
host_matrix<double> combination(double alpha, const host_matrix<double>& a, double beta,
                                const host_matrix<double>& b) {
  host_matrix<double> c(a.rows, a.cols);
  for (std::size_t e = 0; e < c.data.size(); ++e) c.data[e] = alpha * a.data[e] + beta * b.data[e];
  return c;
}

template <class T>
double unit_roundoff() {
  return 0.5 * double(std::numeric_limits<T>::epsilon());
}

/// Checks C = alpha A + beta B for block-sparse A, B against the host sum of their dense forms.
template <class T, class Exec>
void check_add(const Exec& exec, double alpha, const spamm::block_sparse_matrix<T, Exec>& a,
               double beta, const spamm::block_sparse_matrix<T, Exec>& b) {
  INFO("alpha " << alpha << ", beta " << beta);
  const auto ha = dense_of(exec, a), hb = dense_of(exec, b);
  const auto ref = combination(alpha, ha, beta, hb);
  spamm::block_sparse_matrix<T, Exec> c;
  const auto r = spamm::add(exec, T(alpha), a, T(beta), b, c);
  REQUIRE(c.rows() == a.rows());
  REQUIRE(c.cols() == a.cols());
  const auto hc = dense_of(exec, c);
  // One rounding of each product and of the sum: |error| <= 2u (|alpha a| + |beta b|).
  for (std::size_t e = 0; e < ref.data.size(); ++e) {
    const double allowed =
        2.5 * unit_roundoff<T>() * (std::abs(alpha * ha.data[e]) + std::abs(beta * hb.data[e]));
    if (!(std::abs(hc.data[e] - ref.data[e]) <= allowed)) {
      FAIL_CHECK("element " << e << ": " << hc.data[e] << " != " << ref.data[e]);
      break;
    }
  }
  // Stored tiles: exactly the nonzero tiles of the union (no drop tolerance).
  const auto rn = tile_norms(ref, a.tile());
  std::int64_t nonzero = 0;
  for (double x : rn.data) nonzero += x > 0 ? 1 : 0;
  CHECK(c.kept_tiles() == nonzero);
  CHECK(r.tiles_kept == nonzero);
  CHECK(r.dropped_norm == 0.0);
  const double expected_dropped = (alpha != 0 ? std::abs(alpha) * a.dropped_norm() : 0.0) +
                                  (beta != 0 ? std::abs(beta) * b.dropped_norm() : 0.0);
  CHECK(c.dropped_norm() == Approx(expected_dropped).epsilon(1e-12).margin(1e-300));
  // Stored norms match the stored values.
  const auto cn = tile_norms(hc, c.tile());
  const auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.row_map());
  const auto hcols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.column_indices());
  const auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.norms());
  for (int i = 0; i < c.tile_rows(); ++i)
    for (auto p = hr(i); p < hr(i + 1); ++p) {
      if (p > hr(i)) CHECK(hcols(p) > hcols(p - 1));
      CHECK(hn(p) == Approx(cn(i, hcols(p))).epsilon(1e-12));
    }
}

template <class T, class Exec>
void add_cases(const Exec& exec, std::uint64_t seed) {
  INFO("seed " << seed);
  for (const int tile : {16, 32}) {
    INFO("tile " << tile);
    for (const auto& shape : {std::pair<int, int>{157, 157}, std::pair<int, int>{157, 100},
                              std::pair<int, int>{0, 0}, std::pair<int, int>{5, 0}}) {
      INFO(shape.first << " x " << shape.second);
      const auto ha = random_tiles(shape.first, shape.second, tile, 0.5, seed);
      const auto hb = random_tiles(shape.first, shape.second, tile, 0.4, seed + 1);
      // A with a drop tolerance (a positive dropped norm), B exact.
      const auto a = to_block_sparse<T>(exec, ha, tile, 1e-3);
      const auto b = to_block_sparse<T>(exec, hb, tile);
      const auto zero = spamm::block_sparse_matrix<T, Exec>(exec, shape.first, shape.second, tile);
      for (const auto& ab : {std::pair<double, double>{1, 1}, std::pair<double, double>{2.5, -0.75},
                             std::pair<double, double>{0, 1.5}, std::pair<double, double>{-1, 0},
                             std::pair<double, double>{0, 0}, std::pair<double, double>{1, -1}}) {
        check_add(exec, ab.first, a, ab.second, b);
      }
      check_add(exec, 1.0, a, -1.0, a);  // exact cancellation: no tile stored
      check_add(exec, 2.0, zero, 3.0, b);
    }
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block-sparse add matches the dense sum",
                           "[spamm][block_sparse][algebra]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  SECTION("double") {
    add_cases<double>(exec, seed);
  }
  SECTION("float") {
    add_cases<float>(exec, seed);
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse add: aliasing, the drop rule and dropped_norm",
                           "[spamm][block_sparse][algebra]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const int tile = 16;
  const auto ha = random_tiles(157, 157, tile, 0.6, seed);
  const auto hb = random_tiles(157, 157, tile, 0.6, seed + 7);
  const auto ref = combination(1.5, ha, -2.0, hb);

  SECTION("C = A and C = B") {
    matrix a = to_block_sparse<double>(exec, ha, tile);
    const matrix a_copy = a;  // shares the old arrays: must keep the old matrix
    const matrix b = to_block_sparse<double>(exec, hb, tile);
    spamm::add(exec, 1.5, a, -2.0, b, a);
    CHECK(diff_norm(dense_of(exec, a), ref) <= 1e-14 * norm(ref));
    CHECK(diff_norm(dense_of(exec, a_copy), ha) == 0.0);
    matrix b2 = to_block_sparse<double>(exec, hb, tile);
    const matrix a2 = to_block_sparse<double>(exec, ha, tile);
    spamm::add(exec, 1.5, a2, -2.0, b2, b2);
    CHECK(diff_norm(dense_of(exec, b2), ref) <= 1e-14 * norm(ref));
    matrix self = to_block_sparse<double>(exec, ha, tile);
    spamm::add(exec, 2.0, self, -3.0, self, self);  // -A
    CHECK(diff_norm(dense_of(exec, self), combination(-1.0, ha, 0.0, ha)) <= 1e-14 * norm(ha));
  }

  SECTION("drop rule, relative and absolute") {
    const matrix a = to_block_sparse<double>(exec, ha, tile, 1e-2);
    const matrix b = to_block_sparse<double>(exec, hb, tile, 1e-2);
    REQUIRE(a.dropped_norm() > 0);
    REQUIRE(b.dropped_norm() > 0);
    const auto da = dense_of(exec, a), db = dense_of(exec, b);
    const auto sum = combination(1.5, da, -2.0, db);
    const auto sn = tile_norms(sum, tile);
    // The threshold: geometrically halfway between two adjacent nonzero tile norms of the sum,
    // a third of the way up, so that tiles are both kept and removed and none lies within
    // rounding of it.
    std::vector<double> sorted;
    for (double x : sn.data)
      if (x > 0) sorted.push_back(x);
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted.size() >= 3);
    const std::size_t k = sorted.size() / 3;
    const double threshold = std::sqrt(sorted[k - 1] * sorted[k]);
    for (const auto rule : {spamm::drop_rule::relative, spamm::drop_rule::absolute}) {
      const double tolerance =
          rule == spamm::drop_rule::relative ? threshold / norm(sum) : threshold;
      // Expected: the tiles of the sum with norm >= threshold; avoid thresholds within
      // rounding of a tile norm.
      host_matrix<double> kept_ref(sum.rows, sum.cols);
      double removed_sq = 0;
      std::int64_t kept = 0, removed = 0;
      bool near = false;
      for (std::size_t i = 0; i < sum.rows; ++i)
        for (std::size_t j = 0; j < sum.cols; ++j) {
          const double x = sn(i / tile, j / tile);
          if (std::abs(x - threshold) < 1e-10 * threshold) near = true;
          if (x > 0 && x >= threshold) kept_ref(i, j) = sum(i, j);
        }
      for (double x : sn.data) {
        if (x > 0 && x >= threshold) {
          ++kept;
        } else if (x > 0) {
          ++removed;
          removed_sq += x * x;
        }
      }
      REQUIRE_FALSE(near);
      REQUIRE(removed > 0);
      REQUIRE(kept > 0);
      spamm::block_sparse_add_options opt;
      opt.drop_tolerance = tolerance;
      opt.rule = rule;
      matrix c(exec, 157, 157, tile);
      const auto r = spamm::add(exec, 1.5, a, -2.0, b, c, opt);
      INFO("rule " << (rule == spamm::drop_rule::relative ? "relative" : "absolute"));
      CHECK(r.tiles_kept == kept);
      CHECK(c.kept_tiles() == kept);
      CHECK(r.tiles_dropped >= removed);  // zero tiles of the union count as dropped too
      CHECK(r.dropped_norm == Approx(std::sqrt(removed_sq)).epsilon(1e-12));
      CHECK(diff_norm(dense_of(exec, c), kept_ref) <= 1e-14 * norm(sum));
      CHECK(
          c.dropped_norm() ==
          Approx(r.dropped_norm + 1.5 * a.dropped_norm() + 2.0 * b.dropped_norm()).epsilon(1e-12));
      // dropped_norm bounds the distance to the sum of the full (undropped) inputs.
      CHECK(diff_norm(dense_of(exec, c), ref) <= c.dropped_norm() * (1 + 1e-12));
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse identity, trace, frobenius_norm and Gershgorin bounds",
                           "[spamm][block_sparse][algebra]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  for (const int tile : {8, 16, 32}) {
    for (const int n : {0, 1, 157, 160}) {
      INFO("n " << n << ", tile " << tile);
      const auto id = spamm::identity<double>(exec, n, tile);
      const auto hi = dense_of(exec, id);
      double err = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) err += std::abs(hi(i, j) - (i == j ? 1.0 : 0.0));
      CHECK(err == 0.0);
      CHECK(id.kept_tiles() == (n + tile - 1) / tile);
      CHECK(spamm::trace(exec, id) == double(n));
      CHECK(spamm::frobenius_norm(exec, id) == Approx(std::sqrt(double(n))).epsilon(1e-15));
      const auto fid = spamm::identity<float>(exec, n, tile);
      CHECK(spamm::trace(exec, fid) == double(n));
      const auto b = spamm::gershgorin_bounds(exec, id);
      CHECK(b.lower == (n > 0 ? 1.0 : 0.0));
      CHECK(b.upper == (n > 0 ? 1.0 : 0.0));

      // A random matrix with a random tile pattern, some diagonal tiles absent.
      const auto h = random_tiles(n, n, tile, 0.5, seed + std::uint64_t(n) + std::uint64_t(tile));
      const auto m = to_block_sparse<double>(exec, h, tile);
      double tr = 0, lo = std::numeric_limits<double>::max(), up = -lo;
      for (int i = 0; i < n; ++i) {
        tr += h(i, i);
        double off = 0;
        for (int j = 0; j < n; ++j)
          if (j != i) off += std::abs(h(i, j));
        lo = std::min(lo, h(i, i) - off);
        up = std::max(up, h(i, i) + off);
      }
      if (n == 0) lo = up = 0;
      CHECK(spamm::trace(exec, m) == Approx(tr).epsilon(1e-13).margin(1e-13));
      CHECK(spamm::frobenius_norm(exec, m) == Approx(norm(h)).epsilon(1e-13).margin(1e-300));
      const auto g = spamm::gershgorin_bounds(exec, m);
      CHECK(g.lower == Approx(lo).epsilon(1e-13).margin(1e-13));
      CHECK(g.upper == Approx(up).epsilon(1e-13).margin(1e-13));
      const auto mf = to_block_sparse<float>(exec, h, tile);
      const auto gf = spamm::gershgorin_bounds(exec, mf);
      CHECK(gf.lower == Approx(lo).epsilon(1e-5).margin(1e-5));
      CHECK(gf.upper == Approx(up).epsilon(1e-5).margin(1e-5));
    }
  }
  // Rectangular: frobenius_norm only.
  const auto h = random_tiles(40, 70, 16, 0.7, seed);
  const auto m = to_block_sparse<double>(exec, h, 16);
  CHECK(spamm::frobenius_norm(exec, m) == Approx(norm(h)).epsilon(1e-13));
}

namespace {

// ---------------------------------------------------------------------------------------------
// SP2 against the density matrix of a LAPACK eigendecomposition.

/// D_ref = V_occ V_occ^T, V_occ the eigenvectors of the `occupied` lowest eigenvalues of h;
/// gap = lambda_(occupied) - lambda_(occupied - 1) (0-based, ascending).
host_matrix<double> reference_density(const host_matrix<double>& h, int occupied, double& gap) {
  const int n = static_cast<int>(h.rows);
  std::vector<double> a(h.data), w(n);
  double work_size = 0;
  int iwork_size = 0;
  REQUIRE(host_blas::syevd('V', 'U', n, a.data(), n, w.data(), &work_size, -1, &iwork_size, -1) ==
          0);
  std::vector<double> work(std::size_t(work_size) + 1);
  std::vector<int> iwork(iwork_size + 1);
  REQUIRE(host_blas::syevd('V', 'U', n, a.data(), n, w.data(), work.data(), int(work.size()),
                           iwork.data(), int(iwork.size())) == 0);
  gap = w[occupied] - w[occupied - 1];
  // a holds the eigenvectors as columns, column-major: v_k(i) = a[k n + i].
  host_matrix<double> d(n, n);
  for (int k = 0; k < occupied; ++k) {
    const double* v = a.data() + std::size_t(k) * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) d(i, j) += v[i] * v[j];
  }
  return d;
}

host_matrix<double> square(const host_matrix<double>& x) {
  const std::size_t n = x.rows;
  host_matrix<double> out(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < n; ++l) {
      const double xil = x(i, l);
      if (xil == 0) continue;
      for (std::size_t j = 0; j < n; ++j) out(i, j) += xil * x(l, j);
    }
  return out;
}

template <class Exec>
host_matrix<double> chain_hamiltonian(const Exec& exec, int n) {
  Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space> h("h", n, n);
  spamm::fill_dimerized_chain(exec, h, spamm::chain_model{});
  exec.fence();
  return nearsparse::test::to_host(h);
}

template <class Exec>
host_matrix<double> cubic_hamiltonian(const Exec& exec, const spamm::cubic_model& model) {
  const int n = model.nx * model.ny * model.nz;
  Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space> h("h", n, n);
  spamm::fill_cubic_lattice(exec, h, model);
  exec.fence();
  return nearsparse::test::to_host(h);
}

/// SP2 at tau = 0, drop 0 on h against the eigendecomposition.
template <class T, class Exec>
void check_exact_sp2(const Exec& exec, const host_matrix<double>& h, int tile, int occupied) {
  const int n = static_cast<int>(h.rows);
  INFO("n " << n << ", tile " << tile << ", occupied " << occupied << ", "
            << (std::is_same<T, float>::value ? "float" : "double"));
  double gap = 0;
  const auto d_ref = reference_density(h, occupied, gap);
  const auto hs = to_block_sparse<T>(exec, h, tile);
  spamm::block_sparse_matrix<T, Exec> d(exec, n, n, tile);
  spamm::block_sparse_sp2_options opt;
  // The float iterates stop at a residual of about u sqrt(N) (u = 6e-8): 1e-5 lies above it.
  opt.idempotency_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-9;
  const auto r = spamm::sp2(exec, hs, occupied, d, opt);
  const double width = r.bounds.upper - r.bounds.lower;
  const double g = gap / width;  // the relative gap
  INFO("iterations " << r.iterations << ", residual " << r.residual << ", trace " << r.trace
                     << ", gap " << gap << ", relative gap " << g);
  REQUIRE(gap > 0.1);
  CHECK(r.converged);
  CHECK_FALSE(r.stagnated);
  CHECK(r.iterations == int(r.steps.size()));
  // Steps needed: about 2 log2(1/g) + a few for the quadratic convergence.
  CHECK(r.iterations <= 2 * std::log2(1 / g) + 20);
  CHECK(r.error_bound_sum == 0.0);  // tau = 0 keeps every product
  CHECK(r.dropped_norm_sum == 0.0);
  const auto hd = dense_of(exec, d);
  const double norm_d = std::sqrt(double(occupied));
  // ||D - P||_F <= 3 residual (see the header), plus the rounding of the iterates: an error of
  // about u ||X||_F <= u sqrt(N) in an iterate rotates the occupied subspace by up to that over
  // the relative gap g; the allowance is 10 u sqrt(N) / g (measured: double 1e-14 to 8e-13
  // against allowances of 7e-14 to 3e-12, float 2e-7 to 6e-7 against 2e-5 to 5e-5).
  const double rounding = 10 * unit_roundoff<T>() * std::sqrt(double(n)) / g;
  CHECK(r.residual <= opt.idempotency_tolerance * norm_d);
  const double tolerance = 3 * r.residual / norm_d + rounding;
  INFO("tolerance " << tolerance);
  CHECK(diff_norm(hd, d_ref) / norm_d <= tolerance);
  // trace: |tr D - occupied| = |sum of eigenvalue errors| <= sqrt(N) ||D - P||_F.
  double tr = 0;
  for (int i = 0; i < n; ++i) tr += hd(i, i);
  CHECK(std::abs(tr - occupied) <= std::sqrt(double(n)) * tolerance * norm_d);
  CHECK(std::abs(r.trace - tr) <= 1e-6 * occupied);
  // Idempotency: after the last step ||D^2 - D||_F <= 2 residual, plus rounding.
  CHECK(diff_norm(square(hd), hd) / norm_d <= 2 * opt.idempotency_tolerance + rounding);
  // The check above tells density matrices apart: the one with a state fewer lies at distance
  // 1 (a rank-one projector) from D_ref, far outside the tolerance.
  double gap_fewer = 0;
  CHECK(diff_norm(hd, reference_density(h, occupied - 1, gap_fewer)) / norm_d > 10 * tolerance);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block-sparse sp2 matches the LAPACK density matrix",
                           "[spamm][block_sparse][sp2]") {
  using exec_space = TestType;
  const exec_space exec;
  INFO(exec_space::name());
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  SECTION("dimerized chain") {
    const auto h = chain_hamiltonian(exec, 158);  // even: a gap at half filling
    check_exact_sp2<double>(exec, h, 16, 79);
    check_exact_sp2<double>(exec, h, 32, 79);
    check_exact_sp2<float>(exec, h, 16, 79);
  }
  SECTION("cubic lattice") {
    spamm::cubic_model model;
    model.nx = 5;
    model.ny = 5;
    model.nz = 6;
    const auto h = cubic_hamiltonian(exec, model);  // 150 sites
    check_exact_sp2<double>(exec, h, 16, 75);
    check_exact_sp2<float>(exec, h, 32, 75);
  }
}

namespace {

/// SP2 with tau > 0 and a drop tolerance on a 398-site chain against the eigendecomposition.
template <class T, class Exec>
void check_filtered_sp2(const Exec& exec, double tau) {
  const int n = 398, tile = 16, occupied = n / 2;
  const auto h = chain_hamiltonian(exec, n);
  double gap = 0;
  const auto d_ref = reference_density(h, occupied, gap);
  const double norm_d = std::sqrt(double(occupied));
  const auto hs = to_block_sparse<T>(exec, h, tile);
  const int all_tiles = hs.tile_rows() * hs.tile_cols();
  spamm::block_sparse_matrix<T, Exec> d(exec, n, n, tile);
  spamm::block_sparse_sp2_options opt;
  opt.tau = tau;
  opt.drop_tolerance = tau / 100;  // below tau: tile products are filtered, not only tiles
  opt.idempotency_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-7;
  const auto r = spamm::sp2(exec, hs, occupied, d, opt);
  const double g = gap / (r.bounds.upper - r.bounds.lower);
  const double dropped = r.error_bound_sum + r.dropped_norm_sum;
  // The first-order estimate of the header, 3 residual + sqrt(2) dropped / g, plus the rounding
  // allowance of the exact test (10 u sqrt(N) / g, relative); a factor 2 covers the second-order
  // terms.
  const double rounding = 10 * unit_roundoff<T>() * std::sqrt(double(n)) / g * norm_d;
  const double estimate = 3 * r.residual + std::sqrt(2.0) * dropped / g + rounding;
  const double error = diff_norm(dense_of(exec, d), d_ref);
  std::int64_t max_tiles = 0, kept = 0, candidates = 0;
  for (const auto& s : r.steps) {
    max_tiles = std::max(max_tiles, s.tiles);
    kept += s.kept_products;
    candidates += s.candidate_products;
    CHECK(s.kept_products <= s.candidate_products);
    CHECK(s.error_bound >= 0);
    CHECK(s.dropped_norm >= 0);
  }
  INFO((std::is_same<T, float>::value ? "float" : "double")
       << ", tau " << tau << ", iterations " << r.iterations << ", residual " << r.residual
       << ", error " << error << ", estimate " << estimate << ", dropped " << dropped
       << ", most tiles " << max_tiles << " of " << all_tiles << ", products " << kept << " of "
       << candidates);
  // The tighter filtering reaches the tolerance; the looser one may stop at its filtering floor.
  if (tau < 1e-6) {
    CHECK(r.converged);
  } else {
    CHECK((r.converged || r.stagnated));
  }
  CHECK(r.iterations < 40);
  CHECK(dropped > 0);        // filtering took place
  CHECK(kept < candidates);  // products were skipped
  CHECK(error <= 2 * estimate);
  CHECK(error / norm_d <= 1e-3);  // and the result is a usable density matrix
  CHECK(max_tiles < all_tiles);   // fill stays below the dense tile count
  CHECK(d.kept_tiles() < all_tiles / 2);
  CHECK(std::abs(spamm::trace(exec, d) - occupied) <= 1e-3 * occupied);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block-sparse sp2 with filtering stays within its error estimate",
                           "[spamm][block_sparse][sp2]") {
  using exec_space = TestType;
  const exec_space exec;
  INFO(exec_space::name());
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  check_filtered_sp2<double>(exec, 1e-8);
  check_filtered_sp2<double>(exec, 1e-5);
  check_filtered_sp2<float>(exec, 1e-5);
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse sp2 converges at small gaps and low filling",
                           "[spamm][block_sparse][sp2]") {
  // A diagonal H with random eigenvalues in [-1, 1] and a gap of g (relative to the spectrum's
  // width) between the occupied-th and the next: far from half filling and with small gaps, the
  // residual rises over two steps in the middle of the iteration (eigenvalues near the split
  // drift slowly, the same branch may be taken twice), which must not be taken for stagnation.
  // The exact density matrix is the diagonal with ones at the `occupied` smallest eigenvalues.
  using exec_space = TestType;
  const exec_space exec;
  const int n = 1000, tile = 32;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  for (const int occupied : {20, 50, 100, 500, 950})
    for (const double g : {1e-2, 3e-3}) {
      INFO(exec_space::name() << ", occupied " << occupied << ", relative gap " << g << ", seed "
                              << seed);
      const auto e = nearsparse::test::spamm::split_spectrum_of(n, occupied, g,
                                                                seed + std::uint64_t(occupied));
      host_matrix<double> h(n, n), d_ref(n, n);
      for (int i = 0; i < n; ++i) {
        h(i, i) = e.values[std::size_t(i)];
        d_ref(i, i) = e.occupied(std::size_t(i)) ? 1.0 : 0.0;
      }
      const auto hs = to_block_sparse<double>(exec, h, tile);
      spamm::block_sparse_matrix<double, exec_space> d(exec, n, n, tile);
      spamm::block_sparse_sp2_options opt;
      opt.idempotency_tolerance = 1e-9;
      const auto r = spamm::sp2(exec, hs, occupied, d, opt);
      INFO("iterations " << r.iterations << ", residual " << r.residual);
      CHECK(r.converged);
      CHECK_FALSE(r.stagnated);
      const double norm_d = std::sqrt(double(occupied));
      CHECK(diff_norm(dense_of(exec, d), d_ref) / norm_d <=
            3 * r.residual / norm_d + 10 * unit_roundoff<double>() * std::sqrt(double(n)) / g);
    }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse sp2: special cases", "[spamm][block_sparse][sp2]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  const exec_space exec;
  SECTION("empty H") {
    const matrix h(exec, 0, 0, 16);
    matrix d(exec, 0, 0, 16);
    const auto r = spamm::sp2(exec, h, 0, d);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(d.rows() == 0);
    CHECK(d.kept_tiles() == 0);
  }
  SECTION("single-point spectrum: D = 0 or I, otherwise refused") {
    const int n = 37;
    const auto id = spamm::identity<double>(exec, n, 16);
    matrix h;
    spamm::add(exec, 3.0, id, 0.0, id, h);  // H = 3 I
    matrix d(exec, n, n, 16);
    auto r = spamm::sp2(exec, h, n, d);
    CHECK(r.converged);
    CHECK(diff_norm(dense_of(exec, d), dense_of(exec, id)) == 0.0);
    r = spamm::sp2(exec, h, 0, d);
    CHECK(r.converged);
    CHECK(d.kept_tiles() == 0);
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(spamm::sp2(exec, h, 5, d), Contains("nearsparse::spamm::sp2") &&
                                                     Contains("'H'") && Contains("single point"));
  }
  SECTION("occupied = 0 and N on a chain: exact") {
    const int n = 50;
    const auto h = to_block_sparse<double>(exec, chain_hamiltonian(exec, n), 16);
    matrix d(exec, n, n, 16);
    auto r = spamm::sp2(exec, h, n, d);
    CHECK(r.converged);
    CHECK(spamm::trace(exec, d) == double(n));
    CHECK(d.kept_tiles() == 4);
    r = spamm::sp2(exec, h, 0, d);
    CHECK(d.kept_tiles() == 0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse algebra and sp2 refuse bad arguments",
                           "[spamm][block_sparse][algebra][sp2]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const matrix a(exec, 40, 30, 16), b(exec, 40, 31, 16), b8(exec, 40, 30, 8), sq(exec, 40, 40, 16);
  matrix c;
  // add
  CHECK_THROWS_AS(spamm::add(exec, 1.0, a, 1.0, b, c), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, a, 1.0, b, c),
                    Contains("nearsparse::spamm::add") && Contains("'B'") && Contains("40 x 31") &&
                        Contains("40 x 30"));
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, a, 1.0, b8, c),
                    Contains("nearsparse::spamm::add") && Contains("'B'") && Contains("tile 8"));
  CHECK_THROWS_WITH(spamm::add(exec, std::nan(""), a, 1.0, a, c),
                    Contains("nearsparse::spamm::add") && Contains("'alpha'"));
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, a, std::numeric_limits<double>::infinity(), a, c),
                    Contains("nearsparse::spamm::add") && Contains("'beta'"));
  matrix wrong_c(exec, 30, 30, 16);
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, a, 1.0, a, wrong_c),
                    Contains("nearsparse::spamm::add") && Contains("'C'") && Contains("30 x 30"));
  spamm::block_sparse_add_options opt;
  opt.drop_tolerance = -1;
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, a, 1.0, a, c, opt),
                    Contains("nearsparse::spamm::add") && Contains("'options.drop_tolerance'"));
  CHECK_THROWS_WITH(spamm::add(exec, 1.0, matrix(), 1.0, a, c),
                    Contains("nearsparse::spamm::add") && Contains("'A'"));
  {
    // 1e150 is stored; 1e10 times it squares to beyond the double range.
    host_matrix<double> big(20, 20);
    big(3, 4) = 1e150;
    const auto m = to_block_sparse<double>(exec, big, 16);
    matrix keep = m;
    CHECK_THROWS_WITH(spamm::add(exec, 1e10, m, 0.0, m, keep),
                      Contains("nearsparse::spamm::add") && Contains("non-finite"));
    CHECK(keep.norms().data() == m.norms().data());  // C kept its arrays
  }
  // identity, trace, gershgorin
  CHECK_THROWS_WITH(spamm::identity<double>(exec, -1, 16),
                    Contains("nearsparse::spamm::identity") && Contains("'n'"));
  CHECK_THROWS_WITH(spamm::identity<double>(exec, 10, 12),
                    Contains("nearsparse::spamm::identity") && Contains("'tile'"));
  CHECK_THROWS_WITH(spamm::trace(exec, a), Contains("nearsparse::spamm::trace") &&
                                               Contains("'A'") && Contains("40 x 30") &&
                                               Contains("square"));
  CHECK_THROWS_WITH(
      spamm::gershgorin_bounds(exec, a),
      Contains("nearsparse::spamm::gershgorin_bounds") && Contains("'A'") && Contains("square"));
  CHECK_THROWS_WITH(spamm::frobenius_norm(exec, matrix()),
                    Contains("nearsparse::spamm::frobenius_norm") && Contains("'A'"));
  // sp2
  matrix d(exec, 40, 40, 16);
  CHECK_THROWS_WITH(spamm::sp2(exec, a, 10, d),
                    Contains("nearsparse::spamm::sp2") && Contains("'H'") && Contains("square"));
  CHECK_THROWS_WITH(spamm::sp2(exec, sq, -1, d),
                    Contains("nearsparse::spamm::sp2") && Contains("'occupied'") && Contains("-1"));
  CHECK_THROWS_WITH(spamm::sp2(exec, sq, 41, d),
                    Contains("nearsparse::spamm::sp2") && Contains("'occupied'") && Contains("41"));
  matrix d8(exec, 40, 40, 8), d30(exec, 30, 30, 16);
  CHECK_THROWS_WITH(spamm::sp2(exec, sq, 10, d8),
                    Contains("nearsparse::spamm::sp2") && Contains("'D'") && Contains("tile 8"));
  CHECK_THROWS_WITH(spamm::sp2(exec, sq, 10, d30),
                    Contains("nearsparse::spamm::sp2") && Contains("'D'") && Contains("30 x 30"));
  for (const char* which : {"tau", "drop", "idem", "iter"}) {
    spamm::block_sparse_sp2_options o;
    std::string name;
    if (which == std::string("tau")) {
      o.tau = -1;
      name = "'options.tau'";
    } else if (which == std::string("drop")) {
      o.drop_tolerance = -1e-3;
      name = "'options.drop_tolerance'";
    } else if (which == std::string("idem")) {
      o.idempotency_tolerance = -1;
      name = "'options.idempotency_tolerance'";
    } else {
      o.max_iterations = 0;
      name = "'options.max_iterations'";
    }
    CHECK_THROWS_WITH(spamm::sp2(exec, sq, 10, d, o),
                      Contains("nearsparse::spamm::sp2") && Contains(name));
  }
  {
    // Non-finite H: a stored tile norm that is Inf.
    host_matrix<double> hh(40, 40);
    hh(3, 4) = hh(4, 3) = 1.0;
    const auto m = to_block_sparse<double>(exec, hh, 16);
    Kokkos::View<double*, typename exec_space::memory_space> norms("norms", m.norms().extent(0));
    auto hn = Kokkos::create_mirror_view(norms);
    for (std::size_t p = 0; p < hn.extent(0); ++p) hn(p) = std::numeric_limits<double>::infinity();
    Kokkos::deep_copy(exec, norms, hn);
    exec.fence();
    const matrix bad(40, 40, 16, m.row_map(), m.column_indices(), m.values(), norms);
    CHECK_THROWS_WITH(spamm::sp2(exec, bad, 10, d), Contains("nearsparse::spamm::sp2") &&
                                                        Contains("'H'") && Contains("non-finite"));
  }
  // A refused sp2 leaves D as it was.
  const auto id = spamm::identity<double>(exec, 40, 16);
  matrix keep = id;
  CHECK_THROWS_AS(spamm::sp2(exec, sq, 41, keep), nearsparse::invalid_argument);
  CHECK(keep.kept_tiles() == id.kept_tiles());
}
