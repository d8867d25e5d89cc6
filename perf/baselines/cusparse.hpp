#pragma once
// cuSPARSE baselines (CUDA builds only), on the library's handle for a Kokkos::Cuda instance's
// stream (src/core/cuda/handles.hpp): a CSR sparse matrix-vector product whose descriptors and work
// buffer are made once, so timed calls measure the product alone.

#include <Kokkos_Core.hpp>

#include <cstdint>

#ifdef KOKKOS_ENABLE_CUDA

#include <cusparse.h>

namespace nearsparse::perf::cusparse {

/// Throws nearsparse::runtime_error naming the call and the cuSPARSE status unless it succeeded.
void check(cusparseStatus_t status, const char* call);

/// y = alpha A x + beta y for a CSR matrix with 32-bit indices and double values.
class csr_spmv {
 public:
  csr_spmv(const Kokkos::Cuda& exec, int rows, int cols, int nnz, const int* row_ptr,
           const int* col_idx, const double* values, const double* x, double* y);
  ~csr_spmv();
  csr_spmv(const csr_spmv&) = delete;
  csr_spmv& operator=(const csr_spmv&) = delete;
  void run(double alpha, double beta);

 private:
  cusparseHandle_t h_;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  void* buffer_ = nullptr;
};

/// C = A B for CSR matrices with 32-bit indices (double or float values): cuSPARSE's whole
/// SpGEMM call sequence (descriptors, work estimation, compute, C's allocation, copy) per run(),
/// C allocated and freed on exec's stream with the stream-ordered allocator.
class csr_spgemm {
 public:
  struct csr {
    int rows, cols, nnz;
    const int* row_ptr;
    const int* col_idx;
    const void* values;
  };
  csr_spgemm(const Kokkos::Cuda& exec, csr a, csr b, bool single_precision);
  /// Runs the product; with `checksum`, returns the sum of C's values (else 0).
  double run(bool checksum = false);
  /// Entries of C in the last run.
  std::int64_t c_nnz() const { return c_nnz_; }

 private:
  cusparseHandle_t h_;
  csr a_, b_;
  bool single_;
  std::int64_t c_nnz_ = 0;
};

}  // namespace nearsparse::perf::cusparse

#endif  // KOKKOS_ENABLE_CUDA
