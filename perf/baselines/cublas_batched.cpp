#include "baselines/cublas_batched.hpp"

#include "baselines/cublas.hpp"
#include "core/cuda/handles.hpp"

#include <cublas_v2.h>

namespace nearsparse::perf::cublas {

void gemm_batched_tiles(const Kokkos::Cuda& exec, bool single_precision, int tile,
                        const void* const* a, const void* const* b, void* const* c, int count) {
  if (count <= 0) return;
  cublasHandle_t h = nearsparse::detail::cuda::cublas_handle(exec, "nearsparse::perf::cublas");
  // Column-major view of the row-major tiles: C^T = B^T A^T, so B goes first.
  if (single_precision) {
    const float one = 1.0f;
    check(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, tile, tile, tile, &one,
                             reinterpret_cast<const float* const*>(b), tile,
                             reinterpret_cast<const float* const*>(a), tile, &one,
                             reinterpret_cast<float* const*>(c), tile, count),
          "cublasSgemmBatched");
  } else {
    const double one = 1.0;
    check(cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, tile, tile, tile, &one,
                             reinterpret_cast<const double* const*>(b), tile,
                             reinterpret_cast<const double* const*>(a), tile, &one,
                             reinterpret_cast<double* const*>(c), tile, count),
          "cublasDgemmBatched");
  }
}

}  // namespace nearsparse::perf::cublas
