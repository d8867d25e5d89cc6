#pragma once
// The host BLAS and LAPACK: OpenBLAS, where the build found it (CMake option
// NEARSPARSE_ENABLE_OPENBLAS, on by default). The host specializations of the families run their
// dense tile work through it (SpAMM's kept tile products, TLR's compression and outer products),
// and the programs and benchmarks use it as the dense baseline on host backends.
//
// Threads: OpenBLAS's OpenMP build (Debian's libopenblas-openmp-dev, which the setup script
// installs) runs on the OpenMP runtime of the OpenMP backend. Called inside a parallel region (a
// Kokkos::OpenMP kernel over tiles) it runs on the calling thread alone; called outside, on
// threads() threads. Before timing a whole dense product a caller sets threads() to the
// concurrency of the execution space it compares against, so both sides run on the same cores.
//
// Where the build has no OpenBLAS, available() is false, name() says so, set_threads does nothing
// and every routine throws nearsparse::unsupported; the host specializations then decline and
// the portable kernels run.
//
// The routines take plain arrays. gemm follows CBLAS (either order); the LAPACK routines are
// column-major with LAPACK's own arguments (lwork = -1 asks for the workspace size in work[0])
// and return LAPACK's info when it is >= 0; a negative info (an argument LAPACK rejects) throws
// nearsparse::invalid_argument naming the routine and the argument's position.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace nearsparse::detail::host_blas {

/// True when this build links OpenBLAS.
bool available();

/// "OpenBLAS 0.3.21 Zen (2 threads)" (version, the core type of the kernels in use, threads), or
/// "no OpenBLAS" where the build has none.
const char* name();

/// The number of threads OpenBLAS uses outside parallel regions from now on (at least 1). Does
/// nothing without OpenBLAS.
void set_threads(int threads);

/// The number of threads OpenBLAS uses outside parallel regions; 0 without OpenBLAS.
int threads();

/// True when this OpenBLAS can run one call on several threads (its OpenMP or pthreads build).
bool threaded();

/// The number of threads a BLAS call made now by this thread outside parallel regions may run
/// on: 1 with a sequential OpenBLAS; with OpenBLAS's OpenMP build, this thread's OpenMP thread
/// count (which it reads on each call; 1 inside a parallel region), or threads() where the
/// library was compiled without OpenMP; with its pthreads build, threads(). OpenBLAS caps it at
/// the thread count it was built for, and runs small products (up to about 64^3 multiply-adds)
/// on one thread whatever the count. 0 without OpenBLAS.
int call_threads();

/// While it lives, BLAS and LAPACK calls made by the thread that created it outside parallel
/// regions run on `threads` threads (at least 1); the setting from before returns when it ends.
///
/// The host specializations hold one of 1 thread around their tile kernels: their calls are one
/// per tile or block of tiles, sized for one core. Inside a Kokkos::OpenMP parallel region the
/// OpenMP build of OpenBLAS runs on the calling thread anyway, but on Kokkos::Serial (or an
/// OpenMP space of one thread, whose kernels run outside an active parallel region) every call
/// above OpenBLAS's small-product limit (the merged SpAMM gemms, TLR's products, tiles of 128)
/// would start its own threads, as many as OMP_NUM_THREADS or the cores; its pthreads build
/// would do so even inside parallel regions.
///
/// With the OpenMP build the setting is this thread's OpenMP thread count (the nthreads ICV, which
/// OpenBLAS reads on each call, so other threads are not affected); with the pthreads build it is
/// OpenBLAS's process-wide count, so with that build scopes must not be held on several threads
/// at once. Create and destroy it on one thread; nested scopes end in the reverse order of their
/// creation. Does nothing without OpenBLAS.
class thread_scope {
 public:
  explicit thread_scope(int threads);
  ~thread_scope();
  thread_scope(const thread_scope&) = delete;
  thread_scope& operator=(const thread_scope&) = delete;

 private:
  // Unused in builds without OpenBLAS or without OpenMP.
  [[maybe_unused]] int saved_openmp_ = 0;  // this thread's OpenMP thread count before, or 0
  [[maybe_unused]] int saved_blas_ = 0;    // OpenBLAS's own thread count before, or 0
};

/// take_specialized (core/detail/dispatch.hpp) for a host path that runs on this BLAS: available
/// where the build has OpenBLAS.
inline bool take_path(const char* function, nearsparse::implementation choice,
                      const char* execution_space) {
  return nearsparse::detail::take_specialized(function, choice, available(), execution_space,
                                              "this build has no OpenBLAS");
}

enum class order { row_major, column_major };
enum class op { none, transpose };

/// C = alpha op(A) op(B) + beta C (cblas_sgemm / cblas_dgemm). m, n or k of 0 are allowed (k = 0
/// scales C by beta).
void gemm(order layout, op trans_a, op trans_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc);
void gemm(order layout, op trans_a, op trans_b, int m, int n, int k, double alpha, const double* a,
          int lda, const double* b, int ldb, double beta, double* c, int ldc);

/// QR factorization A = Q R (?geqrf): R in the upper triangle, Q as Householder reflectors below
/// it and in tau (min(m, n) entries).
int geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork);
int geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork);

/// QR factorization with column pivoting A P = Q R (?geqp3); jpvt is 1-based as in LAPACK (set
/// its entries to 0 to let every column be pivoted).
int geqp3(int m, int n, float* a, int lda, int* jpvt, float* tau, float* work, int lwork);
int geqp3(int m, int n, double* a, int lda, int* jpvt, double* tau, double* work, int lwork);

/// The first n columns of Q from ?geqrf's output (?orgqr), k reflectors.
int orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork);
int orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork);

/// Singular value decomposition (?gesvd), jobu and jobvt as in LAPACK ('A', 'S', 'O', 'N').
int gesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u, int ldu,
          float* vt, int ldvt, float* work, int lwork);
int gesvd(char jobu, char jobvt, int m, int n, double* a, int lda, double* s, double* u, int ldu,
          double* vt, int ldvt, double* work, int lwork);

/// Singular value decomposition by divide and conquer (?gesdd), jobz as in LAPACK; iwork holds
/// 8 min(m, n) integers.
int gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
          int ldvt, float* work, int lwork, int* iwork);
int gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
          int ldvt, double* work, int lwork, int* iwork);

/// Eigenvalues (ascending, in w) and, with jobz 'V', the orthonormal eigenvectors (in a, by
/// columns) of a symmetric matrix by divide and conquer (?syevd), uplo 'U' or 'L'; lwork or
/// liwork = -1 asks for the workspace sizes in work[0] and iwork[0].
int syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork,
          int* iwork, int liwork);
int syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork,
          int* iwork, int liwork);

namespace detail {
template <class View>
int leading_dimension(const View& v, bool column_major) {
  const std::size_t rows = column_major ? v.extent(0) : v.extent(1);
  const std::size_t stride = column_major ? v.stride(1) : v.stride(0);
  return static_cast<int>(stride > rows ? stride : (rows > 0 ? rows : 1));
}
}  // namespace detail

/// C = alpha A B + beta C with OpenBLAS (sgemm for float, dgemm for double), synchronous. A, B and
/// C are rank-2 host Views of one value type (float or double) and one layout (LayoutRight or
/// LayoutLeft); subviews with a leading stride work. Throws nearsparse::invalid_argument naming
/// nearsparse::detail::host_blas::gemm when the extents do not match, and
/// nearsparse::unsupported where the build has no OpenBLAS.
template <class AView, class BView, class CView>
void gemm(typename CView::non_const_value_type alpha, const AView& a, const BView& b,
          typename CView::non_const_value_type beta, const CView& c) {
  using T = typename CView::non_const_value_type;
  using layout = typename CView::array_layout;
  static_assert(AView::rank == 2 && BView::rank == 2 && CView::rank == 2,
                "host_blas::gemm: A, B and C must be rank-2 Views");
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "host_blas::gemm: the value type must be float or double");
  static_assert(std::is_same<typename AView::non_const_value_type, T>::value &&
                    std::is_same<typename BView::non_const_value_type, T>::value,
                "host_blas::gemm: A, B and C must have one value type");
  static_assert(std::is_same<layout, Kokkos::LayoutRight>::value ||
                    std::is_same<layout, Kokkos::LayoutLeft>::value,
                "host_blas::gemm: the layout must be LayoutRight or LayoutLeft");
  static_assert(std::is_same<typename AView::array_layout, layout>::value &&
                    std::is_same<typename BView::array_layout, layout>::value,
                "host_blas::gemm: A, B and C must have one layout");
  static_assert(
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename CView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename AView::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename BView::memory_space>::accessible,
      "host_blas::gemm: A, B and C must be host Views");
  constexpr const char* function = "nearsparse::detail::host_blas::gemm";
  require(a.extent(1) == b.extent(0), function, "B",
          "is " + nearsparse::detail::extents_string(b) + "; A is " +
              nearsparse::detail::extents_string(a) + " (inner extents differ)");
  require(c.extent(0) == a.extent(0) && c.extent(1) == b.extent(1), function, "C",
          "is " + nearsparse::detail::extents_string(c) + "; expected " +
              std::to_string(a.extent(0)) + " x " + std::to_string(b.extent(1)));
  constexpr bool column_major = std::is_same<layout, Kokkos::LayoutLeft>::value;
  gemm(column_major ? order::column_major : order::row_major, op::none, op::none,
       static_cast<int>(c.extent(0)), static_cast<int>(c.extent(1)), static_cast<int>(a.extent(1)),
       alpha, a.data(), detail::leading_dimension(a, column_major), b.data(),
       detail::leading_dimension(b, column_major), beta, c.data(),
       detail::leading_dimension(c, column_major));
}

}  // namespace nearsparse::detail::host_blas
