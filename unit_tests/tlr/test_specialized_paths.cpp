// The specialized paths against the portable kernels and the dense references, at odd sizes with
// edge tiles, on fresh random inputs: on Kokkos::OpenMP and Kokkos::Serial with OpenBLAS, LAPACK
// and BLAS on each tile; on Kokkos::Cuda, the batched randomized compression and the batched
// recompression of a TLR C. Both paths must keep the requested accuracy (ranks may differ where
// the truncation rule meets a tie, so errors are compared, not factors). Where a space has no
// specialized path, specialized is refused with the reason.

#include "support/seeds.hpp"
#include "support/space_test_case.hpp"
#include "tlr_reference.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/tlr.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>

namespace nt = nearsparse::tlr;
namespace ref = nearsparse::test::tlr;
using Catch::Matchers::Contains;
using nearsparse::test::fresh_seed;
using nearsparse::test::reference_gemm;
using nearsparse::test::relative_error;
using nearsparse::test::to_host;

namespace {

using nearsparse::implementation;

/// The implementations to compare: portable, and the specialized path where this space has one.
std::vector<implementation> kernels(bool specialized) {
  if (specialized) return {implementation::portable, implementation::specialized};
  return {implementation::portable};
}
template <class Exec>
std::vector<implementation> compression_kernels(nt::compression_method method) {
  return kernels(ref::compression_specialized<Exec>(method));
}
template <class Exec>
std::vector<implementation> lll_kernels() {
  return kernels(ref::lll_specialized<Exec>());
}

/// |a|_F for a host matrix.
double norm(const ref::matrix& a) {
  double s = 0;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) s += a(i, j) * a(i, j);
  return std::sqrt(s);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("specialized compression keeps the accuracy of the portable kernels",
                           "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO(TestType::name() << ", seed " << seed);
  // 101 x 77 in 48 x 48 tiles (edge tiles of 5 rows and 29 columns), held row-major so the host
  // path reads a strided source; max_rank 24 leaves the randomized method 34 of 48 samples.
  const ref::matrix host = ref::decaying(101, 77, 0.35, seed);
  Kokkos::View<double**, Kokkos::LayoutRight, typename TestType::memory_space> a("A", 101, 77);
  {
    auto m = Kokkos::create_mirror_view(a);
    for (std::size_t i = 0; i < host.rows; ++i)
      for (std::size_t j = 0; j < host.cols; ++j) m(i, j) = host(i, j);
    Kokkos::deep_copy(exec, a, m);
    exec.fence();
  }
  for (const auto method : {nt::compression_method::svd, nt::compression_method::randomized}) {
    for (const double accuracy : {1e-4, 1e-9}) {
      double errors[2] = {0, 0};
      for (const auto kernel : compression_kernels<TestType>(method)) {
        nt::compression_options o;
        o.method = method;
        o.max_rank = 24;
        o.trunc.accuracy = accuracy;
        o.seed = seed;
        o.implementation = kernel;
        nt::compression_report report;
        const auto c = nt::compress(exec, a, 48, o, report);
        const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
        INFO(nt::to_string(method)
             << ", accuracy " << accuracy << ", " << nearsparse::to_string(kernel) << ", error "
             << err << ", reported " << report.relative_error << ", ranks " << report.min_rank
             << ".." << report.max_rank);
        CHECK(report.tiles_at_cap == 0);
        CHECK(err <= accuracy * 1.001 + 1e-14);
        CHECK(std::abs(report.relative_error - err) <= 1e-3 * accuracy + 1e-13);
        CHECK(report.max_rank <= 24);
        errors[kernel == implementation::portable ? 0 : 1] = err;
      }
      // Exact SVD on both paths: the same truncation, so the same error up to rounding (a tie at
      // the threshold could move one rank; the decay of 0.35 keeps the values apart).
      if (method == nt::compression_method::svd && ref::compression_specialized<TestType>(method))
        CHECK(std::abs(errors[0] - errors[1]) <= 1e-6 * errors[0] + 1e-14);
    }
  }
  // Fixed ranks: the exact method gives the SVD truncation error on both paths.
  for (const int rank : {0, 3, 16}) {
    double errors[2] = {0, 0};
    for (const auto kernel : compression_kernels<TestType>(nt::compression_method::svd)) {
      nt::compression_options o;
      o.method = nt::compression_method::svd;
      o.max_rank = 16;
      o.trunc.fixed_rank = rank;
      o.implementation = kernel;
      nt::compression_report report;
      const auto c = nt::compress(exec, a, 16, o, report);
      const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
      INFO("rank " << rank << ", " << nearsparse::to_string(kernel) << ", error " << err);
      CHECK(report.max_rank == rank);
      CHECK(std::abs(report.relative_error - err) <= 1e-6 * err + 1e-13);
      errors[kernel == implementation::portable ? 0 : 1] = err;
    }
    if (ref::compression_specialized<TestType>(nt::compression_method::svd))
      CHECK(std::abs(errors[0] - errors[1]) <= 1e-6 * errors[0] + 1e-13);
    // The randomized method at the same fixed rank, on both paths: the tiles at the rank, the
    // reported error the true one, and close to the SVD truncation error (10 samples beyond the
    // rank and one power iteration on a decay of 0.35).
    for (const auto kernel : compression_kernels<TestType>(nt::compression_method::randomized)) {
      nt::compression_options o;
      o.max_rank = 16;
      o.trunc.fixed_rank = rank;
      o.implementation = kernel;
      nt::compression_report report;
      const auto c = nt::compress(exec, a, 16, o, report);
      const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
      INFO("randomized, rank " << rank << ", " << nearsparse::to_string(kernel) << ", error " << err
                               << ", SVD error " << errors[0]);
      CHECK(report.max_rank == rank);  // edge tiles of 5 rows keep at most 5
      CHECK(std::abs(report.relative_error - err) <= 1e-6 * err + 1e-13);
      CHECK(err <= 1.01 * errors[0] + 1e-13);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("specialized compression of covariance tiles with a dense diagonal",
                           "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO(TestType::name() << ", seed " << seed);
  const auto a = nt::exponential_covariance(exec, 131, 2, 0.2, seed);
  const auto host = to_host(a);
  // A workspace of one byte: one tile per launch (the batched path's batches of one).
  for (const auto kernel : compression_kernels<TestType>(nt::compression_method::randomized))
    for (const std::size_t workspace : {std::size_t(1) << 30, std::size_t(1)}) {
      nt::compression_options o;
      o.max_rank = 30;
      o.dense_diagonal = true;
      o.trunc.accuracy = 1e-4;
      o.implementation = kernel;
      o.workspace_bytes = workspace;
      nt::compression_report report;
      const auto c = nt::compress(exec, a, 40, o, report);
      const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
      INFO(nearsparse::to_string(kernel) << ", workspace " << workspace << ": error " << err
                                         << ", mean rank " << report.mean_rank);
      CHECK(report.tiles_at_cap == 0);
      CHECK(err <= 1e-4 * 1.001);
      CHECK(report.dense_tiles == 4u);
      CHECK(report.tiles == 16u);
    }
}

NEARSPARSE_SPACE_TEST_CASE("specialized compression of empty matrices", "[tlr]") {
  TestType exec;
  for (const auto kernel : compression_kernels<TestType>(nt::compression_method::randomized)) {
    for (const auto& [rows, cols] : {std::pair<int, int>{0, 0}, {0, 7}, {5, 0}}) {
      Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space> a("A", rows,
                                                                                    cols);
      nt::compression_options o;
      o.implementation = kernel;
      o.max_rank = 4;
      nt::compression_report report;
      const auto c = nt::compress(exec, a, 8, o, report);
      CHECK(report.tiles == 0u);
      CHECK(c.rows() == std::size_t(rows));
      CHECK(c.cols() == std::size_t(cols));
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("specialized TLR-GEMM into a TLR C keeps the recompression accuracy",
                           "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO(TestType::name() << ", seed " << seed);
  using dense = Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space>;
  struct geometry {
    std::size_t m, k, tile;
    double decay;
  };
  // 75 x 58 times 58 x 75 in 16 x 16 tiles: edge tiles of 11 and 10, four outer products, sums
  // wider than a quarter tile (the host path forms the dense tile). 150 x 130 times 130 x 150 in
  // 96 x 96 tiles with fast decay: narrow sums (the host path truncates the factors).
  for (const auto& [mm, kk, tile, decay] :
       {geometry{75, 58, 16, 0.4}, geometry{150, 130, 96, 0.05}})
    for (const bool dense_diagonal : {false, true}) {
      INFO(mm << " x " << kk << " in " << tile << " x " << tile << " tiles");
      nt::compression_options co;
      co.max_rank = 12;
      co.dense_diagonal = dense_diagonal;
      co.trunc.accuracy = 1e-6;
      co.seed = seed;
      const auto a = nt::compress(
          exec, dense(ref::to_device(exec, ref::decaying(mm, kk, decay, seed))), tile, co);
      const auto b = nt::compress(
          exec, dense(ref::to_device(exec, ref::decaying(kk, mm, decay, seed + 1))), tile, co);
      const ref::matrix ha = to_host(nt::to_dense(exec, a)), hb = to_host(nt::to_dense(exec, b));
      nt::compression_options cc = co;
      cc.max_rank = 16;
      cc.trunc.accuracy = dense_diagonal ? 0 : 1e-12;
      const ref::matrix hc0 = ref::decaying(mm, mm, decay, seed + 2);
      const double alpha = -1.2, beta = 0.5;
      for (const double accuracy : {1e-5, 1e-10}) {
        for (const auto kernel : lll_kernels<TestType>()) {
          auto c = nt::compress(exec, ref::to_device(exec, hc0), tile, cc);
          const ref::matrix c_in = to_host(nt::to_dense(exec, c));
          const ref::matrix expected = reference_gemm(alpha, ha, hb, beta, c_in);
          nt::gemm_options o;
          o.trunc.accuracy = accuracy;
          o.implementation = kernel;
          const nt::gemm_report report = nt::gemm(exec, alpha, a, b, beta, c, o);
          const ref::matrix got = to_host(nt::to_dense(exec, c));
          const double err = relative_error(got, expected);
          INFO("dense diagonal " << dense_diagonal << ", accuracy " << accuracy << ", "
                                 << nearsparse::to_string(kernel) << ", error " << err
                                 << ", dropped " << report.dropped << ", mean rank "
                                 << report.mean_rank);
          CHECK(report.tiles_at_cap == 0);
          CHECK(report.max_rank <= 16);
          if (kernel == implementation::portable) {
            // One truncation per outer product (four of them), each within the accuracy.
            CHECK(err <= 4 * accuracy + 1e-14);
          } else {
            // One truncation per tile, within the accuracy of the tile; the report's dropped norm
            // is the error made (measured, not bounded).
            CHECK(err <= accuracy * 1.001 + 1e-14);
            CHECK(std::abs(report.dropped - err * norm(expected)) <=
                  1e-3 * accuracy * norm(expected) + 1e-12);
          }
        }
      }
      // Fixed rank: every low-rank tile of C keeps it; beta = 0 ignores C. The host path truncates
      // the exact sum once, so its error stays at or below the portable path's (nt truncations).
      double fixed_errors[2] = {0, 0};
      for (const auto kernel : lll_kernels<TestType>()) {
        auto c = nt::compress(exec, ref::to_device(exec, hc0), tile, cc);
        nt::gemm_options o;
        o.trunc.fixed_rank = 3;
        o.implementation = kernel;
        const nt::gemm_report report = nt::gemm(exec, 1.0, a, b, 0.0, c, o);
        INFO(nearsparse::to_string(kernel));
        CHECK(report.max_rank == 3);
        const std::vector<int> ranks = c.host_ranks(exec);
        for (std::size_t t = 0; t < c.tile_count(); ++t)
          if (!c.is_dense(t)) CHECK(ranks[t] == 3);
        const ref::matrix expected = reference_gemm(1.0, ha, hb, 0.0, ref::matrix(mm, mm));
        const double err = relative_error(to_host(nt::to_dense(exec, c)), expected);
        CHECK(err < 0.1);
        fixed_errors[kernel == implementation::portable ? 0 : 1] = err;
      }
      if (ref::lll_specialized<TestType>()) CHECK(fixed_errors[1] <= 1.05 * fixed_errors[0]);
    }
}

NEARSPARSE_SPACE_TEST_CASE("specialized batched GEMM-LLL agrees with the portable kernels",
                           "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO(TestType::name() << ", seed " << seed);
  using dense = Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space>;
  nt::compression_options co;
  co.max_rank = 9;
  co.trunc.accuracy = 1e-7;
  co.seed = seed;
  // A: 45 x 33, B: 33 x 29 in 12 x 12 tiles; C: 45 x 29.
  const auto a =
      nt::compress(exec, dense(ref::to_device(exec, ref::decaying(45, 33, 0.3, seed))), 12, co);
  const auto b =
      nt::compress(exec, dense(ref::to_device(exec, ref::decaying(33, 29, 0.3, seed + 1))), 12, co);
  const ref::matrix hc0 = ref::decaying(45, 29, 0.3, seed + 2);
  // (i, k, j) = (0, 0, 0), (1, 1, 1), (3, 2, 0), (2, 0, 2), (3, 2, 2): edge tiles in every place.
  const std::vector<nt::tile_triple> batch = {
      {0, 0, 0}, {5, 4, 5}, {11, 2, 3}, {2, 6, 10}, {11, 8, 11}};
  // alpha = 0 leaves beta C; a workspace of one byte makes one C tile per batch and one product
  // per launch on the specialized paths.
  for (const double alpha : {0.8, 0.0})
    for (const std::size_t workspace : {std::size_t(2) << 30, std::size_t(1)}) {
      INFO("alpha " << alpha << ", workspace " << workspace);
      ref::matrix results[2];
      for (const auto kernel : lll_kernels<TestType>()) {
        auto c = nt::compress(exec, ref::to_device(exec, hc0), 12, co);
        nt::gemm_options o;
        o.trunc.accuracy = 1e-12;
        o.implementation = kernel;
        o.workspace_bytes = workspace;
        nt::gemm_lll_batched(exec, alpha, a, b, 1.1, c, batch, o);
        results[kernel == implementation::portable ? 0 : 1] = to_host(nt::to_dense(exec, c));
      }
      if (ref::lll_specialized<TestType>())
        NEARSPARSE_CHECK_RELATIVE_ERROR(results[1], results[0], 1e-10);
    }
}

NEARSPARSE_SPACE_TEST_CASE(
    "batched GEMM-LLD at ranks past one k slice and at the thin update's limit, with edge tiles "
    "and beta 0",
    "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO(TestType::name() << ", seed " << seed);
  using dense = Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space>;
  // Tiles of 100 (two 64-row blocks, the second partial) with edge tiles of 70, 90 and 30, at
  // fixed ranks (fewer in the edge tiles):
  // - 37 in A and 21 in B: k = 37, past two slices of 16 and not a multiple of one; four tiles of
  //   k put 148 columns in one launch, past what the thin-update kernel takes (cuBLAS then);
  // - 21 in A and 32 in B: w = B's rank, so one product per launch reads B's V factor in place,
  //   and four put k = 128 in one launch, exactly the thin-update kernel's limit.
  auto fixed = [&](std::size_t m, std::size_t n, int rank, std::uint64_t s) {
    nt::compression_options o;
    o.max_rank = rank;
    o.trunc.accuracy = 0;
    o.seed = s;
    return nt::compress(exec, dense(ref::to_device(exec, ref::decaying(m, n, 0.9, s))), 100, o);
  };
  for (const auto& ranks : {std::pair<int, int>(37, 21), std::pair<int, int>(21, 32)}) {
    INFO("ranks " << ranks.first << " and " << ranks.second);
    const auto a = fixed(270, 390, ranks.first, seed);
    const auto b = fixed(390, 230, ranks.second, seed + 1);
    const ref::matrix ha = to_host(nt::to_dense(exec, a)), hb = to_host(nt::to_dense(exec, b));
    // Every C tile (3 x 3) once, its inner tile k = (i + j) % 4.
    std::vector<nt::tile_triple> batch;
    for (int ct = 0; ct < 9; ++ct) {
      const int i = ct % 3, j = ct / 3, k = (i + j) % 4;
      batch.push_back({i + 3 * k, k + 4 * j, ct});
    }
    const ref::matrix hc0 = ref::decaying(270, 230, 0.5, seed + 2);
    for (const double beta : {-0.5, 0.0}) {
      // beta = 0 must not read C: it starts as NaN there.
      ref::matrix c_in = hc0;
      if (beta == 0)
        for (std::size_t i = 0; i < c_in.rows; ++i)
          for (std::size_t j = 0; j < c_in.cols; ++j) c_in(i, j) = std::nan("");
      ref::matrix expected(270, 230);
      for (const auto& t : batch) {
        const std::size_t i = t.c % 3, j = t.c / 3, k = t.a / 3;
        const std::size_t m = std::min<std::size_t>(100, 270 - 100 * i),
                          n = std::min<std::size_t>(100, 230 - 100 * j),
                          kk = std::min<std::size_t>(100, 390 - 100 * k);
        const auto p = reference_gemm(1.3, ref::block(ha, 100 * i, 100 * k, m, kk),
                                      ref::block(hb, 100 * k, 100 * j, kk, n), beta,
                                      ref::block(hc0, 100 * i, 100 * j, m, n));
        for (std::size_t r = 0; r < m; ++r)
          for (std::size_t q = 0; q < n; ++q) expected(100 * i + r, 100 * j + q) = p(r, q);
      }
      for (const auto kernel :
           kernels(std::string(TestType::name()) == "Cuda" || ref::host_specialized<TestType>())) {
        INFO("beta " << beta << ", kernel " << nearsparse::to_string(kernel));
        auto c = ref::to_device(exec, c_in);
        nt::gemm_options o;
        o.implementation = kernel;
        nt::gemm_lld_batched(exec, 1.3, a, b, beta, c, batch, o);
        NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(c), expected, 1e-13);
        // The whole product into a dense C, 1, 2 and 4 outer products per launch.
        for (const int per_call : {1, 2, 4}) {
          INFO("per call " << per_call);
          auto whole = ref::to_device(exec, c_in);
          o.outer_products_per_call = per_call;
          nt::gemm(exec, 1.3, a, b, beta, whole, o);
          NEARSPARSE_CHECK_RELATIVE_ERROR(to_host(whole), reference_gemm(1.3, ha, hb, beta, hc0),
                                          1e-13);
        }
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("host specializations are refused with a reason where not available",
                           "[tlr]") {
  TestType exec;
  const std::string name = TestType::name();
  if (ref::host_specialized<TestType>() || (name != "OpenMP" && name != "Serial")) {
    SUCCEED("the host path is there, or this is not a host space");
    return;
  }
  Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space> a("A", 20, 20);
  nt::compression_options o;
  o.implementation = implementation::specialized;
  CHECK_THROWS_AS(nt::compress(exec, a, 8, o), nearsparse::unsupported);
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("OpenBLAS"));
  nt::gemm_options g;
  g.implementation = implementation::specialized;
  nt::tlr_matrix<typename TestType::memory_space> t(exec, 20, 20, 8, 4);
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, t, t, 0.0, a, g), Contains("OpenBLAS"));
  CHECK_THROWS_WITH(nt::gemm(exec, 1.0, t, t, 0.0, t, g), Contains("OpenBLAS"));
}
