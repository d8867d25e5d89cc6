#pragma once
// Reuse of device allocations for the containers a product returns (diagonal-format C and plans).
// Kokkos 3 allocates every View with cudaMalloc and frees it with cudaFree, which synchronizes
// the device; for a small product that cost several times the kernel (perf/RESULTS.md). The cache
// keeps the Views it allocated; a request takes a kept View of the same type and extents that
// nobody else references (use_count() == 1), so a View handed out is never handed out again while
// any copy of it lives. All caches (one per View type) keep within one bound together
// (nearsparse::device_cache_limit()): a View that would pass it evicts unreferenced Views of any
// cache, least recently handed out first, so that an application alternating products of
// different types keeps the Views of the one it runs now. Kept Views are also released by
// nearsparse::release_cached_device_memory() and when Kokkos finalizes. Host allocations of at
// least 1 MiB are kept the same way: fresh host memory costs a page fault and the kernel's zeroing
// of every page on first touch, which for a plan's packed operands is a large part of a whole call
// on the host; smaller host allocations are not kept.

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
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

/// What the registry sees of one cache (one per View type): eviction has to reach every cache,
/// since they all count against one bound.
class view_cache_base {
 public:
  /// A kept View nobody else references: when it was last handed out (view_cache_registry's
  /// clock) and its bytes.
  struct candidate {
    std::uint64_t stamp;
    std::size_t bytes;
    view_cache_base* cache;
  };
  /// Appends this cache's unreferenced kept Views to `out`.
  virtual void collect_unreferenced(std::vector<candidate>& out) = 0;
  /// Frees the kept Views whose stamps are in `stamps` (sorted) and that nobody references now;
  /// returns the bytes freed.
  virtual std::size_t evict_stamps(const std::vector<std::uint64_t>& stamps) = 0;
  /// Drops every kept View (see view_cache::release).
  virtual void release() = 0;

 protected:
  virtual ~view_cache_base() = default;
};

/// Every cache, the bytes they keep together, and the clock that orders their Views by last use.
/// Lock order: a cache's mutex may be held while taking the registry's, never the other way, and
/// no thread holds two caches' mutexes at once.
struct view_cache_registry {
  std::mutex mutex;
  std::vector<view_cache_base*> caches;
  std::size_t kept_bytes = 0;
  std::atomic<std::uint64_t> clock{0};

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
  std::uint64_t tick() { return ++clock; }

  std::vector<view_cache_base*> all_caches() {
    const std::lock_guard<std::mutex> lock(mutex);
    return caches;
  }

  /// Frees unreferenced kept Views of every cache, least recently used first, until `needed`
  /// bytes are gone or none is left; returns the bytes freed. Where they do not add up to
  /// `needed` and `or_none` is set, frees nothing (room that cannot be made is not worth the
  /// Views). Called with no cache's mutex held: it locks each cache in turn.
  std::size_t evict(std::size_t needed, bool or_none) {
    if (needed == 0) return 0;
    const auto all = all_caches();
    std::vector<view_cache_base::candidate> found;
    for (auto* c : all) c->collect_unreferenced(found);
    if (or_none) {
      std::size_t available = 0;
      for (const auto& f : found) available += f.bytes;
      if (available < needed) return 0;
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.stamp < b.stamp; });
    // The oldest Views that cover `needed`, per cache. A View taken by its cache's owner since
    // it was collected has a new stamp or a second reference, and stays.
    std::size_t chosen = 0;
    std::size_t count = 0;
    while (count < found.size() && chosen < needed) chosen += found[count++].bytes;
    std::size_t freed = 0;
    for (auto* c : all) {
      std::vector<std::uint64_t> stamps;
      for (std::size_t k = 0; k < count; ++k)
        if (found[k].cache == c) stamps.push_back(found[k].stamp);
      if (!stamps.empty()) freed += c->evict_stamps(stamps);
    }
    return freed;
  }

  static view_cache_registry& instance() {
    static view_cache_registry r;
    return r;
  }
};

inline void release_all_view_caches() {
  for (auto* c : view_cache_registry::instance().all_caches()) c->release();
}

template <class View>
class view_cache final : public view_cache_base {
 public:
  static view_cache& instance() {
    static view_cache* c = [] {
      auto* made = new view_cache;  // lives to the end of the process; its Views do not
      auto& r = view_cache_registry::instance();
      const std::lock_guard<std::mutex> lock(r.mutex);
      if (r.caches.empty()) Kokkos::push_finalize_hook(release_all_view_caches);
      r.caches.push_back(made);
      return made;
    }();
    return *c;
  }

  /// A View with these extents, from the cache when one is free, else a new allocation (kept when
  /// it fits the bound, after evicting unreferenced Views of any cache, least recently used
  /// first, where the bound needs room). Its contents are unset.
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
    auto& registry = view_cache_registry::instance();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (auto& k : kept_)
        if (k.view.use_count() == 1 && same_extents(k.view, e)) {
          // Its last user may have queued work on it on any stream: wait for the device, as
          // cudaFree would have.
          wait = true;
          k.stamp = registry.tick();
          return k.view;
        }
    }
    const std::size_t limit = view_cache_limit();
    const std::size_t b = view_bytes<View>(extents...);
    bool keep = false;
    if (b <= limit / 2) {
      keep = registry.reserve(b, limit);
      // Over the bound: make room from the unreferenced Views of every cache (this one's and
      // other types'), which also frees their memory before the new allocation asks for it.
      // No cache's mutex is held here, so caches evicting for each other cannot deadlock.
      if (!keep) {
        const std::size_t total = registry.total();
        if (total + b > limit && registry.evict(total + b - limit, true) > 0)
          keep = registry.reserve(b, limit);
      }
    }
    View v;
    try {
      v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
    } catch (const std::exception& e) {
      // Out of memory: free what every cache keeps unreferenced and try once more, then report
      // the allocation by name.
      if (keep) registry.give_back(b);
      keep = false;
      const std::string reason = e.what();
      if (registry.evict(std::numeric_limits<std::size_t>::max(), false) == 0)
        throw_allocation_failure(label, b, View::memory_space::name(), reason.c_str());
      try {
        v = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
      } catch (const std::exception& again) {
        throw_allocation_failure(label, b, View::memory_space::name(), again.what());
      }
    }
    if (keep) {
      const std::lock_guard<std::mutex> lock(mutex_);
      kept_.push_back({v, b, registry.tick()});
      bytes_ += b;
    }
    return v;
  }

  /// Drops every kept View nobody else references, and forgets the others (they are freed when
  /// their last copy goes).
  void release() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    kept_.clear();
    view_cache_registry::instance().give_back(bytes_);
    bytes_ = 0;
  }

  std::size_t kept_bytes() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

  void collect_unreferenced(std::vector<candidate>& out) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& k : kept_)
      if (k.view.use_count() == 1) out.push_back({k.stamp, k.bytes, this});
  }

  std::size_t evict_stamps(const std::vector<std::uint64_t>& stamps) override {
    std::size_t freed = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      // Only this cache references a View with use_count() == 1, and it hands Views out under
      // this mutex: one found unreferenced here cannot be taken before it is erased.
      const auto gone = std::remove_if(kept_.begin(), kept_.end(), [&](const entry& k) {
        if (k.view.use_count() != 1 || !std::binary_search(stamps.begin(), stamps.end(), k.stamp))
          return false;
        freed += k.bytes;
        return true;
      });
      kept_.erase(gone, kept_.end());
      bytes_ -= std::min(bytes_, freed);
      view_cache_registry::instance().give_back(freed);
    }
    return freed;
  }

 private:
  struct entry {
    View view;
    std::size_t bytes;    // what it counts against the bound
    std::uint64_t stamp;  // when it was last handed out
  };

  static bool same_extents(const View& v, const std::size_t* e) {
    for (unsigned r = 0; r < View::rank; ++r)
      if (v.extent(r) != e[r]) return false;
    return true;
  }

  std::mutex mutex_;
  std::vector<entry> kept_;
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
