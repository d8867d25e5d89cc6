#pragma once
// Host memory for data that travels between an execution space's memory and the host: pinned for
// a CUDA device, so copies run at full PCIe speed instead of through a pageable bounce buffer, and
// plain host memory for every other space.

#include <Kokkos_Core.hpp>

namespace nearsparse::detail {

/// The host memory space for staging ExecSpace's transfers.
template <class ExecSpace>
struct staging_memory {
  using type = Kokkos::HostSpace;
};

#ifdef KOKKOS_ENABLE_CUDA
template <>
struct staging_memory<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif

template <class ExecSpace>
using staging_memory_t = typename staging_memory<ExecSpace>::type;

}  // namespace nearsparse::detail
