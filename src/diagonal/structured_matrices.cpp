// Diagonal sets for bands and randomly placed diagonals.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/diagonal/structured_matrices.hpp>

#include <algorithm>
#include <unordered_set>

namespace nearsparse::diagonal {

std::vector<int> banded_offsets(int rows, int cols, int lower, int upper) {
  detail::check_shape("nearsparse::diagonal::banded_offsets", rows, cols);
  if (lower < 0 || upper < 0)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::banded_offsets", "lower/upper",
        nearsparse::detail::concat("must not be negative, got ", lower, " and ", upper));
  std::vector<int> out;
  if (rows == 0 || cols == 0) return out;
  for (int d = -std::min(lower, rows - 1); d <= std::min(upper, cols - 1); ++d) out.push_back(d);
  return out;
}

std::vector<int> random_offsets(int rows, int cols, int count, std::uint64_t seed, bool with_main) {
  detail::check_shape("nearsparse::diagonal::random_offsets", rows, cols);
  const long long available = rows > 0 && cols > 0 ? (long long)rows + cols - 1 : 0;
  if (count < 0 || count > available)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::random_offsets", "count",
        nearsparse::detail::concat("is ", count, "; a ", rows, " x ", cols, " matrix has ",
                                   available, " diagonals"));
  std::vector<int> out;
  std::unordered_set<int> taken;
  if (with_main && count > 0) {
    out.push_back(0);
    taken.insert(0);
  }
  // Rejection sampling from splitmix64 draws; for counts near `available` it still ends quickly
  // because each draw succeeds with probability at least 1 / available.
  for (std::uint64_t draw = 0; int(out.size()) < count; ++draw) {
    const double u = nearsparse::detail::uniform01(seed, draw, 0);
    const int d = int(u * double(available)) - (rows - 1);
    if (taken.insert(d).second) out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace nearsparse::diagonal
