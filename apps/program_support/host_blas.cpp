// OpenBLAS behind host_blas.hpp. NEARSPARSE_HAVE_OPENBLAS is set by CMake for this file only,
// where the build found OpenBLAS and its cblas.h.
#include "host_blas.hpp"

#include <string>

#if NEARSPARSE_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace nearsparse::app::host_blas {

#if NEARSPARSE_HAVE_OPENBLAS

bool available() {
  return true;
}

const char* name() {
  // openblas_get_config() reads "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ...": keep the first two
  // words, the library and its version.
  static thread_local std::string text;
  std::string config = openblas_get_config();
  std::size_t end = config.find(' ');
  if (end != std::string::npos) end = config.find(' ', end + 1);
  text = config.substr(0, end);
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

namespace detail {

void gemm(bool column_major, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(column_major ? CblasColMajor : CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool column_major, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(column_major ? CblasColMajor : CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace detail

#else

namespace {
constexpr const char* gemm_name = "nearsparse::app::host_blas::gemm";
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

namespace detail {

void gemm(bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {
  throw nearsparse::unsupported(std::string(gemm_name) + ": this build has no OpenBLAS");
}

void gemm(bool, int, int, int, double, const double*, int, const double*, int, double, double*,
          int) {
  throw nearsparse::unsupported(std::string(gemm_name) + ": this build has no OpenBLAS");
}

}  // namespace detail

#endif

}  // namespace nearsparse::app::host_blas
