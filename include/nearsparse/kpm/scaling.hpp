#pragma once
// The affine map of the spectrum onto the Chebyshev interval: H~ = a (H - b 1), with the
// spectrum of H inside [b - 1/a, b + 1/a].

#include <nearsparse/core/errors.hpp>

#include <cmath>

namespace nearsparse::kpm {

/// An interval of the real line holding the spectrum of a Hermitian matrix.
struct spectral_interval {
  double lower = 0;
  double upper = 0;
};

/// H~ = a (H - b 1).
struct scaling {
  double a = 1;
  double b = 0;
  /// x = a (E - b): the Chebyshev variable of energy E.
  double to_chebyshev(double energy) const { return a * (energy - b); }
  /// E = b + x / a.
  double to_energy(double x) const { return b + x / a; }
};

/// The scaling that maps `bounds` onto [-(1 - margin), 1 - margin]. margin in [0, 1); a
/// degenerate interval (a 1 x 1 or zero matrix) is widened to half-width 1 around its centre.
inline scaling scaling_for(const spectral_interval& bounds, double margin = 0.01) {
  constexpr const char* fn = "nearsparse::kpm::scaling_for";
  require(
      std::isfinite(bounds.lower) && std::isfinite(bounds.upper) && bounds.lower <= bounds.upper,
      fn, "bounds",
      nearsparse::detail::concat("must be finite with lower <= upper, got [", bounds.lower, ", ",
                                 bounds.upper, "]"));
  require(std::isfinite(margin) && margin >= 0 && margin < 1, fn, "margin",
          nearsparse::detail::concat("must be in [0, 1), got ", margin));
  const double b = 0.5 * (bounds.lower + bounds.upper);
  double half = 0.5 * (bounds.upper - bounds.lower);
  if (!(half > 1e-12 * std::max(1.0, std::abs(b)))) half = 1.0;
  return {(1.0 - margin) / half, b};
}

/// Throws nearsparse::invalid_argument unless a > 0 and both are finite.
inline void require_valid(const scaling& s, const char* function) {
  require(std::isfinite(s.a) && std::isfinite(s.b) && s.a > 0, function, "scaling",
          nearsparse::detail::concat("must have finite a > 0 and finite b, got a = ", s.a,
                                     ", b = ", s.b));
}

}  // namespace nearsparse::kpm
