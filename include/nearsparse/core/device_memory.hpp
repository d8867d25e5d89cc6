#pragma once
// Device memory the library keeps for reuse. The diagonal formats take the storage of their
// matrices and plans from a cache of earlier allocations that nobody references any more
// (core/detail/view_cache.hpp), so that a product returning a new C does not pay cudaMalloc and
// cudaFree each call. At most 256 MiB per type of View is kept; Kokkos::finalize releases it.

#include <nearsparse/core/detail/view_cache.hpp>

namespace nearsparse {

/// Frees the device allocations kept for reuse that nothing references any more; Views still in
/// use stay valid and are freed when their last copy goes.
inline void release_cached_device_memory() {
  detail::release_all_view_caches();
}

}  // namespace nearsparse
