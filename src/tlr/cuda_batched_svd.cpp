// The batched SVD on Kokkos::Cuda: cuSOLVER's gesvdjBatched (matrices of at most 32 x 32; Jacobi
// in one kernel per batch, sorted singular values) where the options and the shape allow it, the
// portable kernel otherwise. cuSOLVER writes square U (m x m) and V (n x n); where the economy
// factor batched_svd returns is narrower, the first k columns are copied out of a temporary.

#include "../core/cuda/check.hpp"
#include "../core/cuda/handles.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/detail/batched_svd_kernel.hpp>

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::tlr::detail {

namespace {

namespace cuda = nearsparse::detail::cuda;

constexpr const char* fn = "nearsparse::tlr::batched_svd";

// out(i, j, b) = full(i, j, b) for i < rows, j < cols; full has full_cols columns per matrix.
__global__ void take_columns(const double* full, int rows, int full_cols, int cols, int batch,
                             double* out) {
  const std::size_t per = std::size_t(rows) * cols;
  const std::size_t total = per * std::size_t(batch);
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < total;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t b = e / per, r = e % per;
    out[e] = full[b * std::size_t(rows) * full_cols + r];  // column-major: the first cols columns
  }
}

template <class T>
T* device_alloc(std::size_t count, cudaStream_t stream, const char* what) {
  void* p = nullptr;
  const std::size_t bytes = count * sizeof(T) + 16;
  cuda::check_allocation(cudaMallocAsync(&p, bytes, stream), fn, what, bytes);
  return static_cast<T*>(p);
}

/// gesvdjBatched on exec's stream; returns the number of matrices cuSOLVER reports as not
/// converged (this waits for the stream).
std::size_t cusolver_batched_svd(const Kokkos::Cuda& exec, const svd_batch& job, int max_sweeps) {
  // One call at a time: calls on one stream share its cuSOLVER handle, and the call waits for the
  // stream anyway.
  static std::mutex serial;
  const std::lock_guard<std::mutex> lock(serial);
  const int m = job.m, n = job.n, batch = job.batch, k = m < n ? m : n;
  cudaStream_t stream = exec.cuda_stream();
  cusolverDnHandle_t h = cuda::cusolver_handle(exec, fn);
  gesvdjInfo_t params = nullptr;
  cuda::check(cusolverDnCreateGesvdjInfo(&params), fn, "cusolverDnCreateGesvdjInfo");
  std::vector<void*> owned;
  auto release = [&] {
    for (void* p : owned) cudaFreeAsync(p, stream);
    cusolverDnDestroyGesvdjInfo(params);
  };
  try {
    cuda::check(cusolverDnXgesvdjSetMaxSweeps(params, max_sweeps), fn,
                "cusolverDnXgesvdjSetMaxSweeps");
    cuda::check(cusolverDnXgesvdjSetSortEig(params, 1), fn, "cusolverDnXgesvdjSetSortEig");
    double* full_u = job.u;
    double* full_v = job.v;
    if (m != k)
      owned.push_back(full_u = device_alloc<double>(std::size_t(m) * m * batch, stream, "full U"));
    if (n != k)
      owned.push_back(full_v = device_alloc<double>(std::size_t(n) * n * batch, stream, "full V"));
    int lwork = 0;
    cuda::check(
        cusolverDnDgesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, job.a, m, job.s,
                                            full_u, m, full_v, n, &lwork, params, batch),
        fn, "cusolverDnDgesvdjBatched_bufferSize");
    double* work = device_alloc<double>(std::size_t(lwork > 0 ? lwork : 1), stream, "workspace");
    owned.push_back(work);
    int* info = device_alloc<int>(std::size_t(batch), stream, "info");
    owned.push_back(info);
    cuda::check(cusolverDnDgesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, job.a, m, job.s, full_u,
                                         m, full_v, n, work, lwork, info, params, batch),
                fn, "cusolverDnDgesvdjBatched");
    auto narrow = [&](const double* full, int rows, double* out) {
      const std::size_t total = std::size_t(rows) * k * batch;
      const unsigned blocks = unsigned(std::min<std::size_t>((total + 255) / 256, 65535));
      take_columns<<<blocks, 256, 0, stream>>>(full, rows, rows, k, batch, out);
      cuda::check_launch(fn, "take_columns");
    };
    if (m != k) narrow(full_u, m, job.u);
    if (n != k) narrow(full_v, n, job.v);
    std::vector<int> host(static_cast<std::size_t>(batch));
    cuda::check(cudaMemcpyAsync(host.data(), info, sizeof(int) * host.size(),
                                cudaMemcpyDeviceToHost, stream),
                fn, "cudaMemcpyAsync");
    release();
    owned.clear();
    params = nullptr;
    cuda::check(cudaStreamSynchronize(stream), fn, "cudaStreamSynchronize");
    std::size_t not_converged = 0;
    for (int i = 0; i < batch; ++i) {
      if (host[std::size_t(i)] < 0)
        throw nearsparse::runtime_error(nearsparse::detail::concat(
            fn, ": cusolverDnDgesvdjBatched rejected parameter ", -host[std::size_t(i)]));
      not_converged += host[std::size_t(i)] > 0 ? 1 : 0;
    }
    return not_converged;
  } catch (...) {
    if (params) release();
    throw;
  }
}

}  // namespace

batched_svd_report dispatch_batched_svd(const Kokkos::Cuda& exec, const svd_batch& job,
                                        const batched_svd_options& options) {
  // gesvdjBatched takes device pointers; the stream's own memory space must be device memory.
  constexpr bool device_memory = std::is_same<Kokkos::Cuda::memory_space, Kokkos::CudaSpace>::value;
  const std::size_t m = std::size_t(job.m), n = std::size_t(job.n);
  // automatic takes cuSOLVER only where it pays; specialized wherever it fits.
  const bool serves = options.implementation == nearsparse::implementation::automatic
                          ? cusolver_svd_pays(m, n)
                          : cusolver_svd_fits(m, n);
  const bool available = device_memory && serves;
  std::string reason;  // why specialized cannot be served, for its error
  if (!available && options.implementation == nearsparse::implementation::specialized)
    reason = !device_memory
                 ? std::string("cuSOLVER needs Kokkos::Cuda's memory space to be CudaSpace")
                 : nearsparse::detail::concat(
                       "cuSOLVER gesvdjBatched takes matrices of at most ", cusolver_svd_max_extent,
                       " x ", cusolver_svd_max_extent, "; A is ", m, " x ", n, " x ", job.batch);
  if (!nearsparse::detail::take_specialized(fn, options.implementation, available, exec.name(),
                                            reason.c_str()))
    return portable_batched_svd(exec, job, options);
  batched_svd_report report;
  report.kernel = "cusolver gesvdjBatched";
  if (m == 0 || n == 0 || job.batch == 0) return report;
  report.not_converged = cusolver_batched_svd(exec, job, options.max_sweeps);
  return report;
}

}  // namespace nearsparse::tlr::detail
