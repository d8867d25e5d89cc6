#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/options.hpp>

#include <cmath>

namespace nearsparse::tlr {

std::string to_string(compression_method method) {
  switch (method) {
    case compression_method::randomized:
      return "randomized";
    case compression_method::svd:
      return "svd";
  }
  return "unknown";
}

std::string to_string(kernel_choice kernel) {
  switch (kernel) {
    case kernel_choice::automatic:
      return "automatic";
    case kernel_choice::portable:
      return "portable";
    case kernel_choice::vendor:
      return "vendor";
  }
  return "unknown";
}

namespace detail {

using nearsparse::detail::concat;

void validate(const char* function, const truncation& trunc, int max_rank) {
  require_nonnegative(function, "truncation.accuracy", trunc.accuracy);
  require(trunc.fixed_rank <= max_rank, function, "truncation.fixed_rank",
          concat("= ", trunc.fixed_rank, " is larger than max_rank = ", max_rank));
}

void validate(const char* function, const compression_options& options, std::size_t tile) {
  require(options.max_rank >= 0, function, "max_rank",
          concat("must be >= 0, got ", options.max_rank));
  require(static_cast<std::size_t>(options.max_rank) <= tile, function, "max_rank",
          concat("= ", options.max_rank, " is larger than the tile size ", tile));
  validate(function, options.trunc, options.max_rank);
  require(options.oversampling >= 0, function, "oversampling",
          concat("must be >= 0, got ", options.oversampling));
  require(options.power_iterations >= 0 && options.power_iterations <= 16, function,
          "power_iterations", concat("must be in [0, 16], got ", options.power_iterations));
  require(
      options.method == compression_method::randomized || options.method == compression_method::svd,
      function, "method", "is not a compression_method");
  require(options.workspace_bytes > 0, function, "workspace_bytes", "must be > 0");
}

void validate(const char* function, const gemm_options& options) {
  require_nonnegative(function, "trunc.accuracy", options.trunc.accuracy);
  require(options.outer_products_per_call >= 0, function, "outer_products_per_call",
          concat("must be >= 0, got ", options.outer_products_per_call));
  require(options.kernel == kernel_choice::automatic || options.kernel == kernel_choice::portable ||
              options.kernel == kernel_choice::vendor,
          function, "kernel", "is not a kernel_choice");
  require(options.workspace_bytes > 0, function, "workspace_bytes", "must be > 0");
}

}  // namespace detail
}  // namespace nearsparse::tlr
