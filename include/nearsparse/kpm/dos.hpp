#pragma once
// Density of states from Chebyshev moments: the kernel-damped expansion
//   rho(E) = N a / (pi sqrt(1 - x^2)) [g_0 mu_0 + 2 sum_{n>=1} g_n mu_n T_n(x)],   x = a (E - b),
// which counts states per unit energy and integrates to N (g_0 = 1, mu_0 = 1). Host-side and cheap
// next to the moments.

#include <nearsparse/kpm/chebyshev_moments.hpp>

#include <string>
#include <vector>

namespace nearsparse::kpm {

/// The damping kernels g_n of the KPM review (Weisse et al. 2006).
enum class damping {
  jackson,  ///< positive, resolution about pi / M in x: the default for densities of states
  lorentz,  ///< g_n = sinh(lambda (1 - n/M)) / sinh(lambda): Lorentzian broadening lambda / M
  none,     ///< g_n = 1 (Dirichlet): Gibbs oscillations, for comparison only
};

/// "jackson", "lorentz" or "none".
const char* to_string(damping d);
/// The names above (case-insensitive); throws nearsparse::invalid_argument naming `function` and
/// `argument` and listing the accepted names otherwise.
damping parse_damping(const std::string& name,
                      const char* function = "nearsparse::kpm::parse_damping",
                      const char* argument = "name");

/// g_0 ... g_{M-1}. lambda (Lorentz only) > 0, usually 3 to 5.
std::vector<double> damping_factors(damping kind, int num_moments, double lambda = 4.0);

enum class energy_grid {
  chebyshev,  ///< points x_k = cos(pi (k + 1/2) / K) mapped to energies: exact quadrature
  uniform,    ///< K evenly spaced energies over [emin, emax] (inside the scaled interval)
};

struct dos_options {
  kpm::damping damping = kpm::damping::jackson;
  double lorentz_lambda = 4.0;
  energy_grid grid = energy_grid::chebyshev;
  int points = 0;             ///< K; 0 means 2 M
  double emin = 0, emax = 0;  ///< uniform grid only; emin == emax means the whole interval
};

/// A density of states sampled on a grid of energies.
struct dos_curve {
  std::vector<double> energies;  ///< ascending
  std::vector<double> density;   ///< states per unit energy at each energy
  std::vector<double> weights;   ///< quadrature weights: sum_k weights[k] density[k] ~ states
  /// sum_k weights[k] density[k]: N up to rounding on the Chebyshev grid.
  double integral() const;
};

/// The density of states of the matrix the moments came from (N = m.rows). Throws
/// nearsparse::invalid_argument for a bad point count, lambda or energy window.
dos_curve density_of_states(const chebyshev_moments& m, const dos_options& o = {});

/// Writes "energy,density" rows (with a header) to `path`; throws nearsparse::runtime_error when
/// the file cannot be written.
void write_csv(const dos_curve& dos, const std::string& path);

}  // namespace nearsparse::kpm
