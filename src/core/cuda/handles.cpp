#include "handles.hpp"

#include "check.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace nearsparse::detail::cuda {
namespace {

/// What a library needs to make, bind and destroy its handle, and the names its errors give.
template <class Handle, class Status>
struct library {
  Status (*create)(Handle*);
  Status (*set_stream)(Handle, cudaStream_t);
  Status (*destroy)(Handle);
  const char* create_name;
  const char* set_stream_name;
};

const library<cublasHandle_t, cublasStatus_t> cublas{cublasCreate, cublasSetStream, cublasDestroy,
                                                     "cublasCreate", "cublasSetStream"};
const library<cusolverDnHandle_t, cusolverStatus_t> cusolver{cusolverDnCreate, cusolverDnSetStream,
                                                             cusolverDnDestroy, "cusolverDnCreate",
                                                             "cusolverDnSetStream"};
const library<cusparseHandle_t, cusparseStatus_t> cusparse{
    cusparseCreate, cusparseSetStream, cusparseDestroy, "cusparseCreate", "cusparseSetStream"};

/// Handles of one library by (device, stream). The map lives until the process ends; its
/// handles are destroyed by a Kokkos finalize hook, registered when the first one is made, so
/// they go before the CUDA context does.
template <class Handle, class Status>
class registry {
 public:
  explicit registry(const library<Handle, Status>& lib) : lib_(lib) {}

  Handle get(const Kokkos::Cuda& exec, const char* function) {
    const key k{exec.cuda_device(), exec.cuda_stream()};
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = handles_.find(k);
    if (found != handles_.end()) return found->second;
    Handle h = nullptr;
    {
      device_guard guard(k.first, function);
      check(lib_.create(&h), function, lib_.create_name);
      const Status bound = lib_.set_stream(h, k.second);
      if (bound != Status(0)) lib_.destroy(h);
      check(bound, function, lib_.set_stream_name);
    }
    if (!hook_registered_) {
      Kokkos::push_finalize_hook([this] { clear(); });
      hook_registered_ = true;
    }
    handles_.emplace(k, h);
    return h;
  }

 private:
  using key = std::pair<int, cudaStream_t>;

  // Runs inside Kokkos::finalize: waits for each device, then destroys; reports nothing and
  // throws nothing.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    int previous = 0;
    cudaGetDevice(&previous);
    for (auto& entry : handles_) {
      cudaSetDevice(entry.first.first);
      cudaDeviceSynchronize();
      lib_.destroy(entry.second);
    }
    cudaSetDevice(previous);
    handles_.clear();
    hook_registered_ = false;
  }

  const library<Handle, Status>& lib_;
  std::mutex mutex_;
  std::map<key, Handle> handles_;
  bool hook_registered_ = false;
};

}  // namespace

cublasHandle_t cublas_handle(const Kokkos::Cuda& exec, const char* function) {
  static registry<cublasHandle_t, cublasStatus_t> handles(cublas);
  return handles.get(exec, function);
}

cusolverDnHandle_t cusolver_handle(const Kokkos::Cuda& exec, const char* function) {
  static registry<cusolverDnHandle_t, cusolverStatus_t> handles(cusolver);
  return handles.get(exec, function);
}

cusparseHandle_t cusparse_handle(const Kokkos::Cuda& exec, const char* function) {
  static registry<cusparseHandle_t, cusparseStatus_t> handles(cusparse);
  return handles.get(exec, function);
}

}  // namespace nearsparse::detail::cuda
