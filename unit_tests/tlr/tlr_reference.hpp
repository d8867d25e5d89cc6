#pragma once
// Host references for the TLR tests: dense matrices as host_matrix, singular values from LAPACK
// (when the tests link it), and a random low-rank-plus-noise test matrix.

#include "support/host_reference.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#ifdef NEARSPARSE_TEST_HAVE_LAPACK
extern "C" void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
                        const int* lda, double* s, double* u, const int* ldu, double* vt,
                        const int* ldvt, double* work, const int* lwork, int* info);
#endif

namespace nearsparse::test::tlr {

using matrix = host_matrix<double>;

/// Whether the host specializations (LAPACK and BLAS per tile) serve this execution space: OpenMP
/// and Serial in a build with OpenBLAS.
template <class ExecSpace>
bool host_specialized() {
  const std::string name = ExecSpace::name();
  return (name == "OpenMP" || name == "Serial") && nearsparse::detail::host_blas::available();
}

/// Whether this is Kokkos::Cuda with device memory (CudaSpace, named "Cuda"; not UVM), where the
/// CUDA paths serve.
template <class ExecSpace>
bool cuda_device_memory() {
  return std::string(ExecSpace::name()) == "Cuda" &&
         std::string(ExecSpace::memory_space::name()) == "Cuda";
}

/// Whether the compression has a specialized path here for `method`: the host path (both
/// methods), or on Cuda the batched randomized method.
template <class ExecSpace>
bool compression_specialized(nearsparse::tlr::compression_method method) {
  if (std::string(ExecSpace::name()) == "Cuda")
    return cuda_device_memory<ExecSpace>() &&
           method == nearsparse::tlr::compression_method::randomized;
  return host_specialized<ExecSpace>();
}

/// Whether products into a TLR C have a specialized path here: the host path, or on Cuda the
/// batched recompression.
template <class ExecSpace>
bool lll_specialized() {
  return cuda_device_memory<ExecSpace>() || host_specialized<ExecSpace>();
}

/// A column-major device View holding the host matrix.
template <class ExecSpace>
Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> to_device(
    const ExecSpace& exec, const matrix& h) {
  Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> d(
      std::string("test::A"), h.rows, h.cols);
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.rows; ++i)
    for (std::size_t j = 0; j < h.cols; ++j) m(i, j) = h(i, j);
  Kokkos::deep_copy(exec, d, m);
  exec.fence();
  return d;
}

/// sum_k s_k x_k y_k^T with s_k = decay^k and random x_k, y_k: a matrix whose singular values
/// decay geometrically, with every tile of full numerical rank up to the decay.
inline matrix decaying(std::size_t rows, std::size_t cols, double decay, std::uint64_t seed,
                       int terms = 40) {
  matrix a(rows, cols);
  for (int k = 0; k < terms; ++k) {
    const double s = std::pow(decay, k);
    for (std::size_t i = 0; i < rows; ++i) {
      const double x = nearsparse::detail::uniform01(seed, i, 2 * k) - 0.5;
      for (std::size_t j = 0; j < cols; ++j)
        a(i, j) += s * x * (nearsparse::detail::uniform01(seed, j, 2 * k + 1) - 0.5);
    }
  }
  return a;
}

/// Rows [r0, r0 + m) and columns [c0, c0 + n) of a.
inline matrix block(const matrix& a, std::size_t r0, std::size_t c0, std::size_t m, std::size_t n) {
  matrix b(m, n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) b(i, j) = a(r0 + i, c0 + j);
  return b;
}

#ifdef NEARSPARSE_TEST_HAVE_LAPACK
/// The singular values of a, decreasing, by LAPACK dgesvd.
inline std::vector<double> singular_values(const matrix& a) {
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  std::vector<double> col(a.rows * a.cols);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) col[i + std::size_t(j) * m] = a(i, j);
  std::vector<double> s(std::min(m, n));
  int lwork = -1, info = 0, one = 1;
  double query = 0;
  dgesvd_("N", "N", &m, &n, col.data(), &m, s.data(), nullptr, &one, nullptr, &one, &query, &lwork,
          &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(lwork);
  dgesvd_("N", "N", &m, &n, col.data(), &m, s.data(), nullptr, &one, nullptr, &one, work.data(),
          &lwork, &info);
  if (info != 0) throw std::runtime_error("dgesvd failed: info " + std::to_string(info));
  return s;
}
#endif

}  // namespace nearsparse::test::tlr
