#pragma once
// Device memory the library keeps for reuse. The diagonal formats take the storage of their
// matrices and plans from a cache of earlier allocations that nobody references any more
// (core/detail/view_cache.hpp), so that a product returning a new C does not pay cudaMalloc and
// cudaFree each call; SpAMM plans take their packed operands and norm maps from it. Host
// allocations of at least 1 MiB are kept too (fresh host memory is paid in page faults on first
// touch) and count against the same bound. Kokkos::finalize releases what is kept.

#include <nearsparse/core/detail/view_cache.hpp>

#include <cstddef>

namespace nearsparse {

/// Frees the device allocations kept for reuse that nothing references any more; Views still in
/// use stay valid and are freed when their last copy goes.
inline void release_cached_device_memory() {
  detail::release_all_view_caches();
}

/// Bytes of unreferenced allocations the library may keep, all caches together (no single
/// allocation over half of it is kept); where a new one would pass it, the least recently used
/// unreferenced ones, of any type, are freed first. The default is default_device_cache_limit();
/// set_device_cache_limit() changes it.
std::size_t device_cache_limit();

/// The bound device_cache_limit() has until set_device_cache_limit() changes it: a sixteenth of
/// the smallest CUDA device's memory, at least 256 MiB. Where no CUDA device is visible (a build
/// without the CUDA backend, or none found) the kept allocations are host memory, and it is a
/// sixteenth of the machine's physical memory (sysconf(_SC_PHYS_PAGES) pages of
/// sysconf(_SC_PAGE_SIZE) bytes), at least 256 MiB; 256 MiB where the system does not report its
/// memory.
std::size_t default_device_cache_limit();

/// Sets the bound of device_cache_limit(). Lowering it keeps what is already kept until those
/// allocations are evicted or released (release_cached_device_memory()); 0 stops the caching.
void set_device_cache_limit(std::size_t bytes);

}  // namespace nearsparse
