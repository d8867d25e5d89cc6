#pragma once
// The one error check for CUDA runtime and CUDA library calls inside nearsparse (and its
// benchmarks' baselines). Every failure becomes nearsparse::runtime_error with the message
//   "<function>: <call> failed: <status name> (<status text>)"
// where <function> is the nearsparse entry point (nearsparse::<family>::<name>) and <call> the
// CUDA call or kernel that failed. An out-of-memory error also names the bytes asked for when the
// caller passes them.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <cstddef>

namespace nearsparse::detail::cuda {

void check(cudaError_t status, const char* function, const char* call);
void check(cublasStatus_t status, const char* function, const char* call);
void check(cusolverStatus_t status, const char* function, const char* call);
void check(cusparseStatus_t status, const char* function, const char* call);

/// Checks a device allocation of `bytes`; the message names the allocation and its size.
void check_allocation(cudaError_t status, const char* function, const char* what,
                      std::size_t bytes);

/// Checks the launch of `kernel` just queued (cudaGetLastError, which also clears a launch
/// error so the next call is not confused by it).
void check_launch(const char* function, const char* kernel);

/// Makes `device` current for the lifetime of the guard and restores the previous one; a failed
/// cudaGetDevice or cudaSetDevice throws as check() does, naming `function`.
class device_guard {
 public:
  device_guard(int device, const char* function) {
    check(cudaGetDevice(&previous_), function, "cudaGetDevice");
    if (previous_ != device) check(cudaSetDevice(device), function, "cudaSetDevice");
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace nearsparse::detail::cuda
