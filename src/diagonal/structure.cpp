// Host-side checks and bookkeeping of the diagonal formats' structure.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/detail/product_checks.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <algorithm>
#include <cmath>

namespace nearsparse::diagonal {

namespace detail {

void check_shape(const char* function, int rows, int cols) {
  if (rows < 0 || cols < 0)
    nearsparse::detail::throw_invalid_argument(
        function, "rows/cols",
        nearsparse::detail::concat("must not be negative, got ", rows, " x ", cols));
}

std::vector<int> checked_offsets(const char* function, const char* argument, int rows, int cols,
                                 std::vector<int> offsets) {
  for (const int d : offsets) {
    if (d <= -rows || d >= cols)
      nearsparse::detail::throw_invalid_argument(
          function, argument,
          nearsparse::detail::concat("holds diagonal offset ", d, ", outside a ", rows, " x ", cols,
                                     " matrix (offsets run from ", -(rows - 1), " to ", cols - 1,
                                     ")"));
  }
  std::sort(offsets.begin(), offsets.end());
  const auto dup = std::adjacent_find(offsets.begin(), offsets.end());
  if (dup != offsets.end())
    nearsparse::detail::throw_invalid_argument(
        function, argument,
        nearsparse::detail::concat("holds diagonal offset ", *dup, " more than once"));
  return offsets;
}

std::vector<index_type> diagonal_starts(int rows, int cols, const std::vector<int>& offsets) {
  std::vector<index_type> starts(offsets.size() + 1, 0);
  for (std::size_t t = 0; t < offsets.size(); ++t)
    starts[t + 1] = starts[t] + diagonal_length(rows, cols, offsets[t]);
  return starts;
}

std::vector<int> checked_compact_indices(const char* function, const char* argument, int n,
                                         std::vector<int> indices) {
  if (n < 0)
    nearsparse::detail::throw_invalid_argument(
        function, "n", nearsparse::detail::concat("must not be negative, got ", n));
  for (const int k : indices) {
    if (k < 0 || k >= n)
      nearsparse::detail::throw_invalid_argument(
          function, argument,
          nearsparse::detail::concat("holds compact diagonal ", k, ", outside [0, ", n, ") for an ",
                                     n, " x ", n, " matrix"));
  }
  std::sort(indices.begin(), indices.end());
  const auto dup = std::adjacent_find(indices.begin(), indices.end());
  if (dup != indices.end())
    nearsparse::detail::throw_invalid_argument(
        function, argument,
        nearsparse::detail::concat("holds compact diagonal ", *dup, " more than once"));
  return indices;
}

void require_finite_scalar(const char* function, const char* name, double value) {
  if (!std::isfinite(value))
    nearsparse::detail::throw_invalid_argument(
        function, name, nearsparse::detail::concat("must be finite, got ", value));
}

}  // namespace detail

std::vector<int> banded_compact_indices(int n, int lower, int upper) {
  if (n < 0 || lower < 0 || upper < 0)
    nearsparse::detail::throw_invalid_argument(
        "nearsparse::diagonal::banded_compact_indices", "n/lower/upper",
        nearsparse::detail::concat("must not be negative, got n = ", n, ", lower = ", lower,
                                   ", upper = ", upper));
  std::vector<bool> used(std::size_t(n), false);
  for (int d = -std::min(lower, n - 1); d <= std::min(upper, n - 1); ++d)
    used[std::size_t(detail::compact_of(d, n))] = true;
  std::vector<int> out;
  for (int k = 0; k < n; ++k)
    if (used[std::size_t(k)]) out.push_back(k);
  return out;
}

namespace {

constexpr nearsparse::detail::enum_name<op> op_names[] = {{op::none, "none"},
                                                          {op::transpose, "transpose"}};
constexpr nearsparse::detail::enum_name<hm_algorithm> hm_algorithm_names[] = {
    {hm_algorithm::output_stationary, "output_stationary"}, {hm_algorithm::atomic, "atomic"}};

}  // namespace

const char* to_string(op operation) {
  return nearsparse::detail::enum_to_string(op_names, operation);
}

const char* to_string(hm_algorithm algorithm) {
  return nearsparse::detail::enum_to_string(hm_algorithm_names, algorithm);
}

op parse_op(const std::string& name, const char* function, const char* argument) {
  return nearsparse::detail::enum_from_string(op_names, name, function, argument);
}

hm_algorithm parse_hm_algorithm(const std::string& name, const char* function,
                                const char* argument) {
  return nearsparse::detail::enum_from_string(hm_algorithm_names, name, function, argument);
}

namespace detail {

void check_product_options(const char* function, const product_options& options) {
  nearsparse::detail::require_valid(function, "options.implementation", options.implementation);
  if (!nearsparse::detail::enum_is_valid(hm_algorithm_names, options.algorithm))
    nearsparse::detail::throw_invalid_argument(
        function, "options.algorithm",
        nearsparse::detail::concat("is ", static_cast<int>(options.algorithm),
                                   "; it must be output_stationary or atomic"));
}

}  // namespace detail

}  // namespace nearsparse::diagonal
