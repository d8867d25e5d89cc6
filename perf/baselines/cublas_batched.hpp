#pragma once
// cuBLAS batched GEMM over square tiles (CUDA builds only), on the library's handle for a
// Kokkos::Cuda instance's stream (src/core/cuda/handles.hpp): the baseline of the block-sparse
// multiply, a stack of tile products per call as DBCSR's GPU backend runs them.

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA

namespace nearsparse::perf::cublas {

/// C_i += A_i B_i for `count` row-major tile x tile tiles of double (or float with
/// `single_precision`), the tiles' device addresses in the device arrays a, b and c (count
/// pointers each): one cublasDgemmBatched (cublasSgemmBatched) call. Row-major products run as
/// the column-major C_i^T += B_i^T A_i^T, which moves no data. The c_i must be distinct within a
/// call (the batch's products run concurrently).
void gemm_batched_tiles(const Kokkos::Cuda& exec, bool single_precision, int tile,
                        const void* const* a, const void* const* b, void* const* c, int count);

}  // namespace nearsparse::perf::cublas

#endif  // KOKKOS_ENABLE_CUDA
