// The host-side KPM checks (kpm/checks.hpp).
#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/checks.hpp>

#include <cmath>
#include <cstddef>

namespace nearsparse::kpm {

namespace {
void require_tolerance(const char* fn, double tolerance) {
  require(std::isfinite(tolerance) && tolerance >= 0, fn, "tolerance",
          nearsparse::detail::concat("must be finite and >= 0, got ", tolerance));
}
}  // namespace

moments_check check_moments(const chebyshev_moments& m, double tolerance) {
  require_tolerance("nearsparse::kpm::check_moments", tolerance);
  moments_check c;
  c.tolerance = tolerance;
  // Each start vector's own moments where they are kept (their mean may hide one that grows),
  // row-major M x R; else the mean.
  const bool per_vector = !m.mu_per_vector.empty() && m.num_vectors > 0;
  const std::size_t count = per_vector ? m.mu_per_vector.size() : m.mu.size();
  for (std::size_t i = 0; i < count; ++i) {
    const double v = per_vector ? m.mu_per_vector[i] : m.mu[i];
    const double magnitude = std::isfinite(v) ? std::abs(v) : HUGE_VAL;
    if (magnitude > c.largest || i == 0) {
      c.largest = magnitude;
      c.at_moment = int(per_vector ? i / std::size_t(m.num_vectors) : i);
    }
  }
  c.bounded = c.largest <= 1 + tolerance;
  return c;
}

density_check check_density(const dos_curve& dos, damping kind, double tolerance) {
  require_tolerance("nearsparse::kpm::check_density", tolerance);
  density_check c;
  c.tolerance = tolerance;
  c.applies = kind != damping::none;
  for (std::size_t k = 0; k < dos.density.size(); ++k) {
    const double d = std::isfinite(dos.density[k]) ? dos.density[k] : -HUGE_VAL;
    if (k == 0 || d < c.lowest) {
      c.lowest = d;
      c.lowest_energy = k < dos.energies.size() ? dos.energies[k] : 0.0;
    }
    if (k == 0 || d > c.highest) c.highest = d;
  }
  c.non_negative = !c.applies || c.lowest >= -tolerance * std::abs(c.highest);
  return c;
}

}  // namespace nearsparse::kpm
