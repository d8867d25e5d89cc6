#pragma once
// cuBLAS baselines (CUDA builds only), on the library's handle for a Kokkos::Cuda instance's
// stream (src/core/cuda/handles.hpp): dense GEMM in each precision nearsparse offers (fp64, fp32,
// tf32 tensor cores, fp16 and bf16 inputs with fp32 accumulation) on row- or column-major Views,
// and a vector norm.

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA

#include <cublas_v2.h>

#include <type_traits>

namespace nearsparse::perf::cublas {

/// Throws nearsparse::runtime_error naming the call and the cuBLAS status unless it succeeded.
void check(cublasStatus_t status, const char* call);

enum class precision { fp64, fp32, tf32, fp16, bf16 };

/// Column-major C (m x n) = alpha A (m x k) B (k x n) + beta C on device pointers. A and B hold
/// double (fp64), float (fp32, tf32) or 16-bit values (fp16, bf16); C holds double for fp64 and
/// float otherwise.
void gemm_column_major(const Kokkos::Cuda& exec, precision p, int m, int n, int k, double alpha,
                       const void* a, int lda, const void* b, int ldb, double beta, void* c,
                       int ldc);

/// C = alpha A B + beta C for rank-2 Views of one layout (LayoutLeft or LayoutRight, contiguous).
/// Row-major products run as the column-major product C^T = B^T A^T, which moves no data.
template <class AView, class BView, class CView>
void gemm(const Kokkos::Cuda& exec, precision p, double alpha, const AView& a, const BView& b,
          double beta, const CView& c) {
  using layout = typename CView::array_layout;
  static_assert(std::is_same<layout, typename AView::array_layout>::value &&
                    std::is_same<layout, typename BView::array_layout>::value,
                "cublas::gemm: A, B and C must share one layout");
  const int m = static_cast<int>(c.extent(0)), n = static_cast<int>(c.extent(1));
  const int k = static_cast<int>(a.extent(1));
  if constexpr (std::is_same<layout, Kokkos::LayoutLeft>::value) {
    gemm_column_major(exec, p, m, n, k, alpha, a.data(), m, b.data(), k, beta, c.data(), m);
  } else {
    static_assert(std::is_same<layout, Kokkos::LayoutRight>::value,
                  "cublas::gemm: LayoutLeft or LayoutRight only");
    gemm_column_major(exec, p, n, m, k, alpha, b.data(), n, a.data(), k, beta, c.data(), n);
  }
}

/// `count` column-major DGEMMs C_i (m x n) = alpha A_i (m x k) B_i (k x n) + beta C_i, the
/// matrices of each operand `stride` doubles apart: cuBLAS strided-batched DGEMM.
void dgemm_strided_batched(const Kokkos::Cuda& exec, int m, int n, int k, double alpha,
                           const double* a, long long stride_a, const double* b, long long stride_b,
                           double beta, double* c, long long stride_c, int count);

/// Euclidean norm of n doubles on the device; returns on the host after the stream finishes.
double nrm2(const Kokkos::Cuda& exec, int n, const double* x);

}  // namespace nearsparse::perf::cublas

#endif  // KOKKOS_ENABLE_CUDA
