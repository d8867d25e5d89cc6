// Names of the GPU transports of the multi-process drivers.
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/gpu_transport.hpp>

namespace nearsparse {
namespace {

constexpr detail::enum_name<gpu_transport> transport_names[] = {
    {gpu_transport::automatic, "automatic"},
    {gpu_transport::host_staging, "host_staging"},
    {gpu_transport::nccl, "nccl"}};

}  // namespace

const char* to_string(gpu_transport transport) {
  return detail::enum_to_string(transport_names, transport);
}

gpu_transport parse_gpu_transport(const std::string& name, const char* argument) {
  return detail::enum_from_string(transport_names, name, "nearsparse::parse_gpu_transport",
                                  argument);
}

}  // namespace nearsparse
