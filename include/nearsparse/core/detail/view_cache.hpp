#pragma once
// Reuse of device allocations for the containers a product returns (diagonal-format C and plans).
// Kokkos 3 allocates every View with cudaMalloc and frees it with cudaFree, which synchronizes
// the device; for a small product that cost several times the kernel (perf/RESULTS.md). The cache
// keeps the Views it allocated; a request takes a kept View of the same type and extents that
// nobody else references (use_count() == 1), so a View handed out is never handed out again while
// any copy of it lives. Kept Views are released when their total passes a bound, by
// nearsparse::release_cached_device_memory(), and when Kokkos finalizes. Host memory spaces are
// not cached (their allocations are cheap).

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::detail {

/// At most this many bytes stay kept in each cache, and no single View larger than a quarter of it.
inline constexpr std::size_t view_cache_bytes = std::size_t(256) << 20;

/// The release functions of every cache, run by release_all_view_caches().
struct view_cache_registry {
  std::mutex mutex;
  std::vector<std::function<void()>> releases;
  static view_cache_registry& instance() {
    static view_cache_registry r;
    return r;
  }
};

inline void release_all_view_caches() {
  auto& r = view_cache_registry::instance();
  std::vector<std::function<void()>> releases;
  {
    const std::lock_guard<std::mutex> lock(r.mutex);
    releases = r.releases;
  }
  for (const auto& f : releases) f();
}

template <class View>
class view_cache {
 public:
  static view_cache& instance() {
    static view_cache* c = [] {
      auto* made = new view_cache;  // lives to the end of the process; its Views do not
      auto& r = view_cache_registry::instance();
      const std::lock_guard<std::mutex> lock(r.mutex);
      if (r.releases.empty()) Kokkos::push_finalize_hook(release_all_view_caches);
      r.releases.push_back([made] { made->release(); });
      return made;
    }();
    return *c;
  }

  /// A View with these extents, from the cache when one is free, else a new allocation (kept when
  /// it fits the bound). Its contents are unset.
  template <class... Extents>
  View get(const std::string& label, Extents... extents) {
    const std::size_t e[] = {std::size_t(extents)...};
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& v : kept_)
      if (v.use_count() == 1 && same_extents(v, e)) {
        // Its last user may have queued work on it on any stream: wait for the device, as
        // cudaFree would have.
        typename View::execution_space().fence();
        return v;
      }
    View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
    const std::size_t b = bytes_of(v);
    if (b <= view_cache_bytes / 4) {
      if (bytes_ + b > view_cache_bytes) evict(bytes_ + b - view_cache_bytes);
      if (bytes_ + b <= view_cache_bytes) {
        kept_.push_back(v);
        bytes_ += b;
      }
    }
    return v;
  }

  /// Drops every kept View nobody else references, and forgets the others (they are freed when
  /// their last copy goes).
  void release() {
    const std::lock_guard<std::mutex> lock(mutex_);
    kept_.clear();
    bytes_ = 0;
  }

  std::size_t kept_bytes() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

 private:
  static std::size_t bytes_of(const View& v) {
    return v.span() * sizeof(typename View::value_type);
  }

  static bool same_extents(const View& v, const std::size_t* e) {
    for (unsigned r = 0; r < View::rank; ++r)
      if (v.extent(r) != e[r]) return false;
    return true;
  }

  // Frees unreferenced kept Views, largest first, until `needed` bytes are gone or none is left.
  void evict(std::size_t needed) {
    std::sort(kept_.begin(), kept_.end(),
              [](const View& a, const View& b) { return bytes_of(a) > bytes_of(b); });
    std::size_t freed = 0;
    auto keep = kept_.begin();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (freed < needed && it->use_count() == 1) {
        freed += bytes_of(*it);
        continue;
      }
      *keep++ = *it;
    }
    kept_.erase(keep, kept_.end());
    bytes_ -= std::min(bytes_, freed);
  }

  std::mutex mutex_;
  std::vector<View> kept_;
  std::size_t bytes_ = 0;
};

/// A View of type View with these extents and unset contents: from the cache for device memory,
/// a fresh allocation for host memory.
template <class View, class... Extents>
View cached_view(const std::string& label, Extents... extents) {
  using mem = typename View::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
    return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  } else {
    return view_cache<View>::instance().get(label, extents...);
  }
}

}  // namespace nearsparse::detail
