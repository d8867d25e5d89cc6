#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <cmath>

namespace nearsparse {

namespace detail {

void throw_invalid_argument(const char* function, const char* argument,
                            const std::string& problem) {
  throw nearsparse::invalid_argument(concat(function, ": argument '", argument, "' ", problem));
}

}  // namespace detail

void require_nonnegative(const char* function, const char* name, double value) {
  if (std::isfinite(value) && value >= 0) return;
  detail::throw_invalid_argument(function, name,
                                 detail::concat("must be finite and >= 0, got ", value));
}

void require_positive(const char* function, const char* name, double value) {
  if (std::isfinite(value) && value > 0) return;
  detail::throw_invalid_argument(function, name,
                                 detail::concat("must be finite and > 0, got ", value));
}

}  // namespace nearsparse
