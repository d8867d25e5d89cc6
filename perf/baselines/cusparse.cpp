#include "baselines/cusparse.hpp"

#include <nearsparse/core/errors.hpp>

#include <cuda_runtime.h>

namespace nearsparse::perf::cusparse {

void check(cusparseStatus_t status, const char* call) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw nearsparse::runtime_error(nearsparse::detail::concat("cuSPARSE: ", call, " failed with ",
                                                             cusparseGetErrorName(status), " (",
                                                             cusparseGetErrorString(status), ")"));
}

handle::handle(const Kokkos::Cuda& exec) {
  check(cusparseCreate(&handle_), "cusparseCreate");
  check(cusparseSetStream(handle_, exec.cuda_stream()), "cusparseSetStream");
}

handle::~handle() {
  cusparseDestroy(handle_);
}

csr_spmv::csr_spmv(const handle& h, int rows, int cols, int nnz, const int* row_ptr,
                   const int* col_idx, const double* values, const double* x, double* y)
    : h_(h) {
  check(
      cusparseCreateCsr(&a_, rows, cols, nnz, const_cast<int*>(row_ptr), const_cast<int*>(col_idx),
                        const_cast<double*>(values), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
      "cusparseCreateCsr");
  check(cusparseCreateDnVec(&x_, cols, const_cast<double*>(x), CUDA_R_64F), "cusparseCreateDnVec");
  check(cusparseCreateDnVec(&y_, rows, y, CUDA_R_64F), "cusparseCreateDnVec");
  const double one = 1, zero = 0;
  std::size_t bytes = 0;
  check(cusparseSpMV_bufferSize(h_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, x_, &zero, y_,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
        "cusparseSpMV_bufferSize");
  if (bytes > 0 && cudaMalloc(&buffer_, bytes) != cudaSuccess)
    throw nearsparse::runtime_error("cuSPARSE: cudaMalloc of the SpMV work buffer failed");
}

csr_spmv::~csr_spmv() {
  cudaFree(buffer_);
  cusparseDestroyDnVec(y_);
  cusparseDestroyDnVec(x_);
  cusparseDestroySpMat(a_);
}

void csr_spmv::run(double alpha, double beta) {
  check(cusparseSpMV(h_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a_, x_, &beta, y_,
                     CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buffer_),
        "cusparseSpMV");
}

}  // namespace nearsparse::perf::cusparse
