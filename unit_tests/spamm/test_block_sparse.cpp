// Block-sparse SpAMM (spamm/block_sparse.hpp): conversions from and to dense Views and CRS
// matrices, the drop rule, and C = alpha * A * B + beta * C with norm-product filtering, checked
// against independent host references in double precision.
#include "block_sparse_support.hpp"
#include "io/io_support.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/crs_matrix.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/io.hpp>
#include <nearsparse/spamm.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace spamm = nearsparse::spamm;
using nearsparse::test::dense_of;
using nearsparse::test::diff_norm;
using nearsparse::test::host_matrix;
using nearsparse::test::tile_norms;
using nearsparse::test::to_device;

namespace {

/// a_ij = exp(-|i - j| / decay) * uniform[-1, 1]: tile norms spread over many orders.
host_matrix<double> decaying(std::size_t rows, std::size_t cols, std::uint64_t seed,
                             double decay = 8.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  host_matrix<double> m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j)
      m(i, j) = std::exp(-std::abs(double(i) - double(j)) / decay) * u(gen);
  return m;
}

struct kept_reference {
  host_matrix<double> product;  // alpha * sum of kept tile products + beta * C
  double bound = 0;             // sqrt(sum_ij d_ij^2)
  std::int64_t kept = 0, candidates = 0;
};

/// The SpAMM product over the tile pairs of nonzero tiles with norm product >= tau, and its
/// error bound, from scratch on the host.
kept_reference kept_product(double alpha, const host_matrix<double>& a,
                            const host_matrix<double>& b, double beta, const host_matrix<double>& c,
                            int tile, double tau) {
  const auto an = tile_norms(a, tile), bn = tile_norms(b, tile);
  const std::size_t mt = an.rows, kt = an.cols, nt = bn.cols;
  kept_reference r;
  r.product = host_matrix<double>(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.cols; ++j) r.product(i, j) = beta * c(i, j);
  double bound_sq = 0;
  for (std::size_t ti = 0; ti < mt; ++ti) {
    for (std::size_t tj = 0; tj < nt; ++tj) {
      double d = 0;
      for (std::size_t tk = 0; tk < kt; ++tk) {
        if (an(ti, tk) == 0 || bn(tk, tj) == 0) continue;  // not stored: no candidate
        ++r.candidates;
        const double np = an(ti, tk) * bn(tk, tj);
        if (np < tau) {
          d += np;
          continue;
        }
        ++r.kept;
        for (std::size_t i = ti * tile; i < std::min(a.rows, (ti + 1) * tile); ++i)
          for (std::size_t j = tj * tile; j < std::min(b.cols, (tj + 1) * tile); ++j) {
            double s = 0;
            for (std::size_t l = tk * tile; l < std::min(a.cols, (tk + 1) * tile); ++l)
              s += a(i, l) * b(l, j);
            r.product(i, j) += alpha * s;
          }
      }
      bound_sq += d * d;
    }
  }
  r.bound = std::sqrt(bound_sq);
  return r;
}

/// A tau halfway between the two middle norm products of a and b's tiles.
double median_norm_product(const host_matrix<double>& a, const host_matrix<double>& b, int tile) {
  const auto an = tile_norms(a, tile), bn = tile_norms(b, tile);
  std::vector<double> products;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t k = 0; k < an.cols; ++k)
      for (std::size_t j = 0; j < bn.cols; ++j) products.push_back(an(i, k) * bn(k, j));
  // Halfway (geometrically) between the two middle products, so that no product lies within
  // rounding of tau: the device's tile norms may differ from these in the last bit.
  std::sort(products.begin(), products.end());
  const std::size_t mid = products.size() / 2;
  return std::sqrt(products[mid - 1] * products[mid]);
}

template <class Exec>
using crs = nearsparse::crs_matrix<double, Exec>;

/// A CRS matrix on exec from host triplets (any order, duplicates allowed).
template <class Exec>
crs<Exec> crs_from_triplets(const Exec& exec, int rows, int cols,
                            std::vector<std::pair<std::pair<int, int>, double>> t) {
  std::stable_sort(t.begin(), t.end(),
                   [](const auto& x, const auto& y) { return x.first.first < y.first.first; });
  using row_map_t = typename crs<Exec>::row_map_type::non_const_type;
  using entries_t = typename crs<Exec>::index_type::non_const_type;
  using values_t = typename crs<Exec>::values_type::non_const_type;
  row_map_t row_map("row_map", std::size_t(rows) + 1);
  entries_t entries("entries", t.size());
  values_t values("values", t.size());
  auto hm = Kokkos::create_mirror_view(row_map);
  auto he = Kokkos::create_mirror_view(entries);
  auto hv = Kokkos::create_mirror_view(values);
  for (std::size_t e = 0; e < t.size(); ++e) {
    hm(t[e].first.first + 1)++;
    // Reverse the columns within a row: the input need not be sorted.
    he(e) = t[e].first.second;
    hv(e) = t[e].second;
  }
  for (int i = 0; i < rows; ++i) hm(i + 1) += hm(i);
  Kokkos::deep_copy(exec, row_map, hm);
  Kokkos::deep_copy(exec, entries, he);
  Kokkos::deep_copy(exec, values, hv);
  exec.fence();
  return crs<Exec>("crs", rows, cols, int(t.size()), values, row_map, entries);
}

/// (row, col) -> value of a CRS matrix on the host; checks columns ascend within each row.
template <class Crs>
std::map<std::pair<int, int>, double> crs_entries(const Crs& a, bool& sorted) {
  auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.row_map);
  auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.entries);
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values);
  std::map<std::pair<int, int>, double> out;
  sorted = true;
  for (int i = 0; i < a.numRows(); ++i)
    for (int e = hm(i); e < hm(i + 1); ++e) {
      if (e > hm(i) && he(e) <= he(e - 1)) sorted = false;
      out[{i, he(e)}] += hv(e);
    }
  return out;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block-sparse dense round trips and the drop rule",
                           "[spamm][block_sparse]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const int tile = 32;
  const auto h = decaying(157, 131, seed);
  const auto norms = tile_norms(h, tile);  // 5 x 5
  double total_sq = 0;
  for (double x : norms.data) total_sq += x * x;

  SECTION("no dropping: exact round trip, LayoutRight and LayoutLeft inputs") {
    const auto right = to_device<exec_space>(exec, h);
    const auto left = to_device<exec_space, double, Kokkos::LayoutLeft>(exec, h);
    spamm::block_sparse_options opt;
    opt.tile = tile;
    const auto m = spamm::from_dense(exec, right, opt);
    const auto m_left = spamm::from_dense(exec, left, opt);
    CHECK(m.rows() == 157);
    CHECK(m.cols() == 131);
    CHECK(m.tile_rows() == 5);
    CHECK(m.tile_cols() == 5);
    CHECK(m.kept_tiles() == 25);
    CHECK(m.dropped_norm() == 0.0);
    CHECK(m.memory_bytes() == 6 * 8 + 25 * 4 + 25 * 32 * 32 * 8 + 25 * 8);
    CHECK(diff_norm(dense_of(exec, m), h) == 0.0);
    CHECK(diff_norm(dense_of(exec, m_left), h) == 0.0);
    // Stored norms are the tile norms; columns ascend; edge tiles are zero-padded.
    const auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.norms());
    const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.column_indices());
    const auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.row_map());
    const auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.values());
    for (int i = 0; i < 5; ++i) {
      CHECK(hr(i + 1) - hr(i) == 5);
      for (auto p = hr(i); p < hr(i + 1); ++p) {
        CHECK(hc(p) == int(p - hr(i)));
        CHECK(hn(p) == Approx(norms(i, hc(p))).epsilon(1e-13));
      }
    }
    // Tile (4, 4) holds rows 128..156 and columns 128..130: the rest is padding.
    const std::size_t last = 24 * 32 * 32;
    double padding = 0;
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 32; ++c)
        if (r >= 29 || c >= 3) padding += std::abs(hv(last + r * 32 + c));
    CHECK(padding == 0.0);
    // A float matrix from the same View.
    const auto f = spamm::from_dense<float>(exec, right, opt);
    const auto hf = dense_of(exec, f);
    CHECK(nearsparse::test::relative_error(hf, h) < 1e-7);
  }

  SECTION("relative and absolute drop rules, the dropped norm, and the strict comparison") {
    const auto d = to_device<exec_space>(exec, h);
    // Absolute threshold just below one tile's norm: that tile is kept. (Just below, not at:
    // the device sums a tile's squares in another order than the host, so its norm may differ
    // in the last bit; the exact tie is tested below on tiles whose norms are exact.)
    std::vector<double> sorted(norms.data);
    std::sort(sorted.begin(), sorted.end());
    const double at = sorted[10];
    const double cut = at * (1 - 1e-12);
    spamm::block_sparse_options opt;
    opt.tile = tile;
    opt.rule = spamm::drop_rule::absolute;
    opt.drop_tolerance = cut;
    const auto m = spamm::from_dense(exec, d, opt);
    CHECK(m.kept_tiles() == 15);  // sorted[10..24]
    opt.drop_tolerance = at * (1 + 1e-12);
    CHECK(spamm::from_dense(exec, d, opt).kept_tiles() == 14);
    // The dense matrix with the dropped tiles zeroed, and the dropped norm.
    host_matrix<double> expect = h;
    double dropped_sq = 0;
    for (std::size_t i = 0; i < h.rows; ++i)
      for (std::size_t j = 0; j < h.cols; ++j)
        if (norms(i / tile, j / tile) < cut) expect(i, j) = 0;
    for (double x : norms.data)
      if (x < cut) dropped_sq += x * x;
    CHECK(diff_norm(dense_of(exec, m), expect) == 0.0);
    CHECK(m.dropped_norm() == Approx(std::sqrt(dropped_sq)).epsilon(1e-12));
    CHECK(diff_norm(h, expect) == Approx(m.dropped_norm()).epsilon(1e-12));

    // Relative: the same cut expressed relative to ||A||_F.
    spamm::block_sparse_options rel;
    rel.tile = tile;
    rel.drop_tolerance = at / std::sqrt(total_sq) * (1 + 1e-12);
    const auto mr = spamm::from_dense(exec, d, rel);
    CHECK(mr.kept_tiles() == 14);  // the tile exactly at `at` now falls below
    rel.drop_tolerance = at / std::sqrt(total_sq) * (1 - 1e-12);
    CHECK(spamm::from_dense(exec, d, rel).kept_tiles() == 15);

    // The tie itself, on tiles of one nonzero each (norms exact in any summation order): a
    // tile whose norm equals the threshold is kept, one below it dropped.
    host_matrix<double> single(2 * tile, tile);
    single(0, 0) = 0.5;
    single(tile, 1) = 0.25;
    spamm::block_sparse_options tie;
    tie.tile = tile;
    tie.rule = spamm::drop_rule::absolute;
    tie.drop_tolerance = 0.25;
    const auto ds = to_device<exec_space>(exec, single);
    CHECK(spamm::from_dense(exec, ds, tie).kept_tiles() == 2);
    tie.drop_tolerance = std::nextafter(0.25, 1.0);
    const auto ms = spamm::from_dense(exec, ds, tie);
    CHECK(ms.kept_tiles() == 1);
    CHECK(ms.dropped_norm() == 0.25);
  }

  SECTION("every tile dropped, and empty matrices") {
    const auto d = to_device<exec_space>(exec, h);
    spamm::block_sparse_options opt;
    opt.tile = tile;
    opt.drop_tolerance = 1.5;  // relative: above ||A||_F
    const auto m = spamm::from_dense(exec, d, opt);
    CHECK(m.kept_tiles() == 0);
    CHECK(m.dropped_norm() == Approx(std::sqrt(total_sq)).epsilon(1e-12));
    CHECK(nearsparse::test::frobenius_norm(dense_of(exec, m)) == 0.0);
    const auto c = spamm::to_crs(exec, m);
    CHECK(c.nnz() == 0);
    CHECK(c.numRows() == 157);

    for (const auto& extents : {std::pair<int, int>{0, 5}, {7, 0}, {0, 0}}) {
      const auto e =
          to_device<exec_space>(exec, host_matrix<double>(extents.first, extents.second));
      const auto me = spamm::from_dense(exec, e, opt);
      CHECK(me.kept_tiles() == 0);
      CHECK(me.rows() == extents.first);
      CHECK(me.cols() == extents.second);
      CHECK(dense_of(exec, me).data.empty() == (extents.first * extents.second == 0));
      CHECK(spamm::to_crs(exec, me).nnz() == 0);
    }
    // A matrix of exact zeros stores no tile even with drop_tolerance 0.
    spamm::block_sparse_options keep_all;
    keep_all.tile = tile;
    const auto zeros = to_device<exec_space>(exec, host_matrix<double>(40, 70));
    CHECK(spamm::from_dense(exec, zeros, keep_all).kept_tiles() == 0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse CRS round trips", "[spamm][block_sparse][crs]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  // A banded sparse matrix with empty tile rows, explicit zeros, duplicates and unsorted rows.
  const int rows = 300, cols = 251, tile = 32;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::pair<std::pair<int, int>, double>> t;
  host_matrix<double> dense(rows, cols);
  for (int i = 0; i < rows; ++i) {
    if (i >= 64 && i < 96) continue;  // an empty tile row
    for (int j = std::min(cols - 1, i + 5); j >= std::max(0, i - 5); --j) {
      if (j >= cols) continue;
      const double v = (j == i && i % 7 == 0) ? 0.0 : u(gen);
      t.push_back({{i, j}, v});
      dense(i, j) += v;
    }
    if (i % 11 == 0 && i < cols) {  // a duplicate of the diagonal
      t.push_back({{i, i}, 0.25});
      dense(i, i) += 0.25;
    }
    if (i % 13 == 0) {  // a far entry: a lone tile
      t.push_back({{i, (i * 7) % cols}, 1e-3});
      dense(i, (i * 7) % cols) += 1e-3;
    }
  }
  const auto a = crs_from_triplets(exec, rows, cols, t);
  spamm::block_sparse_options opt;
  opt.tile = tile;
  const auto m = spamm::from_crs(exec, a, opt);
  const auto norms = tile_norms(dense, tile);
  std::int64_t nonzero_tiles = 0;
  for (double x : norms.data) nonzero_tiles += x > 0;
  CHECK(m.kept_tiles() == nonzero_tiles);
  CHECK(m.kept_tiles() < std::int64_t(norms.data.size()));  // sparse in tiles
  CHECK(diff_norm(dense_of(exec, m), dense) == 0.0);

  // Back to CRS: exact zeros skipped, duplicates summed, columns ascending.
  const auto back = spamm::to_crs(exec, m);
  bool sorted = false;
  const auto got = crs_entries(back, sorted);
  CHECK(sorted);
  CHECK(back.numRows() == rows);
  CHECK(back.numCols() == cols);
  std::map<std::pair<int, int>, double> expect;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (dense(i, j) != 0) expect[{i, j}] = dense(i, j);
  CHECK(got == expect);
  CHECK(back.nnz() == int(expect.size()));

  // With the drop rule: the far 1e-3 tiles go; what is left equals the dense reference with
  // those tiles zeroed.
  opt.rule = spamm::drop_rule::absolute;
  opt.drop_tolerance = 0.01;
  const auto md = spamm::from_crs(exec, a, opt);
  host_matrix<double> kept = dense;
  double dropped_sq = 0;
  for (double x : norms.data)
    if (x > 0 && x < 0.01) dropped_sq += x * x;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (norms(i / tile, j / tile) < 0.01) kept(i, j) = 0;
  CHECK(dropped_sq > 0);
  CHECK(md.kept_tiles() < m.kept_tiles());
  CHECK(diff_norm(dense_of(exec, md), kept) == 0.0);
  CHECK(md.dropped_norm() == Approx(std::sqrt(dropped_sq)).epsilon(1e-12));

  // An empty CRS matrix.
  const auto empty = crs_from_triplets(exec, 0, 9, {});
  const auto me = spamm::from_crs(exec, empty, opt);
  CHECK(me.rows() == 0);
  CHECK(me.kept_tiles() == 0);
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse multiply against a dense reference",
                           "[spamm][block_sparse][multiply]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  // Every case on the portable kernel and on the space's specialized tile products (the CUDA
  // kernel, the host BLAS on OpenMP and Serial; the portable kernel again where there is none).
  const auto impl =
      GENERATE(nearsparse::implementation::automatic, nearsparse::implementation::portable);
  INFO(exec_space::name() << ", seed " << seed << ", " << nearsparse::to_string(impl));
  spamm::block_sparse_multiply_options base;
  base.implementation = impl;
  const int m = 157, k = 131, n = 149, tile = 32;
  const auto ha = decaying(m, k, seed), hb = decaying(k, n, seed + 1);
  const auto hc = decaying(m, n, seed + 2, 3.0);
  spamm::block_sparse_options opt;
  opt.tile = tile;
  const auto a = spamm::from_dense(exec, to_device<exec_space>(exec, ha), opt);
  const auto b = spamm::from_dense(exec, to_device<exec_space>(exec, hb), opt);
  const double u = 0x1p-53;
  const auto exact = nearsparse::test::reference_gemm(1.0, ha, hb, 0.0, host_matrix<double>(m, n));
  const double scale = nearsparse::test::frobenius_norm(ha) * nearsparse::test::frobenius_norm(hb);

  SECTION("tau = 0 is the dense product") {
    spamm::block_sparse_matrix<double, exec_space> c(exec, m, n, tile);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c, base);
    CHECK(report.kept_products == 125);
    CHECK(report.candidate_products == 125);
    CHECK(report.tiles_kept == 25);
    CHECK(report.tiles_dropped == 0);
    CHECK(report.error_bound == 0.0);
    CHECK(report.valid_ratio() == 1.0);
    NEARSPARSE_CHECK_RELATIVE_ERROR(dense_of(exec, c), exact, 64 * k * u);
  }

  SECTION("beta != 0 with C's own tiles, alpha != 1") {
    // C keeps only its near-diagonal tiles; A and B only theirs, so some tiles of the result
    // come from C alone and some from the product alone.
    spamm::block_sparse_options sparse;
    sparse.tile = tile;
    sparse.rule = spamm::drop_rule::absolute;
    sparse.drop_tolerance = 1.0;
    const auto a_s = spamm::from_dense(exec, to_device<exec_space>(exec, ha), sparse);
    const auto b_s = spamm::from_dense(exec, to_device<exec_space>(exec, hb), sparse);
    const auto hc_shifted = decaying(m, n, seed + 3, 40.0);
    auto c = spamm::from_dense(exec, to_device<exec_space>(exec, hc_shifted), sparse);
    const auto ha_s = dense_of(exec, a_s), hb_s = dense_of(exec, b_s), hc_s = dense_of(exec, c);
    CHECK(a_s.kept_tiles() < 25);
    CHECK(c.kept_tiles() > 0);
    const double c_dropped = c.dropped_norm();
    const auto report = spamm::multiply(exec, -0.5, a_s, b_s, 2.0, c, base);
    const auto expect = nearsparse::test::reference_gemm(-0.5, ha_s, hb_s, 2.0, hc_s);
    NEARSPARSE_CHECK_RELATIVE_ERROR(dense_of(exec, c), expect, 64 * k * u);
    CHECK(report.kept_products == report.candidate_products);
    CHECK(c.dropped_norm() == Approx(2.0 * c_dropped).epsilon(1e-12));
    // The pattern is the union: every nonzero tile of the reference is stored.
    std::int64_t nonzero = 0;
    for (double x : tile_norms(expect, tile).data) nonzero += x > 0;
    CHECK(c.kept_tiles() == nonzero);
  }

  SECTION("filtering at tau: the kept product, and the error bound holds") {
    const double tau = median_norm_product(ha, hb, tile);
    spamm::block_sparse_multiply_options mopt = base;
    mopt.tau = tau;
    spamm::block_sparse_matrix<double, exec_space> c(exec, m, n, tile);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt);
    const auto ref = kept_product(1.0, ha, hb, 0.0, host_matrix<double>(m, n), tile, tau);
    CHECK(report.kept_products == ref.kept);
    CHECK(report.candidate_products == 125);
    CHECK(report.kept_products < report.candidate_products);
    CHECK(report.error_bound == Approx(ref.bound).epsilon(1e-12));
    const auto got = dense_of(exec, c);
    NEARSPARSE_CHECK_RELATIVE_ERROR(got, ref.product, 64 * k * u);
    // The bound holds, and the filtering did change the product: the exact product would fail
    // the kept product's tolerance (so a wrong tau cannot pass the check above).
    const double error = diff_norm(got, exact);
    INFO("error " << error << ", bound " << report.error_bound);
    CHECK(error <= report.error_bound + 64 * k * u * scale);
    CHECK(error > 1e3 * 64 * k * u * nearsparse::test::frobenius_norm(exact));
    CHECK(nearsparse::test::relative_error(exact, ref.product) > 64 * k * u);
    // A larger tau keeps fewer products and gives a larger bound.
    mopt.tau = 10 * tau;
    spamm::block_sparse_matrix<double, exec_space> c2(exec, m, n, tile);
    const auto report2 = spamm::multiply(exec, 1.0, a, b, 0.0, c2, mopt);
    CHECK(report2.kept_products < report.kept_products);
    CHECK(report2.error_bound > report.error_bound);
    CHECK(diff_norm(dense_of(exec, c2), exact) <= report2.error_bound + 64 * k * u * scale);
  }

  SECTION("tau above every norm product: nothing kept, the bound is the whole product's") {
    spamm::block_sparse_multiply_options mopt = base;
    mopt.tau = 1e30;
    spamm::block_sparse_matrix<double, exec_space> c(exec, m, n, tile);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt);
    CHECK(report.kept_products == 0);
    CHECK(report.tiles_kept == 0);
    CHECK(c.kept_tiles() == 0);
    CHECK(nearsparse::test::frobenius_norm(exact) <= report.error_bound);
    const auto ref = kept_product(1.0, ha, hb, 0.0, host_matrix<double>(m, n), tile, 1e30);
    CHECK(report.error_bound == Approx(ref.bound).epsilon(1e-12));
  }

  SECTION("the drop rule on the result") {
    spamm::block_sparse_multiply_options mopt = base;
    mopt.drop_tolerance = 1e-3;  // relative to the result's norm
    spamm::block_sparse_matrix<double, exec_space> c(exec, m, n, tile);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt);
    CHECK(report.tiles_dropped > 0);
    CHECK(report.tiles_kept == c.kept_tiles());
    CHECK(report.tiles_kept + report.tiles_dropped == 25);
    CHECK(c.dropped_norm() == report.dropped_norm);
    const auto got = dense_of(exec, c);
    // What was dropped is exactly the difference to the full product.
    CHECK(diff_norm(got, exact) == Approx(report.dropped_norm).epsilon(1e-9));
    CHECK(report.dropped_norm < 1e-3 * std::sqrt(25.0) * nearsparse::test::frobenius_norm(exact));
    const auto cn = tile_norms(exact, tile);
    const double threshold = 1e-3 * nearsparse::test::frobenius_norm(exact);
    std::int64_t below = 0;
    for (double x : cn.data) below += x < threshold;
    CHECK(report.tiles_dropped == below);
  }

  SECTION("C = A A in place, and empty inner extent") {
    const auto hs = decaying(100, 100, seed + 4);
    auto s = spamm::from_dense(exec, to_device<exec_space>(exec, hs), opt);
    spamm::multiply(exec, 1.0, s, s, 0.0, s, base);
    NEARSPARSE_CHECK_RELATIVE_ERROR(
        dense_of(exec, s),
        nearsparse::test::reference_gemm(1.0, hs, hs, 0.0, host_matrix<double>(100, 100)),
        64 * 100 * u);
    // K = 0: C = beta * C.
    const auto a0 =
        spamm::from_dense(exec, to_device<exec_space>(exec, host_matrix<double>(40, 0)), opt);
    const auto b0 =
        spamm::from_dense(exec, to_device<exec_space>(exec, host_matrix<double>(0, 50)), opt);
    const auto hc0 = decaying(40, 50, seed + 5);
    auto c0 = spamm::from_dense(exec, to_device<exec_space>(exec, hc0), opt);
    const auto report = spamm::multiply(exec, 1.0, a0, b0, 3.0, c0, base);
    CHECK(report.candidate_products == 0);
    host_matrix<double> expect = hc0;
    for (double& x : expect.data) x *= 3.0;
    NEARSPARSE_CHECK_RELATIVE_ERROR(dense_of(exec, c0), expect, 4 * u);
    // M = 0.
    const auto e =
        spamm::from_dense(exec, to_device<exec_space>(exec, host_matrix<double>(0, 131)), opt);
    spamm::block_sparse_matrix<double, exec_space> ce(exec, 0, n, tile);
    CHECK(spamm::multiply(exec, 1.0, e, b, 0.0, ce, base).kept_products == 0);
    CHECK(ce.kept_tiles() == 0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse multiply in float", "[spamm][block_sparse][multiply]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const int m = 157, k = 131, n = 149, tile = 32;
  const auto ha = decaying(m, k, seed), hb = decaying(k, n, seed + 1);
  spamm::block_sparse_options opt;
  opt.tile = tile;
  const auto a = spamm::from_dense<float>(exec, to_device<exec_space>(exec, ha), opt);
  const auto b = spamm::from_dense<float>(exec, to_device<exec_space>(exec, hb), opt);
  // The reference of the float-rounded inputs.
  const auto ha_f = dense_of(exec, a), hb_f = dense_of(exec, b);
  const double tau = median_norm_product(ha_f, hb_f, tile);
  spamm::block_sparse_multiply_options mopt;
  mopt.tau = tau;
  mopt.implementation =
      GENERATE(nearsparse::implementation::automatic, nearsparse::implementation::portable);
  spamm::block_sparse_matrix<float, exec_space> c(exec, m, n, tile);
  const auto report = spamm::multiply(exec, 1.0f, a, b, 0.0f, c, mopt);
  const auto ref = kept_product(1.0, ha_f, hb_f, 0.0, host_matrix<double>(m, n), tile, tau);
  CHECK(report.kept_products == ref.kept);
  const double uf = 0x1p-24;
  NEARSPARSE_CHECK_RELATIVE_ERROR(dense_of(exec, c), ref.product, 4 * k * uf);
  const auto exact =
      nearsparse::test::reference_gemm(1.0, ha_f, hb_f, 0.0, host_matrix<double>(m, n));
  const double scale =
      nearsparse::test::frobenius_norm(ha_f) * nearsparse::test::frobenius_norm(hb_f);
  CHECK(diff_norm(dense_of(exec, c), exact) <= report.error_bound + 4 * k * uf * scale);
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse functions refuse bad arguments",
                           "[spamm][block_sparse][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto h = decaying(70, 45, seed);
  const auto d = to_device<exec_space>(exec, h);
  spamm::block_sparse_options opt;
  opt.tile = 48;
  CHECK_THROWS_AS(spamm::from_dense(exec, d, opt), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(spamm::from_dense(exec, d, opt), Contains("nearsparse::spamm::from_dense") &&
                                                         Contains("'options.tile'") &&
                                                         Contains("48"));
  opt.tile = 32;
  opt.drop_tolerance = -1;
  CHECK_THROWS_WITH(spamm::from_dense(exec, d, opt), Contains("nearsparse::spamm::from_dense") &&
                                                         Contains("'options.drop_tolerance'"));
  opt.drop_tolerance = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(spamm::from_dense(exec, d, opt), Contains("'options.drop_tolerance'"));
  opt.drop_tolerance = 0;
  host_matrix<double> bad = h;
  bad(69, 44) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(spamm::from_dense(exec, to_device<exec_space>(exec, bad), opt),
                    Contains("nearsparse::spamm::from_dense") && Contains("'A'") &&
                        Contains("70 x 45") && Contains("non-finite"));

  const auto a = spamm::from_dense(exec, d, opt);  // 70 x 45
  Kokkos::View<double**, typename exec_space::memory_space> wrong("wrong", 45, 70);
  CHECK_THROWS_WITH(spamm::to_dense(exec, a, wrong), Contains("nearsparse::spamm::to_dense") &&
                                                         Contains("'A'") && Contains("45 x 70") &&
                                                         Contains("70 x 45"));
  const spamm::block_sparse_matrix<double, exec_space> unset;
  CHECK_THROWS_WITH(spamm::to_crs(exec, unset), Contains("nearsparse::spamm::to_crs") &&
                                                    Contains("'m'") &&
                                                    Contains("default-constructed"));

  // multiply: extents, tiles, scalars and options.
  const auto b =
      spamm::from_dense(exec, to_device<exec_space>(exec, decaying(45, 30, seed + 1)), opt);
  spamm::block_sparse_matrix<double, exec_space> c(exec, 70, 30, 32);
  CHECK_NOTHROW(spamm::multiply(exec, 1.0, a, b, 0.0, c));
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, a, 0.0, c),
                    Contains("nearsparse::spamm::multiply") && Contains("'B'") &&
                        Contains("70 x 45") && Contains("= 45"));
  spamm::block_sparse_matrix<double, exec_space> c_wrong(exec, 70, 31, 32);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c_wrong),
                    Contains("nearsparse::spamm::multiply") && Contains("'C'") &&
                        Contains("70 x 31") && Contains("expected 70 x 30"));
  spamm::block_sparse_options opt64;
  opt64.tile = 64;
  const auto b64 =
      spamm::from_dense(exec, to_device<exec_space>(exec, decaying(45, 30, seed + 1)), opt64);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b64, 0.0, c),
                    Contains("nearsparse::spamm::multiply") && Contains("'B'") &&
                        Contains("tile 64") && Contains("tile 32"));
  spamm::block_sparse_multiply_options mopt;
  mopt.tau = -1;
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt),
                    Contains("nearsparse::spamm::multiply") && Contains("'options.tau'"));
  mopt.tau = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt), Contains("'options.tau'"));
  mopt.tau = 0;
  mopt.drop_tolerance = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt),
                    Contains("'options.drop_tolerance'"));
  mopt.drop_tolerance = 0;
  CHECK_THROWS_WITH(
      spamm::multiply(exec, std::numeric_limits<double>::quiet_NaN(), a, b, 0.0, c, mopt),
      Contains("nearsparse::spamm::multiply") && Contains("'alpha'"));
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, std::numeric_limits<double>::infinity(), c),
                    Contains("'beta'"));
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, unset, b, 0.0, c),
                    Contains("'A'") && Contains("default-constructed"));
  // A refused call leaves C as it was.
  const auto before = dense_of(exec, c);
  CHECK_THROWS(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt = {-2.0, 0.0}));
  CHECK(diff_norm(dense_of(exec, c), before) == 0.0);
  // implementation::specialized: the CUDA kernel, the host BLAS on the host spaces where the
  // build has it, refused (naming the function) where the space has no specialized tile products.
  mopt = {};
  mopt.implementation = nearsparse::implementation::specialized;
  if (std::string(exec_space::name()) == "Cuda" ||
      (std::is_same<typename exec_space::memory_space, Kokkos::HostSpace>::value &&
       nearsparse::detail::host_blas::available())) {
    CHECK_NOTHROW(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt));
  } else {
    CHECK_THROWS_AS(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt), nearsparse::unsupported);
    CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt),
                      Contains("nearsparse::spamm::multiply"));
    // Refused where the call starts, so a product with nothing to compute refuses it too.
    const spamm::block_sparse_matrix<double, exec_space> e(exec, 0, 0, a.tile());
    spamm::block_sparse_matrix<double, exec_space> e_out(exec, 0, 0, a.tile());
    CHECK_THROWS_AS(spamm::multiply(exec, 1.0, e, e, 0.0, e_out, mopt), nearsparse::unsupported);
  }
  // A value outside the enumeration, even for an empty product.
  mopt.implementation = static_cast<nearsparse::implementation>(7);
  CHECK_THROWS_WITH(spamm::multiply(exec, 1.0, a, b, 0.0, c, mopt),
                    Contains("nearsparse::spamm::multiply") &&
                        Contains("'options.implementation'") && Contains("is 7"));
  {
    const spamm::block_sparse_matrix<double, exec_space> e(exec, 0, 0, a.tile());
    spamm::block_sparse_matrix<double, exec_space> e_out(exec, 0, 0, a.tile());
    CHECK_THROWS_AS(spamm::multiply(exec, 1.0, e, e, 0.0, e_out, mopt),
                    nearsparse::invalid_argument);
  }
  using bs_double = spamm::block_sparse_matrix<double, exec_space>;
  CHECK_THROWS_WITH(bs_double(exec, 10, 10, 12),
                    Contains("nearsparse::spamm::block_sparse_matrix") && Contains("'tile'"));

  // from_crs: tile and column indices.
  const auto crs_bad = crs_from_triplets(exec, 4, 4, {{{0, 0}, 1.0}, {{1, 7}, 2.0}});
  CHECK_THROWS_WITH(spamm::from_crs(exec, crs_bad, opt), Contains("nearsparse::spamm::from_crs") &&
                                                             Contains("'A.graph.entries'") &&
                                                             Contains("4 x 4"));
  const auto crs_nan = crs_from_triplets(
      exec, 4, 4, {{{0, 0}, 1.0}, {{1, 2}, std::numeric_limits<double>::quiet_NaN()}});
  CHECK_THROWS_WITH(spamm::from_crs(exec, crs_nan, opt),
                    Contains("nearsparse::spamm::from_crs") && Contains("non-finite"));
  opt.tile = 0;
  CHECK_THROWS_WITH(spamm::from_crs(exec, crs_nan, opt), Contains("'options.tile'"));
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse round trips and products with every tile size",
                           "[spamm][block_sparse][multiply]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const int m = 157, k = 131, n = 149;
  const auto ha = decaying(m, k, seed), hb = decaying(k, n, seed + 1);
  const auto exact = nearsparse::test::reference_gemm(1.0, ha, hb, 0.0, host_matrix<double>(m, n));
  for (const int tile : {8, 16, 32, 64, 128}) {
    INFO("tile " << tile);
    spamm::block_sparse_options opt;
    opt.tile = tile;
    const auto a = spamm::from_dense(exec, to_device<exec_space>(exec, ha), opt);
    const auto b = spamm::from_dense(exec, to_device<exec_space>(exec, hb), opt);
    CHECK(diff_norm(dense_of(exec, a), ha) == 0.0);
    const std::int64_t mt = (m + tile - 1) / tile, kt = (k + tile - 1) / tile,
                       nt = (n + tile - 1) / tile;
    CHECK(a.kept_tiles() == mt * kt);
    spamm::block_sparse_matrix<double, exec_space> c(exec, m, n, tile);
    const auto report = spamm::multiply(exec, 1.0, a, b, 0.0, c);
    CHECK(report.candidate_products == mt * kt * nt);
    CHECK(report.kept_products == report.candidate_products);
    NEARSPARSE_CHECK_RELATIVE_ERROR(dense_of(exec, c), exact, 64 * k * 0x1p-53);
    // Through CRS and back.
    const auto back = spamm::from_crs(exec, spamm::to_crs(exec, c), opt);
    CHECK(back.kept_tiles() == c.kept_tiles());
    CHECK(diff_norm(dense_of(exec, back), dense_of(exec, c)) == 0.0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("a block-sparse matrix from its arrays checks their extents",
                           "[spamm][block_sparse][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  using bs = spamm::block_sparse_matrix<double, exec_space>;
  const exec_space exec;
  const bs zero(exec, 100, 60, 32);
  CHECK(zero.kept_tiles() == 0);
  CHECK(zero.row_map().extent(0) == 5);
  CHECK(zero.memory_bytes() == 5 * sizeof(std::int64_t));
  typename bs::row_map_type row_map("row_map", 5);
  typename bs::column_indices_type cols("cols", 1);
  typename bs::values_type values("values", 32 * 32);
  typename bs::norms_type norms("norms", 1);
  Kokkos::deep_copy(Kokkos::subview(row_map, std::make_pair(1, 5)), std::int64_t(1));
  const bs one(100, 60, 32, row_map, cols, values, norms);
  CHECK(one.kept_tiles() == 1);
  typename bs::values_type short_values("values", 32 * 31);
  CHECK_THROWS_WITH(bs(100, 60, 32, row_map, cols, short_values, norms),
                    Contains("nearsparse::spamm::block_sparse_matrix") && Contains("1024"));
  CHECK_THROWS_WITH(bs(100, 60, 64, row_map, cols, values, norms),
                    Contains("row_map") && Contains("tile_rows + 1 = 3"));
}

NEARSPARSE_SPACE_TEST_CASE("a Matrix Market file to a block-sparse matrix through CRS",
                           "[spamm][block_sparse][crs]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  // A 1-based coordinate file of a banded 90 x 70 matrix, written by hand.
  const int rows = 90, cols = 70;
  const auto band = decaying(rows, cols, seed);
  host_matrix<double> dense(rows, cols);
  std::ostringstream text;
  text.precision(17);
  int count = 0;
  std::ostringstream body;
  body.precision(17);
  for (int i = 0; i < rows; ++i)
    for (int j = std::max(0, i - 3); j <= std::min(cols - 1, i + 3); ++j) {
      dense(i, j) = band(i, j);
      body << i + 1 << " " << j + 1 << " " << band(i, j) << "\n";
      ++count;
    }
  text << "%%MatrixMarket matrix coordinate real general\n"
       << rows << " " << cols << " " << count << "\n"
       << body.str();
  nearsparse::test::io::temp_dir dir;
  const std::string path = dir.file("band.mtx");
  nearsparse::test::io::write_text(path, text.str());
  spamm::block_sparse_options opt;
  opt.tile = 16;
  const auto m = spamm::from_crs(exec, nearsparse::io::read_crs<double>(exec, path), opt);
  CHECK(m.rows() == rows);
  CHECK(m.cols() == cols);
  // Tiles of 16 along a band of half-width 3: diagonal tiles and their neighbours only.
  CHECK(m.kept_tiles() < std::int64_t(m.tile_rows()) * m.tile_cols() / 2);
  CHECK(diff_norm(dense_of(exec, m), dense) == 0.0);
}
