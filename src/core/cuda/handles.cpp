#include "handles.hpp"

#include "check.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace nearsparse::detail::cuda {
namespace {

constexpr const char* registry_name = "nearsparse::detail::cuda handle registry";

/// Makes `device` current for the lifetime of the guard and restores the previous one.
class device_guard {
 public:
  explicit device_guard(int device) {
    check(cudaGetDevice(&previous_), registry_name, "cudaGetDevice");
    if (previous_ != device) check(cudaSetDevice(device), registry_name, "cudaSetDevice");
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

/// What a library needs to make, bind and destroy its handle.
template <class Handle>
struct library;

template <>
struct library<cublasHandle_t> {
  static cublasHandle_t make(cudaStream_t stream) {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), registry_name, "cublasCreate");
    check(cublasSetStream(h, stream), registry_name, "cublasSetStream");
    return h;
  }
  static void destroy(cublasHandle_t h) { cublasDestroy(h); }
};

template <>
struct library<cusolverDnHandle_t> {
  static cusolverDnHandle_t make(cudaStream_t stream) {
    cusolverDnHandle_t h = nullptr;
    check(cusolverDnCreate(&h), registry_name, "cusolverDnCreate");
    check(cusolverDnSetStream(h, stream), registry_name, "cusolverDnSetStream");
    return h;
  }
  static void destroy(cusolverDnHandle_t h) { cusolverDnDestroy(h); }
};

template <>
struct library<cusparseHandle_t> {
  static cusparseHandle_t make(cudaStream_t stream) {
    cusparseHandle_t h = nullptr;
    check(cusparseCreate(&h), registry_name, "cusparseCreate");
    check(cusparseSetStream(h, stream), registry_name, "cusparseSetStream");
    return h;
  }
  static void destroy(cusparseHandle_t h) { cusparseDestroy(h); }
};

/// Handles of one library by (device, stream). The map lives until the process ends; its
/// handles are destroyed by a Kokkos finalize hook, registered when the first one is made, so
/// they go before the CUDA context does.
template <class Handle>
class registry {
 public:
  static Handle get(const Kokkos::Cuda& exec) {
    registry& r = instance();
    const key k{exec.cuda_device(), exec.cuda_stream()};
    std::lock_guard<std::mutex> lock(r.mutex_);
    auto found = r.handles_.find(k);
    if (found != r.handles_.end()) return found->second;
    Handle h;
    {
      device_guard guard(k.first);
      h = library<Handle>::make(k.second);
    }
    if (!r.hook_registered_) {
      Kokkos::push_finalize_hook([] { instance().clear(); });
      r.hook_registered_ = true;
    }
    r.handles_.emplace(k, h);
    return h;
  }

 private:
  using key = std::pair<int, cudaStream_t>;

  static registry& instance() {
    static registry r;
    return r;
  }

  // Runs inside Kokkos::finalize: reports nothing and throws nothing.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    int previous = 0;
    cudaGetDevice(&previous);
    for (auto& entry : handles_) {
      cudaSetDevice(entry.first.first);
      library<Handle>::destroy(entry.second);
    }
    cudaSetDevice(previous);
    handles_.clear();
    hook_registered_ = false;
  }

  std::mutex mutex_;
  std::map<key, Handle> handles_;
  bool hook_registered_ = false;
};

}  // namespace

cublasHandle_t cublas_handle(const Kokkos::Cuda& exec) {
  return registry<cublasHandle_t>::get(exec);
}

cusolverDnHandle_t cusolver_handle(const Kokkos::Cuda& exec) {
  return registry<cusolverDnHandle_t>::get(exec);
}

cusparseHandle_t cusparse_handle(const Kokkos::Cuda& exec) {
  return registry<cusparseHandle_t>::get(exec);
}

}  // namespace nearsparse::detail::cuda
