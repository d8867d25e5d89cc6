#pragma once
// Checks of a KPM run that can fail: whether the scaling really maps the spectrum into [-1, 1],
// whether the moments stay within what a spectrum inside [-1, 1] allows, and whether the density
// of states is non-negative where the damping kernel guarantees it. Each names what it measured,
// so a program can show it next to the verdict.
//
// Why these and not the integral of the density: on the Chebyshev grid the quadrature of the
// expansion returns N mu_0 with mu_0 = 1 by construction, whatever the moments are.

#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/dos.hpp>
#include <nearsparse/kpm/scaling.hpp>
#include <nearsparse/kpm/spectral_bounds.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nearsparse::kpm {

/// Whether the scaled spectrum a (H - b) lies inside [-1, 1], from Lanczos Ritz values of H.
/// Ritz values lie inside the spectrum's hull, so a scaled Ritz value outside [-1, 1] proves the
/// scaling wrong (the expansion then diverges); one inside, with its residual, says how close
/// the extreme eigenvalue is to the edge.
struct spectrum_check {
  ritz_extremes ritz;                  ///< of H itself
  double scaled_lowest = 0;            ///< a (ritz.lowest - b)
  double scaled_highest = 0;           ///< a (ritz.highest - b)
  double scaled_lowest_residual = 0;   ///< a ritz.lowest_residual
  double scaled_highest_residual = 0;  ///< a ritz.highest_residual
  double tolerance = 0;                ///< allowed excess beyond +-1 (rounding)
  bool inside = true;                  ///< both scaled Ritz values within [-1 - tol, 1 + tol]
};

/// Lanczos (options.steps steps, 200 by default, from a start vector of its own) on H and the
/// Ritz values mapped by `map`.
/// Throws nearsparse::invalid_argument for a bad scaling, steps or matrix.
template <class ExecSpace, class Matrix>
spectrum_check check_spectrum(const ExecSpace& exec, const Matrix& h, const scaling& map,
                              const lanczos_options& options = {200, 1234567},
                              double tolerance = 1e-10) {
  constexpr const char* fn = "nearsparse::kpm::check_spectrum";
  require_valid(map, fn);
  require(std::isfinite(tolerance) && tolerance >= 0, fn, "tolerance",
          nearsparse::detail::concat("must be finite and >= 0, got ", tolerance));
  spectrum_check c;
  c.ritz = lanczos_ritz_values(exec, h, options);
  c.tolerance = tolerance;
  c.scaled_lowest = map.to_chebyshev(c.ritz.lowest);
  c.scaled_highest = map.to_chebyshev(c.ritz.highest);
  c.scaled_lowest_residual = map.a * c.ritz.lowest_residual;
  c.scaled_highest_residual = map.a * c.ritz.highest_residual;
  c.inside = c.scaled_lowest >= -1 - tolerance && c.scaled_highest <= 1 + tolerance;
  return c;
}

/// Whether every moment of every start vector obeys |mu_n| <= 1, as |<v|T_n(H~)|v>| / <v|v> <=
/// ||T_n(H~)|| = 1 for a spectrum inside [-1, 1]; outside, T_n grows exponentially.
struct moments_check {
  double largest = 0;  ///< max |mu_n| over n and the start vectors (mu_per_vector, else mu)
  int at_moment = 0;   ///< the n of `largest`
  double tolerance = 0;
  bool bounded = true;  ///< largest <= 1 + tolerance
};

/// The check above; `tolerance` allows for rounding (it grows with n; 1e-8 covers M of 10^5).
/// Throws nearsparse::invalid_argument for a negative or non-finite tolerance.
moments_check check_moments(const chebyshev_moments& m, double tolerance = 1e-8);

/// Whether the density of states is non-negative. The Jackson and Lorentz kernels are positive,
/// so with moments of a spectrum inside [-1, 1] the damped density is >= 0 up to rounding (also
/// for a stochastic trace: each start vector's local density is a positive measure). The
/// Dirichlet kernel (damping::none) is not positive: its Gibbs oscillations go negative on any
/// matrix, and the check does not apply (`applies` is false, `non_negative` true).
struct density_check {
  bool applies = true;
  double lowest = 0;   ///< the most negative density (or the smallest one)
  double highest = 0;  ///< the largest density
  double lowest_energy = 0;
  double tolerance = 0;      ///< relative to `highest`
  bool non_negative = true;  ///< lowest >= -tolerance * highest (or the check does not apply)
};

/// The check above on a density computed with `kind` damping. Throws
/// nearsparse::invalid_argument for a negative or non-finite tolerance.
density_check check_density(const dos_curve& dos, damping kind, double tolerance = 1e-6);

}  // namespace nearsparse::kpm
