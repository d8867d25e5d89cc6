#include "support/seeds.hpp"

#include <nearsparse/core/random.hpp>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>

namespace nearsparse::test {

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    if (const char* env = std::getenv("NEARSPARSE_TEST_SEED"))
      return static_cast<std::uint64_t>(std::stoull(env));
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }();
  return seed;
}

std::uint64_t fresh_seed() {
  static std::atomic<std::uint64_t> counter{0};
  return nearsparse::detail::mix64(base_seed() + counter.fetch_add(1));
}

}  // namespace nearsparse::test
