#pragma once
// Host memory for data that travels between an execution space's memory and the host: pinned for
// a CUDA device, so copies run at full PCIe speed instead of through a pageable bounce buffer, and
// plain host memory for every other space.

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nearsparse::kpm::detail {

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

/// Where the second part of a split over (ExecA, ExecB) keeps its vector blocks: ExecA's staging
/// memory where ExecB can compute in it (pinned host memory for a CUDA first part and a host
/// second part, so the copies between the parts run at full speed), ExecB's own memory otherwise.
template <class ExecA, class ExecB>
using second_part_memory_t =
    std::conditional_t<!std::is_same_v<staging_memory_t<ExecA>, Kokkos::HostSpace> &&
                           Kokkos::SpaceAccessibility<ExecB, staging_memory_t<ExecA>>::accessible,
                       staging_memory_t<ExecA>, typename ExecB::memory_space>;

}  // namespace nearsparse::kpm::detail
