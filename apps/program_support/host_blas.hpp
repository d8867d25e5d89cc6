#pragma once
// The dense baseline on the host: OpenBLAS gemm, for the programs and the benchmarks (not part of
// the library). Kokkos Kernels' portable host gemm is several times slower than an optimized BLAS,
// so a speedup measured against it says little; on a host backend the programs compare against
// OpenBLAS instead.
//
// Threads: before timing, a caller sets OpenBLAS's thread count to the concurrency of the Kokkos
// execution space it compares against (set_threads(exec.concurrency()): as many threads as the
// OpenMP backend has, 1 with Serial), so that both sides run on the same cores. The setup script
// installs Debian's OpenMP build of OpenBLAS (libopenblas-openmp-dev), whose threads are the
// OpenMP runtime's own: the two sides then share one thread pool instead of two pools spinning
// against each other.
//
// Where the build found no OpenBLAS (CMake's FindBLAS with BLA_VENDOR OpenBLAS, and cblas.h),
// available() is false, name() says so, set_threads does nothing and gemm throws
// nearsparse::unsupported; callers fall back to KokkosBlas::gemm and say so in their output.

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace nearsparse::app::host_blas {

/// True when this build links OpenBLAS.
bool available();

/// "OpenBLAS 0.3.21 (2 threads)", or "no OpenBLAS" where the build has none.
const char* name();

/// The number of threads OpenBLAS uses from now on (at least 1). Does nothing without OpenBLAS.
void set_threads(int threads);

/// The number of threads OpenBLAS uses; 0 without OpenBLAS.
int threads();

namespace detail {
// C = alpha A B + beta C on plain arrays, row-major or column-major, through cblas_?gemm.
void gemm(bool column_major, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);
void gemm(bool column_major, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc);

template <class View>
int leading_dimension(const View& v, bool column_major) {
  const std::size_t rows = column_major ? v.extent(0) : v.extent(1);
  const std::size_t stride = column_major ? v.stride(1) : v.stride(0);
  return static_cast<int>(stride > rows ? stride : (rows > 0 ? rows : 1));
}
}  // namespace detail

/// C = alpha A B + beta C with OpenBLAS (sgemm for float, dgemm for double), synchronous. A, B and
/// C are rank-2 host Views of one value type (float or double) and one layout (LayoutRight, or
/// LayoutLeft); subviews with a leading stride work. Throws nearsparse::invalid_argument when the
/// extents do not match and nearsparse::unsupported where the build has no OpenBLAS.
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
  constexpr const char* function = "nearsparse::app::host_blas::gemm";
  require(a.extent(1) == b.extent(0), function, "B",
          "is " + nearsparse::detail::extents_string(b) + "; A is " +
              nearsparse::detail::extents_string(a) + " (inner extents differ)");
  require(c.extent(0) == a.extent(0) && c.extent(1) == b.extent(1), function, "C",
          "is " + nearsparse::detail::extents_string(c) + "; expected " +
              std::to_string(a.extent(0)) + " x " + std::to_string(b.extent(1)));
  constexpr bool column_major = std::is_same<layout, Kokkos::LayoutLeft>::value;
  detail::gemm(column_major, static_cast<int>(c.extent(0)), static_cast<int>(c.extent(1)),
               static_cast<int>(a.extent(1)), alpha, a.data(),
               detail::leading_dimension(a, column_major), b.data(),
               detail::leading_dimension(b, column_major), beta, c.data(),
               detail::leading_dimension(c, column_major));
}

}  // namespace nearsparse::app::host_blas
