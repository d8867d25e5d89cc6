#pragma once
// Reuse of device allocations for the containers a product returns (diagonal-format C and plans).
// Kokkos 3 allocates every View with cudaMalloc and frees it with cudaFree, which synchronizes
// the device; for a small product that cost several times the kernel (perf/RESULTS.md). The cache
// keeps the Views it allocated; a request takes a kept View of the same type and extents that
// nobody else references (use_count() == 1), so a View handed out is never handed out again while
// any copy of it lives. Kept Views are released when the total kept by all caches would pass a
// bound (nearsparse::device_cache_limit()), by nearsparse::release_cached_device_memory(), and when
// Kokkos finalizes. Host allocations of at least 1 MiB are kept the same way: fresh host memory
// costs a page fault and the kernel's zeroing of every page on first touch, which for a plan's
// packed operands is a large part of a whole call on the host; smaller host allocations are not
// kept.

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::detail {

/// Throws nearsparse::runtime_error for an allocation that failed: "nearsparse: cannot allocate
/// '<label>' (<bytes> bytes in <space>): <what Kokkos said>".
[[noreturn]] inline void throw_allocation_failure(const std::string& label, std::size_t bytes,
                                                  const char* space, const char* reason) {
  throw nearsparse::runtime_error(concat("nearsparse: cannot allocate '", label, "' (", bytes,
                                         " bytes in ", space, "): ", reason));
}

/// Bytes of a View of type View with these extents.
template <class View, class... Extents>
std::size_t view_bytes(Extents... extents) {
  const std::size_t dims[] = {sizeof(typename View::value_type), std::size_t(extents)...};
  std::size_t bytes = 1;
  for (const std::size_t e : dims) bytes *= e;
  return bytes;
}

/// A new View with these extents and unset contents. An allocation that does not fit (Kokkos
/// throws std::bad_alloc or std::runtime_error, depending on its version) becomes a
/// nearsparse::runtime_error naming the label, the bytes and the memory space; nothing is left
/// allocated, and later allocations work as before.
template <class View, class... Extents>
View allocate_view(const std::string& label, Extents... extents) {
  try {
    return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  } catch (const std::exception& e) {
    throw_allocation_failure(label, view_bytes<View>(extents...), View::memory_space::name(),
                             e.what());
  }
}

/// Bytes all caches together may keep; no single View over half of it is kept. Set by
/// nearsparse::set_device_cache_limit (src/core/device_memory.cpp has the default).
std::size_t view_cache_limit();

/// The release functions of every cache, run by release_all_view_caches(), and the bytes all
/// caches keep.
struct view_cache_registry {
  std::mutex mutex;
  std::vector<std::function<void()>> releases;
  std::size_t kept_bytes = 0;
  /// Takes `bytes` more into the total if it stays within `limit`.
  bool reserve(std::size_t bytes, std::size_t limit) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (kept_bytes + bytes > limit) return false;
    kept_bytes += bytes;
    return true;
  }
  void give_back(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex);
    kept_bytes -= std::min(kept_bytes, bytes);
  }
  std::size_t total() {
    const std::lock_guard<std::mutex> lock(mutex);
    return kept_bytes;
  }
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
    bool wait = false;
    View v = take(wait, label, extents...);
    if (wait) typename View::execution_space().fence();
    return v;
  }

  /// As get, but a View from the cache sets `wait` instead of waiting for the device itself: the
  /// caller fences once before using the Views it took (one wait for several Views).
  template <class... Extents>
  View take(bool& wait, const std::string& label, Extents... extents) {
    const std::size_t e[] = {std::size_t(extents)...};
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& v : kept_)
      if (v.use_count() == 1 && same_extents(v, e)) {
        // Its last user may have queued work on it on any stream: wait for the device, as
        // cudaFree would have.
        wait = true;
        return v;
      }
    const std::size_t limit = view_cache_limit();
    std::size_t b = 0;
    for (std::size_t r = 0; r < sizeof...(Extents); ++r) b = r == 0 ? e[0] : b * e[r];
    b *= sizeof(typename View::value_type);
    auto& registry = view_cache_registry::instance();
    bool keep = false;
    if (b <= limit / 2) {
      keep = registry.reserve(b, limit);
      // Over the bound: make room from this cache's own unreferenced Views first, which also
      // frees their memory before the new allocation asks for it.
      if (!keep) {
        const std::size_t total = registry.total();
        if (total + b > limit && evict(total + b - limit)) keep = registry.reserve(b, limit);
      }
    }
    View v;
    try {
      v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
    } catch (const std::exception& e) {
      // Out of memory: free what this cache keeps unreferenced and try once more, then report
      // the allocation by name.
      if (keep) registry.give_back(b);
      keep = false;
      const std::string reason = e.what();
      if (!evict(bytes_))
        throw_allocation_failure(label, b, View::memory_space::name(), reason.c_str());
      try {
        v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
      } catch (const std::exception& again) {
        throw_allocation_failure(label, b, View::memory_space::name(), again.what());
      }
    }
    if (keep) {
      kept_.push_back(v);
      bytes_ += b;
    }
    return v;
  }

  /// Drops every kept View nobody else references, and forgets the others (they are freed when
  /// their last copy goes).
  void release() {
    const std::lock_guard<std::mutex> lock(mutex_);
    kept_.clear();
    view_cache_registry::instance().give_back(bytes_);
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

  // Frees unreferenced kept Views, largest first, until `needed` bytes are gone or none is left;
  // true when anything was freed.
  bool evict(std::size_t needed) {
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
    view_cache_registry::instance().give_back(freed);
    return freed > 0;
  }

  std::mutex mutex_;
  std::vector<View> kept_;
  std::size_t bytes_ = 0;
};

/// As cached_view, for several Views taken together: sets `wait` where the caller must fence
/// the device before using them (fence_cached_views).
template <class View, class... Extents>
View cached_view_taken(bool& wait, const std::string& label, Extents... extents) {
  using mem = typename View::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
    if (view_bytes<View>(extents...) < (std::size_t(1) << 20))
      return allocate_view<View>(label, extents...);
  }
  return view_cache<View>::instance().take(wait, label, extents...);
}

/// The one wait for Views taken with cached_view_taken.
template <class MemorySpace>
void fence_cached_views(bool wait) {
  if (wait) typename MemorySpace::execution_space().fence();
}

/// A View of type View with these extents and unset contents: from the cache for device memory
/// and host allocations of at least 1 MiB, a fresh allocation for smaller host ones.
template <class View, class... Extents>
View cached_view(const std::string& label, Extents... extents) {
  bool wait = false;
  View v = cached_view_taken<View>(wait, label, extents...);
  fence_cached_views<typename View::memory_space>(wait);
  return v;
}

}  // namespace nearsparse::detail
