// Names of the SpAMM precisions and validation of SpAMM options.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>

#include <cmath>

namespace nearsparse::spamm {
namespace {

constexpr nearsparse::detail::enum_name<precision> precision_names[] = {{precision::fp64, "fp64"},
                                                                        {precision::fp32, "fp32"},
                                                                        {precision::tf32, "tf32"},
                                                                        {precision::fp16, "fp16"},
                                                                        {precision::bf16, "bf16"}};

constexpr nearsparse::detail::enum_name<search_launch> search_launch_names[] = {
    {search_launch::automatic, "automatic"},
    {search_launch::one_launch, "one_launch"},
    {search_launch::launch_per_count, "launch_per_count"}};

constexpr nearsparse::detail::enum_name<host_grouping> host_grouping_names[] = {
    {host_grouping::automatic, "automatic"},
    {host_grouping::merged, "merged"},
    {host_grouping::per_tile, "per_tile"}};

}  // namespace

const char* to_string(precision p) {
  return nearsparse::detail::enum_to_string(precision_names, p);
}

precision parse_precision(const std::string& name, const char* argument) {
  return nearsparse::detail::enum_from_string(precision_names, name,
                                              "nearsparse::spamm::parse_precision", argument);
}

const char* to_string(host_grouping g) {
  return nearsparse::detail::enum_to_string(host_grouping_names, g);
}

host_grouping parse_host_grouping(const std::string& name, const char* argument) {
  return nearsparse::detail::enum_from_string(host_grouping_names, name,
                                              "nearsparse::spamm::parse_host_grouping", argument);
}

double unit_roundoff(precision p) {
  switch (p) {
    case precision::fp64:
      return 0x1p-53;
    case precision::fp32:
      return 0x1p-24;
    case precision::tf32:
    case precision::fp16:
      return 0x1p-11;
    case precision::bf16:
      return 0x1p-8;
  }
  nearsparse::detail::throw_invalid_argument(
      "nearsparse::spamm::unit_roundoff", "p",
      nearsparse::detail::concat("is ", static_cast<int>(p), "; it must be a spamm::precision"));
}

double rounding_floor(precision p) {
  return 4.0 * unit_roundoff(p);
}

namespace detail {

using nearsparse::detail::concat;

void validate_options(const char* function, const options& opt) {
  nearsparse::detail::require_valid(function, "options.implementation", opt.implementation);
  const int t = opt.tile;
  require(t == 32 || t == 64 || t == 128, function, "options.tile",
          concat("is ", t, "; the tile edge must be 32, 64 or 128"));
  require_nonnegative(function, "options.tau", opt.tau);
  require(
      std::isfinite(opt.target_valid_ratio) && opt.target_valid_ratio >= 0 &&
          opt.target_valid_ratio <= 1,
      function, "options.target_valid_ratio",
      concat("is ", opt.target_valid_ratio, "; it must lie in (0, 1], or be 0 to use options.tau"));
  require(nearsparse::detail::enum_is_valid(host_grouping_names, opt.host_grouping), function,
          "options.host_grouping",
          concat("is ", static_cast<int>(opt.host_grouping),
                 "; it must be automatic, merged or per_tile"));
  require(opt.load_balance_stride >= 1 && opt.load_balance_stride <= 64, function,
          "options.load_balance_stride",
          concat("is ", opt.load_balance_stride, "; it must lie in [1, 64]"));
  if (opt.target_valid_ratio > 0) validate_search(function, opt.target_valid_ratio, opt.search);
  require(std::isfinite(opt.target_error) && opt.target_error >= 0, function,
          "options.target_error",
          concat("is ", opt.target_error,
                 "; it must be finite and > 0 (relative to ||A||_F ||B||_F), or 0 for none"));
  require(!(opt.target_error > 0 && opt.target_valid_ratio > 0), function, "options.target_error",
          concat("is ", opt.target_error, " and options.target_valid_ratio is ",
                 opt.target_valid_ratio, "; set one of them (the other 0), not both"));
  if (opt.target_error > 0)
    validate_error_search(function, opt.target_error, opt.precision, opt.search,
                          "options.target_error");
}

void validate_error_search(const char* function, double target_error, precision p,
                           const search_options& search, const char* argument) {
  require(std::isfinite(target_error) && target_error > 0, function, argument,
          concat("is ", target_error, "; it must be finite and > 0 (relative to ||A||_F ||B||_F)"));
  const double floor = rounding_floor(p);
  require(target_error >= floor || search.below_rounding_floor, function, argument,
          concat("is ", target_error, ", below the rounding floor ", floor, " of precision ",
                 to_string(p),
                 ": rounding the inputs alone may err by that much (the error bound covers "
                 "dropped products only); raise the target, choose a finer precision, or set "
                 "search.below_rounding_floor and account for rounding yourself"));
  require(search.max_iterations >= 0, function, "search.max_iterations",
          concat("is ", search.max_iterations, "; it must not be negative"));
}

void validate_search(const char* function, double target, const search_options& search) {
  require(std::isfinite(target) && target > 0 && target <= 1, function, "target valid ratio",
          concat("is ", target, "; it must lie in (0, 1]"));
  require(search.max_iterations >= 0, function, "search.max_iterations",
          concat("is ", search.max_iterations, "; it must not be negative"));
  require(search.max_widenings >= 1, function, "search.max_widenings",
          concat("is ", search.max_widenings, "; it must be at least 1"));
  require_nonnegative(function, "search.tolerance", search.tolerance);
  require(nearsparse::detail::enum_is_valid(search_launch_names, search.launch), function,
          "search.launch",
          concat("is ", static_cast<int>(search.launch),
                 "; it must be automatic, one_launch or launch_per_count"));
}

}  // namespace detail
}  // namespace nearsparse::spamm
