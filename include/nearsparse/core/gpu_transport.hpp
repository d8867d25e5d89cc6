#pragma once
// How the multi-process drivers move GPU buffers between processes.

#include <string>

namespace nearsparse {

enum class gpu_transport {
  automatic,     ///< NCCL where the build has it and the data lives on a CUDA GPU, else staging
  host_staging,  ///< copy to the host, MPI, copy back (always available)
  nccl           ///< NCCL, device to device (an error where the build has no NCCL)
};

/// "automatic", "host_staging", "nccl".
const char* to_string(gpu_transport transport);

/// Parses the names above; throws nearsparse::invalid_argument naming `argument` otherwise.
gpu_transport parse_gpu_transport(const std::string& name, const char* argument = "transport");

}  // namespace nearsparse
