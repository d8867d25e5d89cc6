#pragma once
// The one registry of CUDA library handles: one handle per library, device and stream, created
// on first use with the stream set, and destroyed when Kokkos finalizes. Thread-safe: lookups
// and creation take a lock; a handle is never re-bound to another stream, so calls from several
// host threads on different streams never race on a handle's state, and calls on one stream are
// ordered by the stream itself. Used by the library and by the benchmarks' vendor baselines.

#include <Kokkos_Core.hpp>

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

namespace nearsparse::detail::cuda {

/// cuBLAS handle bound to exec's stream on exec's device.
cublasHandle_t cublas_handle(const Kokkos::Cuda& exec);
/// cuSOLVER dense handle bound to exec's stream on exec's device.
cusolverDnHandle_t cusolver_handle(const Kokkos::Cuda& exec);
/// cuSPARSE handle bound to exec's stream on exec's device.
cusparseHandle_t cusparse_handle(const Kokkos::Cuda& exec);

}  // namespace nearsparse::detail::cuda
