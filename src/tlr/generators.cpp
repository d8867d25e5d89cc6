#include <nearsparse/core/random.hpp>
#include <nearsparse/tlr/generators.hpp>

#include <algorithm>
#include <numeric>

namespace nearsparse::tlr {

namespace {
// Spreads the low 21 bits of x so that two zero bits separate each (3-D Morton codes); in 2-D one
// zero bit is enough, but the wider spacing orders the same way.
std::uint64_t spread(std::uint64_t x) {
  x &= 0x1fffff;
  x = (x | x << 32) & 0x1f00000000ffffULL;
  x = (x | x << 16) & 0x1f0000ff0000ffULL;
  x = (x | x << 8) & 0x100f00f00f00f00fULL;
  x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
  x = (x | x << 2) & 0x1249249249249249ULL;
  return x;
}
}  // namespace

std::vector<double> morton_ordered_points(std::size_t n, int dimension, std::uint64_t seed) {
  require(dimension == 2 || dimension == 3, "nearsparse::tlr::morton_ordered_points", "dimension",
          nearsparse::detail::concat("must be 2 or 3, got ", dimension));
  const std::size_t d = static_cast<std::size_t>(dimension);
  std::vector<double> raw(n * d);
  for (std::size_t k = 0; k < raw.size(); ++k) raw[k] = nearsparse::detail::uniform01(seed, k, 3);
  std::vector<std::uint64_t> code(n);
  for (std::size_t p = 0; p < n; ++p) {
    std::uint64_t c = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const auto q = static_cast<std::uint64_t>(raw[p * d + k] * double(1 << 21));
      c |= spread(q) << k;
    }
    code[p] = c;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return code[a] < code[b]; });
  std::vector<double> out(n * d);
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t k = 0; k < d; ++k) out[p * d + k] = raw[order[p] * d + k];
  return out;
}

}  // namespace nearsparse::tlr
