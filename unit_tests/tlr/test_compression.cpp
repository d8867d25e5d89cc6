// TLR compression against independent references: the error of the compressed matrix (computed on
// the host from the dense original) follows the requested accuracy for both methods; fixed ranks
// give exactly the SVD truncation error LAPACK predicts; rank 0, full rank, dense diagonals, edge
// tiles and empty matrices; bad options and inputs get errors naming them.

#include "support/seeds.hpp"
#include "support/space_test_case.hpp"
#include "tlr_reference.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/tlr.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace nt = nearsparse::tlr;
namespace ref = nearsparse::test::tlr;
using Catch::Matchers::Contains;
using nearsparse::test::fresh_seed;
using nearsparse::test::relative_error;
using nearsparse::test::to_host;

NEARSPARSE_SPACE_TEST_CASE("compression error follows the accuracy, for both methods", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  const ref::matrix host = ref::decaying(70, 53, 0.3, seed);
  const auto a = ref::to_device(exec, host);
  for (const auto method : {nt::compression_method::svd, nt::compression_method::randomized}) {
    for (const double accuracy : {1e-3, 1e-6, 1e-10}) {
      nt::compression_options o;
      o.method = method;
      o.max_rank = 16;
      o.trunc.accuracy = accuracy;
      o.seed = seed;
      nt::compression_report report;
      const auto c = nt::compress(exec, a, 16, o, report);
      const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
      INFO(nt::to_string(method) << ", accuracy " << accuracy << ", error " << err << ", reported "
                                 << report.relative_error << ", ranks " << report.min_rank << ".."
                                 << report.max_rank);
      CHECK(report.tiles_at_cap == 0);
      CHECK(err <= accuracy * 1.001 + 1e-14);
      // The report's error is the true error (computed, not bounded), up to rounding.
      CHECK(std::abs(report.relative_error - err) <= 1e-3 * accuracy + 1e-13);
      CHECK(report.max_rank <= 16);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the covariance and Hilbert matrices compress to their accuracy",
                           "[tlr]") {
  TestType exec;
  for (const int kind : {0, 1}) {
    const auto a = kind == 0 ? nt::hilbert(exec, 150, 150)
                             : nt::exponential_covariance(exec, 150, 2, 0.2, fresh_seed());
    const auto host = to_host(a);
    nt::compression_options o;
    o.max_rank = 24;
    o.dense_diagonal = kind == 1;
    const double accuracy = kind == 0 ? 1e-7 : 1e-4;
    o.trunc.accuracy = accuracy;
    nt::compression_report report;
    const auto c = nt::compress(exec, a, 32, o, report);
    const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
    INFO((kind == 0 ? "hilbert" : "covariance")
         << ": error " << err << ", mean rank " << report.mean_rank);
    CHECK(report.tiles_at_cap == 0);
    CHECK(err <= accuracy * 1.001);
    CHECK(report.dense_tiles == (kind == 1 ? 5u : 0u));
    CHECK(report.mean_rank < 24);
    CHECK(report.compressed_bytes < report.dense_bytes);
  }
}

NEARSPARSE_SPACE_TEST_CASE("fixed ranks give the SVD truncation error", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  // One tile (the tile is larger than the matrix): the error of rank k is the tail of the
  // singular values.
  const ref::matrix host = ref::decaying(29, 23, 0.6, seed);
  const auto a = ref::to_device(exec, host);
  for (const int k : {0, 1, 5, 12, 23}) {
    nt::compression_options o;
    o.method = nt::compression_method::svd;
    o.max_rank = 32;
    o.trunc.fixed_rank = k;
    nt::compression_report report;
    const auto c = nt::compress(exec, a, 32, o, report);
    const double err = relative_error(to_host(nt::to_dense(exec, c)), host);
    CHECK(report.max_rank == k);
#ifdef NEARSPARSE_TEST_HAVE_LAPACK
    const std::vector<double> s = ref::singular_values(host);
    double tail = 0, all = 0;
    for (std::size_t l = 0; l < s.size(); ++l) {
      all += s[l] * s[l];
      if (l >= std::size_t(k)) tail += s[l] * s[l];
    }
    INFO("rank " << k << ": error " << err << ", SVD tail " << std::sqrt(tail / all));
    CHECK(std::abs(err - std::sqrt(tail / all)) <= 1e-9 * std::sqrt(tail / all) + 1e-13);
#else
    CHECK(err <= 1.0);
#endif
  }
  // Full rank reproduces the matrix.
  nt::compression_options full;
  full.max_rank = 32;
  full.trunc.accuracy = 0;
  for (const auto method : {nt::compression_method::svd, nt::compression_method::randomized}) {
    full.method = method;
    const auto c = nt::compress(exec, a, 32, full);
    CHECK(relative_error(to_host(nt::to_dense(exec, c)), host) <= 1e-13);
  }
}

NEARSPARSE_SPACE_TEST_CASE("rank 0, dense diagonals, edge tiles and empty matrices", "[tlr]") {
  TestType exec;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  const ref::matrix host = ref::decaying(41, 37, 0.3, seed);
  const auto a = ref::to_device(exec, host);
  // max_rank 0 with dense diagonal tiles: only the diagonal survives.
  nt::compression_options zero;
  zero.max_rank = 0;
  zero.oversampling = 0;
  zero.dense_diagonal = true;
  nt::compression_report report;
  const auto c = nt::compress(exec, a, 10, zero, report);
  CHECK(c.dense_count() == 4);
  const auto back = to_host(nt::to_dense(exec, c));
  for (std::size_t i = 0; i < 41; ++i)
    for (std::size_t j = 0; j < 37; ++j) {
      const bool diagonal = i / 10 == j / 10;
      REQUIRE(back(i, j) == (diagonal ? host(i, j) : 0.0));
    }
  CHECK(report.max_rank == 0);
  CHECK(report.tiles_at_cap > 0);  // the accuracy could not be met at rank 0
  // Mixed ranks: some tiles need more than others.
  nt::compression_options mixed;
  mixed.max_rank = 10;
  mixed.trunc.accuracy = 1e-5;
  const auto m = nt::compress(exec, a, 10, mixed, report);
  const std::vector<int> ranks = m.host_ranks(exec);
  CHECK(*std::min_element(ranks.begin(), ranks.end()) <
        *std::max_element(ranks.begin(), ranks.end()));
  CHECK(relative_error(to_host(nt::to_dense(exec, m)), host) <= 1e-5 * 1.001);
  // Empty matrices.
  for (const auto& shape : {std::pair<int, int>{0, 0}, {0, 5}, {6, 0}}) {
    Kokkos::View<double**, Kokkos::LayoutLeft, typename TestType::memory_space> e(
        "empty", shape.first, shape.second);
    nt::compression_options small;
    small.max_rank = 2;
    const auto ce = nt::compress(exec, e, 4, small, report);
    CHECK(ce.tile_count() == 0);
    CHECK(nt::to_dense(exec, ce).extent(0) == std::size_t(shape.first));
  }
}

NEARSPARSE_SPACE_TEST_CASE("bad compression arguments are rejected with their names", "[tlr]") {
  TestType exec;
  auto a = nt::hilbert(exec, 20, 20);
  nt::compression_options o;
  o.max_rank = 9;
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("max_rank") && Contains("tile size 8"));
  o.max_rank = 4;
  o.trunc.fixed_rank = 5;
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("fixed_rank"));
  o.trunc.fixed_rank = -1;
  o.trunc.accuracy = -1e-3;
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("accuracy"));
  o.trunc.accuracy = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(nt::compress(exec, a, 8, o), nearsparse::invalid_argument);
  o.trunc.accuracy = 1e-6;
  CHECK_THROWS_WITH(nt::compress(exec, a, 0, o), Contains("tile"));
  o.oversampling = -1;
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("oversampling"));
  o.oversampling = std::numeric_limits<int>::max();
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("oversampling"));
  o.oversampling = 4;
  // specialized: the host path (OpenMP and Serial with OpenBLAS) and, for the randomized method,
  // the batched path on Cuda; refused everywhere else.
  nt::compression_options specialized = o;
  specialized.implementation = nearsparse::implementation::specialized;
  if (ref::compression_specialized<TestType>(specialized.method)) {
    CHECK_NOTHROW(nt::compress(exec, a, 8, specialized));
  } else {
    CHECK_THROWS_AS(nt::compress(exec, a, 8, specialized), nearsparse::unsupported);
    CHECK_THROWS_WITH(nt::compress(exec, a, 8, specialized),
                      Contains("nearsparse::tlr::compress") && Contains("specialized"));
  }
  if (ref::cuda_device_memory<TestType>()) {
    nt::compression_options exact = specialized;
    exact.method = nt::compression_method::svd;
    CHECK_THROWS_WITH(nt::compress(exec, a, 8, exact),
                      Contains("nearsparse::tlr::compress") && Contains("exact method"));
  }
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  h(3, 17) = std::numeric_limits<double>::infinity();
  Kokkos::deep_copy(a, h);
  CHECK_THROWS_WITH(nt::compress(exec, a, 8, o), Contains("'A'") && Contains("non-finite"));
  CHECK_THROWS_WITH(nt::tlr_matrix<typename TestType::memory_space>(exec, 10, 10, 4, 5),
                    Contains("max_rank"));
  CHECK_THROWS_WITH(nt::exponential_covariance(exec, 10, 4), Contains("dimension"));
  CHECK_THROWS_WITH(nt::exponential_covariance(exec, 10, 2, 0.0), Contains("length"));
}

TEST_CASE("compression methods have names", "[tlr]") {
  CHECK(std::string(nt::to_string(nt::compression_method::randomized)) == "randomized");
  CHECK(std::string(nt::to_string(nt::compression_method::svd)) == "svd");
  CHECK(nt::parse_compression_method("SVD") == nt::compression_method::svd);
  CHECK(nt::parse_compression_method("randomized") == nt::compression_method::randomized);
  CHECK_THROWS_AS(nt::parse_compression_method("qr"), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(
      nt::parse_compression_method("qr", "nearsparse tlr", "--method"),
      Contains("nearsparse tlr") && Contains("--method") && Contains("randomized or svd"));
}
