// Names of the GPU transports of the multi-process drivers.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>

namespace nearsparse {

const char* to_string(gpu_transport transport) {
  switch (transport) {
    case gpu_transport::automatic:
      return "automatic";
    case gpu_transport::host_staging:
      return "host_staging";
    case gpu_transport::nccl:
      return "nccl";
  }
  return "unknown";
}

gpu_transport parse_gpu_transport(const std::string& name, const char* argument) {
  for (auto t : {gpu_transport::automatic, gpu_transport::host_staging, gpu_transport::nccl})
    if (name == to_string(t)) return t;
  detail::throw_invalid_argument("nearsparse::parse_gpu_transport", argument,
                                 "is '" + name + "'; expected automatic, host_staging or nccl");
}

}  // namespace nearsparse
