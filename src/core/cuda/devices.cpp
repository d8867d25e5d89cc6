// CUDA device enumeration; compiled only into builds with the CUDA backend.
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/detail/free_memory.hpp>
#include <nearsparse/core/errors.hpp>

#include "check.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

namespace nearsparse {

std::vector<device_info> cuda_devices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    cudaGetLastError();  // clear the sticky error so later calls are not confused by it
    return {};
  }
  detail::cuda::check(status, "nearsparse::cuda_devices", "cudaGetDeviceCount");
  std::vector<device_info> devices;
  for (int id = 0; id < count; ++id) {
    cudaDeviceProp prop{};
    detail::cuda::check(cudaGetDeviceProperties(&prop, id), "nearsparse::cuda_devices",
                        "cudaGetDeviceProperties");
    device_info d;
    d.id = id;
    d.name = prop.name;
    d.compute_major = prop.major;
    d.compute_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.memory_bytes = prop.totalGlobalMem;
    devices.push_back(d);
  }
  return devices;
}

std::string missing_device_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) return "";
  cudaGetLastError();  // clear the error: the message is the report
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string text =
      "nearsparse: this build runs on the CUDA backend, but no CUDA device is visible "
      "(CUDA_VISIBLE_DEVICES=";
  text += visible ? "'" + std::string(visible) + "'" : std::string("unset");
  text += "; cudaGetDeviceCount: ";
  text +=
      status == cudaSuccess ? std::string("0 devices") : std::string(cudaGetErrorString(status));
  text +=
      "). Run it where a GPU is visible, or use a build with a host backend "
      "(scripts/build.sh --backend openmp).";
  return text;
}

namespace detail {

std::size_t free_memory_bytes(const Kokkos::Cuda& exec) {
  constexpr const char* fn = "nearsparse::detail::free_memory_bytes";
  const cuda::device_guard on_device(exec.cuda_device(), fn);
  std::size_t free = 0, total = 0;
  cuda::check(cudaMemGetInfo(&free, &total), fn, "cudaMemGetInfo");
  return free;
}

}  // namespace detail

}  // namespace nearsparse
