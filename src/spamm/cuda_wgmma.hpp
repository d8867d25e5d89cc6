#pragma once
// The SpAMM multiplication on Hopper tensor cores through wgmma (cuda_wgmma.cu). That file is
// compiled by nvcc on its own, for sm_90a only, so this interface is free of Kokkos.

#include <nearsparse/spamm/options.hpp>

#include "cuda_kernel_common.hpp"

#include <cuda_runtime.h>

namespace nearsparse::spamm::detail {

/// Whether the wgmma kernel can run the product on `device`: a compute capability 9.0 GPU, a
/// tensor-core precision (tf32, fp16, bf16) and a tile of 64 or 128 (the kernel skips work in
/// steps of 64 x 64 outputs, so a 32 tile stays on the mma.sync kernel).
bool wgmma_supports(int device, spamm::precision precision, int tile);

/// C = alpha * (kept products of A and B) + beta * C on `stream`, C (m x n) at c with element
/// (i, j) at c[i*s0 + j*s1]. Requires wgmma_supports(device, problem.precision, tile).
void wgmma_multiply(cudaStream_t stream, int device, const multiply_problem& problem, double alpha,
                    double beta, float* c, std::size_t s0, std::size_t s1);
void wgmma_multiply(cudaStream_t stream, int device, const multiply_problem& problem, double alpha,
                    double beta, double* c, std::size_t s0, std::size_t s1);

}  // namespace nearsparse::spamm::detail
