// Block-sparse algebra (spamm/block_sparse_algebra.hpp: add, identity, trace, frobenius_norm,
// gershgorin_bounds) against host computations on the dense form in double, and the
// block-sparse matrix functions (spamm/block_sparse_functions.hpp: sp2, inverse_sqrt, sign)
// against functions of a LAPACK eigendecomposition on the host.
#include "block_sparse_support.hpp"
#include "spamm_inputs.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
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

/// SP2 at tau = 0, drop 0 on h against the eigendecomposition, its products on the kernels
/// `impl` chooses; returns the dense form of the result.
template <class T, class Exec>
host_matrix<double> check_exact_sp2(
    const Exec& exec, const host_matrix<double>& h, int tile, int occupied,
    nearsparse::implementation impl = nearsparse::implementation::automatic) {
  const int n = static_cast<int>(h.rows);
  INFO("n " << n << ", tile " << tile << ", occupied " << occupied << ", "
            << (std::is_same<T, float>::value ? "float" : "double") << ", "
            << nearsparse::to_string(impl));
  double gap = 0;
  const auto d_ref = reference_density(h, occupied, gap);
  const auto hs = to_block_sparse<T>(exec, h, tile);
  spamm::block_sparse_matrix<T, Exec> d(exec, n, n, tile);
  spamm::block_sparse_function_options opt;
  // The float iterates stop at a residual of about u sqrt(N) (u = 6e-8): 1e-5 lies above it.
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-9;
  opt.implementation = impl;
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
  CHECK(r.residual <= opt.residual_tolerance * norm_d);
  const double tolerance = 3 * r.residual / norm_d + rounding;
  INFO("tolerance " << tolerance);
  CHECK(diff_norm(hd, d_ref) / norm_d <= tolerance);
  // trace: |tr D - occupied| = |sum of eigenvalue errors| <= sqrt(N) ||D - P||_F.
  double tr = 0;
  for (int i = 0; i < n; ++i) tr += hd(i, i);
  CHECK(std::abs(tr - occupied) <= std::sqrt(double(n)) * tolerance * norm_d);
  CHECK(std::abs(r.trace - tr) <= 1e-6 * occupied);
  // Idempotency: after the last step ||D^2 - D||_F <= 2 residual, plus rounding.
  CHECK(diff_norm(square(hd), hd) / norm_d <= 2 * opt.residual_tolerance + rounding);
  // The check above tells density matrices apart: the one with a state fewer lies at distance
  // 1 (a rank-one projector) from D_ref, far outside the tolerance.
  double gap_fewer = 0;
  CHECK(diff_norm(hd, reference_density(h, occupied - 1, gap_fewer)) / norm_d > 10 * tolerance);
  return hd;
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
  spamm::block_sparse_function_options opt;
  opt.tau = tau;
  opt.drop_tolerance = tau / 100;  // below tau: tile products are filtered, not only tiles
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-7;
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
      spamm::block_sparse_function_options opt;
      opt.residual_tolerance = 1e-9;
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
    spamm::block_sparse_function_options o;
    std::string name;
    if (which == std::string("tau")) {
      o.tau = -1;
      name = "'options.tau'";
    } else if (which == std::string("drop")) {
      o.drop_tolerance = -1e-3;
      name = "'options.drop_tolerance'";
    } else if (which == std::string("idem")) {
      o.residual_tolerance = -1;
      name = "'options.residual_tolerance'";
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

namespace {

// ---------------------------------------------------------------------------------------------
// inverse_sqrt and sign against V f(Lambda) V^T from a LAPACK eigendecomposition.

/// V diag(f(lambda)) V^T of the symmetric h (n >= 1); w receives the eigenvalues, ascending.
template <class F>
host_matrix<double> reference_function(const host_matrix<double>& h, F f, std::vector<double>& w) {
  const int n = static_cast<int>(h.rows);
  std::vector<double> a(h.data);
  w.assign(std::size_t(n), 0.0);
  double work_size = 0;
  int iwork_size = 0;
  REQUIRE(host_blas::syevd('V', 'U', n, a.data(), n, w.data(), &work_size, -1, &iwork_size, -1) ==
          0);
  std::vector<double> work(std::size_t(work_size) + 1);
  std::vector<int> iwork(iwork_size + 1);
  REQUIRE(host_blas::syevd('V', 'U', n, a.data(), n, w.data(), work.data(), int(work.size()),
                           iwork.data(), int(iwork.size())) == 0);
  host_matrix<double> out(n, n);
  for (int k = 0; k < n; ++k) {
    const double* v = a.data() + std::size_t(k) * n;
    const double fk = f(w[std::size_t(k)]);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) out(i, j) += fk * v[i] * v[j];
  }
  return out;
}

host_matrix<double> identity_host(int n) {
  host_matrix<double> id(n, n);
  for (int i = 0; i < n; ++i) id(i, i) = 1.0;
  return id;
}

double inverse_sqrt_of(double x) {
  return 1.0 / std::sqrt(x);
}
double sign_of(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}

template <class Exec>
host_matrix<double> overlap_chain(const Exec& exec, int n, double alpha) {
  Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space> s("s", n, n);
  spamm::fill_overlap_chain(exec, s, alpha);
  exec.fence();
  return nearsparse::test::to_host(s);
}

template <class Exec>
host_matrix<double> overlap_lattice(const Exec& exec, int nx, int ny, int nz, double alpha) {
  Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space> s("s", nx * ny * nz,
                                                                             nx * ny * nz);
  spamm::fill_overlap_lattice(exec, s, nx, ny, nz, alpha);
  exec.fence();
  return nearsparse::test::to_host(s);
}

/// Q diag(values) Q^T, Q the product of two Householder reflections with random vectors: a
/// dense symmetric matrix with the given spectrum.
host_matrix<double> random_with_spectrum(const std::vector<double>& values, std::uint64_t seed) {
  const std::size_t n = values.size();
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  host_matrix<double> a(n, n);
  for (std::size_t i = 0; i < n; ++i) a(i, i) = values[i];
  for (int r = 0; r < 2; ++r) {
    std::vector<double> v(n);
    double vv = 0;
    for (double& x : v) {
      x = g(gen);
      vv += x * x;
    }
    if (!(vv > 0)) continue;
    // A <- H A H, H = I - 2 v v^T / (v^T v): A - 2 v w^T - 2 w v^T + 4 (v^T A v) v v^T / vv^2
    // with w = A v / vv.
    std::vector<double> w(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) w[i] += a(i, j) * v[j] / vv;
    double vav = 0;
    for (std::size_t i = 0; i < n; ++i) vav += v[i] * w[i];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a(i, j) += -2 * v[i] * w[j] - 2 * w[i] * v[j] + 4 * vav * v[i] * v[j] / vv;
  }
  return a;
}

template <class T>
const char* type_name() {
  return std::is_same<T, float>::value ? "float" : "double";
}

/// inverse_sqrt at tau = 0, drop 0 on the SPD s against the eigendecomposition, its products on
/// the kernels `impl` chooses; returns the dense form of the result.
template <class T, class Exec>
host_matrix<double> check_exact_inverse_sqrt(
    const Exec& exec, const host_matrix<double>& s, int tile,
    nearsparse::implementation impl = nearsparse::implementation::automatic) {
  const int n = static_cast<int>(s.rows);
  INFO("inverse_sqrt, n " << n << ", tile " << tile << ", " << type_name<T>() << ", "
                          << nearsparse::to_string(impl));
  std::vector<double> w;
  const auto z_ref = reference_function(s, inverse_sqrt_of, w);
  REQUIRE(w.front() > 0);
  const double kappa = w.back() / w.front(), norm_inv = 1 / std::sqrt(w.front());
  const auto ss = to_block_sparse<T>(exec, s, tile);
  spamm::block_sparse_matrix<T, Exec> z(exec, n, n, tile);
  spamm::block_sparse_function_options opt;
  // The float iterates stop at a residual of a few u sqrt(N) (u = 6e-8): 1e-5 lies above it.
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-11;
  opt.implementation = impl;
  const auto r = spamm::inverse_sqrt(exec, ss, z, opt);
  INFO("iterations " << r.iterations << ", residual " << r.residual << ", kappa " << kappa);
  CHECK(r.converged);
  CHECK_FALSE(r.stagnated);
  CHECK(r.residual <= opt.residual_tolerance * std::sqrt(double(n)));
  // Steps: about log_(9/4)(kappa) to reach the quadratic regime, then a few more.
  CHECK(r.iterations <= std::log(kappa) / std::log(2.25) + 10);
  CHECK(int(r.steps.size()) == 3 * r.iterations - 2);  // zy, yt, tz; the last step zy only
  CHECK(r.error_bound_sum == 0.0);
  CHECK(r.dropped_norm_sum == 0.0);
  CHECK(z.dropped_norm() == 0.0);
  const auto hz = dense_of(exec, z);
  // ||Z - S^(-1/2)||_F <= ||S^(-1/2)||_2 residual / 2 to first order (see the header; measured
  // within 1% of it where the residual dominates, 0.6 covers the second-order terms), plus
  // rounding: about u sqrt(N) sqrt(kappa) ||S^(-1/2)||_2 (see the header), the allowance 10
  // times that.
  const double rounding =
      10 * unit_roundoff<T>() * std::sqrt(double(n)) * std::sqrt(kappa) * norm_inv;
  const double tolerance = 0.6 * norm_inv * r.residual + rounding;
  const double error = diff_norm(hz, z_ref);
  INFO("error " << error << ", tolerance " << tolerance);
  CHECK(error <= tolerance);
  double tr = 0;
  for (int i = 0; i < n; ++i) tr += hz(i, i);
  CHECK(std::abs(r.trace - tr) <= 1e-5 * std::abs(tr));
  // In double the check tells apart a result off by a small perturbation: S^(-1/2) of
  // (1 + 1e-4) S.
  if (std::is_same<T, double>::value)
    CHECK(diff_norm(combination(1 / std::sqrt(1 + 1e-4), z_ref, 0.0, z_ref), z_ref) >
          2 * tolerance);
  return hz;
}

/// sign at tau = 0, drop 0 on a against the eigendecomposition, its products on the kernels
/// `impl` chooses; returns the dense form of the result.
template <class T, class Exec>
host_matrix<double> check_exact_sign(
    const Exec& exec, const host_matrix<double>& a, int tile,
    nearsparse::implementation impl = nearsparse::implementation::automatic) {
  const int n = static_cast<int>(a.rows);
  INFO("sign, n " << n << ", tile " << tile << ", " << type_name<T>() << ", "
                  << nearsparse::to_string(impl));
  std::vector<double> w;
  const auto x_ref = reference_function(a, sign_of, w);
  double gap = std::numeric_limits<double>::max();
  for (double l : w) gap = std::min(gap, std::abs(l));
  const auto as = to_block_sparse<T>(exec, a, tile);
  spamm::block_sparse_matrix<T, Exec> x(exec, n, n, tile);
  spamm::block_sparse_function_options opt;
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-11;
  opt.implementation = impl;
  const auto r = spamm::sign(exec, as, x, opt);
  const double b = std::max(std::abs(r.bounds.lower), std::abs(r.bounds.upper));
  const double g = gap / b;  // the relative gap around 0
  INFO("iterations " << r.iterations << ", residual " << r.residual << ", relative gap " << g);
  REQUIRE(g > 1e-3);
  CHECK(r.converged);
  CHECK_FALSE(r.stagnated);
  CHECK(r.residual <= opt.residual_tolerance * std::sqrt(double(n)));
  // Steps: about log_(3/2)(1 / g) to bring the smallest |eigenvalue| near 1, then a few more.
  CHECK(r.iterations <= std::log(1 / g) / std::log(1.5) + 10);
  CHECK(int(r.steps.size()) == 2 * r.iterations - 1);  // x^2, xt; the last step x^2 only
  CHECK(r.error_bound_sum == 0.0);
  CHECK(r.dropped_norm_sum == 0.0);
  const auto hx = dense_of(exec, x);
  // ||X - sign(A)||_F <= residual (|x - sign(x)| <= |x^2 - 1|), plus rounding: 10 u sqrt(N) / g.
  const double tolerance = r.residual + 10 * unit_roundoff<T>() * std::sqrt(double(n)) / g;
  const double error = diff_norm(hx, x_ref);
  INFO("error " << error << ", tolerance " << tolerance);
  CHECK(error <= tolerance);
  // X^2 = I and trace = (positive - negative eigenvalues), within the same tolerance.
  double tr = 0, tr_ref = 0;
  for (int i = 0; i < n; ++i) tr += hx(i, i);
  for (double l : w) tr_ref += sign_of(l);
  CHECK(std::abs(tr - tr_ref) <= std::sqrt(double(n)) * tolerance);
  CHECK(std::abs(r.trace - tr) <= 1e-4 * n);
  CHECK(diff_norm(square(hx), identity_host(n)) <= 3 * tolerance);
  // A sign function with one eigenvalue flipped lies at distance 2 from the reference, far
  // outside the tolerance.
  CHECK(tolerance < 0.2);
  return hx;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block-sparse inverse_sqrt matches the LAPACK inverse square root",
                           "[spamm][block_sparse][functions]") {
  using exec_space = TestType;
  const exec_space exec;
  INFO(exec_space::name());
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  SECTION("overlap chain") {
    for (const int n : {1, 45, 150}) {
      const auto s = overlap_chain(exec, n, 1.0);
      check_exact_inverse_sqrt<double>(exec, s, 16);
      check_exact_inverse_sqrt<double>(exec, s, 32);
      check_exact_inverse_sqrt<float>(exec, s, 16);
    }
  }
  SECTION("overlap lattice") {
    const auto s = overlap_lattice(exec, 5, 5, 6, 1.5);  // 150 sites
    check_exact_inverse_sqrt<double>(exec, s, 16);
    check_exact_inverse_sqrt<float>(exec, s, 32);
  }
  SECTION("random SPD") {
    const std::uint64_t seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.05, 2.0);
    for (const int n : {45, 150}) {
      std::vector<double> values(static_cast<std::size_t>(n));
      for (double& v : values) v = u(gen);
      values[0] = 0.05;  // cond(S) = 40
      values[1] = 2.0;
      const auto s = random_with_spectrum(values, seed + std::uint64_t(n));
      check_exact_inverse_sqrt<double>(exec, s, 32);
      check_exact_inverse_sqrt<float>(exec, s, 16);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse sign matches the LAPACK sign function",
                           "[spamm][block_sparse][functions]") {
  using exec_space = TestType;
  const exec_space exec;
  INFO(exec_space::name());
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  SECTION("dimerized chain") {
    // Every eigenvalue has |lambda| >= delta = 0.5 (H^2 = K^2 + delta^2 I), at any N.
    for (const int n : {1, 45, 150}) {
      const auto h = chain_hamiltonian(exec, n);
      check_exact_sign<double>(exec, h, 16);
      check_exact_sign<double>(exec, h, 32);
      check_exact_sign<float>(exec, h, 16);
    }
  }
  SECTION("cubic lattice") {
    spamm::cubic_model model;
    model.nx = 5;
    model.ny = 5;
    model.nz = 6;
    const auto h = cubic_hamiltonian(exec, model);  // 150 sites
    check_exact_sign<double>(exec, h, 16);
    check_exact_sign<float>(exec, h, 32);
  }
  SECTION("random symmetric") {
    const std::uint64_t seed = nearsparse::test::fresh_seed();
    INFO("seed " << seed);
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.1, 3.0), coin(0.0, 1.0);
    for (const int n : {45, 150}) {
      std::vector<double> values(static_cast<std::size_t>(n));
      for (double& v : values) v = (coin(gen) < 0.4 ? -1.0 : 1.0) * u(gen);
      values[0] = 0.1;
      values[1] = -0.1;
      values[2] = 3.0;
      const auto a = random_with_spectrum(values, seed + std::uint64_t(n));
      check_exact_sign<double>(exec, a, 32);
      check_exact_sign<float>(exec, a, 16);
    }
  }
}

namespace {

/// inverse_sqrt with tau > 0 and a drop tolerance on a 398-site overlap chain.
template <class T, class Exec>
void check_filtered_inverse_sqrt(const Exec& exec, double tau) {
  const int n = 398, tile = 16;
  const auto s = overlap_chain(exec, n, 1.0);
  std::vector<double> w;
  const auto z_ref = reference_function(s, inverse_sqrt_of, w);
  const double kappa = w.back() / w.front(), norm_inv = 1 / std::sqrt(w.front());
  const auto ss = to_block_sparse<T>(exec, s, tile);
  const int all_tiles = ss.tile_rows() * ss.tile_cols();
  spamm::block_sparse_matrix<T, Exec> z(exec, n, n, tile);
  spamm::block_sparse_function_options opt;
  opt.tau = tau;
  opt.drop_tolerance = tau / 100;
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-8;
  const auto r = spamm::inverse_sqrt(exec, ss, z, opt);
  const double c = 1 / r.bounds.upper;
  const double dropped = r.error_bound_sum + r.dropped_norm_sum;
  // The first-order estimate of the header, ||S^(-1/2)||_2 residual / 2 + sqrt(c) kappa dropped,
  // plus the rounding allowance of the exact test; a factor 2 covers the second-order terms.
  const double rounding =
      10 * unit_roundoff<T>() * std::sqrt(double(n)) * std::sqrt(kappa) * norm_inv;
  const double estimate = norm_inv * r.residual / 2 + std::sqrt(c) * kappa * dropped + rounding;
  const double error = diff_norm(dense_of(exec, z), z_ref);
  std::int64_t max_tiles = 0, kept = 0, candidates = 0;
  for (const auto& st : r.steps) {
    max_tiles = std::max(max_tiles, st.tiles);
    kept += st.kept_products;
    candidates += st.candidate_products;
    CHECK(st.kept_products <= st.candidate_products);
    CHECK(st.error_bound >= 0);
    CHECK(st.dropped_norm >= 0);
  }
  INFO("inverse_sqrt, " << type_name<T>() << ", tau " << tau << ", iterations " << r.iterations
                        << ", residual " << r.residual << ", error " << error << ", estimate "
                        << estimate << ", dropped " << dropped << ", most tiles " << max_tiles
                        << " of " << all_tiles << ", products " << kept << " of " << candidates);
  CHECK((r.converged || r.stagnated));
  CHECK(r.iterations < 30);
  CHECK(dropped > 0);
  CHECK(kept < candidates);
  CHECK(error <= 2 * estimate);
  CHECK(error / norm(z_ref) <= 1e-3);
  CHECK(max_tiles < all_tiles);
  CHECK(z.kept_tiles() < all_tiles / 2);
  CHECK(z.dropped_norm() == Approx(std::sqrt(c) * dropped).epsilon(1e-12));
}

/// sign with tau > 0 and a drop tolerance on a 398-site dimerized chain.
template <class T, class Exec>
void check_filtered_sign(const Exec& exec, double tau) {
  const int n = 398, tile = 16;
  const auto h = chain_hamiltonian(exec, n);
  std::vector<double> w;
  const auto x_ref = reference_function(h, sign_of, w);
  double gap = std::numeric_limits<double>::max();
  for (double l : w) gap = std::min(gap, std::abs(l));
  const auto hs = to_block_sparse<T>(exec, h, tile);
  const int all_tiles = hs.tile_rows() * hs.tile_cols();
  spamm::block_sparse_matrix<T, Exec> x(exec, n, n, tile);
  spamm::block_sparse_function_options opt;
  opt.tau = tau;
  opt.drop_tolerance = tau / 100;
  opt.residual_tolerance = std::is_same<T, float>::value ? 1e-5 : 1e-8;
  const auto r = spamm::sign(exec, hs, x, opt);
  const double g = gap / std::max(std::abs(r.bounds.lower), std::abs(r.bounds.upper));
  const double dropped = r.error_bound_sum + r.dropped_norm_sum;
  // The first-order estimate of the header, residual + 2 sqrt(2) dropped / g, plus the rounding
  // allowance of the exact test; a factor 2 covers the second-order terms.
  const double rounding = 10 * unit_roundoff<T>() * std::sqrt(double(n)) / g;
  const double estimate = r.residual + 2 * std::sqrt(2.0) * dropped / g + rounding;
  const double error = diff_norm(dense_of(exec, x), x_ref);
  std::int64_t max_tiles = 0, kept = 0, candidates = 0;
  for (const auto& st : r.steps) {
    max_tiles = std::max(max_tiles, st.tiles);
    kept += st.kept_products;
    candidates += st.candidate_products;
    CHECK(st.kept_products <= st.candidate_products);
  }
  INFO("sign, " << type_name<T>() << ", tau " << tau << ", iterations " << r.iterations
                << ", residual " << r.residual << ", error " << error << ", estimate " << estimate
                << ", dropped " << dropped << ", most tiles " << max_tiles << " of " << all_tiles
                << ", products " << kept << " of " << candidates);
  CHECK((r.converged || r.stagnated));
  CHECK(r.iterations < 30);
  CHECK(dropped > 0);
  CHECK(kept < candidates);
  CHECK(error <= 2 * estimate);
  CHECK(error / std::sqrt(double(n)) <= 1e-3);
  CHECK(max_tiles < all_tiles);
  CHECK(x.kept_tiles() < all_tiles / 2);
  CHECK(x.dropped_norm() == Approx(dropped).epsilon(1e-12));
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE(
    "block-sparse inverse_sqrt and sign with filtering stay within their "
    "error estimates",
    "[spamm][block_sparse][functions]") {
  using exec_space = TestType;
  const exec_space exec;
  INFO(exec_space::name());
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  check_filtered_inverse_sqrt<double>(exec, 1e-8);
  check_filtered_inverse_sqrt<double>(exec, 1e-5);
  check_filtered_inverse_sqrt<float>(exec, 1e-5);
  check_filtered_sign<double>(exec, 1e-8);
  check_filtered_sign<double>(exec, 1e-5);
  check_filtered_sign<float>(exec, 1e-5);
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse inverse_sqrt and sign: empty input and no convergence",
                           "[spamm][block_sparse][functions]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  const exec_space exec;
  SECTION("empty input") {
    const matrix a(exec, 0, 0, 16);
    matrix out(exec, 0, 0, 16);
    auto r = spamm::inverse_sqrt(exec, a, out);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(out.rows() == 0);
    r = spamm::sign(exec, a, out);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(out.kept_tiles() == 0);
    const spamm::block_sparse_matrix<float, exec_space> af(exec, 0, 0, 32);
    spamm::block_sparse_matrix<float, exec_space> outf(exec, 0, 0, 32);
    CHECK(spamm::inverse_sqrt(exec, af, outf).converged);
    CHECK(spamm::sign(exec, af, outf).converged);
  }
  SECTION("the input may be the result") {
    const int n = 45;
    const auto hs = overlap_chain(exec, n, 1.0);
    matrix s = to_block_sparse<double>(exec, hs, 16);
    const matrix s_copy = s;
    matrix z(exec, n, n, 16);
    spamm::inverse_sqrt(exec, s_copy, z);
    spamm::inverse_sqrt(exec, s, s);
    CHECK(diff_norm(dense_of(exec, s), dense_of(exec, z)) == 0.0);
    CHECK(diff_norm(dense_of(exec, s_copy), hs) == 0.0);  // the old arrays are untouched
  }
  SECTION("S with a negative eigenvalue ends unconverged") {
    // The overlap chain's eigenvalues lie in (0.46, 2.17); S - 1.2 I has both signs and a
    // positive Gershgorin upper bound, so it is not refused.
    const int n = 45;
    auto hs = overlap_chain(exec, n, 1.0);
    for (int i = 0; i < n; ++i) hs(i, i) -= 1.2;
    const matrix s = to_block_sparse<double>(exec, hs, 16);
    matrix z(exec, n, n, 16);
    spamm::block_sparse_function_options opt;
    opt.max_iterations = 200;
    const auto r = spamm::inverse_sqrt(exec, s, z, opt);
    INFO("iterations " << r.iterations << ", residual " << r.residual);
    CHECK(r.bounds.upper > 0);
    CHECK_FALSE(r.converged);
    CHECK(r.iterations < opt.max_iterations);  // the divergence rule ended it
    CHECK(r.residual > 2 * std::sqrt(double(n)));
    // A tiny negative eigenvalue: the residual first falls, then rises; stagnation or
    // divergence ends it.
    const auto neg = random_with_spectrum(
        [] {
          std::vector<double> v(40, 1.0);
          v[0] = -1e-6;
          return v;
        }(),
        17);
    const matrix sn = to_block_sparse<double>(exec, neg, 16);
    matrix zn(exec, 40, 40, 16);
    const auto rn = spamm::inverse_sqrt(exec, sn, zn, opt);
    INFO("iterations " << rn.iterations << ", residual " << rn.residual);
    CHECK_FALSE(rn.converged);
    CHECK(rn.iterations < opt.max_iterations);
  }
  SECTION("A with an eigenvalue at 0 ends unconverged") {
    for (const int n : {45, 150}) {
      INFO("n " << n);
      std::vector<double> values(std::size_t(n), 1.0);
      for (int i = 0; i < n; i += 2) values[std::size_t(i)] = -0.5;
      values[3] = 0.0;
      // Diagonal: the eigenvalue at 0 is exactly 0 and stays so.
      host_matrix<double> ha(n, n);
      for (int i = 0; i < n; ++i) ha(i, i) = values[std::size_t(i)];
      const matrix a = to_block_sparse<double>(exec, ha, 32);
      matrix x(exec, n, n, 32);
      spamm::block_sparse_function_options opt;
      opt.max_iterations = 60;
      const auto r = spamm::sign(exec, a, x, opt);
      INFO("iterations " << r.iterations << ", residual " << r.residual);
      CHECK_FALSE(r.converged);
      CHECK(r.iterations <= opt.max_iterations);
      CHECK(r.residual >= 1.0 - 1e-12);
      // A = 0.
      const matrix zero(exec, n, n, 32);
      const auto r0 = spamm::sign(exec, zero, x, opt);
      CHECK_FALSE(r0.converged);
      CHECK(r0.iterations == opt.max_iterations);
      CHECK(x.kept_tiles() == 0);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse inverse_sqrt and sign refuse bad arguments",
                           "[spamm][block_sparse][functions]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const matrix rect(exec, 40, 30, 16);
  const auto sq = spamm::identity<double>(exec, 40, 16);
  matrix out(exec, 40, 40, 16), out8(exec, 40, 40, 8), out30(exec, 30, 30, 16);
  for (const bool is_sign : {false, true}) {
    const std::string fn = is_sign ? "nearsparse::spamm::sign" : "nearsparse::spamm::inverse_sqrt";
    const std::string in = is_sign ? "'A'" : "'S'", res = is_sign ? "'X'" : "'Z'";
    INFO(fn);
    const auto run = [&](const matrix& a, matrix& x,
                         const spamm::block_sparse_function_options& o) {
      return is_sign ? spamm::sign(exec, a, x, o) : spamm::inverse_sqrt(exec, a, x, o);
    };
    const spamm::block_sparse_function_options defaults;
    CHECK_THROWS_WITH(run(rect, out, defaults),
                      Contains(fn) && Contains(in) && Contains("40 x 30") && Contains("square"));
    CHECK_THROWS_WITH(run(sq, out8, defaults),
                      Contains(fn) && Contains(res) && Contains("tile 8") && Contains("tile 16"));
    CHECK_THROWS_WITH(run(sq, out30, defaults),
                      Contains(fn) && Contains(res) && Contains("30 x 30") && Contains("40 x 40"));
    CHECK_THROWS_WITH(run(matrix(), out, defaults), Contains(fn) && Contains(in));
    for (const char* which : {"tau", "drop", "res", "iter"}) {
      spamm::block_sparse_function_options o;
      std::string name;
      if (which == std::string("tau")) {
        o.tau = std::nan("");
        name = "'options.tau'";
      } else if (which == std::string("drop")) {
        o.drop_tolerance = -1e-3;
        name = "'options.drop_tolerance'";
      } else if (which == std::string("res")) {
        o.residual_tolerance = -1;
        name = "'options.residual_tolerance'";
      } else {
        o.max_iterations = 0;
        name = "'options.max_iterations'";
      }
      CHECK_THROWS_WITH(run(sq, out, o), Contains(fn) && Contains(name));
    }
    {
      // Non-finite input: a stored tile norm that is Inf.
      Kokkos::View<double*, typename exec_space::memory_space> norms("norms", sq.norms().extent(0));
      Kokkos::deep_copy(exec, norms, std::numeric_limits<double>::infinity());
      exec.fence();
      const matrix bad(40, 40, 16, sq.row_map(), sq.column_indices(), sq.values(), norms);
      CHECK_THROWS_WITH(run(bad, out, defaults),
                        Contains(fn) && Contains(in) && Contains("non-finite"));
    }
    // A refused call leaves the result as it was.
    matrix keep = sq;
    CHECK_THROWS_AS(run(rect, keep, defaults), nearsparse::invalid_argument);
    CHECK(keep.kept_tiles() == sq.kept_tiles());
    CHECK(keep.values().data() == sq.values().data());
  }
  // inverse_sqrt: a Gershgorin upper bound <= 0 (S = -I) is not positive definite.
  matrix minus;
  spamm::add(exec, -1.0, sq, 0.0, sq, minus);
  CHECK_THROWS_WITH(spamm::inverse_sqrt(exec, minus, out),
                    Contains("nearsparse::spamm::inverse_sqrt") && Contains("'S'") &&
                        Contains("upper bound -1") && Contains("not positive definite"));
  // sign(-I) = -I is fine.
  const auto r = spamm::sign(exec, minus, out);
  CHECK(r.converged);
  const auto id_host = dense_of(exec, sq);
  CHECK(diff_norm(dense_of(exec, out), combination(-1.0, id_host, 0.0, id_host)) == 0.0);
}

namespace {

// ---------------------------------------------------------------------------------------------
// The implementation choice: which kernels run the products of the iterations.

/// 45 x 45 inputs (45 is no multiple of the tile 16: an edge tile in every row and column): for
/// sp2 a symmetric H with 22 eigenvalues in [-1, -0.2] and 23 in [0.2, 1] (a gap of at least
/// 0.4 at occupied = 22); for inverse_sqrt the overlap chain; for sign the dimerized chain
/// (|eigenvalues| >= 0.5).
constexpr int implementation_n = 45, implementation_tile = 16, implementation_occupied = 22;

host_matrix<double> gapped_hamiltonian(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  std::vector<double> values(static_cast<std::size_t>(implementation_n));
  for (int i = 0; i < implementation_n; ++i)
    values[std::size_t(i)] = (i < implementation_occupied ? -1.0 : 1.0) * u(gen);
  return random_with_spectrum(values, seed + 1);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE(
    "block-sparse sp2, inverse_sqrt and sign: implementation::portable and automatic agree",
    "[spamm][block_sparse][functions][implementation]") {
  // automatic takes the space's specialized tile products where it has them (the host BLAS on
  // OpenMP and Serial where the build has OpenBLAS, the CUDA kernel), portable the TeamPolicy
  // kernel: both meet the LAPACK reference within the exact tests' tolerances, and they differ
  // from each other by rounding only (the summation order of the tile products).
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  if (!host_blas::available()) {
    WARN("no LAPACK reference in this build");
    return;
  }
  using nearsparse::implementation;
  const int n = implementation_n, tile = implementation_tile;
  // Rounding differences: each product of the exact tests adds errors of a few u sqrt(N) (u the
  // unit roundoff, 1.1e-16); 1e-12 relative is about 1300 u sqrt(N) for N = 45, room for their
  // growth over the iterations' 10 to 25 products. A wrong kernel differs at order 1.
  const double agree = 1e-12;
  SECTION("sp2") {
    const auto h = gapped_hamiltonian(seed);
    const auto p =
        check_exact_sp2<double>(exec, h, tile, implementation_occupied, implementation::portable);
    const auto a =
        check_exact_sp2<double>(exec, h, tile, implementation_occupied, implementation::automatic);
    INFO("difference " << diff_norm(p, a) << ", norm " << norm(p));
    CHECK(diff_norm(p, a) <= agree * norm(p));
  }
  SECTION("inverse_sqrt") {
    const auto s = overlap_chain(exec, n, 1.0);
    const auto p = check_exact_inverse_sqrt<double>(exec, s, tile, implementation::portable);
    const auto a = check_exact_inverse_sqrt<double>(exec, s, tile, implementation::automatic);
    INFO("difference " << diff_norm(p, a) << ", norm " << norm(p));
    CHECK(diff_norm(p, a) <= agree * norm(p));
  }
  SECTION("sign") {
    const auto h = chain_hamiltonian(exec, n);
    const auto p = check_exact_sign<double>(exec, h, tile, implementation::portable);
    const auto a = check_exact_sign<double>(exec, h, tile, implementation::automatic);
    INFO("difference " << diff_norm(p, a) << ", norm " << norm(p));
    CHECK(diff_norm(p, a) <= agree * norm(p));
  }
}

NEARSPARSE_SPACE_TEST_CASE(
    "block-sparse sp2, inverse_sqrt and sign: implementation::specialized as in multiply",
    "[spamm][block_sparse][functions][implementation]") {
  // As block-sparse multiply: the CUDA kernel, the host BLAS on the host spaces where the build
  // has it; refused with nearsparse::unsupported naming the function where the space has no
  // specialized tile products, when the function starts (an empty input too).
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const int n = implementation_n, tile = implementation_tile;
  const bool specialized =
      std::string(exec_space::name()) == "Cuda" ||
      (std::is_same<typename exec_space::memory_space, Kokkos::HostSpace>::value &&
       host_blas::available());
  const matrix h = to_block_sparse<double>(exec, gapped_hamiltonian(seed), tile);
  const matrix s = to_block_sparse<double>(exec, overlap_chain(exec, n, 1.0), tile);
  const matrix a = to_block_sparse<double>(exec, chain_hamiltonian(exec, n), tile);
  spamm::block_sparse_function_options portable, special;
  portable.residual_tolerance = special.residual_tolerance = 1e-9;
  portable.implementation = nearsparse::implementation::portable;
  special.implementation = nearsparse::implementation::specialized;
  for (const char* fn : {"sp2", "inverse_sqrt", "sign"}) {
    INFO(fn);
    const std::string name = fn;
    const auto run = [&](matrix& out, const spamm::block_sparse_function_options& o) {
      if (name == "sp2") return spamm::sp2(exec, h, implementation_occupied, out, o);
      if (name == "inverse_sqrt") return spamm::inverse_sqrt(exec, s, out, o);
      return spamm::sign(exec, a, out, o);
    };
    matrix expected(exec, n, n, tile);
    const auto r_expected = run(expected, portable);
    REQUIRE(r_expected.converged);
    const auto id = spamm::identity<double>(exec, n, tile);
    matrix out = id;
    if (specialized) {
      spamm::block_sparse_function_report r;
      CHECK_NOTHROW(r = run(out, special));
      CHECK(r.converged);
      CHECK(r.iterations == r_expected.iterations);
      // Rounding differences only, as for automatic against portable.
      const auto he = dense_of(exec, expected);
      CHECK(diff_norm(dense_of(exec, out), he) <= 1e-12 * norm(he));
    } else {
      CHECK_THROWS_AS(run(out, special), nearsparse::unsupported);
      CHECK_THROWS_WITH(run(out, special), Contains("nearsparse::spamm::" + name) &&
                                               Contains("specialized") &&
                                               Contains(exec_space::name()));
      // The result keeps its arrays.
      CHECK(out.values().data() == id.values().data());
      const matrix empty(exec, 0, 0, tile);
      matrix out0(exec, 0, 0, tile);
      CHECK_THROWS_AS(name == "sp2"            ? spamm::sp2(exec, empty, 0, out0, special)
                      : name == "inverse_sqrt" ? spamm::inverse_sqrt(exec, empty, out0, special)
                                               : spamm::sign(exec, empty, out0, special),
                      nearsparse::unsupported);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE(
    "block-sparse sp2, inverse_sqrt and sign refuse an implementation outside the enumeration",
    "[spamm][block_sparse][functions][errors]") {
  using exec_space = TestType;
  using matrix = spamm::block_sparse_matrix<double, exec_space>;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const auto sq = spamm::identity<double>(exec, 40, 16);
  const matrix empty(exec, 0, 0, 16);
  spamm::block_sparse_function_options o;
  o.implementation = static_cast<nearsparse::implementation>(9);
  for (const char* fn : {"sp2", "inverse_sqrt", "sign"}) {
    const std::string name = fn, qualified = "nearsparse::spamm::" + name;
    INFO(qualified);
    const auto run = [&](const matrix& in, matrix& out) {
      if (name == "sp2") return spamm::sp2(exec, in, in.rows() / 2, out, o);
      if (name == "inverse_sqrt") return spamm::inverse_sqrt(exec, in, out, o);
      return spamm::sign(exec, in, out, o);
    };
    matrix out(exec, 40, 40, 16);
    CHECK_THROWS_AS(run(sq, out), nearsparse::invalid_argument);
    CHECK_THROWS_WITH(run(sq, out), Contains(qualified) && Contains("'options.implementation'") &&
                                        Contains("is 9"));
    // Refused even where there is nothing to compute, and the result keeps its arrays.
    matrix out0(exec, 0, 0, 16);
    CHECK_THROWS_WITH(run(empty, out0),
                      Contains(qualified) && Contains("'options.implementation'"));
    matrix keep = sq;
    CHECK_THROWS_AS(run(sq, keep), nearsparse::invalid_argument);
    CHECK(keep.values().data() == sq.values().data());
  }
}
