// CUDA device enumeration; compiled only into builds with the CUDA backend.
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/errors.hpp>

#include "check.hpp"

#include <cuda_runtime.h>

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

}  // namespace nearsparse
