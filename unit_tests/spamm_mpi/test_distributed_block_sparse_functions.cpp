// The block-sparse matrix functions on matrices distributed by rows
// (spamm/distributed_block_sparse.hpp: sp2, inverse_sqrt and sign with a
// block_sparse_communicator): each process's rows of the result equal the same rows of the
// single-process function's result, with the same iteration (steps, residuals, traces); the
// density matrix is a projector of the right trace on its own (checked on the host); bad input
// is refused on every process alike. Runs under mpiexec with 1, 2 and 4 processes, on every
// enabled execution space.

#include "../spamm/block_sparse_support.hpp"
#include "support/host_reference.hpp"
#include "support/mpi_support.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/distributed_block_sparse.hpp>

#include <catch2/catch.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>

namespace spamm = nearsparse::spamm;
using Catch::Matchers::Contains;
using nearsparse::test::dense_of;
using nearsparse::test::host_matrix;
using nearsparse::test::shared_seed;
using nearsparse::test::world_size;

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/// Rows [begin, end) of this process in a tile-aligned split that leaves process 0 without rows
/// when there are several (the others split the tiles evenly), so that empty blocks take part.
std::pair<int, int> uneven_rows(int n, int tile) {
  const int size = world_size(), rank = world_rank();
  if (size == 1) return {0, n};
  if (rank == 0) return {0, 0};
  const int tiles = (n + tile - 1) / tile, parts = size - 1, p = rank - 1;
  auto edge = [&](int q) { return std::min(n, int(std::int64_t(tiles) * q / parts) * tile); };
  return {edge(p), rank + 1 == size ? n : edge(p + 1)};
}

/// The largest |x - y| over this process's rows of two block-sparse matrices, over all processes.
template <class Exec, class T>
double largest_difference(const Exec& exec, const spamm::block_sparse_matrix<T, Exec>& x,
                          const spamm::block_sparse_matrix<T, Exec>& y) {
  const auto hx = dense_of(exec, x), hy = dense_of(exec, y);
  double d = 0.0;
  for (std::size_t e = 0; e < hx.data.size(); ++e)
    d = std::max(d, std::abs(hx.data[e] - hy.data[e]));
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return d;
}

/// The distributed function's report equals the single-process one: the same steps and branches,
/// residuals and traces to `rel` (their sums over processes may round differently).
void check_same_iteration(const spamm::block_sparse_function_report& got,
                          const spamm::block_sparse_function_report& want, double rel) {
  REQUIRE(got.steps.size() == want.steps.size());
  CHECK(got.iterations == want.iterations);
  CHECK(got.converged == want.converged);
  CHECK(got.stagnated == want.stagnated);
  for (std::size_t s = 0; s < want.steps.size(); ++s) {
    INFO("step " << s << " (" << want.steps[s].step << ")");
    CHECK(std::string(got.steps[s].step) == want.steps[s].step);
    CHECK(got.steps[s].square == want.steps[s].square);
    CHECK(got.steps[s].tiles == want.steps[s].tiles);
    CHECK(got.steps[s].kept_products == want.steps[s].kept_products);
    CHECK(got.steps[s].candidate_products == want.steps[s].candidate_products);
    CHECK(got.steps[s].residual == Approx(want.steps[s].residual).epsilon(rel).margin(1e-300));
    CHECK(got.steps[s].trace == Approx(want.steps[s].trace).epsilon(rel).margin(rel));
    CHECK(got.steps[s].error_bound ==
          Approx(want.steps[s].error_bound).epsilon(rel).margin(1e-300));
    CHECK(got.steps[s].dropped_norm ==
          Approx(want.steps[s].dropped_norm).epsilon(rel).margin(1e-300));
  }
  CHECK(got.trace == Approx(want.trace).epsilon(rel).margin(rel));
  CHECK(got.error_bound_sum == Approx(want.error_bound_sum).epsilon(rel).margin(1e-300));
  CHECK(got.dropped_norm_sum == Approx(want.dropped_norm_sum).epsilon(rel).margin(1e-300));
  CHECK(got.bounds.lower == Approx(want.bounds.lower).epsilon(1e-14));
  CHECK(got.bounds.upper == Approx(want.bounds.upper).epsilon(1e-14));
}

/// The dimerized chain of n sites with random on-site disorder (the same on every process).
template <class T, class Exec>
spamm::block_sparse_matrix<T, Exec> disordered_chain(const Exec& exec, int n, int tile,
                                                     std::uint64_t seed) {
  spamm::chain_model m;
  m.disorder = 0.3;
  m.seed = seed;
  spamm::block_sparse_options o;
  o.tile = tile;
  return spamm::from_crs(exec, spamm::dimerized_chain_crs<T>(exec, n, m), o);
}

/// One function on one process and over all processes with the rows [r0, r1) here: rows of the
/// results equal to `tol`, the same iteration.
template <class T, class Exec, class Single, class Distributed>
void compare(const Exec& exec, const spamm::block_sparse_matrix<T, Exec>& whole, int r0, int r1,
             double tol, Single&& single, Distributed&& distributed) {
  spamm::block_sparse_matrix<T, Exec> out(exec, whole.rows(), whole.cols(), whole.tile());
  const auto want = single(whole, out);
  const auto in_p = spamm::row_block(exec, whole, r0, r1);
  spamm::block_sparse_matrix<T, Exec> out_p(exec, r1 - r0, whole.cols(), whole.tile());
  const auto got = distributed(in_p, out_p);
  check_same_iteration(got, want, tol);
  // The result's account of what the filtering left out, on every process.
  CHECK(out_p.dropped_norm() == Approx(out.dropped_norm()).epsilon(tol).margin(1e-300));
  CHECK(largest_difference(exec, out_p, spamm::row_block(exec, out, r0, r1)) <= tol);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse sp2, inverse_sqrt and sign equal one process",
                           "[spamm][block_sparse][distributed][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int n = 301, tile = 16;  // not a multiple of the tile
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  spamm::block_sparse_function_options opt;
  opt.tau = 1e-9;
  opt.drop_tolerance = 1e-10;
  opt.residual_tolerance = 1e-7;
  // The same products in the same order on every process count; traces and norms are sums over
  // processes, which round differently from one sum: a few units of 1e-16 relative, carried
  // through at most a few tens of steps.
  const double tol = 1e-10;
  for (const bool even : {true, false}) {
    const auto rows = even ? world.rows(n, tile) : uneven_rows(n, tile);
    INFO((even ? "even" : "uneven") << " rows [" << rows.first << ", " << rows.second << ")");
    const auto h = disordered_chain<double>(exec, n, tile, seed);
    SECTION(std::string("sp2, ") + (even ? "even" : "uneven")) {
      compare<double>(
          exec, h, rows.first, rows.second, tol,
          [&](const auto& a, auto& d) { return spamm::sp2(exec, a, n / 2, d, opt); },
          [&](const auto& a, auto& d) { return spamm::sp2(world, exec, a, n / 2, d, opt); });
    }
    SECTION(std::string("sign, ") + (even ? "even" : "uneven")) {
      compare<double>(
          exec, h, rows.first, rows.second, tol,
          [&](const auto& a, auto& x) { return spamm::sign(exec, a, x, opt); },
          [&](const auto& a, auto& x) { return spamm::sign(world, exec, a, x, opt); });
    }
    SECTION(std::string("inverse_sqrt, ") + (even ? "even" : "uneven")) {
      spamm::block_sparse_options o;
      o.tile = tile;
      const auto s = spamm::from_crs(exec, spamm::overlap_chain_crs<double>(exec, n, 0.5, 1e-8), o);
      compare<double>(
          exec, s, rows.first, rows.second, tol,
          [&](const auto& a, auto& z) { return spamm::inverse_sqrt(exec, a, z, opt); },
          [&](const auto& a, auto& z) { return spamm::inverse_sqrt(world, exec, a, z, opt); });
    }
  }
  SECTION("fp32 sp2") {
    const auto rows = world.rows(n, tile);
    const auto h = disordered_chain<float>(exec, n, tile, seed);
    opt.residual_tolerance = 1e-4;
    compare<float>(
        exec, h, rows.first, rows.second, 1e-5,
        [&](const auto& a, auto& d) { return spamm::sp2(exec, a, n / 2, d, opt); },
        [&](const auto& a, auto& d) { return spamm::sp2(world, exec, a, n / 2, d, opt); });
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse sp2 gives a projector of the right trace",
                           "[spamm][block_sparse][distributed][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int n = 203, tile = 32, occupied = 90;
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  const auto [r0, r1] = world.rows(n, tile);
  const auto h = disordered_chain<double>(exec, n, tile, seed);
  spamm::block_sparse_matrix<double, exec_t> d_p(exec, r1 - r0, n, tile);
  spamm::block_sparse_function_options opt;  // exact products: no filtering
  opt.residual_tolerance = 1e-9;
  const auto r = spamm::sp2(world, exec, spamm::row_block(exec, h, r0, r1), occupied, d_p, opt);
  REQUIRE(r.converged);
  // Gather D on every process and check it on the host: symmetric, trace = occupied, and
  // ||D^2 - D||_F within 3 times the last residual (the iteration's own error estimate) plus
  // rounding.
  host_matrix<double> d(n, n);
  {
    const auto mine = dense_of(exec, d_p);
    for (std::size_t i = 0; i < mine.rows; ++i)
      for (std::size_t j = 0; j < mine.cols; ++j) d(std::size_t(r0) + i, j) = mine(i, j);
    MPI_Allreduce(MPI_IN_PLACE, d.data.data(), int(d.data.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  double trace = 0, asym = 0, idem = 0;
  for (int i = 0; i < n; ++i) {
    trace += d(i, i);
    for (int j = 0; j < n; ++j) {
      asym = std::max(asym, std::abs(d(i, j) - d(j, i)));
      double dd = 0;
      for (int k = 0; k < n; ++k) dd += d(i, k) * d(k, j);
      idem += (dd - d(i, j)) * (dd - d(i, j));
    }
  }
  CHECK(trace == Approx(double(occupied)).epsilon(1e-9));
  CHECK(asym <= 1e-12);
  CHECK(std::sqrt(idem) <= 3 * r.residual + 1e-11);
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse sp2, sign and inverse_sqrt of empty matrices",
                           "[spamm][block_sparse][distributed][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  spamm::block_sparse_matrix<double, exec_t> h(exec, 0, 0, 16), d(exec, 0, 0, 16);
  CHECK(spamm::sp2(world, exec, h, 0, d).converged);
  CHECK(spamm::sign(world, exec, h, d).converged);
  CHECK(spamm::inverse_sqrt(world, exec, h, d).converged);
  CHECK(d.rows() == 0);
  CHECK(d.cols() == 0);
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse sp2, sign and inverse_sqrt refuse bad input",
                           "[spamm][block_sparse][distributed][mpi][errors]") {
  using exec_t = TestType;
  const exec_t exec;
  const int n = 100, tile = 16;
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  const auto [r0, r1] = world.rows(n, tile);
  const auto h_p = spamm::row_block(exec, disordered_chain<double>(exec, n, tile, 7), r0, r1);
  spamm::block_sparse_matrix<double, exec_t> d_p(exec, r1 - r0, n, tile);
  const bool last = world_rank() + 1 == world_size();
  SECTION("occupied out of range") {
    CHECK_THROWS_WITH(spamm::sp2(world, exec, h_p, n + 1, d_p),
                      Contains("nearsparse::spamm::sp2 (distributed)") && Contains("'occupied'"));
  }
  SECTION("the result's extents differ on one process") {
    spamm::block_sparse_matrix<double, exec_t> wrong(exec, r1 - r0 + (last ? 1 : 0), n, tile);
    CHECK_THROWS_WITH(spamm::sign(world, exec, h_p, wrong), Contains("(distributed)"));
  }
  SECTION("the rows do not form a square matrix") {
    // Every process drops its last tile row: the rows add up to fewer than the columns (or a
    // process that keeps a partial tile row breaks the tile alignment).
    const int keep = std::max(0, r1 - r0 - tile) / tile * tile;
    const auto short_p = spamm::row_block(exec, h_p, 0, keep);
    spamm::block_sparse_matrix<double, exec_t> out(exec, keep, n, tile);
    CHECK_THROWS_WITH(spamm::inverse_sqrt(world, exec, short_p, out), Contains("'S'"));
  }
  SECTION("a non-finite entry on the last process") {
    auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h_p.values());
    auto norms = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h_p.norms());
    if (last && values.extent(0) > 0) {
      values(0) = std::numeric_limits<double>::quiet_NaN();
      norms(0) = std::numeric_limits<double>::quiet_NaN();
    }
    typename spamm::block_sparse_matrix<double, exec_t>::values_type v("v", values.extent(0));
    typename spamm::block_sparse_matrix<double, exec_t>::norms_type nm("n", norms.extent(0));
    Kokkos::deep_copy(v, values);
    Kokkos::deep_copy(nm, norms);
    const spamm::block_sparse_matrix<double, exec_t> bad(
        h_p.rows(), h_p.cols(), tile, h_p.row_map(), h_p.column_indices(), v, nm);
    CHECK_THROWS(spamm::sp2(world, exec, bad, n / 2, d_p));
  }
  SECTION("occupied or an option that differs between the processes") {
    if (world_size() > 1) {
      CHECK_THROWS_WITH(spamm::sp2(world, exec, h_p, n / 2 + (last ? 1 : 0), d_p),
                        Contains("'occupied'") && Contains("differs between the processes"));
      spamm::block_sparse_function_options opt;
      opt.tau = last ? 1e-6 : 1e-7;
      CHECK_THROWS_WITH(spamm::sign(world, exec, h_p, d_p, opt),
                        Contains("'options.tau'") && Contains("differs between the processes"));
      spamm::block_sparse_multiply_options mopt;
      mopt.drop_tolerance = last ? 1e-3 : 0.0;
      spamm::block_sparse_matrix<double, exec_t> c_p(exec, r1 - r0, n, tile);
      CHECK_THROWS_WITH(
          world.multiply(exec, 1.0, h_p, h_p, 0.0, c_p, mopt),
          Contains("'options.drop_tolerance'") && Contains("differs between the processes"));
      // Nothing is left pending: a good call works afterwards.
      CHECK(spamm::sp2(world, exec, h_p, n / 2, d_p).converged);
    }
  }
  SECTION("bad options") {
    spamm::block_sparse_function_options opt;
    opt.max_iterations = 0;
    CHECK_THROWS_WITH(spamm::sp2(world, exec, h_p, n / 2, d_p, opt),
                      Contains("options.max_iterations"));
  }
}
