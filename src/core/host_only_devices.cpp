// Builds without the CUDA backend see no CUDA devices.
#include <nearsparse/core/configuration.hpp>

namespace nearsparse {

std::vector<device_info> cuda_devices() {
  return {};
}

std::string missing_device_reason() {
  return "";
}

}  // namespace nearsparse
