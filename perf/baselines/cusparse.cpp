#include "baselines/cusparse.hpp"

#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"

#include <cuda_runtime.h>

namespace nearsparse::perf::cusparse {

void check(cusparseStatus_t status, const char* call) {
  nearsparse::detail::cuda::check(status, "nearsparse::perf::cusparse", call);
}

csr_spmv::csr_spmv(const Kokkos::Cuda& exec, int rows, int cols, int nnz, const int* row_ptr,
                   const int* col_idx, const double* values, const double* x, double* y)
    : h_(nearsparse::detail::cuda::cusparse_handle(exec, "nearsparse::perf::cusparse")) {
  check(
      cusparseCreateCsr(&a_, rows, cols, nnz, const_cast<int*>(row_ptr), const_cast<int*>(col_idx),
                        const_cast<double*>(values), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
      "cusparseCreateCsr");
  check(cusparseCreateDnVec(&x_, cols, const_cast<double*>(x), CUDA_R_64F), "cusparseCreateDnVec");
  check(cusparseCreateDnVec(&y_, rows, y, CUDA_R_64F), "cusparseCreateDnVec");
  const double one = 1, zero = 0;
  std::size_t bytes = 0;
  check(cusparseSpMV_bufferSize(h_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, x_, &zero, y_,
                                CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
        "cusparseSpMV_bufferSize");
  if (bytes > 0)
    nearsparse::detail::cuda::check_allocation(
        cudaMalloc(&buffer_, bytes), "nearsparse::perf::cusparse", "the SpMV work buffer", bytes);
}

csr_spmv::~csr_spmv() {
  cudaFree(buffer_);
  cusparseDestroyDnVec(y_);
  cusparseDestroyDnVec(x_);
  cusparseDestroySpMat(a_);
}

void csr_spmv::run(double alpha, double beta) {
  check(cusparseSpMV(h_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a_, x_, &beta, y_, CUDA_R_64F,
                     CUSPARSE_SPMV_ALG_DEFAULT, buffer_),
        "cusparseSpMV");
}

}  // namespace nearsparse::perf::cusparse

namespace nearsparse::perf::cusparse {

namespace {
void check_cuda(cudaError_t status, const char* call) {
  nearsparse::detail::cuda::check(status, "nearsparse::perf::cusparse", call);
}
}  // namespace

csr_spgemm::csr_spgemm(const Kokkos::Cuda& exec, csr a, csr b, bool single_precision)
    : h_(nearsparse::detail::cuda::cusparse_handle(exec, "nearsparse::perf::cusparse")),
      a_(a),
      b_(b),
      single_(single_precision) {}

double csr_spgemm::run(bool checksum) {
  const cudaDataType type = single_ ? CUDA_R_32F : CUDA_R_64F;
  cudaStream_t stream = nullptr;
  check(cusparseGetStream(h_, &stream), "cusparseGetStream");
  const auto make = [&](const csr& m, cusparseSpMatDescr_t* d) {
    check(cusparseCreateCsr(d, m.rows, m.cols, m.nnz, const_cast<int*>(m.row_ptr),
                            const_cast<int*>(m.col_idx), const_cast<void*>(m.values),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
          "cusparseCreateCsr");
  };
  cusparseSpMatDescr_t a = nullptr, b = nullptr, c = nullptr;
  make(a_, &a);
  make(b_, &b);
  check(cusparseCreateCsr(&c, a_.rows, b_.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
        "cusparseCreateCsr");
  cusparseSpGEMMDescr_t desc = nullptr;
  check(cusparseSpGEMM_createDescr(&desc), "cusparseSpGEMM_createDescr");
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const void* alpha = single_ ? static_cast<const void*>(&one_f) : &one_d;
  const void* beta = single_ ? static_cast<const void*>(&zero_f) : &zero_d;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  std::size_t size1 = 0, size2 = 0;
  void *buffer1 = nullptr, *buffer2 = nullptr;
  check(cusparseSpGEMM_workEstimation(h_, op, op, alpha, a, b, beta, c, type,
                                      CUSPARSE_SPGEMM_DEFAULT, desc, &size1, nullptr),
        "cusparseSpGEMM_workEstimation");
  check_cuda(cudaMallocAsync(&buffer1, size1, stream), "cudaMallocAsync");
  check(cusparseSpGEMM_workEstimation(h_, op, op, alpha, a, b, beta, c, type,
                                      CUSPARSE_SPGEMM_DEFAULT, desc, &size1, buffer1),
        "cusparseSpGEMM_workEstimation");
  check(cusparseSpGEMM_compute(h_, op, op, alpha, a, b, beta, c, type, CUSPARSE_SPGEMM_DEFAULT,
                               desc, &size2, nullptr),
        "cusparseSpGEMM_compute");
  check_cuda(cudaMallocAsync(&buffer2, size2, stream), "cudaMallocAsync");
  check(cusparseSpGEMM_compute(h_, op, op, alpha, a, b, beta, c, type, CUSPARSE_SPGEMM_DEFAULT,
                               desc, &size2, buffer2),
        "cusparseSpGEMM_compute");
  std::int64_t rows = 0, cols = 0, nnz = 0;
  check(cusparseSpMatGetSize(c, &rows, &cols, &nnz), "cusparseSpMatGetSize");
  c_nnz_ = nnz;
  const std::size_t value_bytes = single_ ? sizeof(float) : sizeof(double);
  void *c_rows = nullptr, *c_cols = nullptr, *c_values = nullptr;
  check_cuda(cudaMallocAsync(&c_rows, sizeof(int) * std::size_t(a_.rows + 1), stream),
             "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&c_cols, sizeof(int) * std::size_t(nnz), stream), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&c_values, value_bytes * std::size_t(nnz), stream), "cudaMallocAsync");
  check(cusparseCsrSetPointers(c, c_rows, c_cols, c_values), "cusparseCsrSetPointers");
  check(cusparseSpGEMM_copy(h_, op, op, alpha, a, b, beta, c, type, CUSPARSE_SPGEMM_DEFAULT, desc),
        "cusparseSpGEMM_copy");
  double sum = 0;
  if (checksum && nnz > 0) {
    const Kokkos::Cuda exec(stream);
    if (single_) {
      Kokkos::View<const float*, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> v(
          static_cast<const float*>(c_values), std::size_t(nnz));
      Kokkos::parallel_reduce(
          "nearsparse::perf::spgemm_checksum", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, nnz),
          KOKKOS_LAMBDA(const std::int64_t k, double& s) { s += double(v(k)); }, sum);
    } else {
      Kokkos::View<const double*, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> v(
          static_cast<const double*>(c_values), std::size_t(nnz));
      Kokkos::parallel_reduce(
          "nearsparse::perf::spgemm_checksum", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, nnz),
          KOKKOS_LAMBDA(const std::int64_t k, double& s) { s += v(k); }, sum);
    }
  }
  cusparseSpGEMM_destroyDescr(desc);
  cusparseDestroySpMat(c);
  cusparseDestroySpMat(b);
  cusparseDestroySpMat(a);
  for (void* p : {buffer1, buffer2, c_rows, c_cols, c_values})
    check_cuda(cudaFreeAsync(p, stream), "cudaFreeAsync");
  return sum;
}

}  // namespace nearsparse::perf::cusparse
