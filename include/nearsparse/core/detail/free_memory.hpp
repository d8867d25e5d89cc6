#pragma once
// How much memory an execution space can still allocate, where the library can know it, and the
// check of a large allocation against it. The block-sparse product checks the bytes of C in its
// symbolic phase, so a product that cannot fit is refused with its sizes before anything of it
// is allocated.

#include <nearsparse/core/detail/view_cache.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace nearsparse::detail {

/// Bytes free on the device of `exec` (cudaMemGetInfo on exec.cuda_device()), or 0 where the
/// library cannot know them: host spaces, where the operating system decides (page cache, swap,
/// overcommit) and an allocation that does not fit fails in Kokkos.
template <class ExecSpace>
std::size_t free_memory_bytes(const ExecSpace&) {
  return 0;
}
#ifdef KOKKOS_ENABLE_CUDA
std::size_t free_memory_bytes(const Kokkos::Cuda& exec);
#endif

/// Throws nearsparse::runtime_error when `bytes` exceed `free` (free = 0, unknown, passes):
///   "<function>: '<argument>' <what>: <bytes> GiB, but the device has <free> GiB free<hint>"
void require_fits(const char* function, const char* argument, const std::string& what,
                  std::size_t bytes, std::size_t free, const std::string& hint = "");

/// Whether free_memory_bytes speaks for allocations in MemorySpace: device memory (CudaSpace),
/// not the host spaces, and not CudaUVMSpace, which may oversubscribe the device.
template <class MemorySpace>
struct free_memory_known : std::false_type {};
#ifdef KOKKOS_ENABLE_CUDA
template <>
struct free_memory_known<Kokkos::CudaSpace> : std::true_type {};
#endif

/// require_fits for an allocation of `bytes` in MemorySpace against free_memory_bytes(exec) where
/// that is known for it; where it would refuse, first frees the allocations the library keeps
/// for reuse (release_all_view_caches) and asks again.
template <class MemorySpace, class ExecSpace>
void require_fits(const ExecSpace& exec, const char* function, const char* argument,
                  const std::string& what, std::size_t bytes, const std::string& hint = "") {
  if (!free_memory_known<MemorySpace>::value) return;
  std::size_t free = free_memory_bytes(exec);
  if (free > 0 && bytes > free) {
    release_all_view_caches();
    free = free_memory_bytes(exec);
  }
  require_fits(function, argument, what, bytes, free, hint);
}

}  // namespace nearsparse::detail
