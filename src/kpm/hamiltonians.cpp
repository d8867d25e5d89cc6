// Assembly of the topological-insulator and cubic-lattice Hamiltonians, row by row.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace nearsparse::kpm {

namespace {

using nearsparse::detail::concat;
using c64 = complex_double;
using gamma_matrix = std::array<std::array<c64, 4>, 4>;

/// Gamma^1 = tau_z (x) 1 and Gamma^{2,3,4} = tau_x (x) sigma_{x,y,z}; index 2 tau + sigma.
gamma_matrix gamma(int a) {
  gamma_matrix g{};
  const c64 one(1, 0), i(0, 1);
  switch (a) {
    case 1:
      g[0][0] = g[1][1] = one;
      g[2][2] = g[3][3] = -one;
      break;
    case 2:
      g[0][3] = g[1][2] = g[2][1] = g[3][0] = one;
      break;
    case 3:
      g[0][3] = -i;
      g[1][2] = i;
      g[2][1] = -i;
      g[3][0] = i;
      break;
    case 4:
      g[0][2] = one;
      g[1][3] = -one;
      g[2][0] = one;
      g[3][1] = -one;
      break;
    default:
      break;
  }
  return g;
}

/// Row entries collected in any order, then sorted by column with duplicates summed.
template <class Scalar>
void append_row(host_crs<Scalar>& out, std::vector<std::pair<int, Scalar>>& row) {
  std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::size_t k = 0;
  for (std::size_t e = 0; e < row.size(); ++e) {
    if (k > 0 && row[k - 1].first == row[e].first)
      row[k - 1].second += row[e].second;
    else
      row[k++] = row[e];
  }
  for (std::size_t e = 0; e < k; ++e) {
    out.columns.push_back(row[e].first);
    out.values.push_back(row[e].second);
  }
  if (out.columns.size() > std::size_t(std::numeric_limits<int>::max()))
    throw nearsparse::invalid_argument(
        "nearsparse::kpm::assemble_rows: more entries than int row offsets can count");
  out.row_map.push_back(int(out.columns.size()));
  row.clear();
}

void check_range(std::int64_t rows, std::int64_t row_begin, std::int64_t row_end) {
  require(row_begin >= 0 && row_begin <= row_end && row_end <= rows,
          "nearsparse::kpm::assemble_rows", "row_begin, row_end",
          concat("must satisfy 0 <= row_begin <= row_end <= ", rows, ", got [", row_begin, ", ",
                 row_end, ")"));
}

void require_extent(const char* fn, const char* name, int v) {
  require(v >= 1, fn, name, concat("must be at least 1, got ", v));
}

void require_finite(const char* fn, const char* name, double v) {
  require(std::isfinite(v), fn, name, concat("must be finite, got ", v));
}

}  // namespace

void validate(const topological_insulator& p) {
  constexpr const char* fn = "nearsparse::kpm::topological_insulator";
  require_extent(fn, "nx", p.nx);
  require_extent(fn, "ny", p.ny);
  require_extent(fn, "nz", p.nz);
  require(p.rows() <= std::numeric_limits<int>::max() / 4, fn, "nx, ny, nz",
          concat(p.nx, " x ", p.ny, " x ", p.nz, " sites give ", p.rows(),
                 " rows, too many for int column indices"));
  require_finite(fn, "t", p.t);
  require_finite(fn, "mass", p.mass);
  require_finite(fn, "dot_potential", p.dot_potential);
  require(p.dot_period >= 0, fn, "dot_period", concat("must not be negative, got ", p.dot_period));
  require(std::isfinite(p.dot_radius) && p.dot_radius >= 0, fn, "dot_radius",
          concat("must be finite and not negative, got ", p.dot_radius));
  require(p.dot_layers >= 0, fn, "dot_layers", concat("must not be negative, got ", p.dot_layers));
  require(std::isfinite(p.disorder) && p.disorder >= 0, fn, "disorder",
          concat("must be finite and not negative, got ", p.disorder));
}

void validate(const cubic_lattice& p) {
  constexpr const char* fn = "nearsparse::kpm::cubic_lattice";
  require_extent(fn, "nx", p.nx);
  require_extent(fn, "ny", p.ny);
  require_extent(fn, "nz", p.nz);
  require(p.rows() <= std::numeric_limits<int>::max() / 8, fn, "nx, ny, nz",
          concat(p.nx, " x ", p.ny, " x ", p.nz, " sites are too many for int indices"));
  require_finite(fn, "t", p.t);
}

host_crs<complex_double> assemble_rows(const topological_insulator& p, std::int64_t row_begin,
                                       std::int64_t row_end) {
  validate(p);
  check_range(p.rows(), row_begin, row_end);
  std::array<gamma_matrix, 5> g;
  for (int a = 1; a <= 4; ++a) g[std::size_t(a)] = gamma(a);
  // M_j = (Gamma^1 - i Gamma^{j+1}) / 2: H[(n + e_j, a), (n, b)] = -t M_j[a][b] and its conjugate
  // transpose H[(n, b), (n + e_j, a)] = -t conj(M_j[a][b]).
  std::array<gamma_matrix, 3> hop{};
  for (int j = 0; j < 3; ++j)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        hop[std::size_t(j)][std::size_t(a)][std::size_t(b)] =
            (g[1][std::size_t(a)][std::size_t(b)] -
             c64(0, 1) * g[std::size_t(j + 2)][std::size_t(a)][std::size_t(b)]) *
            0.5;
  host_crs<complex_double> out;
  out.rows = row_end - row_begin;
  out.cols = p.rows();
  out.row_map.reserve(std::size_t(out.rows) + 1);
  out.row_map.push_back(0);
  out.columns.reserve(std::size_t(out.rows) * 13);
  out.values.reserve(std::size_t(out.rows) * 13);
  std::vector<std::pair<int, c64>> row;
  const int nx = p.nx, ny = p.ny, nz = p.nz;
  // z fastest, y slowest: see the header.
  auto site_of = [&](int x, int y, int z) { return z + nz * (x + nx * y); };
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    const int a = int(r % 4);
    const int site = int(r / 4);
    const int z = site % nz, x = (site / nz) % nx, y = site / (nz * nx);
    // On site: V_n Gamma^0 + m Gamma^1 (both diagonal).
    double v = 0;
    if (p.dot_period > 0 && p.dot_potential != 0 && (p.dot_layers == 0 || z >= nz - p.dot_layers)) {
      const double c = 0.5 * (p.dot_period - 1);
      const double dx = x % p.dot_period - c, dy = y % p.dot_period - c;
      if (dx * dx + dy * dy <= p.dot_radius * p.dot_radius) v += p.dot_potential;
    }
    if (p.disorder > 0)
      v += p.disorder * (nearsparse::detail::uniform01(p.seed, std::uint64_t(site), 0x51) - 0.5);
    row.emplace_back(int(r), c64(v, 0) + p.mass * g[1][std::size_t(a)][std::size_t(a)]);
    // Hopping along x (periodic), y (periodic), z (open).
    for (int j = 0; j < 3; ++j) {
      const auto& m = hop[std::size_t(j)];
      int bx = x, by = y, bz = z, fx = x, fy = y, fz = z;  // backward and forward neighbours
      bool has_b = true, has_f = true;
      if (j == 0) {
        bx = (x + nx - 1) % nx;
        fx = (x + 1) % nx;
      } else if (j == 1) {
        by = (y + ny - 1) % ny;
        fy = (y + 1) % ny;
      } else {
        bz = z - 1;
        fz = z + 1;
        has_b = bz >= 0;
        has_f = fz < nz;
      }
      // Row (n, a) with n = m' + e_j: entries -t M_j[a][b] at (n - e_j, b).
      if (has_b)
        for (int b = 0; b < 4; ++b)
          if (m[std::size_t(a)][std::size_t(b)] != c64(0, 0))
            row.emplace_back(4 * site_of(bx, by, bz) + b, -p.t * m[std::size_t(a)][std::size_t(b)]);
      // Row (n, a) as the source: entries -t conj(M_j[b][a]) at (n + e_j, b).
      if (has_f)
        for (int b = 0; b < 4; ++b)
          if (m[std::size_t(b)][std::size_t(a)] != c64(0, 0))
            row.emplace_back(4 * site_of(fx, fy, fz) + b,
                             -p.t * Kokkos::conj(m[std::size_t(b)][std::size_t(a)]));
    }
    append_row(out, row);
  }
  return out;
}

host_crs<double> assemble_rows(const cubic_lattice& p, std::int64_t row_begin,
                               std::int64_t row_end) {
  validate(p);
  check_range(p.rows(), row_begin, row_end);
  host_crs<double> out;
  out.rows = row_end - row_begin;
  out.cols = p.rows();
  out.row_map.push_back(0);
  std::vector<std::pair<int, double>> row;
  const int n[3] = {p.nx, p.ny, p.nz};
  const bool periodic[3] = {p.periodic_x, p.periodic_y, p.periodic_z};
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    int c[3] = {int(r % p.nx), int((r / p.nx) % p.ny), int(r / (std::int64_t(p.nx) * p.ny))};
    row.emplace_back(int(r), 0.0);  // the diagonal, stored so Gershgorin sees the centre
    for (int d = 0; d < 3; ++d) {
      if (n[d] == 1) continue;
      for (int step : {-1, 1}) {
        int nb[3] = {c[0], c[1], c[2]};
        nb[d] += step;
        if (nb[d] < 0 || nb[d] >= n[d]) {
          if (!periodic[d]) continue;
          nb[d] = (nb[d] + n[d]) % n[d];
        }
        row.emplace_back(nb[0] + p.nx * (nb[1] + p.ny * nb[2]), -p.t);
      }
    }
    append_row(out, row);
  }
  return out;
}

std::vector<double> cubic_lattice_eigenvalues(const cubic_lattice& p) {
  validate(p);
  constexpr double pi = 3.14159265358979323846;
  auto modes = [&](int n, bool periodic) {
    std::vector<double> e;
    if (n == 1) return std::vector<double>{0.0};
    for (int k = 0; k < n; ++k)
      e.push_back(periodic ? -2 * p.t * std::cos(2 * pi * k / n)
                           : -2 * p.t * std::cos(pi * (k + 1) / (n + 1)));
    return e;
  };
  const auto ex = modes(p.nx, p.periodic_x), ey = modes(p.ny, p.periodic_y),
             ez = modes(p.nz, p.periodic_z);
  std::vector<double> out;
  out.reserve(std::size_t(p.rows()));
  for (double z : ez)
    for (double y : ey)
      for (double x : ex) out.push_back(x + y + z);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace nearsparse::kpm
