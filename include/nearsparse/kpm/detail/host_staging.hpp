#pragma once
// Where KPM's split runs keep the second part's vector blocks, in the staging memory of
// core/detail/staging_memory.hpp.

#include <nearsparse/core/detail/staging_memory.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nearsparse::kpm::detail {

/// The host memory space for staging ExecSpace's transfers (core/detail/staging_memory.hpp).
template <class ExecSpace>
using staging_memory_t = nearsparse::detail::staging_memory_t<ExecSpace>;

/// Where the second part of a split over (ExecA, ExecB) keeps its vector blocks: ExecA's staging
/// memory where ExecB can compute in it (pinned host memory for a CUDA first part and a host
/// second part, so the copies between the parts run at full speed), ExecB's own memory otherwise.
template <class ExecA, class ExecB>
using second_part_memory_t =
    std::conditional_t<!std::is_same_v<staging_memory_t<ExecA>, Kokkos::HostSpace> &&
                           Kokkos::SpaceAccessibility<ExecB, staging_memory_t<ExecA>>::accessible,
                       staging_memory_t<ExecA>, typename ExecB::memory_space>;

}  // namespace nearsparse::kpm::detail
