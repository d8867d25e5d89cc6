// TLR products against the dense product in double precision on the host:
//   - with a dense C (GEMM-LLD): exact up to rounding with respect to the compressed operands, for
//     low-rank and dense tiles, edge tiles, alpha and beta, every outer_products_per_call, and both
//     implementations where the specialized path (cuBLAS) exists;
//   - with a TLR C (GEMM-LLL): the error follows the recompression accuracy, a full rank is exact,
//     fixed ranks are kept, C's own content is scaled by beta;
//   - the batched kernels on random batches; empty operands; bad arguments.

#include "support/seeds.hpp"
#include "support/space_test_case.hpp"
#include "tlr_reference.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/tlr.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

namespace nt = nearsparse::tlr;
namespace ref = nearsparse::test::tlr;
using Catch::Matchers::Contains;
using nearsparse::test::fresh_seed;
using nearsparse::test::reference_gemm;
using nearsparse::test::relative_error;
using nearsparse::test::to_host;

namespace {

template <class Exec>
using tlr_of = nt::tlr_matrix<typename Exec::memory_space>;

/// A compressed random decaying matrix, and the dense matrix it stands for (on the host).
template <class Exec>
std::pair<tlr_of<Exec>, ref::matrix> operand(const Exec& exec, std::size_t m, std::size_t n,
                                             std::size_t tile, int max_rank, bool dense_diagonal,
                                             double accuracy, std::uint64_t seed) {
  const auto a = ref::to_device(exec, ref::decaying(m, n, 0.4, seed));
  nt::compression_options o;
  o.max_rank = max_rank;
  o.dense_diagonal = dense_diagonal;
  o.trunc.accuracy = accuracy;
  o.seed = seed;
  auto c = nt::compress(exec, a, tile, o);
  return {c, to_host(nt::to_dense(exec, c))};
}

template <class Exec>
std::vector<nearsparse::implementation> kernels_of() {
  if (std::string(Exec::name()) == "Cuda" || ref::host_specialized<Exec>())
    return {nearsparse::implementation::portable, nearsparse::implementation::specialized};
  return {nearsparse::implementation::portable};
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("TLR-GEMM into a dense C equals the dense product of the operands",
                           "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  for (const bool dense_diagonal : {false, true}) {
    // 70 x 53 times 53 x 61 in 16 x 16 tiles: edge tiles everywhere, ranks from 0 to 16.
    auto [a, ha] = operand(exec, 70, 53, 16, 12, dense_diagonal, 1e-4, seed);
    auto [b, hb] = operand(exec, 53, 61, 16, 9, dense_diagonal, 1e-6, seed + 1);
    const ref::matrix hc0 = ref::decaying(70, 61, 0.5, seed + 2);
    for (const auto kernel : kernels_of<TestType>()) {
      for (const int per_call : {1, 2, 0}) {
        for (const auto& [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {-0.7, 1.3}}) {
          auto c = ref::to_device(exec, hc0);
          nt::gemm_options o;
          o.implementation = kernel;
          o.outer_products_per_call = per_call;
          nt::gemm(exec, alpha, a, b, beta, c, o);
          const auto expected = reference_gemm(alpha, ha, hb, beta, hc0);
          INFO("dense diagonal " << dense_diagonal << ", kernel " << nearsparse::to_string(kernel)
                                 << ", per call " << per_call << ", alpha " << alpha << ", beta "
                                 << beta);
          NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(c), expected, 1e-13);
        }
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("TLR-GEMM into a TLR C follows the recompression accuracy", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  auto [a, ha] = operand(exec, 66, 50, 16, 16, true, 1e-9, seed);
  auto [b, hb] = operand(exec, 50, 45, 16, 16, true, 1e-9, seed + 1);
  const auto product = reference_gemm(1.0, ha, hb, 0.0, ref::matrix(66, 45));
  double previous = 1;
  for (const double accuracy : {1e-2, 1e-5, 1e-8, 1e-11}) {
    tlr_of<TestType> c(exec, 66, 45, 16, 16, true);
    nt::gemm_options o;
    o.trunc.accuracy = accuracy;
    const nt::gemm_report report = nt::gemm(exec, 1.0, a, b, 0.0, c, o);
    const double err = relative_error(to_host(nt::to_dense(exec, c)), product);
    INFO("accuracy " << accuracy << ": error " << err << ", ranks up to " << report.max_rank
                     << ", dropped " << report.dropped);
    // Each of the nt = 4 recompressions of a tile drops at most accuracy times the tile.
    CHECK(err <= 4 * accuracy);
    CHECK(err <= previous);
    CHECK(report.max_rank <= 16);
    previous = std::max(err, 1e-15);
  }
  // Full rank and no truncation: exact; then alpha and beta with C's own content.
  tlr_of<TestType> c(exec, 66, 45, 16, 16, true);
  nt::gemm_options exact;
  exact.trunc.accuracy = 0;
  nt::gemm(exec, 1.0, a, b, 0.0, c, exact);
  CHECK(relative_error(to_host(nt::to_dense(exec, c)), product) <= 1e-12);
  const auto before = to_host(nt::to_dense(exec, c));
  nt::gemm(exec, 0.5, a, b, -2.0, c, exact);
  NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(nt::to_dense(exec, c)),
                                  reference_gemm(0.5, ha, hb, -2.0, before), 1e-12);
  // A fixed rank is kept on every low-rank tile.
  nt::gemm_options fixed;
  fixed.trunc.fixed_rank = 3;
  tlr_of<TestType> c3(exec, 66, 45, 16, 8, true);
  const nt::gemm_report r3 = nt::gemm(exec, 1.0, a, b, 0.0, c3, fixed);
  CHECK(r3.max_rank == 3);
  CHECK(r3.dropped > 0);
  // A rank cap that is too small is reported.
  nt::gemm_options tight;
  tight.trunc.accuracy = 1e-12;
  tlr_of<TestType> c1(exec, 66, 45, 16, 1, true);
  CHECK(nt::gemm(exec, 1.0, a, b, 0.0, c1, tight).tiles_at_cap > 0);
}

NEARSPARSE_SPACE_TEST_CASE("batched GEMM-LLD and GEMM-LLL on random batches", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  // A: 8 x 3 tiles, B: 3 x 5 tiles (last row and column of tiles smaller), C: 8 x 5 tiles.
  auto [a, ha] = operand(exec, 8 * 12 - 5, 3 * 12 - 4, 12, 12, false, 1e-8, seed);
  auto [b, hb] = operand(exec, 3 * 12 - 4, 5 * 12 - 7, 12, 10, false, 1e-8, seed + 1);
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<int> c_tiles(40);
  std::iota(c_tiles.begin(), c_tiles.end(), 0);
  std::shuffle(c_tiles.begin(), c_tiles.end(), rng);
  std::vector<nt::tile_triple> batch;
  for (int e = 0; e < 23; ++e) {
    const int ct = c_tiles[e], i = ct % 8, j = ct / 8, k = int(rng() % 3);
    batch.push_back({i + 8 * k, k + 3 * j, ct});
  }
  const ref::matrix hc0 = ref::decaying(91, 53, 0.5, seed + 2);
  // The reference: each listed C tile gets alpha A(i, k) B(k, j) + beta C(i, j); others stay.
  const double alpha = 1.5, beta = -0.5;
  ref::matrix expected = hc0;
  for (const auto& t : batch) {
    const std::size_t i = t.c % 8, j = t.c / 8, k = t.a / 8;
    const std::size_t m = std::min<std::size_t>(12, 91 - 12 * i),
                      n = std::min<std::size_t>(12, 53 - 12 * j),
                      kk = std::min<std::size_t>(12, 32 - 12 * k);
    const auto p = reference_gemm(alpha, ref::block(ha, 12 * i, 12 * k, m, kk),
                                  ref::block(hb, 12 * k, 12 * j, kk, n), beta,
                                  ref::block(hc0, 12 * i, 12 * j, m, n));
    for (std::size_t r = 0; r < m; ++r)
      for (std::size_t q = 0; q < n; ++q) expected(12 * i + r, 12 * j + q) = p(r, q);
  }
  for (const auto kernel : kernels_of<TestType>()) {
    auto c = ref::to_device(exec, hc0);
    nt::gemm_options o;
    o.implementation = kernel;
    nt::gemm_lld_batched(exec, alpha, a, b, beta, c, batch, o);
    INFO("kernel " << nearsparse::to_string(kernel));
    NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(c), expected, 1e-13);
  }
  // GEMM-LLL: C compressed from hc0 without loss, then the same batch.
  nt::compression_options full;
  full.max_rank = 12;
  full.trunc.accuracy = 0;
  auto c = nt::compress(exec, ref::to_device(exec, hc0), 12, full);
  nt::gemm_options exact;
  exact.trunc.accuracy = 0;
  nt::gemm_lll_batched(exec, alpha, a, b, beta, c, batch, exact);
  NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(nt::to_dense(exec, c)), expected, 1e-12);
}

NEARSPARSE_SPACE_TEST_CASE("empty TLR products and an empty inner dimension", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  tlr_of<TestType> a(exec, 30, 0, 8, 4), b(exec, 0, 20, 8, 4);
  const ref::matrix hc0 = ref::decaying(30, 20, 0.5, seed);
  auto c = ref::to_device(exec, hc0);
  nt::gemm(exec, 1.0, a, b, 2.0, c);  // C = 2 C
  NEARSPARSE_CHECK_RELATIVE_ERROR(
      to_host(c), reference_gemm(1.0, ref::matrix(30, 0), ref::matrix(0, 20), 2.0, hc0), 1e-15);
  tlr_of<TestType> e(exec, 0, 0, 8, 4);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space> ce("ce", 0, 0);
  nt::gemm(exec, 1.0, e, e, 0.0, ce);
  tlr_of<TestType> te(exec, 0, 0, 8, 4);
  CHECK(nt::gemm(exec, 1.0, e, e, 0.0, te).max_rank == 0);
  // Rank-0 operands: C = beta C.
  tlr_of<TestType> z1(exec, 30, 17, 8, 4), z2(exec, 17, 20, 8, 4);
  auto c2 = ref::to_device(exec, hc0);
  nt::gemm(exec, 1.0, z1, z2, -1.0, c2);
  NEARSPARSE_CHECK_RELATIVE_ERROR(
      to_host(c2), reference_gemm(1.0, ref::matrix(30, 17), ref::matrix(17, 20), -1.0, hc0), 1e-15);
}

NEARSPARSE_SPACE_TEST_CASE("bad TLR product arguments are rejected with their names", "[tlr]") {
  TestType exec;
  using view = Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space>;
  tlr_of<TestType> a(exec, 30, 20, 8, 4), b(exec, 20, 25, 8, 4), b_other(exec, 20, 25, 10, 4),
      b_short(exec, 19, 25, 8, 4);
  view c("c", 30, 25), c_wrong("c", 30, 24);
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b_short, 0.0, c),
                    Contains("'B'") && Contains("19 rows"));
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b, 0.0, c_wrong),
                    Contains("'C'") && Contains("30 x 24"));
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b_other, 0.0, c), Contains("tile size 10"));
  CHECK_THROWS_WITH(nt::gemm(exec, std::nan(""), a, b, 0.0, c), Contains("alpha"));
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b, INFINITY, c), Contains("beta"));
  nt::gemm_options bad;
  bad.outer_products_per_call = -1;
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b, 0.0, c, bad), Contains("outer_products_per_call"));
  // TLR C: two dense diagonal tiles cannot land on a low-rank tile; a fixed rank above max_rank.
  tlr_of<TestType> ad(exec, 24, 24, 8, 4, true), bd(exec, 24, 24, 8, 4, true),
      cl(exec, 24, 24, 8, 4, false);
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, ad, bd, 0.0, cl), Contains("both dense"));
  nt::gemm_options fixed;
  fixed.trunc.fixed_rank = 5;
  tlr_of<TestType> cd(exec, 24, 24, 8, 4, true);
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, ad, bd, 0.0, cd, fixed), Contains("fixed_rank"));
  // specialized: for a TLR C on the host path and on Cuda; for a dense C where cuBLAS or the
  // host path is there.
  nt::gemm_options specialized;
  specialized.implementation = nearsparse::implementation::specialized;
  const bool host = ref::host_specialized<TestType>();
  if (ref::lll_specialized<TestType>()) {
    CHECK_NOTHROW(nt::gemm(exec, 1.0, ad, bd, 0.0, cd, specialized));
    CHECK_NOTHROW(nt::gemm_lll_batched(exec, 1.0, ad, bd, 0.0, cd, {{1, 1, 1}}, specialized));
    CHECK_NOTHROW(nt::gemm(exec, 1.0, a, b, 0.0, c, specialized));
    CHECK_NOTHROW(nt::gemm_lld_batched(exec, 1.0, a, b, 0.0, c, {{0, 0, 0}}, specialized));
  } else {
    CHECK_THROWS_AS(nt::gemm(exec, 1.0, ad, bd, 0.0, cd, specialized), nearsparse::unsupported);
    CHECK_THROWS_WITH(nt::gemm(exec, 1.0, ad, bd, 0.0, cd, specialized),
                      Contains("nearsparse::tlr::gemm") && Contains("specialized"));
    CHECK_THROWS_WITH(nt::gemm_lll_batched(exec, 1.0, ad, bd, 0.0, cd, {{1, 1, 1}}, specialized),
                      Contains("nearsparse::tlr::gemm_lll_batched") && Contains("specialized"));
  }
  if (std::string(TestType::name()) != "Cuda" && !host) {
    CHECK_THROWS_AS(nt::gemm(exec, 1.0, a, b, 0.0, c, specialized), nearsparse::unsupported);
    CHECK_THROWS_WITH(nt::gemm(exec, 1.0, a, b, 0.0, c, specialized),
                      Contains("nearsparse::tlr::gemm") && Contains(TestType::name()));
    CHECK_THROWS_WITH(nt::gemm_lld_batched(exec, 1.0, a, b, 0.0, c, {{0, 0, 0}}, specialized),
                      Contains("nearsparse::tlr::gemm_lld_batched") && Contains(TestType::name()));
  }
  // Batches: out of range, non-conforming, repeated C tiles.
  CHECK_THROWS_WITH(nt::gemm_lld_batched(exec, 1.0, a, b, 0.0, c, {{0, 0, 99}}),
                    Contains("tile 99"));
  CHECK_THROWS_WITH(nt::gemm_lld_batched(exec, 1.0, a, b, 0.0, c, {{0, 2, 0}}),
                    Contains("do not conform"));
  CHECK_THROWS_WITH(nt::gemm_lld_batched(exec, 1.0, a, b, 0.0, c, {{0, 0, 0}, {4, 1, 0}}),
                    Contains("again"));
}
