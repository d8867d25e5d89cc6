// The batched SVD on Kokkos::Cuda through cuSOLVER's gesvdjBatched (matrices of at most 32 x 32):
// Jacobi in one kernel per batch, sorted singular values. cuSOLVER writes square U (m x m) and
// V (n x n); where the economy factor batched_svd returns is narrower, the first k columns are
// copied out of a temporary.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/batched_svd.hpp>

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

namespace nearsparse::tlr::detail {

namespace {

constexpr const char* fn = "nearsparse::tlr::batched_svd (cuSOLVER)";

void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw nearsparse::runtime_error(
        nearsparse::detail::concat(fn, ": ", what, " failed with status ", int(status)));
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw nearsparse::runtime_error(
        nearsparse::detail::concat(fn, ": ", what, " failed: ", cudaGetErrorString(status)));
}

// One handle for the process, made on first use (under handle_mutex) and destroyed before Kokkos
// finalizes; calls from several threads take turns, since each sets the handle's stream.
std::mutex handle_mutex;
cusolverDnHandle_t& handle_slot() {
  static cusolverDnHandle_t h = nullptr;
  return h;
}
cusolverDnHandle_t handle() {
  cusolverDnHandle_t& h = handle_slot();
  if (!h) {
    check(cusolverDnCreate(&h), "cusolverDnCreate");
    Kokkos::push_finalize_hook([] {
      cusolverDnDestroy(handle_slot());
      handle_slot() = nullptr;
    });
  }
  return h;
}

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
T* device_alloc(std::size_t count, cudaStream_t stream) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, count * sizeof(T) + 16, stream), "cudaMallocAsync");
  return static_cast<T*>(p);
}

}  // namespace

std::size_t cuda_batched_svd(const Kokkos::Cuda& exec, int m, int n, int batch, double* a,
                             double* s, double* u, double* v, int max_sweeps) {
  const int k = m < n ? m : n;
  cudaStream_t stream = exec.cuda_stream();
  std::lock_guard<std::mutex> lock(handle_mutex);
  cusolverDnHandle_t h = handle();
  check(cusolverDnSetStream(h, stream), "cusolverDnSetStream");
  gesvdjInfo_t params = nullptr;
  check(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
  std::vector<void*> owned;
  auto release = [&] {
    for (void* p : owned) cudaFreeAsync(p, stream);
    cusolverDnDestroyGesvdjInfo(params);
  };
  try {
    check(cusolverDnXgesvdjSetMaxSweeps(params, max_sweeps), "cusolverDnXgesvdjSetMaxSweeps");
    check(cusolverDnXgesvdjSetSortEig(params, 1), "cusolverDnXgesvdjSetSortEig");
    double* full_u = u;
    double* full_v = v;
    if (m != k) owned.push_back(full_u = device_alloc<double>(std::size_t(m) * m * batch, stream));
    if (n != k) owned.push_back(full_v = device_alloc<double>(std::size_t(n) * n * batch, stream));
    int lwork = 0;
    check(cusolverDnDgesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, a, m, s, full_u, m,
                                              full_v, n, &lwork, params, batch),
          "cusolverDnDgesvdjBatched_bufferSize");
    double* work = device_alloc<double>(std::size_t(lwork > 0 ? lwork : 1), stream);
    owned.push_back(work);
    int* info = device_alloc<int>(std::size_t(batch), stream);
    owned.push_back(info);
    check(cusolverDnDgesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, a, m, s, full_u, m, full_v, n,
                                   work, lwork, info, params, batch),
          "cusolverDnDgesvdjBatched");
    auto narrow = [&](const double* full, int rows, double* out) {
      const std::size_t total = std::size_t(rows) * k * batch;
      const unsigned blocks = unsigned(std::min<std::size_t>((total + 255) / 256, 65535));
      take_columns<<<blocks, 256, 0, stream>>>(full, rows, rows, k, batch, out);
      check_cuda(cudaGetLastError(), "the column copy kernel launch");
    };
    if (m != k) narrow(full_u, m, u);
    if (n != k) narrow(full_v, n, v);
    std::vector<int> host(static_cast<std::size_t>(batch));
    check_cuda(cudaMemcpyAsync(host.data(), info, sizeof(int) * host.size(), cudaMemcpyDeviceToHost,
                               stream),
               "cudaMemcpyAsync");
    release();
    owned.clear();
    params = nullptr;
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::size_t not_converged = 0;
    for (int i = 0; i < batch; ++i) {
      if (host[std::size_t(i)] < 0)
        throw nearsparse::runtime_error(nearsparse::detail::concat(
            fn, ": gesvdjBatched rejected parameter ", -host[std::size_t(i)]));
      not_converged += host[std::size_t(i)] > 0 ? 1 : 0;
    }
    return not_converged;
  } catch (...) {
    if (params) release();
    throw;
  }
}

}  // namespace nearsparse::tlr::detail
