// OpenBLAS behind include/nearsparse/core/detail/host_blas.hpp. NEARSPARSE_HAVE_OPENBLAS is set by
// CMake for this file only, where the build found OpenBLAS and its cblas.h. The LAPACK routines
// are OpenBLAS's own Fortran symbols (it ships LAPACK), declared here, so no LAPACKE is needed.
#include <nearsparse/core/detail/host_blas.hpp>

#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if NEARSPARSE_HAVE_OPENBLAS
#include <cblas.h>

extern "C" {
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sgeqp3_(const int* m, const int* n, float* a, const int* lda, int* jpvt, float* tau,
             float* work, const int* lwork, int* info);
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a,
             const int* lda, float* s, float* u, const int* ldu, float* vt, const int* ldvt,
             float* work, const int* lwork, int* info, std::size_t, std::size_t);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
             const int* lda, double* s, double* u, const int* ldu, double* vt, const int* ldvt,
             double* work, const int* lwork, int* info, std::size_t, std::size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info, std::size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
             std::size_t);
}
#endif

namespace nearsparse::detail::host_blas {

#if NEARSPARSE_HAVE_OPENBLAS

namespace {
// LAPACK's info: >= 0 is returned to the caller (a singular value that did not converge, ...);
// < 0 names the argument LAPACK rejected.
int checked(const char* routine, int info) {
  if (info < 0)
    throw nearsparse::invalid_argument(std::string("nearsparse::detail::host_blas::") + routine +
                                       ": LAPACK rejected argument " + std::to_string(-info));
  return info;
}

}  // namespace

bool available() {
  return true;
}

const char* name() {
  // openblas_get_config() reads "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ...": keep the first two
  // words, the library and its version, then the core type of the kernels in use.
  static thread_local std::string text;
  std::string config = openblas_get_config();
  std::size_t end = config.find(' ');
  if (end != std::string::npos) end = config.find(' ', end + 1);
  text = config.substr(0, end);
  // The kernels OpenBLAS chose for this processor: a generic one (Prescott) on a processor it does
  // not know runs several times below the machine (OPENBLAS_CORETYPE selects them by hand).
  text += std::string(" ") + openblas_get_corename();
  const int t = openblas_get_num_threads();
  text += " (" + std::to_string(t) + (t == 1 ? " thread)" : " threads)");
  return text.c_str();
}

void set_threads(int threads) {
  openblas_set_num_threads(threads > 0 ? threads : 1);
}

int threads() {
  return openblas_get_num_threads();
}

#if defined(_OPENMP)
namespace {
// openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP.
constexpr int openblas_openmp = 2;
}  // namespace
#endif

bool threaded() {
  return openblas_get_parallel() != 0;
}

int call_threads() {
  const int parallel = openblas_get_parallel();
  if (parallel == 0) return 1;
#if defined(_OPENMP)
  // The OpenMP build runs on one thread inside a parallel region and on omp_get_max_threads()
  // threads outside (it reads the count on each call).
  if (parallel == openblas_openmp) return omp_in_parallel() ? 1 : omp_get_max_threads();
#endif
  return openblas_get_num_threads();
}

thread_scope::thread_scope(int threads) {
  threads = threads > 0 ? threads : 1;
  const int parallel = openblas_get_parallel();
  if (parallel == 0) return;
  // OpenBLAS's own count is saved in every case: releases of the OpenMP build before 0.3.21 set
  // it to the calling thread's OpenMP count inside a call (1 in this scope), and it would stay 1
  // for every thread after the scope.
  saved_blas_ = openblas_get_num_threads();
#if defined(_OPENMP)
  if (parallel == openblas_openmp) {
    saved_openmp_ = omp_get_max_threads();
    omp_set_num_threads(threads);
    return;
  }
#endif
  // The pthreads build, or the OpenMP build seen from code compiled without OpenMP: OpenBLAS's
  // own count (openblas_set_num_threads also sets this thread's OpenMP count in the OpenMP build).
  openblas_set_num_threads(threads);
}

thread_scope::~thread_scope() {
  // OpenBLAS's count first: in the OpenMP build setting it also sets this thread's OpenMP count,
  // which is then put back below.
  if (saved_blas_ > 0 && openblas_get_num_threads() != saved_blas_)
    openblas_set_num_threads(saved_blas_);
#if defined(_OPENMP)
  if (saved_openmp_ > 0) omp_set_num_threads(saved_openmp_);
#endif
}

namespace {
CBLAS_ORDER cblas(order o) {
  return o == order::column_major ? CblasColMajor : CblasRowMajor;
}
CBLAS_TRANSPOSE cblas(op t) {
  return t == op::transpose ? CblasTrans : CblasNoTrans;
}
}  // namespace

void gemm(order layout, op trans_a, op trans_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(cblas(layout), cblas(trans_a), cblas(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

void gemm(order layout, op trans_a, op trans_b, int m, int n, int k, double alpha,
          const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(cblas(layout), cblas(trans_a), cblas(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

int geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork) {
  int info = 0;
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return checked("geqrf", info);
}
int geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork) {
  int info = 0;
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return checked("geqrf", info);
}

int geqp3(int m, int n, float* a, int lda, int* jpvt, float* tau, float* work, int lwork) {
  int info = 0;
  sgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return checked("geqp3", info);
}
int geqp3(int m, int n, double* a, int lda, int* jpvt, double* tau, double* work, int lwork) {
  int info = 0;
  dgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return checked("geqp3", info);
}

int orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork) {
  int info = 0;
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return checked("orgqr", info);
}
int orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork) {
  int info = 0;
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return checked("orgqr", info);
}

int gesvd(char jobu, char jobvt, int m, int n, float* a, int lda, float* s, float* u, int ldu,
          float* vt, int ldvt, float* work, int lwork) {
  int info = 0;
  sgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
  return checked("gesvd", info);
}
int gesvd(char jobu, char jobvt, int m, int n, double* a, int lda, double* s, double* u, int ldu,
          double* vt, int ldvt, double* work, int lwork) {
  int info = 0;
  dgesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);
  return checked("gesvd", info);
}

int gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
          int ldvt, float* work, int lwork, int* iwork) {
  int info = 0;
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return checked("gesdd", info);
}
int gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
          int ldvt, double* work, int lwork, int* iwork) {
  int info = 0;
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return checked("gesdd", info);
}

int syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork,
          int* iwork, int liwork) {
  int info = 0;
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return checked("syevd", info);
}
int syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork,
          int* iwork, int liwork) {
  int info = 0;
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return checked("syevd", info);
}

#else

namespace {
[[noreturn]] void no_openblas(const char* routine) {
  throw nearsparse::unsupported(std::string("nearsparse::detail::host_blas::") + routine +
                                ": this build has no OpenBLAS (NEARSPARSE_ENABLE_OPENBLAS)");
}
}  // namespace

bool available() {
  return false;
}

const char* name() {
  return "no OpenBLAS";
}

void set_threads(int) {}

int threads() {
  return 0;
}

bool threaded() {
  return false;
}

int call_threads() {
  return 0;
}

thread_scope::thread_scope(int) {}

thread_scope::~thread_scope() = default;

void gemm(order, op, op, int, int, int, float, const float*, int, const float*, int, float, float*,
          int) {
  no_openblas("gemm");
}
void gemm(order, op, op, int, int, int, double, const double*, int, const double*, int, double,
          double*, int) {
  no_openblas("gemm");
}
int geqrf(int, int, float*, int, float*, float*, int) {
  no_openblas("geqrf");
}
int geqrf(int, int, double*, int, double*, double*, int) {
  no_openblas("geqrf");
}
int geqp3(int, int, float*, int, int*, float*, float*, int) {
  no_openblas("geqp3");
}
int geqp3(int, int, double*, int, int*, double*, double*, int) {
  no_openblas("geqp3");
}
int orgqr(int, int, int, float*, int, const float*, float*, int) {
  no_openblas("orgqr");
}
int orgqr(int, int, int, double*, int, const double*, double*, int) {
  no_openblas("orgqr");
}
int gesvd(char, char, int, int, float*, int, float*, float*, int, float*, int, float*, int) {
  no_openblas("gesvd");
}
int gesvd(char, char, int, int, double*, int, double*, double*, int, double*, int, double*, int) {
  no_openblas("gesvd");
}
int gesdd(char, int, int, float*, int, float*, float*, int, float*, int, float*, int, int*) {
  no_openblas("gesdd");
}
int gesdd(char, int, int, double*, int, double*, double*, int, double*, int, double*, int, int*) {
  no_openblas("gesdd");
}

int syevd(char, char, int, float*, int, float*, float*, int, int*, int) {
  no_openblas("syevd");
}
int syevd(char, char, int, double*, int, double*, double*, int, int*, int) {
  no_openblas("syevd");
}

#endif

}  // namespace nearsparse::detail::host_blas
