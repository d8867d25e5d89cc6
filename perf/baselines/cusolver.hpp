#pragma once
// cuSOLVER baselines (CUDA builds only), on the library's handle for a Kokkos::Cuda instance's
// stream (src/core/cuda/handles.hpp): the dense symmetric eigendecomposition (syevd) that matrix
// functions by iteration are judged against.

#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA

namespace nearsparse::perf::cusolver {

/// Eigenvalues (ascending, into w, n entries) and orthonormal eigenvectors (overwriting a, by
/// columns, column-major with leading dimension lda) of the symmetric n x n matrix a on the
/// device: cusolverDnDsyevd / cusolverDnSsyevd with its workspace from the device. Queued on
/// exec's stream; throws nearsparse::runtime_error when cuSOLVER fails or reports that the
/// algorithm did not converge (which waits for the stream).
void syevd(const Kokkos::Cuda& exec, int n, double* a, int lda, double* w);
void syevd(const Kokkos::Cuda& exec, int n, float* a, int lda, float* w);

}  // namespace nearsparse::perf::cusolver

#endif  // KOKKOS_ENABLE_CUDA
