// Distributed SpAMM over MPI: on every process grid the processes' blocks of C equal the blocks of
// a single-process spamm::plan's C to rounding, with the same kept tile products, the same work
// matrix and a global valid ratio; kept panels are not sent again; a target valid ratio is met
// over the whole product; bad input is refused on every process alike. Runs under mpiexec with
// 1, 2 and 4 processes, on every enabled execution space.

#include "../spamm/spamm_inputs.hpp"
#include "../spamm/spamm_reference.hpp"
#include "support/host_reference.hpp"
#include "support/mpi_support.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/distributed.hpp>

#include <catch2/catch.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <utility>
#include <vector>

using Catch::Matchers::Contains;
using nearsparse::spamm::distributed_options;
using spamm_precision = nearsparse::spamm::precision;
using nearsparse::test::host_matrix;
using nearsparse::test::shared_seed;
using nearsparse::test::world_size;
namespace ref = nearsparse::test::spamm;

namespace {

template <class Exec, class T = double>
using matrix = nearsparse::test::spamm::matrix<Exec, T>;

// The same random matrix on every process (same seed), decaying away from the diagonal.
template <class Exec>
matrix<Exec> decaying_random(const Exec& exec, int rows, int cols, std::uint64_t seed) {
  return nearsparse::test::spamm::decaying_random(exec, rows, cols, seed, 0.02);
}

template <class View>
auto block(const View& v, int r0, int r1, int c0, int c1) {
  return Kokkos::subview(v, std::make_pair(r0, r1), std::make_pair(c0, c1));
}

// A contiguous copy of a block, so the plan sees both strided and contiguous inputs.
template <class Exec, class View>
matrix<Exec, typename View::non_const_value_type> copy_block(const Exec& exec, const View& v,
                                                             int r0, int r1, int c0, int c1) {
  matrix<Exec, typename View::non_const_value_type> out("block", r1 - r0, c1 - c0);
  Kokkos::deep_copy(exec, out, block(v, r0, r1, c0, c1));
  exec.fence();
  return out;
}

// ||C_block - full(block)||_F and ||full(block)||_F, each summed over all processes: the
// distance and norm of the whole C when every process passes its block at (row0, col0).
struct distance {
  double error = 0, norm = 0;
};
inline distance whole_distance(const host_matrix<double>& got, const host_matrix<double>& full,
                               std::size_t row0, std::size_t col0) {
  double sums[2] = {0, 0};
  for (std::size_t i = 0; i < got.rows; ++i)
    for (std::size_t j = 0; j < got.cols; ++j) {
      const double want = full(row0 + i, col0 + j), e = got(i, j) - want;
      sums[0] += e * e;
      sums[1] += want * want;
    }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {std::sqrt(sums[0]), std::sqrt(sums[1])};
}

// Process grids the communicator's size allows: 1-D (Algorithm 4), one process row, and a
// square-ish 2-D grid.
std::vector<std::pair<int, int>> grids(int size) {
  std::vector<std::pair<int, int>> g = {{size, 1}, {1, size}};
  if (size == 4) g.push_back({2, 2});
  return g;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("distributed spamm equals single-process spamm on every grid",
                           "[spamm][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int m = 203, k = 150, n = 177;  // not multiples of the tile, rectangular
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  const auto a = decaying_random(exec, m, k, seed);
  const auto b = decaying_random(exec, k, n, seed + 1);
  const auto c0 = decaying_random(exec, m, n, seed + 2);
  for (auto precision : {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::fp16}) {
    nearsparse::spamm::options o;
    o.precision = precision;
    o.tile = 32;
    o.tau = 0.0;
    // A threshold that keeps part of the tile products, from the single-process norms.
    nearsparse::spamm::plan<exec_t> single(exec, a, b, o);
    single.search_tau(exec, 0.4);
    o.tau = single.tau();
    single.set_tau(exec, o.tau);
    const double alpha = 0.75, beta = -0.5;
    matrix<exec_t> c_single("c_single", m, n);
    Kokkos::deep_copy(exec, c_single, c0);
    single.multiply(exec, alpha, beta, c_single);
    const auto full = nearsparse::test::to_host(c_single);
    const auto v_single = nearsparse::test::to_host(single.work_matrix());
    const double scale =
        ref::abs_product_norm(alpha, nearsparse::test::to_host(a), nearsparse::test::to_host(b)) +
        nearsparse::test::frobenius_norm(nearsparse::test::to_host(c0));
    // Only the order of summation over the panels of k differs.
    const double tol = 4 * ref::accumulation_tolerance(precision, k);
    // On a GPU both ways of moving panels: NCCL (where built) and host staging.
    std::vector<nearsparse::gpu_transport> transports = {nearsparse::gpu_transport::automatic};
    if (!nearsparse::detail::host_accessible_v<exec_t>)
      transports.push_back(nearsparse::gpu_transport::host_staging);
    for (const auto& [pr, pc] : grids(world_size())) {
      for (bool keep : {true, false}) {
        for (int panels : {1, 2}) {
          for (auto transport : transports) {
            // Bytes received by the first product: kept tiles only, then whole panels.
            std::size_t received[2] = {0, 0};
            for (bool tiles_only : {true, false}) {
              // Whole panels once per grid and mode (each plan opens its own communicators,
              // slow with NCCL): with fp32.
              if (!tiles_only && precision != spamm_precision::fp32) continue;
              INFO(nearsparse::spamm::to_string(precision)
                   << ", grid " << pr << " x " << pc << ", keep " << keep << ", panels per block "
                   << panels << ", transport " << nearsparse::to_string(transport)
                   << ", kept tiles only " << tiles_only);
              distributed_options d;
              d.kept_tiles_only = tiles_only;
              d.transport = transport;
              d.process_rows = pr;
              d.process_cols = pc;
              d.keep_panels = keep;
              d.panels_per_block = panels;
              const auto blk =
                  nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, m, n, k, 32, d);
              const auto a_blk =
                  copy_block(exec, a, blk.row_begin, blk.row_end, blk.a_col_begin, blk.a_col_end);
              const auto b_blk =
                  block(b, blk.b_row_begin, blk.b_row_end, blk.col_begin, blk.col_end);
              auto c_blk =
                  copy_block(exec, c0, blk.row_begin, blk.row_end, blk.col_begin, blk.col_end);
              nearsparse::spamm::distributed_plan<exec_t> plan(MPI_COMM_WORLD, exec, a_blk, b_blk,
                                                               o, d);
              // CHECK, not REQUIRE: a process that left the test would leave the others waiting.
              CHECK(plan.kept_count() == single.kept_count());
              CHECK(plan.valid_ratio() == single.valid_ratio());
              CHECK(plan.process_rows() == pr);
              CHECK(plan.process_cols() == pc);
              const auto v = nearsparse::test::to_host(plan.work_matrix());
              bool v_same = true;
              for (std::size_t i = 0; i < v.rows; ++i)
                for (std::size_t j = 0; j < v.cols; ++j)
                  v_same =
                      v_same && v(i, j) == v_single(blk.row_begin / 32 + i, blk.col_begin / 32 + j);
              CHECK(v_same);
              for (int round = 0; round < 2; ++round) {
                if (round == 1)
                  Kokkos::deep_copy(
                      exec, c_blk,
                      block(c0, blk.row_begin, blk.row_end, blk.col_begin, blk.col_end));
                plan.multiply(exec, alpha, beta, c_blk);
                exec.fence();
                const auto d = whole_distance(nearsparse::test::to_host(c_blk), full, blk.row_begin,
                                              blk.col_begin);
                INFO("round " << round);
                CHECK(d.error <= tol * scale);
                // Kept panels travel once; without keeping, every product sends them again.
                if (round == 1 && keep) CHECK(plan.received_bytes() == 0);
                if (round == 0) received[tiles_only ? 0 : 1] = plan.received_bytes();
              }
            }
            // Only the tiles a process's kept products read: never more than whole panels.
            if (precision == spamm_precision::fp32) CHECK(received[0] <= received[1]);
          }
        }
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed tau search and operand updates match one process",
                           "[spamm][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int n = 300;
  INFO("seed " << seed << ", " << exec_t::name());
  const auto a = decaying_random(exec, n, n, seed);
  const auto b = decaying_random(exec, n, n, seed + 1);
  nearsparse::spamm::options o;
  o.precision = spamm_precision::fp64;
  o.tile = 32;
  o.target_valid_ratio = 0.25;
  nearsparse::spamm::plan<exec_t> single(exec, a, b, o);
  const auto blk = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, 32);
  const auto a_blk = block(a, blk.row_begin, blk.row_end, 0, n);
  nearsparse::spamm::distributed_plan<exec_t> plan(
      MPI_COMM_WORLD, exec, a_blk, block(b, blk.b_row_begin, blk.b_row_end, 0, n), o);
  CHECK(std::abs(plan.valid_ratio() - 0.25) <= o.search.tolerance);
  CHECK(std::abs(plan.valid_ratio() - single.valid_ratio()) <= o.search.tolerance);
  CHECK(plan.tau() == Approx(single.tau()).epsilon(1e-6));
  // The same tau on both: the same kept set.
  plan.set_tau(exec, single.tau());
  CHECK(plan.kept_count() == single.kept_count());

  // A^2 then A^3 by update_b with the product (rows of A and of B split alike).
  matrix<exec_t> c_single("c", n, n), c_blk("c_blk", blk.row_end - blk.row_begin, n);
  single.multiply(exec, 1.0, 0.0, c_single);
  plan.multiply(exec, 1.0, 0.0, c_blk);
  single.update_b(exec, c_single);
  plan.update_b(exec, c_blk);
  CHECK(plan.kept_count() == single.kept_count());
  matrix<exec_t> c2_single("c2", n, n), c2_blk("c2_blk", blk.row_end - blk.row_begin, n);
  single.multiply(exec, 1.0, 0.0, c2_single);
  plan.multiply(exec, 1.0, 0.0, c2_blk);
  CHECK((plan.received_bytes() > 0 || world_size() == 1));  // the new B travels again
  exec.fence();
  const auto full = nearsparse::test::to_host(c2_single);
  const auto d = whole_distance(nearsparse::test::to_host(c2_blk), full, blk.row_begin, 0);
  CHECK(d.norm > 0);
  CHECK(d.error <= 1e-12 * d.norm);
  // The product that brought the new B ran panel by panel; the next one on the same operands
  // runs assembled, sends nothing, and gives the same C.
  CHECK(plan.assembled() == (world_size() == 1));
  matrix<exec_t> c3_blk("c3_blk", blk.row_end - blk.row_begin, n);
  plan.multiply(exec, 1.0, 0.0, c3_blk);
  CHECK(plan.assembled());
  CHECK(plan.received_bytes() == 0);
  exec.fence();
  const auto d3 = whole_distance(nearsparse::test::to_host(c3_blk), full, blk.row_begin, 0);
  CHECK(d3.error <= 1e-12 * d3.norm);
}

NEARSPARSE_SPACE_TEST_CASE("panels sent as kept tiles travel again after set_tau and updates",
                           "[spamm][mpi]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int n = 233;
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  const auto a = decaying_random(exec, n, n, seed);
  const auto b = decaying_random(exec, n, n, seed + 1);
  const auto a2 = decaying_random(exec, n, n, seed + 2);  // a new A for update_a
  const auto b2 = decaying_random(exec, n, n, seed + 3);  // a new B for update_b
  nearsparse::spamm::options o;
  o.precision = spamm_precision::fp64;
  o.tile = 32;
  nearsparse::spamm::plan<exec_t> single(exec, a, b, o);
  single.search_tau(exec, 0.2);
  const double tau_narrow = single.tau();
  single.search_tau(exec, 0.6);
  const double tau_wide = single.tau();
  for (const auto& [pr, pc] : grids(world_size())) {
    for (bool keep : {true, false}) {
      INFO("grid " << pr << " x " << pc << ", keep " << keep);
      distributed_options d;
      d.process_rows = pr;
      d.process_cols = pc;
      d.keep_panels = keep;
      o.tau = tau_narrow;
      const auto blk = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, 32, d);
      const auto a_blk =
          copy_block(exec, a, blk.row_begin, blk.row_end, blk.a_col_begin, blk.a_col_end);
      const auto a2_blk =
          copy_block(exec, a2, blk.row_begin, blk.row_end, blk.a_col_begin, blk.a_col_end);
      const auto b_blk =
          copy_block(exec, b, blk.b_row_begin, blk.b_row_end, blk.col_begin, blk.col_end);
      const auto b2_blk =
          copy_block(exec, b2, blk.b_row_begin, blk.b_row_end, blk.col_begin, blk.col_end);
      nearsparse::spamm::distributed_plan<exec_t> plan(MPI_COMM_WORLD, exec, a_blk, b_blk, o, d);
      nearsparse::spamm::plan<exec_t> one(exec, a, b, o);
      matrix<exec_t> c_one("c_one", n, n);
      matrix<exec_t> c_blk("c_blk", blk.row_end - blk.row_begin, blk.col_end - blk.col_begin);
      // Each step changes what the processes' kept products read; the product after it must
      // equal one process's at the same tau and operands.
      auto check_step = [&](const char* step) {
        INFO(step);
        CHECK(plan.kept_count() == one.kept_count());
        one.multiply(exec, 1.0, 0.0, c_one);
        plan.multiply(exec, 1.0, 0.0, c_blk);
        exec.fence();
        const auto dist =
            whole_distance(nearsparse::test::to_host(c_blk), nearsparse::test::to_host(c_one),
                           blk.row_begin, blk.col_begin);
        CHECK(dist.norm > 0);
        CHECK(dist.error <= 1e-12 * dist.norm);
      };
      check_step("first product");
      plan.multiply(exec, 1.0, 0.0, c_blk);  // kept panels: nothing travels
      if (keep) CHECK(plan.received_bytes() == 0);
      plan.set_tau(exec, tau_wide);
      one.set_tau(exec, tau_wide);
      check_step("a lower tau keeps more tile products");
      if (world_size() > 1) CHECK(plan.received_bytes() > 0);
      plan.update_a(exec, a2_blk);
      one.update_a(exec, a2);
      check_step("a new A reads other tiles of B");
      plan.update_b(exec, b2_blk);
      one.update_b(exec, b2);
      check_step("a new B reads other tiles of A");
      plan.search_tau(exec, 0.4);
      one.set_tau(exec, plan.tau());
      check_step("a searched tau");
      plan.set_tau(exec, 0.0);
      one.set_tau(exec, 0.0);
      check_step("tau = 0: whole panels");
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("work-balanced blocks give the same product with even work",
                           "[spamm][mpi][balance]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int n = 333, tile = 32, mt = (n + tile - 1) / tile;
  INFO("seed " << seed << ", " << exec_t::name());
  const auto a = decaying_random(exec, n, n, seed);
  nearsparse::spamm::options o;
  o.precision = spamm_precision::fp64;
  o.tile = tile;
  o.target_valid_ratio = 0.2;
  nearsparse::spamm::plan<exec_t> single(exec, a, a, o);
  matrix<exec_t> c_single("c", n, n);
  single.multiply(exec, 1.0, 0.0, c_single);
  const auto full = nearsparse::test::to_host(c_single);
  o.target_valid_ratio = 0;
  o.tau = single.tau();

  const auto equal = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, tile);
  nearsparse::spamm::distributed_plan<exec_t> first(
      MPI_COMM_WORLD, exec, block(a, equal.row_begin, equal.row_end, 0, n),
      block(a, equal.b_row_begin, equal.b_row_end, 0, n), o);
  const auto work = first.tile_row_work(exec);
  REQUIRE(work.size() == std::size_t(mt));
  double total = 0;
  for (double w : work) total += w;
  CHECK(total == Approx(double(single.kept_count()) + double(mt) * mt));

  const auto bal = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, tile, {}, work);
  CHECK(bal.row_begin % tile == 0);
  CHECK(bal.b_row_begin == bal.row_begin);  // B's rows follow C's for matrix powers
  // The blocks tile [0, n) in rank order, and no process row gets much more than its share.
  std::vector<int> begins(static_cast<std::size_t>(world_size())), ends(begins.size());
  MPI_Allgather(&bal.row_begin, 1, MPI_INT, begins.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&bal.row_end, 1, MPI_INT, ends.data(), 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(begins.front() == 0);
  CHECK(ends.back() == n);
  double heaviest = 0, largest_tile_row = 0;
  for (std::size_t p = 0; p < begins.size(); ++p) {
    if (p > 0) CHECK(begins[p] == ends[p - 1]);
    double share = 0;
    for (int t = begins[p] / tile; t < (ends[p] + tile - 1) / tile; ++t) share += work[t];
    heaviest = std::max(heaviest, share);
  }
  for (double w : work) largest_tile_row = std::max(largest_tile_row, w);
  CHECK(heaviest <= total / world_size() + largest_tile_row);

  nearsparse::spamm::distributed_plan<exec_t> plan(
      MPI_COMM_WORLD, exec, block(a, bal.row_begin, bal.row_end, 0, n),
      block(a, bal.b_row_begin, bal.b_row_end, 0, n), o);
  CHECK(plan.kept_count() == single.kept_count());
  matrix<exec_t> c("c_blk", bal.row_end - bal.row_begin, n);
  plan.multiply(exec, 1.0, 0.0, c);
  exec.fence();
  const auto d = whole_distance(nearsparse::test::to_host(c), full, bal.row_begin, 0);
  CHECK(d.error <= 1e-12 * d.norm);
  // Weights that do not fit the product.
  CHECK_THROWS_WITH(nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, tile, {},
                                                          std::vector<double>(3, 1.0)),
                    Contains("row_work"));
}

NEARSPARSE_SPACE_TEST_CASE("distributed spamm handles empty extents and more processes than tiles",
                           "[spamm][mpi][edge]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  for (const auto& [m, k, n] : std::vector<std::tuple<int, int, int>>{
           {0, 40, 40}, {40, 0, 40}, {40, 40, 0}, {33, 20, 45}}) {
    INFO(m << " x " << k << " times " << k << " x " << n);
    nearsparse::spamm::options o;
    o.precision = spamm_precision::fp64;
    o.tile = 32;
    const auto a = decaying_random(exec, m, k, seed);
    const auto b = decaying_random(exec, k, n, seed + 1);
    const auto blk = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, m, n, k, 32);
    nearsparse::spamm::distributed_plan<exec_t> plan(
        MPI_COMM_WORLD, exec, block(a, blk.row_begin, blk.row_end, 0, k),
        block(b, blk.b_row_begin, blk.b_row_end, 0, n), o);
    matrix<exec_t> c("c", blk.row_end - blk.row_begin, n);
    Kokkos::deep_copy(exec, c, 2.0);
    plan.multiply(exec, 1.0, 0.5, c);
    exec.fence();
    const auto got = nearsparse::test::to_host(c);
    const auto ha = nearsparse::test::to_host(a), hb = nearsparse::test::to_host(b);
    double worst = 0;
    for (std::size_t i = 0; i < got.rows; ++i)
      for (std::size_t j = 0; j < got.cols; ++j) {
        double s = 1.0;  // 0.5 * 2
        for (int l = 0; l < k; ++l) s += ha(blk.row_begin + i, l) * hb(l, j);
        worst = std::max(worst, std::abs(got(i, j) - s));
      }
    CHECK(worst <= 1e-12);
    CHECK(plan.valid_ratio() == (m * n * k == 0 ? 0.0 : 1.0));
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed spamm refuses bad input on every process",
                           "[spamm][mpi][errors]") {
  using exec_t = TestType;
  const exec_t exec;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int size = world_size(), n = 100;
  const auto seed = shared_seed();
  const auto a = decaying_random(exec, n, n, seed);
  nearsparse::spamm::options o;
  o.tile = 32;
  const auto blk = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, 32);
  const auto mine = block(a, blk.row_begin, blk.row_end, 0, n);
  const auto b_mine = block(a, blk.b_row_begin, blk.b_row_end, 0, n);
  using plan_t = nearsparse::spamm::distributed_plan<exec_t>;

  // A grid that does not hold the processes.
  distributed_options d;
  d.process_rows = size + 1;
  CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, mine, b_mine, o, d), Contains("process grid"));
  // Row blocks off the tile grid: one row moves from process 0 to process 1.
  const int r0 = rank == 0 ? 0 : blk.row_begin - (rank == 1 ? 1 : 0);
  const int r1 = blk.row_end - (rank == 0 ? 1 : 0);
  if (size > 1)
    CHECK_THROWS_WITH(
        plan_t(MPI_COMM_WORLD, exec, block(a, r0, r1, 0, n), block(a, r0, r1, 0, n), o),
        Contains("off the tile grid"));
  // Blocks of B whose widths disagree within a process column.
  if (size > 1)
    CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, mine,
                             block(a, blk.b_row_begin, blk.b_row_end, 0, n - rank), o),
                      Contains("the same process column"));
  // Inner extents that do not match.
  CHECK_THROWS_WITH(
      plan_t(MPI_COMM_WORLD, exec, block(a, blk.row_begin, blk.row_end, 0, n - 1), b_mine, o),
      Contains("inner extents"));
  // NaN in one process's block of A: every process raises.
  matrix<exec_t> bad("bad", blk.row_end - blk.row_begin, n);
  Kokkos::deep_copy(exec, bad, mine);
  if (rank == size - 1 && bad.extent(0) > 0) {
    Kokkos::deep_copy(exec, Kokkos::subview(bad, 0, 3), std::numeric_limits<double>::quiet_NaN());
  }
  exec.fence();
  CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, bad, b_mine, o), Contains("non-finite"));
  // Negative tau, and a block of C of the wrong shape on one process only.
  nearsparse::spamm::options neg = o;
  neg.tau = -1;
  CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, mine, b_mine, neg), Contains("tau"));
  plan_t plan(MPI_COMM_WORLD, exec, mine, b_mine, o);
  matrix<exec_t> c("c", blk.row_end - blk.row_begin + (rank == 0 ? 1 : 0), n);
  CHECK_THROWS_WITH(plan.multiply(exec, 1.0, 0.0, c), Contains("C"));
  // NCCL where the build or the execution space has none.
  if (!nearsparse::detail::nccl_capable_v<exec_t>) {
    distributed_options nccl;
    nccl.transport = nearsparse::gpu_transport::nccl;
    CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, mine, b_mine, o, nccl), Contains("NCCL"));
  }
#if NEARSPARSE_HAVE_NCCL
  // NCCL where processes share a GPU (more processes than GPUs): refused on every process when
  // asked for, host staging when automatic.
  if constexpr (nearsparse::detail::nccl_capable_v<exec_t>) {
    if (!nearsparse::detail::nccl_shared_gpu(MPI_COMM_WORLD).empty()) {
      distributed_options nccl;
      nccl.transport = nearsparse::gpu_transport::nccl;
      // Rows split over every process: B's panels travel among them all.
      CHECK_THROWS_WITH(plan_t(MPI_COMM_WORLD, exec, mine, b_mine, o, nccl),
                        Contains("share the GPU"));
      distributed_options automatic = nccl;
      automatic.transport = nearsparse::gpu_transport::automatic;
      plan_t staged(MPI_COMM_WORLD, exec, mine, b_mine, o, automatic);
      CHECK(staged.transport() == nearsparse::gpu_transport::host_staging);
    }
  }
#endif
}
