#pragma once
// The SpAMM multiplication kernels of every CUDA GPU (cuda_mma_sync.cpp): mma.sync tensor cores
// for fp64, tf32, fp16 and bf16 and plain FMA for fp32. Free of Kokkos, like the wgmma kernel's
// interface.

#include "cuda_kernel_common.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace nearsparse::spamm::detail {

/// C = alpha * (kept products of A and B) + beta * C on `stream`, C (m x n) at c with element
/// (i, j) at c[i*s0 + j*s1].
void mma_sync_multiply(cudaStream_t stream, int device, const multiply_problem& problem,
                       double alpha, double beta, float* c, std::size_t s0, std::size_t s1);
void mma_sync_multiply(cudaStream_t stream, int device, const multiply_problem& problem,
                       double alpha, double beta, double* c, std::size_t s0, std::size_t s1);

}  // namespace nearsparse::spamm::detail
