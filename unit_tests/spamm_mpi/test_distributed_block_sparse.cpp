// Block-sparse SpAMM over MPI (spamm/distributed_block_sparse.hpp): every process's rows of C
// equal the same rows of the single-process spamm::multiply on the whole matrices, with the same
// report, for even and uneven row splits (processes without rows, B split unlike A); the dense
// host product at tau = 0 and the error bound at tau > 0; beta != 0; products fed back as the
// next operand; empty matrices; B's tiles travelling with their values only where a kept product
// reads them; and bad input raised on every process. Runs under mpiexec with 1, 2 and 4
// processes, on every enabled execution space.

#include "../spamm/block_sparse_support.hpp"
#include "../spamm/spamm_inputs.hpp"
#include "support/host_reference.hpp"
#include "support/mpi_support.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/distributed_block_sparse.hpp>

#include <catch2/catch.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace spamm = nearsparse::spamm;
using Catch::Matchers::Contains;
using nearsparse::test::dense_of;
using nearsparse::test::diff_norm;
using nearsparse::test::frobenius_norm;
using nearsparse::test::host_matrix;
using nearsparse::test::shared_seed;
using nearsparse::test::tile_norms;
using nearsparse::test::world_size;

namespace {

template <class Scalar, class Exec>
using bs_matrix = spamm::block_sparse_matrix<Scalar, Exec>;

constexpr const char* communicator_fn = "nearsparse::spamm::block_sparse_communicator";
constexpr double fp64_roundoff = 0x1p-53;  // unit roundoff of double

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

double sum_over_processes(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

std::int64_t sum_over_processes(std::int64_t x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

/// The same random matrix on every process (same seed): uniform in [-1, 1] times
/// 1 / (1 + strength |i - j|^2), as Scalar in tiles of `tile`, without its tiles below
/// drop * ||A||_F. A band of tiles: a process's rows read some tile rows of B and not others,
/// and some output tiles have no candidate product.
template <class Scalar, class Exec>
bs_matrix<Scalar, Exec> banded_random(const Exec& exec, int rows, int cols, int tile,
                                      std::uint64_t seed, double strength = 0.05,
                                      double drop = 1e-3) {
  spamm::block_sparse_options opt;
  opt.tile = tile;
  opt.drop_tolerance = drop;
  return spamm::from_dense<Scalar>(exec,
                                   nearsparse::test::spamm::decaying_random(
                                       exec, std::size_t(rows), std::size_t(cols), seed, strength),
                                   opt);
}

/// How the rows of a matrix are split over the processes, always in whole tiles.
enum class split {
  even,   // block_sparse_rows
  last,   // every row on the last process, none on the others
  uneven  // tile rows in proportion 1 : 0 : 3 : 4 (process 1 empty from three processes on)
};

const char* to_string(split s) {
  return s == split::even ? "even" : s == split::last ? "all on the last process" : "uneven";
}

/// This process's rows [begin, end) of `rows` split by s.
std::pair<int, int> split_rows(split s, int rows, int tile) {
  if (s == split::even) return spamm::block_sparse_rows(MPI_COMM_WORLD, rows, tile);
  const int size = world_size(), rank = world_rank();
  std::vector<std::int64_t> cumulative(std::size_t(size) + 1, 0);
  for (int p = 0; p < size; ++p) {
    const int weight = s == split::last ? (p + 1 == size) : (size > 2 && p == 1 ? 0 : p + 1);
    cumulative[std::size_t(p) + 1] = cumulative[std::size_t(p)] + weight;
  }
  const std::int64_t tiles = (rows + tile - 1) / tile;
  auto edge = [&](int q) {
    if (q == size) return rows;
    return int(std::min<std::int64_t>(
        rows, tiles * cumulative[std::size_t(q)] / cumulative.back() * tile));
  };
  return {edge(rank), edge(rank + 1)};
}

/// Rows [r0, r1) of h.
host_matrix<double> rows_of(const host_matrix<double>& h, int r0, int r1) {
  host_matrix<double> out(std::size_t(r1 - r0), h.cols);
  std::copy(h.data.begin() + std::ptrdiff_t(r0) * std::ptrdiff_t(h.cols),
            h.data.begin() + std::ptrdiff_t(r1) * std::ptrdiff_t(h.cols), out.data.begin());
  return out;
}

/// ||C_p - full's rows from row0||_F and ||full's rows||_F, their squares summed over the
/// processes: the distance and norm of the whole C when each process passes its rows. Extents
/// that do not fit give an infinite distance.
struct distance {
  double error = 0, norm = 0;
};
distance whole_distance(const host_matrix<double>& got, const host_matrix<double>& full, int row0) {
  double sums[2] = {0, 0};
  if (got.cols != full.cols || std::size_t(row0) + got.rows > full.rows) {
    sums[0] = std::numeric_limits<double>::infinity();
  } else {
    for (std::size_t i = 0; i < got.rows; ++i)
      for (std::size_t j = 0; j < got.cols; ++j) {
        const double want = full(std::size_t(row0) + i, j), e = got(i, j) - want;
        sums[0] += e * e;
        sums[1] += want * want;
      }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {std::sqrt(sums[0]), std::sqrt(sums[1])};
}

/// A tau halfway (geometrically) between the two middle norm products of stored tiles of a and
/// b: it keeps about half of the candidate products, and no product lies within rounding of it
/// (the device's tile norms may differ from these in the last bit).
double middle_norm_product(const host_matrix<double>& a, const host_matrix<double>& b, int tile) {
  const auto an = tile_norms(a, tile), bn = tile_norms(b, tile);
  std::vector<double> products;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t k = 0; k < an.cols; ++k)
      for (std::size_t j = 0; j < bn.cols; ++j)
        if (an(i, k) > 0 && bn(k, j) > 0) products.push_back(an(i, k) * bn(k, j));
  std::sort(products.begin(), products.end());
  const std::size_t mid = products.size() / 2;
  return std::sqrt(products[mid - 1] * products[mid]);
}

/// The report of the whole distributed product against one process's: the same counts; the
/// bound and the dropped norm are square roots of sums of the same terms added in another order
/// (per process, then over the processes), so they agree to the rounding of those sums.
void check_same_report(const spamm::block_sparse_report& got,
                       const spamm::block_sparse_report& want) {
  CHECK(got.kept_products == want.kept_products);
  CHECK(got.candidate_products == want.candidate_products);
  CHECK(got.tiles_kept == want.tiles_kept);
  CHECK(got.tiles_dropped == want.tiles_dropped);
  CHECK(got.error_bound == Approx(want.error_bound).epsilon(1e-12));
  CHECK(got.dropped_norm == Approx(want.dropped_norm).epsilon(1e-12));
}

/// Relative distance allowed between C_p and one process's C. The same products are added in
/// the same order, so the values are expected bit for bit; the allowance only leaves room for a
/// tile-product kernel whose rounding could depend on how many tiles it is launched over, far
/// below what one missing or extra tile product changes (at least about tau).
template <class Scalar>
constexpr double same_product_tolerance = std::is_same<Scalar, double>::value ? 1e-12 : 1e-6;

/// What a call raised on this process: nearsparse::invalid_argument, nearsparse::runtime_error
/// or anything else, and the message (empty when it returned).
struct raised {
  bool invalid = false, runtime = false;
  std::string what;
};
template <class F>
raised raised_by(F&& call) {
  raised r;
  try {
    call();
  } catch (const nearsparse::invalid_argument& e) {
    r.invalid = true;
    r.what = e.what();
  } catch (const nearsparse::runtime_error& e) {
    r.runtime = true;
    r.what = e.what();
  } catch (const std::exception& e) {
    r.what = e.what();
  }
  return r;
}

/// A collective call with bad input on process `failing` only: that process raises its own
/// invalid_argument, naming the function, the argument and the problem; every other process
/// raises runtime_error naming the function and the failing process.
void check_raised_from(const raised& r, int failing, const std::string& argument,
                       const std::string& problem) {
  INFO("process " << world_rank() << " raised: " << r.what);
  CHECK_THAT(r.what, Contains(communicator_fn));
  if (world_rank() == failing) {
    CHECK(r.invalid);
    CHECK_THAT(r.what, Contains(argument) && Contains(problem));
  } else {
    CHECK(r.runtime);
    CHECK_THAT(r.what,
               Contains(nearsparse::detail::concat("process ", failing, " of ", world_size())));
  }
}

/// A problem of the gathered shapes, seen by every process alike: the same invalid_argument
/// (the same message) on all.
void check_refused_alike(const raised& r, const std::string& argument, const std::string& problem) {
  INFO("process " << world_rank() << " raised: " << r.what);
  CHECK(r.invalid);
  CHECK_THAT(r.what, Contains(communicator_fn) && Contains(argument) && Contains(problem));
  unsigned long long hash[2] = {std::hash<std::string>{}(r.what), 0};
  hash[1] = ~hash[0];
  MPI_Allreduce(MPI_IN_PLACE, hash, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  CHECK(hash[0] == ~hash[1]);  // the largest hash is also the smallest
}

/// A copy of m with a NaN in its first tile (and its norm); m itself where it stores no tile.
template <class Scalar, class Exec>
bs_matrix<Scalar, Exec> with_nan(const Exec& exec, const bs_matrix<Scalar, Exec>& m) {
  if (m.kept_tiles() == 0) return m;
  using bs = bs_matrix<Scalar, Exec>;
  typename bs::values_type values("values", m.values().extent(0));
  typename bs::norms_type norms("norms", m.norms().extent(0));
  Kokkos::deep_copy(exec, values, m.values());
  Kokkos::deep_copy(exec, norms, m.norms());
  Kokkos::deep_copy(exec, Kokkos::subview(values, 0), std::numeric_limits<Scalar>::quiet_NaN());
  Kokkos::deep_copy(exec, Kokkos::subview(norms, 0), std::numeric_limits<double>::quiet_NaN());
  exec.fence();
  return bs(m.rows(), m.cols(), m.tile(), m.row_map(), m.column_indices(), values, norms,
            m.dropped_norm());
}

/// For each split of A's and of B's rows: C_p = alpha A_p B against one process's
/// spamm::multiply on the whole matrices, at tau > 0 without and with the drop rules.
template <class Scalar, class Exec>
void check_against_one_process(const Exec& exec, spamm::block_sparse_communicator<Exec>& world,
                               int m, int k, int n, int tile, std::uint64_t seed) {
  INFO((std::is_same<Scalar, double>::value ? "fp64, " : "fp32, ")
       << m << " x " << k << " times " << k << " x " << n << ", tile " << tile);
  const auto a = banded_random<Scalar>(exec, m, k, tile, seed);
  const auto b = banded_random<Scalar>(exec, k, n, tile, seed + 1);
  const auto ha = dense_of(exec, a), hb = dense_of(exec, b);
  const Scalar alpha = Scalar(0.75);
  std::vector<spamm::block_sparse_multiply_options> cases(3);
  for (auto& o : cases) o.tau = middle_norm_product(ha, hb, tile);
  cases[1].drop_tolerance = 1e-3;  // relative to the whole C's norm
  cases[2].rule = spamm::drop_rule::absolute;
  cases[2].drop_tolerance = 1e-3 * frobenius_norm(ha) * frobenius_norm(hb);
  for (const auto& o : cases) {
    INFO("tau " << o.tau << ", drop tolerance " << o.drop_tolerance
                << (o.rule == spamm::drop_rule::relative ? " (relative)" : " (absolute)"));
    bs_matrix<Scalar, Exec> c(exec, m, n, tile);
    const auto one = spamm::multiply(exec, alpha, a, b, Scalar(0), c, o);
    const auto full = dense_of(exec, c);
    // The cases test something: tau drops part of the products, a drop rule part of the tiles.
    CHECK(one.kept_products > 0);
    CHECK(one.kept_products < one.candidate_products);
    CHECK((one.tiles_dropped > 0) == (o.drop_tolerance > 0));
    for (const auto& [split_a, split_b] :
         std::vector<std::pair<split, split>>{{split::even, split::even},
                                              {split::even, split::uneven},
                                              {split::last, split::even},
                                              {split::uneven, split::last}}) {
      const auto ar = split_rows(split_a, m, tile), br = split_rows(split_b, k, tile);
      INFO("A's rows split " << to_string(split_a) << " (" << ar.first << ".." << ar.second
                             << " here), B's " << to_string(split_b) << " (" << br.first << ".."
                             << br.second << ")");
      const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
      const auto b_p = spamm::row_block(exec, b, br.first, br.second);
      bs_matrix<Scalar, Exec> c_p(exec, ar.second - ar.first, n, tile);
      const auto report = world.multiply(exec, alpha, a_p, b_p, Scalar(0), c_p, o);
      const auto d = whole_distance(dense_of(exec, c_p), full, ar.first);
      CHECK(d.norm > 0);
      CHECK(d.error <= same_product_tolerance<Scalar> * d.norm);
      check_same_report(report.product, one);
      CHECK(sum_over_processes(c_p.kept_tiles()) == c.kept_tiles());
      // beta = 0: C_p's dropped norm is what the drop rule removed from its rows; the squares
      // add up to the whole product's.
      CHECK(sum_over_processes(c_p.dropped_norm() * c_p.dropped_norm()) ==
            Approx(one.dropped_norm * one.dropped_norm).epsilon(1e-12));
    }
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("block_sparse_rows splits in whole tiles and row_block copies rows",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int size = world_size(), rank = world_rank(), m = 203, tile = 16;
  INFO("seed " << seed << ", " << size << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  CHECK(world.size() == size);
  CHECK(world.rank() == rank);
  const auto rows = spamm::block_sparse_rows(MPI_COMM_WORLD, m, tile);
  CHECK(world.rows(m, tile) == rows);
  // The blocks cover [0, m) in rank order, start on the tile grid, and their numbers of tiles
  // differ by at most one.
  std::vector<int> begins(std::size_t(size), 0), ends(std::size_t(size), 0);
  MPI_Allgather(&rows.first, 1, MPI_INT, begins.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&rows.second, 1, MPI_INT, ends.data(), 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(begins.front() == 0);
  CHECK(ends.back() == m);
  int fewest = m, most = 0;
  for (std::size_t p = 0; p < begins.size(); ++p) {
    if (p > 0) CHECK(begins[p] == ends[p - 1]);
    CHECK(begins[p] % tile == 0);
    const int tiles = (ends[p] - begins[p] + tile - 1) / tile;
    fewest = std::min(fewest, tiles);
    most = std::max(most, tiles);
  }
  CHECK(most - fewest <= 1);

  // row_block: exactly those rows of the stored matrix, with the whole matrix's dropped norm,
  // on every split (a last block that is not a whole number of tiles, empty blocks).
  const auto a = banded_random<double>(exec, m, 150, tile, seed);
  CHECK(a.dropped_norm() > 0);  // the drop rule removed tiles: the dropped norm says something
  const auto ha = dense_of(exec, a);
  for (const split s : {split::even, split::last, split::uneven}) {
    INFO("split " << to_string(s));
    const auto r = split_rows(s, m, tile);
    const auto a_p = spamm::row_block(exec, a, r.first, r.second);
    CHECK(a_p.rows() == r.second - r.first);
    CHECK(a_p.cols() == 150);
    CHECK(a_p.tile() == tile);
    CHECK(a_p.dropped_norm() == a.dropped_norm());
    CHECK(diff_norm(dense_of(exec, a_p), rows_of(ha, r.first, r.second)) == 0.0);
    CHECK(sum_over_processes(a_p.kept_tiles()) == a.kept_tiles());
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse multiply equals one process on every split",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  // Rectangular and square, extents not multiples of the tile.
  check_against_one_process<double>(exec, world, 203, 150, 177, 16, seed);
  check_against_one_process<float>(exec, world, 203, 150, 177, 16, seed + 2);
  check_against_one_process<double>(exec, world, 171, 171, 171, 8, seed + 4);
  check_against_one_process<float>(exec, world, 171, 171, 171, 8, seed + 6);
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse multiply: dense product and error bound",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  const int m = 203, k = 150, n = 177, tile = 16;
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  const auto a = banded_random<double>(exec, m, k, tile, seed);
  const auto b = banded_random<double>(exec, k, n, tile, seed + 1);
  const auto ha = dense_of(exec, a), hb = dense_of(exec, b);
  // The exact product of the stored matrices, in double on the host.
  const auto exact = nearsparse::test::reference_gemm(1.0, ha, hb, 0.0, host_matrix<double>(m, n));
  const double scale = frobenius_norm(ha) * frobenius_norm(hb);
  // A split unevenly, B evenly.
  const auto ar = split_rows(split::uneven, m, tile), br = split_rows(split::even, k, tile);
  const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
  const auto b_p = spamm::row_block(exec, b, br.first, br.second);
  // Candidates: the pairs of stored tiles A[i,k], B[k,j].
  const auto an = tile_norms(ha, tile), bn = tile_norms(hb, tile);
  std::int64_t candidates = 0;
  for (std::size_t i = 0; i < an.rows; ++i)
    for (std::size_t l = 0; l < an.cols; ++l)
      for (std::size_t j = 0; j < bn.cols; ++j) candidates += an(i, l) > 0 && bn(l, j) > 0;
  CHECK(candidates < std::int64_t(an.rows * an.cols * bn.cols));  // A and B are banded

  // tau = 0, no drop rule: every product of stored tiles. Tolerance as in the single-process
  // tests: 64 k u ||A||_F ||B||_F covers the rounding of k-term dot products.
  {
    bs_matrix<double, exec_t> c_p(exec, ar.second - ar.first, n, tile);
    const auto report = world.multiply(exec, 1.0, a_p, b_p, 0.0, c_p);
    const auto d = whole_distance(dense_of(exec, c_p), exact, ar.first);
    INFO("distance to the dense product " << d.error);
    CHECK(d.error <= 64 * k * fp64_roundoff * scale);
    CHECK(report.product.candidate_products == candidates);
    CHECK(report.product.kept_products == candidates);
    CHECK(report.product.error_bound == 0.0);
    CHECK(report.product.tiles_dropped == 0);
  }
  // tau > 0, no drop rule: ||A B - C||_F <= error_bound, up to the rounding of the kept products
  // (64 k u ||A||_F ||B||_F) and of the bound's own sums (1e-12 relative).
  {
    spamm::block_sparse_multiply_options o;
    o.tau = middle_norm_product(ha, hb, tile);
    bs_matrix<double, exec_t> c_p(exec, ar.second - ar.first, n, tile);
    const auto report = world.multiply(exec, 1.0, a_p, b_p, 0.0, c_p, o);
    const auto d = whole_distance(dense_of(exec, c_p), exact, ar.first);
    INFO("tau " << o.tau << ", error " << d.error << ", bound " << report.product.error_bound);
    CHECK(report.product.kept_products < report.product.candidate_products);
    CHECK(d.error <= report.product.error_bound * (1 + 1e-12) + 64 * k * fp64_roundoff * scale);
    // Not vacuous: tau changed the product far beyond rounding.
    CHECK(d.error > 1e3 * 64 * k * fp64_roundoff * scale);
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse multiply with beta keeps C's own tiles",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  const int m = 185, k = 140, n = 160, tile = 16;
  const double alpha = -0.5, beta = 2.0;
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  // A and B narrow bands of tiles; C a wide band (slow decay): C has tiles where no product
  // lands, and the drop rule removed some of its tiles (a dropped norm to carry).
  const auto a = banded_random<double>(exec, m, k, tile, seed, 0.05, 1e-2);
  const auto b = banded_random<double>(exec, k, n, tile, seed + 1, 0.05, 1e-2);
  const auto c = banded_random<double>(exec, m, n, tile, seed + 2, 0.002, 1e-2);
  const auto ha = dense_of(exec, a), hb = dense_of(exec, b), hc = dense_of(exec, c);
  const auto product =
      nearsparse::test::reference_gemm(1.0, ha, hb, 0.0, host_matrix<double>(m, n));
  {
    const auto pn = tile_norms(product, tile), cn = tile_norms(hc, tile);
    int c_alone = 0;
    for (std::size_t t = 0; t < pn.data.size(); ++t) c_alone += pn.data[t] == 0 && cn.data[t] > 0;
    CHECK(c_alone > 0);
    CHECK(c.dropped_norm() > 0);
  }
  const auto ar = split_rows(split::uneven, m, tile), br = split_rows(split::even, k, tile);
  const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
  const auto b_p = spamm::row_block(exec, b, br.first, br.second);

  // tau = 0, no drop rule: against the dense alpha A B + beta C, tolerance 64 k u times the
  // scale of both terms; the dropped norm only carries |beta| times the old one.
  {
    auto c_p = spamm::row_block(exec, c, ar.first, ar.second);
    CHECK(c_p.dropped_norm() == c.dropped_norm());
    world.multiply(exec, alpha, a_p, b_p, beta, c_p);
    const auto expect = nearsparse::test::reference_gemm(alpha, ha, hb, beta, hc);
    const auto d = whole_distance(dense_of(exec, c_p), expect, ar.first);
    INFO("distance to the dense product " << d.error);
    CHECK(d.error <= 64 * k * fp64_roundoff *
                         (std::abs(alpha) * frobenius_norm(ha) * frobenius_norm(hb) +
                          std::abs(beta) * frobenius_norm(hc)));
    CHECK(c_p.dropped_norm() == std::abs(beta) * c.dropped_norm());
  }
  // tau > 0 and the relative drop rule: against one process. C_p.dropped_norm() is the norm
  // removed from its rows plus |beta| times its old one; the removed norm is measured against
  // one process's product without the drop rule (the same values), to the rounding of the norms
  // (1e-10 relative).
  {
    spamm::block_sparse_multiply_options o;
    o.tau = middle_norm_product(ha, hb, tile);
    // C's tiles are all above 1e-2 ||C||_F and the result is about 2 C: 3e-2 of its norm cuts
    // into C's own tiles, and into product tiles where C has none.
    o.drop_tolerance = 3e-2;
    auto c_one = c, c_undropped = c;  // multiply gives C new arrays: c stays as it is
    const auto one = spamm::multiply(exec, alpha, a, b, beta, c_one, o);
    spamm::block_sparse_multiply_options keep_all = o;
    keep_all.drop_tolerance = 0;
    spamm::multiply(exec, alpha, a, b, beta, c_undropped, keep_all);
    CHECK(one.kept_products < one.candidate_products);
    CHECK(one.tiles_dropped > 0);
    auto c_p = spamm::row_block(exec, c, ar.first, ar.second);
    const auto report = world.multiply(exec, alpha, a_p, b_p, beta, c_p, o);
    const auto got = dense_of(exec, c_p);
    const auto d = whole_distance(got, dense_of(exec, c_one), ar.first);
    CHECK(d.norm > 0);
    CHECK(d.error <= same_product_tolerance<double> * d.norm);
    check_same_report(report.product, one);
    const double removed =
        diff_norm(got, rows_of(dense_of(exec, c_undropped), ar.first, ar.second));
    const double expect = removed + std::abs(beta) * c.dropped_norm();
    INFO("removed from this process's rows " << removed << ", C_p's dropped norm "
                                             << c_p.dropped_norm());
    CHECK(std::abs(c_p.dropped_norm() - expect) <= 1e-10 * expect);
    CHECK(sum_over_processes(removed * removed) ==
          Approx(one.dropped_norm * one.dropped_norm).epsilon(1e-10));
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse multiply sends B's values only where read",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int size = world_size(), m = 203, k = 150, n = 177, tile = 16;
  INFO("seed " << seed << ", " << size << " processes, " << exec_t::name());
  const auto a = banded_random<double>(exec, m, k, tile, seed);
  const auto b = banded_random<double>(exec, k, n, tile, seed + 1);
  const auto ha = dense_of(exec, a), hb = dense_of(exec, b);
  const auto an = tile_norms(ha, tile), bn = tile_norms(hb, tile);
  const auto ar = split_rows(split::even, m, tile), br = split_rows(split::uneven, k, tile);
  const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
  const auto b_p = spamm::row_block(exec, b, br.first, br.second);
  const double middle = middle_norm_product(ha, hb, tile);
  // On a GPU both ways of moving values: NCCL (where built) and host staging.
  std::vector<nearsparse::gpu_transport> transports = {nearsparse::gpu_transport::automatic};
  if (!nearsparse::detail::host_accessible_v<exec_t>)
    transports.push_back(nearsparse::gpu_transport::host_staging);
  for (const auto transport : transports) {
    spamm::distributed_block_sparse_options kept_only, whole_rows;
    kept_only.transport = whole_rows.transport = transport;
    whole_rows.kept_tiles_only = false;
    spamm::block_sparse_communicator<exec_t> world_kept(MPI_COMM_WORLD, exec, kept_only);
    spamm::block_sparse_communicator<exec_t> world_whole(MPI_COMM_WORLD, exec, whole_rows);
    for (const double tau : {middle, 0.0}) {
      INFO("transport " << nearsparse::to_string(transport) << ", tau " << tau);
      // From the host norms: the stored tiles of the other processes' rows of B that this
      // process's A reads (tile row k where A_p stores a tile in column k), and those of them
      // some product kept at tau reads (max_i ||A_p[i,k]|| ||B[k,j]|| >= tau).
      std::int64_t read = 0, kept_read = 0;
      for (std::size_t l = 0; l < bn.rows; ++l) {
        if (int(l) * tile >= br.first && int(l) * tile < br.second) continue;  // B_p's own
        double largest = 0;
        for (int i = ar.first / tile; i * tile < ar.second; ++i)
          largest = std::max(largest, an(std::size_t(i), l));
        if (largest == 0) continue;
        for (std::size_t j = 0; j < bn.cols; ++j) {
          read += bn(l, j) > 0;
          kept_read += bn(l, j) > 0 && largest * bn(l, j) >= tau;
        }
      }
      bs_matrix<double, exec_t> c_kept(exec, ar.second - ar.first, n, tile),
          c_whole(exec, ar.second - ar.first, n, tile);
      spamm::block_sparse_multiply_options o;
      o.tau = tau;
      const auto kept = world_kept.multiply(exec, 1.0, a_p, b_p, 0.0, c_kept, o);
      const auto whole = world_whole.multiply(exec, 1.0, a_p, b_p, 0.0, c_whole, o);
      // The same products from the same values (the tiles left out are never read): the same
      // C and report, exactly.
      CHECK(diff_norm(dense_of(exec, c_kept), dense_of(exec, c_whole)) == 0.0);
      CHECK(kept.product.kept_products == whole.product.kept_products);
      CHECK(kept.product.candidate_products == whole.product.candidate_products);
      CHECK(kept.product.tiles_kept == whole.product.tiles_kept);
      CHECK(kept.product.error_bound == whole.product.error_bound);
      // Every tile of the rows read arrives, with its values or as index and norm only.
      CHECK(whole.tiles_received == read);
      CHECK(whole.tiles_indexed_only == 0);
      CHECK(kept.tiles_received + kept.tiles_indexed_only == read);
      CHECK(kept.tiles_received == kept_read);
      CHECK(kept.bytes_received <= whole.bytes_received);
      CHECK(kept.bytes_of_whole_rows == whole.bytes_of_whole_rows);
      CHECK(whole.bytes_of_whole_rows == read * tile * tile * std::int64_t(sizeof(double)));
      CHECK(whole.bytes_received >= whole.bytes_of_whole_rows);  // the indices come on top
      if (size == 1) CHECK(whole.bytes_received == 0);           // nothing travels
      // tau > 0 over several processes leaves some values at home (else nothing is tested).
      if (tau > 0 && size > 1) {
        CHECK(sum_over_processes(kept.tiles_indexed_only) > 0);
        CHECK(sum_over_processes(kept.bytes_received) < sum_over_processes(whole.bytes_received));
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse products fed back as the next operand",
                           "[spamm][mpi][block_sparse][distributed]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  INFO("seed " << seed << ", " << world_size() << " processes, " << exec_t::name());
  const int n = 181, tile = 16;
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  const auto a = banded_random<double>(exec, n, n, tile, seed);
  const auto ha = dense_of(exec, a);
  spamm::block_sparse_multiply_options o;
  o.tau = middle_norm_product(ha, ha, tile);
  o.drop_tolerance = 1e-6;
  // One process: C = A A, then A^3 as C A (C as the next A) and as A C (C as the next B).
  bs_matrix<double, exec_t> c(exec, n, n, tile), c_a(exec, n, n, tile), a_c(exec, n, n, tile);
  spamm::multiply(exec, 1.0, a, a, 0.0, c, o);
  const auto one_ca = spamm::multiply(exec, 1.0, c, a, 0.0, c_a, o);
  const auto one_ac = spamm::multiply(exec, 1.0, a, c, 0.0, a_c, o);
  CHECK(one_ca.kept_products < one_ca.candidate_products);
  for (const split s : {split::even, split::uneven}) {
    // B split as A, so that C_p is also a block of rows of B.
    INFO("split " << to_string(s));
    const auto r = split_rows(s, n, tile);
    const auto a_p = spamm::row_block(exec, a, r.first, r.second);
    bs_matrix<double, exec_t> c_p(exec, r.second - r.first, n, tile), c_a_p = c_p, a_c_p = c_p;
    world.multiply(exec, 1.0, a_p, a_p, 0.0, c_p, o);
    const auto report_ca = world.multiply(exec, 1.0, c_p, a_p, 0.0, c_a_p, o);
    const auto report_ac = world.multiply(exec, 1.0, a_p, c_p, 0.0, a_c_p, o);
    const auto d_ca = whole_distance(dense_of(exec, c_a_p), dense_of(exec, c_a), r.first);
    const auto d_ac = whole_distance(dense_of(exec, a_c_p), dense_of(exec, a_c), r.first);
    CHECK(d_ca.norm > 0);
    CHECK(d_ca.error <= same_product_tolerance<double> * d_ca.norm);
    CHECK(d_ac.error <= same_product_tolerance<double> * d_ac.norm);
    check_same_report(report_ca.product, one_ca);
    check_same_report(report_ac.product, one_ac);
  }
}

NEARSPARSE_SPACE_TEST_CASE("distributed block-sparse multiply of empty and small matrices",
                           "[spamm][mpi][block_sparse][distributed][edge]") {
  using exec_t = TestType;
  const exec_t exec;
  const auto seed = shared_seed();
  const int size = world_size(), tile = 16;
  INFO("seed " << seed << ", " << size << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  // 0 x 0; two tile rows (20 x 20) over up to four processes; an empty inner extent.
  for (const auto& [m, k, n] :
       std::vector<std::tuple<int, int, int>>{{0, 0, 0}, {20, 20, 20}, {40, 0, 30}}) {
    INFO(m << " x " << k << " times " << k << " x " << n);
    const auto a = banded_random<double>(exec, m, k, tile, seed, 0.05, 0.0);
    const auto b = banded_random<double>(exec, k, n, tile, seed + 1, 0.05, 0.0);
    const auto c = banded_random<double>(exec, m, n, tile, seed + 2, 0.05, 0.0);
    const auto ar = world.rows(m, tile), br = world.rows(k, tile);
    // Fewer tile rows than processes: some hold none.
    const std::int64_t empty = sum_over_processes(std::int64_t(ar.first == ar.second));
    if (m == 20) CHECK(empty == std::max(0, size - 2));
    const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
    const auto b_p = spamm::row_block(exec, b, br.first, br.second);
    auto c_p = spamm::row_block(exec, c, ar.first, ar.second);
    auto c_one = c;
    const auto one = spamm::multiply(exec, 1.0, a, b, 0.5, c_one);
    const auto report = world.multiply(exec, 1.0, a_p, b_p, 0.5, c_p);
    check_same_report(report.product, one);
    CHECK(report.product.candidate_products ==
          std::int64_t((m + tile - 1) / tile) * ((k + tile - 1) / tile) * ((n + tile - 1) / tile));
    CHECK(c_p.rows() == ar.second - ar.first);
    CHECK(c_p.cols() == n);
    // Against the dense A B + 0.5 C: 64 max(k, 1) u of the scale of both terms.
    const auto expect = nearsparse::test::reference_gemm(1.0, dense_of(exec, a), dense_of(exec, b),
                                                         0.5, dense_of(exec, c));
    const auto d = whole_distance(dense_of(exec, c_p), expect, ar.first);
    CHECK(d.error <= 64 * std::max(k, 1) * fp64_roundoff *
                         (frobenius_norm(dense_of(exec, a)) * frobenius_norm(dense_of(exec, b)) +
                          frobenius_norm(dense_of(exec, c))));
    CHECK(sum_over_processes(c_p.kept_tiles()) == c_one.kept_tiles());
  }
}

NEARSPARSE_SPACE_TEST_CASE(
    "distributed block-sparse multiply and row blocks refuse bad input on every process",
    "[spamm][mpi][block_sparse][distributed][errors]") {
  using exec_t = TestType;
  using bs = bs_matrix<double, exec_t>;
  const exec_t exec;
  const auto seed = shared_seed();
  const int size = world_size(), rank = world_rank(), last = size - 1;
  const int m = 203, k = 150, n = 177, tile = 16;
  INFO("seed " << seed << ", " << size << " processes, " << exec_t::name());
  spamm::block_sparse_communicator<exec_t> world(MPI_COMM_WORLD, exec);
  const auto a_dense = nearsparse::test::spamm::decaying_random(exec, m, k, seed);
  const auto b_dense = nearsparse::test::spamm::decaying_random(exec, k, n, seed + 1);
  spamm::block_sparse_options opt;
  opt.tile = tile;
  const auto a = spamm::from_dense(exec, a_dense, opt), b = spamm::from_dense(exec, b_dense, opt);
  const auto ar = world.rows(m, tile), br = world.rows(k, tile);
  const auto a_p = spamm::row_block(exec, a, ar.first, ar.second);
  const auto b_p = spamm::row_block(exec, b, br.first, br.second);
  bs c_p(exec, ar.second - ar.first, n, tile);
  world.multiply(exec, 1.0, a_p, b_p, 0.0, c_p);
  const auto c_before = dense_of(exec, c_p);
  // Every case calls the collective on every process, whatever it raises there.

  // C_p of the wrong extents on the last process only.
  {
    bs c_wrong(exec, ar.second - ar.first, rank == last ? n + 1 : n, tile);
    check_raised_from(raised_by([&] { world.multiply(exec, 1.0, a_p, b_p, 0.0, c_wrong); }), last,
                      "'C'",
                      nearsparse::detail::concat("expected ", ar.second - ar.first, " x ", n));
  }
  // B_p with another tile than A_p on the last process only.
  {
    spamm::block_sparse_options opt8 = opt;
    opt8.tile = 8;
    const auto b8 = spamm::from_dense(exec, b_dense, opt8);
    const auto b_mine = rank == last ? spamm::row_block(exec, b8, br.first, br.second) : b_p;
    check_raised_from(raised_by([&] { world.multiply(exec, 1.0, a_p, b_mine, 0.0, c_p); }), last,
                      "'B'", "tile 16");
  }
  // NaN in A_p on the last process only; C_p keeps its old arrays.
  {
    const auto a_mine = rank == last ? with_nan(exec, a_p) : a_p;
    CHECK(a_mine.kept_tiles() > 0);
    check_raised_from(raised_by([&] { world.multiply(exec, 1.0, a_mine, b_p, 0.0, c_p); }), last,
                      "'A'", "non-finite");
  }
  // Negative tau on every process: each raises its own.
  {
    spamm::block_sparse_multiply_options o;
    o.tau = -1;
    const auto r = raised_by([&] { world.multiply(exec, 1.0, a_p, b_p, 0.0, c_p, o); });
    INFO(r.what);
    CHECK(r.invalid);
    CHECK_THAT(r.what, Contains(communicator_fn) && Contains("'options.tau'"));
  }
  CHECK(diff_norm(dense_of(exec, c_p), c_before) == 0.0);
  // B's rows adding up to one row less than A's columns (the last process's block one short).
  {
    const auto b_short = spamm::from_dense(
        exec,
        Kokkos::subview(b_dense, std::make_pair(br.first, br.second - (rank == last ? 1 : 0)),
                        Kokkos::ALL),
        opt);
    check_refused_alike(raised_by([&] { world.multiply(exec, 1.0, a_p, b_short, 0.0, c_p); }),
                        "'B'", nearsparse::detail::concat(k - 1));
  }
  if (size > 1) {
    // A whole process on another tile.
    {
      spamm::block_sparse_options opt8 = opt;
      opt8.tile = 8;
      const auto a8 = spamm::from_dense(exec, a_dense, opt8);
      const auto b8 = spamm::from_dense(exec, b_dense, opt8);
      const auto a_mine = rank == last ? spamm::row_block(exec, a8, ar.first, ar.second) : a_p;
      const auto b_mine = rank == last ? spamm::row_block(exec, b8, br.first, br.second) : b_p;
      bs c_mine(exec, ar.second - ar.first, n, rank == last ? 8 : tile);
      check_refused_alike(
          raised_by([&] { world.multiply(exec, 1.0, a_mine, b_mine, 0.0, c_mine); }), "'A'",
          "tile 8");
    }
    // Process 0 holding one row less than a whole number of tiles, process 1 one more.
    {
      const int r0 = rank == 1 ? ar.first - 1 : ar.first;
      const int r1 = rank == 0 ? ar.second - 1 : ar.second;
      const auto a_off = spamm::from_dense(
          exec, Kokkos::subview(a_dense, std::make_pair(r0, r1), Kokkos::ALL), opt);
      bs c_off(exec, r1 - r0, n, tile);
      check_refused_alike(raised_by([&] { world.multiply(exec, 1.0, a_off, b_p, 0.0, c_off); }),
                          "'A'", "multiple of the tile");
    }
  }
  // After all that, a product goes through and gives the same C (nothing left in flight).
  {
    bs c_again(exec, ar.second - ar.first, n, tile);
    world.multiply(exec, 1.0, a_p, b_p, 0.0, c_again);
    CHECK(diff_norm(dense_of(exec, c_again), c_before) == 0.0);
  }

  // row_block and block_sparse_rows (local checks).
  CHECK_THROWS_AS(spamm::row_block(exec, a, 5, 32), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(spamm::row_block(exec, a, 5, 32),
                    Contains("nearsparse::spamm::row_block") && Contains("'row_begin'") &&
                        Contains("[5, 32)") && Contains("multiples of the tile 16"));
  CHECK_THROWS_WITH(spamm::row_block(exec, a, 0, 20),
                    Contains("nearsparse::spamm::row_block") && Contains("[0, 20)"));
  CHECK_THROWS_WITH(spamm::row_block(exec, a, 16, m + 1),
                    Contains("nearsparse::spamm::row_block") && Contains("'row_begin'") &&
                        Contains("[16, 204)") && Contains("[0, 203]"));
  CHECK_THROWS_WITH(spamm::row_block(exec, a, 32, 16), Contains("nearsparse::spamm::row_block"));
  CHECK_THROWS_WITH(spamm::row_block(exec, bs(), 0, 0),
                    Contains("nearsparse::spamm::row_block") && Contains("'m'"));
  CHECK_THROWS_AS(spamm::block_sparse_rows(MPI_COMM_WORLD, m, 12), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(
      spamm::block_sparse_rows(MPI_COMM_WORLD, m, 12),
      Contains("nearsparse::spamm::block_sparse_rows") && Contains("'tile'") && Contains("is 12"));
  CHECK_THROWS_WITH(spamm::block_sparse_rows(MPI_COMM_WORLD, -1, tile),
                    Contains("nearsparse::spamm::block_sparse_rows") && Contains("'rows'"));
}
