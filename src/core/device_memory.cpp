// The bound of the device-allocation cache (core/detail/view_cache.hpp).
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/core/errors.hpp>

#include <algorithm>
#include <atomic>
#include <string>

namespace nearsparse {

namespace {
constexpr std::size_t mib = std::size_t(1) << 20;

std::size_t default_limit() {
  // A sixteenth of the device: enough to keep the C of a product over 10^8 values (800 MB in
  // fp64) on an 80 GB GPU, small beside what the application holds.
  std::size_t smallest = 0;
  try {
    for (const auto& d : cuda_devices())
      smallest = smallest == 0 ? d.memory_bytes : std::min(smallest, d.memory_bytes);
  } catch (const runtime_error&) {
    smallest = 0;  // devices that cannot be queried: the floor below
  }
  return std::max(256 * mib, smallest / 16);
}

std::atomic<std::size_t>& limit() {
  static std::atomic<std::size_t> value{default_limit()};
  return value;
}
}  // namespace

std::size_t device_cache_limit() {
  return limit().load();
}

void set_device_cache_limit(std::size_t bytes) {
  limit().store(bytes);
}

namespace detail {
std::size_t view_cache_limit() {
  return device_cache_limit();
}
}  // namespace detail

}  // namespace nearsparse
