// The batched SVD against independent checks on the host: U diag(S) V^T rebuilds each matrix,
// U and V have orthonormal columns, S is decreasing and equals LAPACK dgesvd's singular values;
// for square, tall, wide, rank-deficient and zero matrices, on every path (the portable kernel,
// and cuSOLVER on Cuda, which must agree with it). Bad input gets errors naming it.

#include "support/seeds.hpp"
#include "support/space_test_case.hpp"
#include "tlr_reference.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/tlr/batched_svd.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace nt = nearsparse::tlr;
namespace ref = nearsparse::test::tlr;
using Catch::Matchers::Contains;
using nearsparse::test::fresh_seed;

namespace {

template <class Exec>
using batch3 = Kokkos::View<double***, Kokkos::LayoutLeft, typename Exec::memory_space>;
template <class Exec>
using batch2 = Kokkos::View<double**, Kokkos::LayoutLeft, typename Exec::memory_space>;

/// Matrix b of a test batch: random; the third is zero, the second of rank 2 (when there are
/// that many), so that zero singular values and basis completion are exercised.
ref::matrix test_matrix(std::size_t m, std::size_t n, std::size_t b, std::uint64_t seed) {
  ref::matrix a(m, n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t e = (b * 64 + j) * 64 + i;
      a(i, j) = nearsparse::detail::uniform01(seed, e, 0) - 0.5;
    }
  if (b == 2) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) a(i, j) = 0;
  } else if (b == 1 && m > 2 && n > 2) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a(i, j) =
            (double(i) + 1) * (0.5 - double(j % 3)) + std::sin(double(i)) * std::cos(double(j));
  }
  return a;
}

/// Whether Exec has the cuSOLVER path: Kokkos::Cuda with device memory.
template <class Exec>
bool has_cusolver() {
  return std::string(Exec::name()) == "Cuda" && std::string(Exec::memory_space::name()) == "Cuda";
}

double max_orthogonality_error(const std::vector<double>& q, std::size_t rows, std::size_t cols) {
  double worst = 0;
  for (std::size_t p = 0; p < cols; ++p)
    for (std::size_t r = 0; r < cols; ++r) {
      double d = 0;
      for (std::size_t i = 0; i < rows; ++i) d += q[i + p * rows] * q[i + r * rows];
      worst = std::max(worst, std::abs(d - (p == r ? 1.0 : 0.0)));
    }
  return worst;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("batched SVD rebuilds every matrix with orthonormal factors",
                           "[tlr][svd]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = fresh_seed();
  struct shape {
    std::size_t m, n, batch;
  };
  const shape sh = GENERATE(shape{1, 1, 3}, shape{7, 5, 4}, shape{5, 7, 4}, shape{32, 32, 3},
                            shape{16, 9, 5}, shape{33, 20, 3}, shape{20, 33, 3}, shape{1, 6, 2});
  const std::size_t m = sh.m, n = sh.n, batch = sh.batch, k = std::min(m, n);
  using nearsparse::implementation;
  std::vector<implementation> kernels = {implementation::portable, implementation::automatic};
  const bool cuda = has_cusolver<exec_space>();
  const bool lapack = ref::host_specialized<exec_space>();
  if ((cuda && m <= 32 && n <= 32) || lapack) kernels.push_back(implementation::specialized);
  std::vector<std::vector<double>> reference_s;
  for (const auto kernel : kernels) {
    INFO(exec_space::name() << ", " << m << " x " << n << " x " << batch << ", kernel "
                            << nearsparse::to_string(kernel) << ", seed " << seed);
    batch3<exec_space> a("A", m, n, batch), u("U", m, k, batch), v("V", n, k, batch);
    batch2<exec_space> s("S", k, batch);
    auto ha = Kokkos::create_mirror_view(a);
    for (std::size_t b = 0; b < batch; ++b) {
      const auto mat = test_matrix(m, n, b, seed);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) ha(i, j, b) = mat(i, j);
    }
    Kokkos::deep_copy(exec, a, ha);
    nt::batched_svd_options o;
    o.implementation = kernel;
    const auto report = nt::batched_svd(exec, a, s, u, v, o);
    CHECK(report.not_converged == 0);
    const bool expect_vendor =
        cuda && (kernel == implementation::specialized ||
                 (kernel == implementation::automatic && nt::detail::cusolver_svd_pays(m, n)));
    const bool expect_lapack = lapack && kernel != implementation::portable;
    CHECK(report.kernel == (expect_vendor   ? "cusolver gesvdjBatched"
                            : expect_lapack ? "lapack gesvd"
                                            : "portable"));
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
    auto hu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    for (std::size_t b = 0; b < batch; ++b) {
      INFO("matrix " << b);
      const auto mat = test_matrix(m, n, b, seed);
      double norm2 = 0, err2 = 0;
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          double r = 0;
          for (std::size_t l = 0; l < k; ++l) r += hu(i, l, b) * hs(l, b) * hv(j, l, b);
          err2 += (mat(i, j) - r) * (mat(i, j) - r);
          norm2 += mat(i, j) * mat(i, j);
        }
      CHECK(std::sqrt(err2) <= 1e-13 * std::max(std::sqrt(norm2), 1.0));
      std::vector<double> uq(m * k), vq(n * k), sv(k);
      for (std::size_t l = 0; l < k; ++l) {
        sv[l] = hs(l, b);
        for (std::size_t i = 0; i < m; ++i) uq[i + l * m] = hu(i, l, b);
        for (std::size_t j = 0; j < n; ++j) vq[j + l * n] = hv(j, l, b);
      }
      CHECK(max_orthogonality_error(uq, m, k) <= 1e-13);
      CHECK(max_orthogonality_error(vq, n, k) <= 1e-13);
      for (std::size_t l = 0; l < k; ++l) {
        CHECK(sv[l] >= 0);
        if (l > 0) CHECK(sv[l] <= sv[l - 1]);
      }
#ifdef NEARSPARSE_TEST_HAVE_LAPACK
      const auto exact = ref::singular_values(mat);
      for (std::size_t l = 0; l < k; ++l)
        CHECK(std::abs(sv[l] - exact[l]) <= 1e-13 * std::max(exact[0], 1e-300) + 1e-300);
#endif
      if (reference_s.size() < batch) {
        reference_s.push_back(sv);
      } else {  // every path gives the same singular values
        for (std::size_t l = 0; l < k; ++l)
          CHECK(std::abs(sv[l] - reference_s[b][l]) <=
                1e-13 * std::max(reference_s[b][0], 1e-300) + 1e-300);
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("batched SVD handles empty batches and rejects bad input",
                           "[tlr][svd]") {
  using exec_space = TestType;
  const exec_space exec;
  {
    batch3<exec_space> a("A", 4, 3, 0), u("U", 4, 3, 0), v("V", 3, 3, 0);
    batch2<exec_space> s("S", 3, 0);
    CHECK_NOTHROW(nt::batched_svd(exec, a, s, u, v));
    batch3<exec_space> a0("A", 0, 3, 2), u0("U", 0, 0, 2), v0("V", 3, 0, 2);
    batch2<exec_space> s0("S", 0, 2);
    CHECK_NOTHROW(nt::batched_svd(exec, a0, s0, u0, v0));
  }
  batch3<exec_space> a("A", 6, 4, 2), u("U", 6, 4, 2), v("V", 4, 4, 2);
  batch2<exec_space> s("S", 4, 2);
  batch2<exec_space> bad_s("S", 6, 2);
  CHECK_THROWS_WITH(nt::batched_svd(exec, a, bad_s, u, v),
                    Contains("S") && Contains("6 x 2") && Contains("4 x 2"));
  batch3<exec_space> bad_u("U", 6, 6, 2);
  CHECK_THROWS_WITH(nt::batched_svd(exec, a, s, bad_u, v), Contains("U") && Contains("6 x 4 x 2"));
  batch3<exec_space> bad_v("V", 4, 4, 3);
  CHECK_THROWS_AS(nt::batched_svd(exec, a, s, u, bad_v), nearsparse::invalid_argument);
  nt::batched_svd_options o;
  o.max_sweeps = 0;
  CHECK_THROWS_WITH(nt::batched_svd(exec, a, s, u, v, o), Contains("max_sweeps"));
  auto ha = Kokkos::create_mirror_view(a);
  Kokkos::deep_copy(ha, 1.0);
  ha(3, 2, 1) = std::numeric_limits<double>::quiet_NaN();
  Kokkos::deep_copy(exec, a, ha);
  CHECK_THROWS_WITH(nt::batched_svd(exec, a, s, u, v), Contains("A") && Contains("non-finite"));
  Kokkos::deep_copy(exec, a, 1.0);
  o = nt::batched_svd_options{};
  o.implementation = nearsparse::implementation::specialized;
  if (has_cusolver<exec_space>()) {
    CHECK_NOTHROW(nt::batched_svd(exec, a, s, u, v, o));
    batch3<exec_space> big("A", 33, 4, 1), bu("U", 33, 4, 1), bv("V", 4, 4, 1);
    batch2<exec_space> bs("S", 4, 1);
    CHECK_THROWS_AS(nt::batched_svd(exec, big, bs, bu, bv, o), nearsparse::unsupported);
    CHECK_THROWS_WITH(nt::batched_svd(exec, big, bs, bu, bv, o),
                      Contains("nearsparse::tlr::batched_svd") && Contains("33 x 4"));
  } else if (ref::host_specialized<exec_space>()) {
    CHECK(nt::batched_svd(exec, a, s, u, v, o).kernel == "lapack gesvd");
  } else {
    CHECK_THROWS_AS(nt::batched_svd(exec, a, s, u, v, o), nearsparse::unsupported);
    CHECK_THROWS_WITH(nt::batched_svd(exec, a, s, u, v, o),
                      Contains("nearsparse::tlr::batched_svd") && Contains(exec_space::name()));
  }
}
