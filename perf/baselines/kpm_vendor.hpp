#pragma once
// The vendor-library KPM step (CUDA builds only), the baseline the augmented kernels are judged
// against: one Chebyshev step of Figure 3 for a block of R complex vectors stored row-major,
//   U = H V            cuSPARSE SpMM (SpMV when R = 1), CSR with 32-bit indices
//   U = U - b V        cublasZaxpy over the block
//   W = -W             cublasZdscal
//   W = W + 2a U       cublasZaxpy
//   eta_2m(r) = <V_r|V_r>, eta_2m+1(r) = <W_r|V_r>    2R cublasZdotc on strided columns
// with the dot products left on the device (pointer mode device), so no call waits for the host.
// Descriptors and the work buffer are made once; run() is the step alone.

#include "baselines/cublas.hpp"
#include "baselines/cusparse.hpp"

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA

#include <cuComplex.h>

namespace nearsparse::perf::vendor {

class kpm_step {
 public:
  /// H: rows x rows CSR (complex double) on the device; V, W, U: rows x R row-major device
  /// blocks; eta: 2R device doubles (complex dot results: 2R cuDoubleComplex).
  kpm_step(const Kokkos::Cuda& exec, int rows, int nnz, const int* row_ptr, const int* col_idx,
           const cuDoubleComplex* values, int R, cuDoubleComplex* v, cuDoubleComplex* w,
           cuDoubleComplex* u, cuDoubleComplex* dots);
  ~kpm_step();
  kpm_step(const kpm_step&) = delete;
  kpm_step& operator=(const kpm_step&) = delete;
  void run(double a, double b);

 private:
  cusparseHandle_t sp_;
  cublasHandle_t bl_;
  int rows_, R_;
  cuDoubleComplex *v_, *w_, *u_, *dots_;
  cusparseSpMatDescr_t h_ = nullptr;
  cusparseDnMatDescr_t vm_ = nullptr, um_ = nullptr;
  cusparseDnVecDescr_t vv_ = nullptr, uv_ = nullptr;
  void* buffer_ = nullptr;
};

}  // namespace nearsparse::perf::vendor

#endif  // KOKKOS_ENABLE_CUDA
