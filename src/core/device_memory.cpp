// The bound of the device-allocation cache (core/detail/view_cache.hpp), and the check of a large
// allocation against the free device memory (core/detail/free_memory.hpp).
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/detail/free_memory.hpp>
#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/core/errors.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>
#include <string>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

namespace nearsparse {

namespace {
constexpr std::size_t mib = std::size_t(1) << 20;

// Physical memory of this machine, or 0 where the system does not say.
std::size_t physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  if (std::size_t(pages) > std::numeric_limits<std::size_t>::max() / std::size_t(page))
    return std::numeric_limits<std::size_t>::max();
  return std::size_t(pages) * std::size_t(page);
#else
  return 0;
#endif
}

std::size_t smallest_cuda_device_bytes() {
  std::size_t smallest = 0;
  try {
    for (const auto& d : cuda_devices())
      smallest = smallest == 0 ? d.memory_bytes : std::min(smallest, d.memory_bytes);
  } catch (const runtime_error&) {
    smallest = 0;  // devices that cannot be queried: as without one
  }
  return smallest;
}

std::size_t default_limit() {
  // A sixteenth of the device: enough to keep the C of a product over 10^8 values (800 MB in
  // fp64) on an 80 GB GPU, small beside what the application holds. Without a device the kept
  // allocations are host memory: a sixteenth of it keeps the C of a host product of 10^7 values
  // and more (fresh pages cost a fault and a zeroing each), where 256 MiB would keep none over
  // 128 MiB.
  std::size_t memory = smallest_cuda_device_bytes();
  if (memory == 0) memory = physical_memory_bytes();
  return std::max(256 * mib, memory / 16);
}

std::atomic<std::size_t>& limit() {
  static std::atomic<std::size_t> value{default_device_cache_limit()};
  return value;
}
}  // namespace

std::size_t device_cache_limit() {
  return limit().load();
}

std::size_t default_device_cache_limit() {
  static const std::size_t value = default_limit();
  return value;
}

void set_device_cache_limit(std::size_t bytes) {
  limit().store(bytes);
}

namespace detail {
std::size_t view_cache_limit() {
  return device_cache_limit();
}
}  // namespace detail

namespace detail {

void require_fits(const char* function, const char* argument, const std::string& what,
                  std::size_t bytes, std::size_t free, const std::string& hint) {
  if (free == 0 || bytes <= free) return;
  const auto gib = [](std::size_t b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", double(b) / double(std::size_t(1) << 30));
    return std::string(text);
  };
  throw runtime_error(std::string(function) + ": '" + argument + "' " + what + ": " + gib(bytes) +
                      " GiB, but the device has " + gib(free) + " GiB free" + hint);
}

}  // namespace detail

}  // namespace nearsparse
