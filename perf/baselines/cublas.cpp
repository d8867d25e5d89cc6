#include "baselines/cublas.hpp"

#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"

namespace nearsparse::perf::cublas {
namespace {
cublasHandle_t handle(const Kokkos::Cuda& exec) {
  return nearsparse::detail::cuda::cublas_handle(exec, "nearsparse::perf::cublas");
}
}  // namespace

void check(cublasStatus_t status, const char* call) {
  nearsparse::detail::cuda::check(status, "nearsparse::perf::cublas", call);
}

void dgemm_strided_batched(const Kokkos::Cuda& exec, int m, int n, int k, double alpha,
                           const double* a, long long stride_a, const double* b, long long stride_b,
                           double beta, double* c, long long stride_c, int count) {
  check(cublasDgemmStridedBatched(handle(exec), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m,
                                  stride_a, b, k, stride_b, &beta, c, m, stride_c, count),
        "cublasDgemmStridedBatched");
}

void gemm_column_major(const Kokkos::Cuda& exec, precision p, int m, int n, int k, double alpha,
                       const void* a, int lda, const void* b, int ldb, double beta, void* c,
                       int ldc) {
  if (p == precision::fp64) {
    check(cublasDgemm(handle(exec), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha,
                      static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb, &beta,
                      static_cast<double*>(c), ldc),
          "cublasDgemm");
    return;
  }
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  if (p == precision::fp32) {
    check(cublasSgemm(handle(exec), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha_f,
                      static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, &beta_f,
                      static_cast<float*>(c), ldc),
          "cublasSgemm");
    return;
  }
  cudaDataType_t in = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (p == precision::tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (p == precision::fp16) in = CUDA_R_16F;
  if (p == precision::bf16) in = CUDA_R_16BF;
  check(cublasGemmEx(handle(exec), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha_f, a, in, lda, b, in,
                     ldb, &beta_f, c, CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

double nrm2(const Kokkos::Cuda& exec, int n, const double* x) {
  double result = 0;
  check(cublasDnrm2(handle(exec), n, x, 1, &result), "cublasDnrm2");
  return result;
}

}  // namespace nearsparse::perf::cublas
