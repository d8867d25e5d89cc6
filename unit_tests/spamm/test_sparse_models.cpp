// The CRS model matrices (spamm/sparse_models.hpp) against the dense fillers of
// spamm/model_matrices.hpp: the same entries, exactly, columns ascending, the cutoff respected;
// the argument checks; and a block-sparse product built from the CRS overlap chain.
#include "block_sparse_support.hpp"
#include "support/host_reference.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/spamm.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace spamm = nearsparse::spamm;
using nearsparse::test::host_matrix;

namespace {

/// A CRS matrix on the host: offsets, columns and values in double.
struct host_crs {
  int rows = 0;
  std::vector<int> row_map, entries;
  std::vector<double> values;
};

template <class Scalar, class Exec>
host_crs crs_to_host(const nearsparse::crs_matrix<Scalar, Exec>& a) {
  host_crs h;
  h.rows = a.numRows();
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.row_map);
  auto e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.entries);
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values);
  for (std::size_t i = 0; i < r.extent(0); ++i) h.row_map.push_back(r(i));
  for (std::size_t p = 0; p < e.extent(0); ++p) {
    h.entries.push_back(e(p));
    h.values.push_back(static_cast<double>(v(p)));
  }
  return h;
}

/// The dense filler's matrix of n x n (in Scalar, widened to double on the host).
template <class Scalar, class Exec, class Fill>
host_matrix<double> dense_model(const Exec& exec, long n, const Fill& fill) {
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Exec::memory_space> d("dense", n, n);
  fill(d);
  exec.fence();
  return nearsparse::test::to_host(d);
}

/// a against the dense matrices: the structure is valid, columns ascend, every stored value
/// equals the entry of `dense` (the filler in a's Scalar) within 4 eps relative (eps of a's
/// Scalar); with cutoff > 0 the entries of
/// `exact` (the filler in double) >= cutoff are those stored, and with cutoff == 0 every nonzero
/// of `dense` is stored.
void check_against_dense(const host_crs& a, const host_matrix<double>& dense,
                         const host_matrix<double>& exact, double cutoff, double eps) {
  const std::size_t n = dense.rows;
  REQUIRE(std::size_t(a.rows) == n);
  REQUIRE(a.row_map.size() == n + 1);
  REQUIRE(a.row_map[0] == 0);
  REQUIRE(std::size_t(a.row_map[n]) == a.entries.size());
  std::vector<char> stored(n);
  std::size_t wrong_value = 0, below_cutoff = 0, missing = 0, unordered = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::fill(stored.begin(), stored.end(), 0);
    for (int p = a.row_map[i]; p < a.row_map[i + 1]; ++p) {
      const int j = a.entries[p];
      REQUIRE(j >= 0);
      REQUIRE(std::size_t(j) < n);
      if (p > a.row_map[i] && a.entries[p - 1] >= j) ++unordered;
      stored[j] = 1;
      // Equal up to 4 units in the last place: a device compiler may contract the on-site sum
      // delta + disorder into one FMA in one kernel and not in the other.
      if (std::abs(a.values[p] - dense(i, j)) > 4 * eps * std::abs(dense(i, j))) ++wrong_value;
      if (cutoff > 0 && exact(i, j) < cutoff) ++below_cutoff;
    }
    for (std::size_t j = 0; j < n; ++j) {
      const bool wanted = cutoff > 0 ? exact(i, j) >= cutoff : dense(i, j) != 0.0;
      if (wanted && !stored[j]) ++missing;
    }
  }
  CHECK(unordered == 0);
  CHECK(wrong_value == 0);
  CHECK(below_cutoff == 0);
  CHECK(missing == 0);
}

template <class Scalar, class Exec>
void hamiltonian_cases(const Exec& exec) {
  spamm::chain_model chain;
  chain.t1 = 1.25;
  chain.t2 = -0.5;
  chain.delta = 0.75;
  chain.disorder = 0.3;
  chain.seed = 17;
  for (long n : {0L, 1L, 7L, 45L}) {
    INFO("dimerized chain, n = " << n);
    const auto a = spamm::dimerized_chain_crs<Scalar>(exec, n, chain);
    const auto dense = dense_model<Scalar>(
        exec, n, [&](const auto& d) { spamm::fill_dimerized_chain(exec, d, chain); });
    check_against_dense(crs_to_host(a), dense, dense, 0.0, std::numeric_limits<Scalar>::epsilon());
    CHECK(a.nnz() == (n == 0 ? 0 : 3 * n - 2));
  }
  const int shapes[][3] = {{3, 4, 5}, {1, 1, 1}, {0, 3, 2}, {2, 1, 6}};
  for (const auto& s : shapes) {
    spamm::cubic_model cubic;
    cubic.nx = s[0];
    cubic.ny = s[1];
    cubic.nz = s[2];
    cubic.t = 0.8;
    cubic.delta = 1.1;
    cubic.disorder = 0.5;
    cubic.seed = 5;
    INFO("cubic lattice " << s[0] << " x " << s[1] << " x " << s[2]);
    const long n = long(s[0]) * s[1] * s[2];
    const auto a = spamm::cubic_lattice_crs<Scalar>(exec, cubic);
    const auto dense = dense_model<Scalar>(
        exec, n, [&](const auto& d) { spamm::fill_cubic_lattice(exec, d, cubic); });
    check_against_dense(crs_to_host(a), dense, dense, 0.0, std::numeric_limits<Scalar>::epsilon());
  }
}

template <class Scalar, class Exec>
void overlap_cases(const Exec& exec) {
  const double pairs[][2] = {{0.1, 1e-6}, {1.0, 1e-3}, {0.7, 1.0}, {0.05, 1e-300}, {2.0, 0.5}};
  for (long n : {0L, 1L, 7L, 45L})
    for (const auto& p : pairs) {
      const double alpha = p[0], cutoff = p[1];
      INFO("overlap chain, n = " << n << ", alpha = " << alpha << ", cutoff = " << cutoff);
      const auto a = spamm::overlap_chain_crs<Scalar>(exec, n, alpha, cutoff);
      const auto fill = [&](const auto& d) { spamm::fill_overlap_chain(exec, d, alpha); };
      // The cutoff applies to the value in double, whatever Scalar.
      check_against_dense(crs_to_host(a), dense_model<Scalar>(exec, n, fill),
                          dense_model<double>(exec, n, fill), cutoff,
                          std::numeric_limits<Scalar>::epsilon());
    }
  const int shapes[][3] = {{3, 4, 5}, {1, 1, 1}, {0, 2, 2}, {7, 1, 3}};
  for (const auto& s : shapes)
    for (const auto& p : pairs) {
      const double alpha = p[0], cutoff = p[1];
      INFO("overlap lattice " << s[0] << " x " << s[1] << " x " << s[2] << ", alpha = " << alpha
                              << ", cutoff = " << cutoff);
      const long n = long(s[0]) * s[1] * s[2];
      const auto a = spamm::overlap_lattice_crs<Scalar>(exec, s[0], s[1], s[2], alpha, cutoff);
      const auto fill = [&](const auto& d) {
        spamm::fill_overlap_lattice(exec, d, s[0], s[1], s[2], alpha);
      };
      check_against_dense(crs_to_host(a), dense_model<Scalar>(exec, n, fill),
                          dense_model<double>(exec, n, fill), cutoff,
                          std::numeric_limits<Scalar>::epsilon());
    }
}

/// Runs f and requires nearsparse::invalid_argument whose message names `argument`.
template <class F>
void require_refused(const F& f, const std::string& argument) {
  INFO("argument " << argument);
  REQUIRE_THROWS_AS(f(), nearsparse::invalid_argument);
  try {
    f();
  } catch (const nearsparse::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("'" + argument + "'"));
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("CRS Hamiltonians equal the dense fillers", "[spamm][sparse_models]") {
  using exec_space = TestType;
  const exec_space exec;
  SECTION("double") {
    hamiltonian_cases<double>(exec);
  }
  SECTION("float") {
    hamiltonian_cases<float>(exec);
  }
}

NEARSPARSE_SPACE_TEST_CASE("CRS overlap matrices equal the dense fillers above the cutoff",
                           "[spamm][sparse_models]") {
  using exec_space = TestType;
  const exec_space exec;
  SECTION("double") {
    overlap_cases<double>(exec);
  }
  SECTION("float") {
    overlap_cases<float>(exec);
  }
  SECTION("band and entry count") {
    // exp(-0.1 d) >= 1e-6 for d <= 138: rows of 277 entries away from the ends.
    const auto a = spamm::overlap_chain_crs<double>(exec, 1000, 0.1, 1e-6);
    CHECK(a.nnz() == 1000 * 277 - 138 * 139);
    const auto h = crs_to_host(a);
    CHECK(h.row_map[501] - h.row_map[500] == 277);
  }
}

NEARSPARSE_SPACE_TEST_CASE("CRS model generators refuse bad arguments", "[spamm][sparse_models]") {
  using exec_space = TestType;
  const exec_space exec;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  require_refused([&] { spamm::dimerized_chain_crs<double>(exec, -1); }, "n");
  require_refused([&] { spamm::dimerized_chain_crs<double>(exec, 3000000000L); }, "n");
  require_refused([&] { spamm::dimerized_chain_crs<double>(exec, 900000000L); }, "n");
  spamm::chain_model chain;
  chain.t2 = nan;
  require_refused([&] { spamm::dimerized_chain_crs<double>(exec, 5, chain); }, "model");
  chain = {};
  chain.disorder = -1.0;
  require_refused([&] { spamm::dimerized_chain_crs<double>(exec, 5, chain); }, "model.disorder");

  spamm::cubic_model cubic;
  cubic.ny = -2;
  require_refused([&] { spamm::cubic_lattice_crs<double>(exec, cubic); }, "model");
  cubic = {};
  cubic.delta = inf;
  require_refused([&] { spamm::cubic_lattice_crs<double>(exec, cubic); }, "model");
  cubic = {};
  cubic.nx = cubic.ny = cubic.nz = 2000;
  require_refused([&] { spamm::cubic_lattice_crs<double>(exec, cubic); }, "model");

  require_refused([&] { spamm::overlap_chain_crs<double>(exec, -4, 1.0, 0.5); }, "n");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, 0.0, 0.5); }, "alpha");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, -1.0, 0.5); }, "alpha");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, nan, 0.5); }, "alpha");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, 1.0, 0.0); }, "cutoff");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, 1.0, 1.5); }, "cutoff");
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 4, 1.0, nan); }, "cutoff");
  // 10^6 rows of about 2 10^4 entries: 2 10^10 entries, beyond int.
  require_refused([&] { spamm::overlap_chain_crs<double>(exec, 1000000, 1e-4, 0.5); }, "cutoff");
  try {
    spamm::overlap_chain_crs<double>(exec, 1000000, 1e-4, 0.5);
  } catch (const nearsparse::invalid_argument& e) {
    // r = floor(ln 2 / 1e-4) = 6931: 10^6 * 13863 - 6931 * 6932 = 13814954308 entries.
    CHECK_THAT(e.what(), Catch::Contains("13814954308"));
  }

  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 2, -1, 2, 1.0, 0.5); },
                  "nx, ny, nz");
  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 2, 2, 2, 0.0, 0.5); }, "alpha");
  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 2, 2, 2, inf, 0.5); }, "alpha");
  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 2, 2, 2, 1.0, -0.1); }, "cutoff");
  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 2, 2, 2, 1.0, 2.0); }, "cutoff");
  require_refused([&] { spamm::overlap_lattice_crs<double>(exec, 200, 200, 200, 0.01, 1e-6); },
                  "cutoff");
}

NEARSPARSE_SPACE_TEST_CASE("block-sparse product of the CRS overlap chain",
                           "[spamm][sparse_models][block_sparse]") {
  using exec_space = TestType;
  const exec_space exec;
  const long n = 1000;
  const auto a = spamm::overlap_chain_crs<double>(exec, n, 0.1, 1e-6);
  spamm::block_sparse_options opt;
  opt.tile = 32;
  const auto b = spamm::from_crs(exec, a, opt);
  spamm::block_sparse_matrix<double, exec_space> c(exec, int(n), int(n), 32);
  const auto report = spamm::multiply(exec, 1.0, b, b, 0.0, c);
  CHECK(report.kept_products == report.candidate_products);
  CHECK(report.error_bound == 0.0);
  // Reference: the dense product of the cut matrix on the host in double.
  const auto h = crs_to_host(a);
  host_matrix<double> s(n, n), ref(n, n);
  for (long i = 0; i < n; ++i)
    for (int p = h.row_map[i]; p < h.row_map[i + 1]; ++p) s(i, h.entries[p]) = h.values[p];
  for (long i = 0; i < n; ++i)
    for (long k = 0; k < n; ++k) {
      const double x = s(i, k);
      if (x == 0.0) continue;
      for (long j = 0; j < n; ++j) ref(i, j) += x * s(k, j);
    }
  const auto got = nearsparse::test::dense_of(exec, c);
  double ref_norm = 0.0;
  for (double v : ref.data) ref_norm += v * v;
  ref_norm = std::sqrt(ref_norm);
  // Sums of at most 277 positive products of entries <= 1 in double: relative error below
  // 277 u with u = 2^-53, so 1e-13 leaves a margin.
  const double rel = nearsparse::test::diff_norm(got, ref) / ref_norm;
  INFO("relative Frobenius difference " << rel);
  CHECK(rel < 1e-13);
}
