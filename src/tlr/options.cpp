#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/options.hpp>

#include <cmath>

namespace nearsparse::tlr {

namespace {

constexpr nearsparse::detail::enum_name<compression_method> compression_method_names[] = {
    {compression_method::randomized, "randomized"}, {compression_method::svd, "svd"}};

}  // namespace

const char* to_string(compression_method method) {
  return nearsparse::detail::enum_to_string(compression_method_names, method);
}

compression_method parse_compression_method(const std::string& name, const char* function,
                                            const char* argument) {
  return nearsparse::detail::enum_from_string(compression_method_names, name, function, argument);
}

namespace detail {

using nearsparse::detail::concat;

void validate(const char* function, const truncation& trunc, int max_rank) {
  require_nonnegative(function, "truncation.accuracy", trunc.accuracy);
  require(trunc.fixed_rank <= max_rank, function, "truncation.fixed_rank",
          concat("= ", trunc.fixed_rank, " is larger than max_rank = ", max_rank));
}

void validate(const char* function, const compression_options& options, std::size_t tile) {
  nearsparse::detail::require_valid(function, "implementation", options.implementation);
  require(options.max_rank >= 0, function, "max_rank",
          concat("must be >= 0, got ", options.max_rank));
  require(static_cast<std::size_t>(options.max_rank) <= tile, function, "max_rank",
          concat("= ", options.max_rank, " is larger than the tile size ", tile));
  validate(function, options.trunc, options.max_rank);
  // Bounded so that max_rank + oversampling (the samples, then clamped to the tile) fits an int.
  require(options.oversampling >= 0 && options.oversampling <= (1 << 20), function, "oversampling",
          concat("must be in [0, 1048576], got ", options.oversampling));
  require(options.power_iterations >= 0 && options.power_iterations <= 16, function,
          "power_iterations", concat("must be in [0, 16], got ", options.power_iterations));
  require(nearsparse::detail::enum_is_valid(compression_method_names, options.method), function,
          "method", "is not a compression_method");
  require(options.workspace_bytes > 0, function, "workspace_bytes", "must be > 0");
}

void validate(const char* function, const gemm_options& options) {
  nearsparse::detail::require_valid(function, "implementation", options.implementation);
  require_nonnegative(function, "trunc.accuracy", options.trunc.accuracy);
  require(options.outer_products_per_call >= 0, function, "outer_products_per_call",
          concat("must be >= 0, got ", options.outer_products_per_call));
  require(options.workspace_bytes > 0, function, "workspace_bytes", "must be > 0");
}

}  // namespace detail
}  // namespace nearsparse::tlr
