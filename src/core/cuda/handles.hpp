#pragma once
// The one registry of CUDA library handles: one handle per library, device and stream, created
// on first use with the stream set, and destroyed when Kokkos finalizes (after the devices
// finish their work). Lookups and creation take a lock, and a handle is never re-bound to another
// stream. A handle's other state is shared by every caller on its stream: it stays in
// CUBLAS_POINTER_MODE_HOST, and a caller that changes any state (pointer mode, math mode) sets it
// at the start of its calls and restores it before it returns, with no other thread using that
// stream in between. Handles of streams that are destroyed stay until Kokkos::finalize (one per
// stream the process ever used). Used by the library and by the benchmarks' vendor baselines.
// `function` names the nearsparse entry point in the error raised when a handle cannot be made.

#include <Kokkos_Core.hpp>

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

namespace nearsparse::detail::cuda {

/// cuBLAS handle bound to exec's stream on exec's device.
cublasHandle_t cublas_handle(const Kokkos::Cuda& exec, const char* function);
/// cuSOLVER dense handle bound to exec's stream on exec's device.
cusolverDnHandle_t cusolver_handle(const Kokkos::Cuda& exec, const char* function);
/// cuSPARSE handle bound to exec's stream on exec's device.
cusparseHandle_t cusparse_handle(const Kokkos::Cuda& exec, const char* function);

}  // namespace nearsparse::detail::cuda
