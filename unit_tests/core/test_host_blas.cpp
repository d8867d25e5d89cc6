// The host BLAS and LAPACK wrappers (core/detail/host_blas.hpp) against plain double-precision
// references: gemm in both orders and with transposes, at sizes that are not multiples of any
// vector width, empty products, extents refused with the function's name; QR and SVD checked by
// reconstruction and orthogonality; thread_scope sets and restores the threads of this thread's
// calls. Without OpenBLAS every routine must refuse.
#include <nearsparse/core/detail/host_blas.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace hb = nearsparse::detail::host_blas;
using Catch::Matchers::Contains;

namespace {

template <class T>
std::vector<T> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// Element (i, j) of a matrix stored in `order` with leading dimension ld.
template <class T>
T at(const std::vector<T>& a, hb::order o, int ld, int i, int j) {
  return o == hb::order::row_major ? a[std::size_t(i) * ld + j] : a[std::size_t(j) * ld + i];
}

template <class T>
void check_gemm(hb::order o, hb::op ta, hb::op tb, int m, int n, int k, double tol) {
  // op(A) is m x k, op(B) is k x n; stored shapes follow the transposes.
  const int a_rows = ta == hb::op::none ? m : k, a_cols = ta == hb::op::none ? k : m;
  const int b_rows = tb == hb::op::none ? k : n, b_cols = tb == hb::op::none ? n : k;
  const bool row = o == hb::order::row_major;
  const int lda = std::max(1, (row ? a_cols : a_rows) + 3);  // padded leading dimensions
  const int ldb = std::max(1, (row ? b_cols : b_rows) + 1);
  const int ldc = std::max(1, (row ? n : m) + 2);
  auto a = random_vector<T>(std::size_t(lda) * std::max(row ? a_rows : a_cols, 1), 11u + m);
  auto b = random_vector<T>(std::size_t(ldb) * std::max(row ? b_rows : b_cols, 1), 23u + n);
  auto c = random_vector<T>(std::size_t(ldc) * std::max(row ? m : n, 1), 37u + k);
  const auto c0 = c;
  const T alpha = T(0.75), beta = T(-0.5);
  hb::gemm(o, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  double err = 0, ref_norm = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int q = 0; q < k; ++q) {
        const double aiq = ta == hb::op::none ? at(a, o, lda, i, q) : at(a, o, lda, q, i);
        const double bqj = tb == hb::op::none ? at(b, o, ldb, q, j) : at(b, o, ldb, j, q);
        sum += aiq * bqj;
      }
      const double ref = double(alpha) * sum + double(beta) * double(at(c0, o, ldc, i, j));
      const double d = double(at(c, o, ldc, i, j)) - ref;
      err += d * d;
      ref_norm += ref * ref;
    }
  CHECK(std::sqrt(err) <= tol * std::max(1.0, std::sqrt(ref_norm)));
}

}  // namespace

TEST_CASE("host_blas gemm matches a double reference in both orders and with transposes",
          "[core][host_blas]") {
  if (!hb::available()) {
    float x = 0;
    CHECK_THROWS_AS(hb::gemm(hb::order::row_major, hb::op::none, hb::op::none, 1, 1, 1, 1.0f, &x, 1,
                             &x, 1, 0.0f, &x, 1),
                    nearsparse::unsupported);
    CHECK(std::string(hb::name()) == "no OpenBLAS");
    return;
  }
  CHECK(std::string(hb::name()).find("OpenBLAS") == 0);
  for (auto o : {hb::order::row_major, hb::order::column_major})
    for (auto ta : {hb::op::none, hb::op::transpose})
      for (auto tb : {hb::op::none, hb::op::transpose}) {
        check_gemm<double>(o, ta, tb, 37, 29, 53, 1e-13);
        check_gemm<float>(o, ta, tb, 37, 29, 53, 2e-6);
        check_gemm<double>(o, ta, tb, 1, 17, 3, 1e-13);
      }
  // Empty products: m or n of 0 do nothing, k of 0 scales C by beta.
  check_gemm<double>(hb::order::row_major, hb::op::none, hb::op::none, 0, 5, 4, 1e-13);
  check_gemm<double>(hb::order::column_major, hb::op::none, hb::op::none, 6, 0, 4, 1e-13);
  check_gemm<double>(hb::order::column_major, hb::op::none, hb::op::transpose, 6, 5, 0, 1e-13);
}

TEST_CASE("host_blas gemm on Views checks extents and agrees with a reference",
          "[core][host_blas]") {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> a("A", 13, 7), b("B", 7, 9),
      c("C", 13, 9), bad_b("B", 6, 9), bad_c("C", 13, 8);
  CHECK_THROWS_WITH(hb::gemm(1.0, a, bad_b, 0.0, c),
                    Contains("nearsparse::detail::host_blas::gemm") && Contains("'B'") &&
                        Contains("6 x 9") && Contains("13 x 7"));
  CHECK_THROWS_WITH(hb::gemm(1.0, a, b, 0.0, bad_c),
                    Contains("nearsparse::detail::host_blas::gemm") && Contains("'C'") &&
                        Contains("13 x 8") && Contains("expected 13 x 9"));
  if (!hb::available()) {
    CHECK_THROWS_AS(hb::gemm(1.0, a, b, 0.0, c), nearsparse::unsupported);
    return;
  }
  auto va = random_vector<double>(13 * 7, 1), vb = random_vector<double>(7 * 9, 2);
  for (int i = 0; i < 13; ++i)
    for (int q = 0; q < 7; ++q) a(i, q) = va[i * 7 + q];
  for (int q = 0; q < 7; ++q)
    for (int j = 0; j < 9; ++j) b(q, j) = vb[q * 9 + j];
  // A strided subview of a LayoutLeft C: the leading dimension is the parent's.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> al("A", 13, 7), bl("B", 7, 9),
      parent("C", 20, 9);
  Kokkos::deep_copy(al, a);
  Kokkos::deep_copy(bl, b);
  auto cl = Kokkos::subview(parent, Kokkos::make_pair(2, 15), Kokkos::ALL());
  hb::gemm(2.0, a, b, 0.0, c);
  hb::gemm(2.0, al, bl, 0.0, cl);
  double worst = 0;
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 9; ++j) {
      double ref = 0;
      for (int q = 0; q < 7; ++q) ref += 2.0 * a(i, q) * b(q, j);
      worst = std::max({worst, std::abs(c(i, j) - ref), std::abs(cl(i, j) - ref)});
    }
  CHECK(worst <= 1e-13);
  CHECK(parent(0, 0) == 0.0);  // rows outside the subview untouched
  CHECK(parent(19, 8) == 0.0);
}

TEST_CASE("host_blas QR and SVD reconstruct their input", "[core][host_blas]") {
  if (!hb::available()) {
    double x = 0;
    CHECK_THROWS_AS(hb::geqrf(1, 1, &x, 1, &x, &x, 1), nearsparse::unsupported);
    return;
  }
  const int m = 23, n = 11;
  const auto a0 = random_vector<double>(std::size_t(m) * n, 5);  // column-major, lda = m
  SECTION("geqrf and orgqr") {
    auto a = a0;
    std::vector<double> tau(n);
    double query = 0;
    CHECK(hb::geqrf(m, n, a.data(), m, tau.data(), &query, -1) == 0);
    std::vector<double> work(std::max(1, int(query)));
    CHECK(hb::geqrf(m, n, a.data(), m, tau.data(), work.data(), int(work.size())) == 0);
    std::vector<double> r(std::size_t(n) * n, 0.0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) r[std::size_t(j) * n + i] = a[std::size_t(j) * m + i];
    CHECK(hb::orgqr(m, n, n, a.data(), m, tau.data(), work.data(), int(work.size())) == 0);
    double err = 0, orth = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double qr = 0;
        for (int q = 0; q < n; ++q) qr += a[std::size_t(q) * m + i] * r[std::size_t(j) * n + q];
        err = std::max(err, std::abs(qr - a0[std::size_t(j) * m + i]));
      }
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) {
        double dot = 0;
        for (int i = 0; i < m; ++i) dot += a[std::size_t(p) * m + i] * a[std::size_t(q) * m + i];
        orth = std::max(orth, std::abs(dot - (p == q ? 1.0 : 0.0)));
      }
    CHECK(err <= 1e-13);
    CHECK(orth <= 1e-13);
  }
  SECTION("gesvd and gesdd") {
    for (int which = 0; which < 2; ++which) {
      auto a = a0;
      std::vector<double> s(n), u(std::size_t(m) * n), vt(std::size_t(n) * n);
      std::vector<int> iwork(8 * n);
      double query = 0;
      if (which == 0)
        hb::gesvd('S', 'S', m, n, a.data(), m, s.data(), u.data(), m, vt.data(), n, &query, -1);
      else
        hb::gesdd('S', m, n, a.data(), m, s.data(), u.data(), m, vt.data(), n, &query, -1,
                  iwork.data());
      std::vector<double> work(std::max(1, int(query)));
      const int info = which == 0
                           ? hb::gesvd('S', 'S', m, n, a.data(), m, s.data(), u.data(), m,
                                       vt.data(), n, work.data(), int(work.size()))
                           : hb::gesdd('S', m, n, a.data(), m, s.data(), u.data(), m, vt.data(), n,
                                       work.data(), int(work.size()), iwork.data());
      CHECK(info == 0);
      CHECK(std::is_sorted(s.rbegin(), s.rend()));
      double err = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double usv = 0;
          for (int q = 0; q < n; ++q)
            usv += u[std::size_t(q) * m + i] * s[q] * vt[std::size_t(j) * n + q];
          err = std::max(err, std::abs(usv - a0[std::size_t(j) * m + i]));
        }
      CHECK(err <= 1e-13);
    }
  }
  SECTION("an argument LAPACK rejects names the routine") {
    double x = 0;
    CHECK_THROWS_WITH(
        hb::geqrf(4, 4, &x, 1, &x, &x, 1),
        Contains("nearsparse::detail::host_blas::geqrf") && Contains("rejected argument 4"));
  }
}

TEST_CASE("host_blas thread_scope sets the threads of this thread's calls and restores them",
          "[core][host_blas]") {
  if (!hb::available()) {
    CHECK(hb::call_threads() == 0);
    return;
  }
  const int before = hb::call_threads();
  REQUIRE(before >= 1);
  {
    const hb::thread_scope one(1);
    CHECK(hb::call_threads() == 1);
    {
      const hb::thread_scope three(3);
      CHECK(hb::call_threads() == (hb::threaded() ? 3 : 1));
    }
    CHECK(hb::call_threads() == 1);
  }
  CHECK(hb::call_threads() == before);
  {
    const hb::thread_scope zero(0);  // at least one thread
    CHECK(hb::call_threads() == 1);
  }
  CHECK(hb::call_threads() == before);
}
