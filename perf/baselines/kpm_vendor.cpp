// cuSPARSE SpMM/SpMV plus the cuBLAS BLAS-1 chain: one KPM step on a row-major block.
#include "baselines/kpm_vendor.hpp"

#include <nearsparse/core/errors.hpp>

#ifdef KOKKOS_ENABLE_CUDA

#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"

namespace nearsparse::perf::vendor {

kpm_step::kpm_step(const Kokkos::Cuda& exec, int rows, int nnz, const int* row_ptr,
                   const int* col_idx, const cuDoubleComplex* values, int R, cuDoubleComplex* v,
                   cuDoubleComplex* w, cuDoubleComplex* u, cuDoubleComplex* dots)
    : sp_(nearsparse::detail::cuda::cusparse_handle(exec, "nearsparse::perf::vendor::kpm_step")),
      bl_(nearsparse::detail::cuda::cublas_handle(exec, "nearsparse::perf::vendor::kpm_step")),
      rows_(rows),
      R_(R),
      v_(v),
      w_(w),
      u_(u),
      dots_(dots) {
  cusparse::check(
      cusparseCreateCsr(&h_, rows, rows, nnz, const_cast<int*>(row_ptr), const_cast<int*>(col_idx),
                        const_cast<cuDoubleComplex*>(values), CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_C_64F),
      "cusparseCreateCsr");
  const cuDoubleComplex one = make_cuDoubleComplex(1, 0), zero = make_cuDoubleComplex(0, 0);
  std::size_t bytes = 0;
  if (R == 1) {
    cusparse::check(cusparseCreateDnVec(&vv_, rows, v, CUDA_C_64F), "cusparseCreateDnVec");
    cusparse::check(cusparseCreateDnVec(&uv_, rows, u, CUDA_C_64F), "cusparseCreateDnVec");
    cusparse::check(
        cusparseSpMV_bufferSize(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, h_, vv_, &zero, uv_,
                                CUDA_C_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
        "cusparseSpMV_bufferSize");
  } else {
    cusparse::check(cusparseCreateDnMat(&vm_, rows, R, R, v, CUDA_C_64F, CUSPARSE_ORDER_ROW),
                    "cusparseCreateDnMat");
    cusparse::check(cusparseCreateDnMat(&um_, rows, R, R, u, CUDA_C_64F, CUSPARSE_ORDER_ROW),
                    "cusparseCreateDnMat");
    cusparse::check(cusparseSpMM_bufferSize(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            CUSPARSE_OPERATION_NON_TRANSPOSE, &one, h_, vm_, &zero,
                                            um_, CUDA_C_64F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
                    "cusparseSpMM_bufferSize");
  }
  if (bytes > 0)
    nearsparse::detail::cuda::check_allocation(cudaMalloc(&buffer_, bytes),
                                               "nearsparse::perf::vendor::kpm_step",
                                               "the SpMM work buffer", bytes);
}

kpm_step::~kpm_step() {
  cudaFree(buffer_);
  if (vv_) cusparseDestroyDnVec(vv_);
  if (uv_) cusparseDestroyDnVec(uv_);
  if (vm_) cusparseDestroyDnMat(vm_);
  if (um_) cusparseDestroyDnMat(um_);
  cusparseDestroySpMat(h_);
}

void kpm_step::run(double a, double b) {
  const cuDoubleComplex one = make_cuDoubleComplex(1, 0), zero = make_cuDoubleComplex(0, 0);
  if (R_ == 1)
    cusparse::check(cusparseSpMV(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, h_, vv_, &zero, uv_,
                                 CUDA_C_64F, CUSPARSE_SPMV_ALG_DEFAULT, buffer_),
                    "cusparseSpMV");
  else
    cusparse::check(
        cusparseSpMM(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                     h_, vm_, &zero, um_, CUDA_C_64F, CUSPARSE_SPMM_ALG_DEFAULT, buffer_),
        "cusparseSpMM");
  const int n = rows_ * R_;
  const cuDoubleComplex minus_b = make_cuDoubleComplex(-b, 0),
                        two_a = make_cuDoubleComplex(2 * a, 0);
  const double minus_one = -1;
  cublasHandle_t h = bl_;
  cublas::check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  cublas::check(cublasZaxpy(h, n, &minus_b, v_, 1, u_, 1), "cublasZaxpy");
  cublas::check(cublasZdscal(h, n, &minus_one, w_, 1), "cublasZdscal");
  cublas::check(cublasZaxpy(h, n, &two_a, u_, 1, w_, 1), "cublasZaxpy");
  // The dot products stay on the device: the shared handle goes to device pointer mode for them
  // and back to host mode however they end (src/core/cuda/handles.hpp).
  struct device_pointer_mode {
    cublasHandle_t h;
    explicit device_pointer_mode(cublasHandle_t handle) : h(handle) {
      cublas::check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
    }
    ~device_pointer_mode() { cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST); }
  } mode(h);
  for (int r = 0; r < R_; ++r) {
    cublas::check(cublasZdotc(h, rows_, v_ + r, R_, v_ + r, R_, dots_ + 2 * r), "cublasZdotc");
    cublas::check(cublasZdotc(h, rows_, w_ + r, R_, v_ + r, R_, dots_ + 2 * r + 1), "cublasZdotc");
  }
}

}  // namespace nearsparse::perf::vendor

#endif  // KOKKOS_ENABLE_CUDA
