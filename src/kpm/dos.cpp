// Damping kernels and the reconstruction of the density of states.
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/dos.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>

namespace nearsparse::kpm {

namespace {
constexpr double pi = 3.14159265358979323846;
}

namespace {
constexpr nearsparse::detail::enum_name<damping> damping_names[] = {
    {damping::jackson, "jackson"}, {damping::lorentz, "lorentz"}, {damping::none, "none"}};
}  // namespace

const char* to_string(damping d) {
  return nearsparse::detail::enum_to_string(damping_names, d);
}

damping parse_damping(const std::string& name, const char* function, const char* argument) {
  return nearsparse::detail::enum_from_string(damping_names, name, function, argument);
}

std::vector<double> damping_factors(damping kind, int num_moments, double lambda) {
  constexpr const char* fn = "nearsparse::kpm::damping_factors";
  require(num_moments >= 1, fn, "num_moments",
          nearsparse::detail::concat("must be at least 1, got ", num_moments));
  const int M = num_moments;
  std::vector<double> g(std::size_t(M), 1.0);
  if (kind == damping::jackson) {
    const double q = pi / (M + 1);
    for (int n = 0; n < M; ++n)
      g[std::size_t(n)] = ((M - n + 1) * std::cos(q * n) + std::sin(q * n) / std::tan(q)) / (M + 1);
  } else if (kind == damping::lorentz) {
    require(std::isfinite(lambda) && lambda > 0, fn, "lambda",
            nearsparse::detail::concat("must be finite and positive, got ", lambda));
    for (int n = 0; n < M; ++n)
      g[std::size_t(n)] = std::sinh(lambda * (1.0 - double(n) / M)) / std::sinh(lambda);
  }
  return g;
}

double dos_curve::integral() const {
  double s = 0;
  for (std::size_t k = 0; k < density.size(); ++k) s += weights[k] * density[k];
  return s;
}

dos_curve density_of_states(const chebyshev_moments& m, const dos_options& o) {
  constexpr const char* fn = "nearsparse::kpm::density_of_states";
  using nearsparse::detail::concat;
  const int M = int(m.mu.size());
  require(M >= 1, fn, "m", "holds no moments");
  require_valid(m.map, fn);
  require(o.points >= 0 && o.points <= (1 << 24), fn, "options.points",
          concat("must be in [0, 2^24] (0: 2 M), got ", o.points));
  const int K = o.points == 0 ? 2 * M : o.points;
  const auto g = damping_factors(o.damping, M, o.lorentz_lambda);
  const double a = m.map.a, N = double(m.rows);

  dos_curve out;
  std::vector<double> xs(static_cast<std::size_t>(K)), wx(static_cast<std::size_t>(K));
  if (o.grid == energy_grid::chebyshev) {
    // Gauss-Chebyshev nodes: sum_k (pi/K) f(x_k) integrates f(x)/sqrt(1-x^2) exactly for
    // polynomials of degree < 2K, so the weights sqrt(1-x_k^2) pi/K make the integral exact.
    for (int k = 0; k < K; ++k) {
      const double x = std::cos(pi * (K - 1 - k + 0.5) / K);  // ascending
      xs[std::size_t(k)] = x;
      wx[std::size_t(k)] = pi / K * std::sqrt(1 - x * x);
    }
  } else {
    double lo = o.emin, hi = o.emax;
    if (lo == hi) {
      lo = m.map.to_energy(-1);
      hi = m.map.to_energy(1);
    }
    const double xlo = m.map.to_chebyshev(lo), xhi = m.map.to_chebyshev(hi);
    require(std::isfinite(lo) && std::isfinite(hi) && lo < hi && xlo >= -1 && xhi <= 1, fn,
            "options.emin, options.emax",
            concat("must satisfy emin < emax inside the scaled interval [", m.map.to_energy(-1),
                   ", ", m.map.to_energy(1), "], got [", lo, ", ", hi, "]"));
    require(K >= 2, fn, "options.points", concat("must be at least 2 on a uniform grid, got ", K));
    // Stay a hair inside +-1, where the Chebyshev weight 1/sqrt(1-x^2) is singular.
    const double e = 1e-12;
    const double x0 = std::max(xlo, -1 + e), x1 = std::min(xhi, 1 - e);
    for (int k = 0; k < K; ++k) {
      xs[std::size_t(k)] = x0 + (x1 - x0) * k / (K - 1);
      wx[std::size_t(k)] = (x1 - x0) / (K - 1) * ((k == 0 || k == K - 1) ? 0.5 : 1.0);
    }
  }
  out.energies.resize(static_cast<std::size_t>(K));
  out.density.resize(static_cast<std::size_t>(K));
  out.weights.resize(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const double x = xs[std::size_t(k)];
    // sum with the three-term recurrence T_{n+1} = 2 x T_n - T_{n-1}
    double t_prev = 1, t = x, sum = g[0] * m.mu[0];
    for (int n = 1; n < M; ++n) {
      sum += 2 * g[std::size_t(n)] * m.mu[std::size_t(n)] * t;
      const double next = 2 * x * t - t_prev;
      t_prev = t;
      t = next;
    }
    const double rho_x = sum / (pi * std::sqrt(std::max(1e-300, 1 - x * x)));
    out.energies[std::size_t(k)] = m.map.to_energy(x);
    out.density[std::size_t(k)] = N * a * rho_x;  // dE = dx / a
    out.weights[std::size_t(k)] = wx[std::size_t(k)] / a;
  }
  return out;
}

void write_csv(const dos_curve& dos, const std::string& path) {
  std::ofstream f(path);
  if (!f)
    throw nearsparse::runtime_error(
        nearsparse::detail::concat("nearsparse::kpm::write_csv: cannot open '", path, "'"));
  f << "energy,density\n" << std::setprecision(12);
  for (std::size_t k = 0; k < dos.energies.size(); ++k)
    f << dos.energies[k] << ',' << dos.density[k] << '\n';
  if (!f)
    throw nearsparse::runtime_error(
        nearsparse::detail::concat("nearsparse::kpm::write_csv: writing '", path, "' failed"));
}

}  // namespace nearsparse::kpm
