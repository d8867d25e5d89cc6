// Names of the SpAMM precisions and validation of SpAMM options.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace nearsparse {

const char* to_string(spamm_precision precision) {
  switch (precision) {
    case spamm_precision::fp64:
      return "fp64";
    case spamm_precision::fp32:
      return "fp32";
    case spamm_precision::tf32:
      return "tf32";
    case spamm_precision::fp16:
      return "fp16";
    case spamm_precision::bf16:
      return "bf16";
  }
  return "unknown";
}

spamm_precision parse_spamm_precision(const std::string& name, const char* argument) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (auto p : {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::tf32,
                 spamm_precision::fp16, spamm_precision::bf16})
    if (lower == to_string(p)) return p;
  detail::throw_invalid_argument("nearsparse::parse_spamm_precision", argument,
                                 "is '" + name + "'; expected fp64, fp32, tf32, fp16 or bf16");
}

namespace detail::spamm {

void validate_options(const char* function, const spamm_options& options) {
  const int t = options.tile;
  require(t == 32 || t == 64 || t == 128, function, "options.tile",
          concat("is ", t, "; the tile edge must be 32, 64 or 128"));
  require_nonnegative(function, "options.tau", options.tau);
  require(std::isfinite(options.target_valid_ratio) && options.target_valid_ratio >= 0 &&
              options.target_valid_ratio <= 1,
          function, "options.target_valid_ratio",
          concat("is ", options.target_valid_ratio,
                 "; it must lie in (0, 1], or be 0 to use options.tau"));
  require(options.load_balance_stride >= 1 && options.load_balance_stride <= 64, function,
          "options.load_balance_stride",
          concat("is ", options.load_balance_stride, "; it must lie in [1, 64]"));
  if (options.target_valid_ratio > 0)
    validate_search(function, options.target_valid_ratio, options.search);
}

void validate_search(const char* function, double target, const spamm_search_options& search) {
  require(std::isfinite(target) && target > 0 && target <= 1, function, "target valid ratio",
          concat("is ", target, "; it must lie in (0, 1]"));
  require(search.max_iterations >= 0, function, "search.max_iterations",
          concat("is ", search.max_iterations, "; it must not be negative"));
  require(search.max_widenings >= 1, function, "search.max_widenings",
          concat("is ", search.max_widenings, "; it must be at least 1"));
  require_nonnegative(function, "search.tolerance", search.tolerance);
  const int launch = static_cast<int>(search.launch);
  require(search.launch == spamm_search_launch::automatic ||
              search.launch == spamm_search_launch::one_launch ||
              search.launch == spamm_search_launch::launch_per_count,
          function, "search.launch",
          concat("is ", launch, "; it must be automatic, one_launch or launch_per_count"));
}

}  // namespace detail::spamm
}  // namespace nearsparse
