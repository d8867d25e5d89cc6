#pragma once
// Test and application Hamiltonians, assembled on the host (row by row, any row range: a process
// of a distributed run builds only its rows) and copied to the execution space's memory.
//
// topological_insulator: equation (1) of the KPM paper,
//   H = -t sum_{n, j=1,2,3} (Psi+_{n+e_j} (Gamma^1 - i Gamma^{j+1}) / 2 Psi_n + h.c.)
//       + sum_n Psi+_n (V_n Gamma^0 + m Gamma^1) Psi_n            (m = 2 in the paper)
// on Nx x Ny x Nz sites with 4 orbitals each, periodic in x and y, open in z. Gamma^0 is the
// identity, Gamma^1 = tau_z (x) 1, Gamma^{2,3,4} = tau_x (x) sigma_{x,y,z}: Hermitian and
// anticommuting. Row index = orbital + 4 (z + Nz (x + Nx y)): z fastest, so the farthest
// neighbour (in y) is 4 Nz Nx rows away and a block of vectors between a row and that neighbour
// stays in the GPU's L2 cache; a split by rows cuts between planes of constant y. V_n is a
// quantum-dot superlattice (discs of radius R_d on a square lattice of period P in the x-y plane,
// in the top `dot_layers` layers) plus uniform disorder in [-W/2, W/2]. Each row holds 13 entries
// (11 in the z surface layers).
//
// cubic_lattice: -t sum_<ij> c+_i c_j on an Nx x Ny x Nz lattice, periodic or open in each
// direction, whose eigenvalues are known in closed form (cubic_lattice_eigenvalues): the test
// matrix for densities of states.

#include <nearsparse/kpm/crs.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nearsparse::kpm {

struct topological_insulator {
  int nx = 100, ny = 100, nz = 40;
  double t = 1.0;              ///< hopping
  double mass = 2.0;           ///< coefficient of Gamma^1 on site (2 in the paper)
  double dot_potential = 0.0;  ///< V of the quantum dots (0: no dots)
  int dot_period = 0;          ///< superlattice period P in sites (0: no dots)
  double dot_radius = 0.0;     ///< disc radius in sites
  int dot_layers = 0;          ///< top layers holding dots (0: all)
  double disorder = 0.0;       ///< W: on-site energies uniform in [-W/2, W/2]
  std::uint64_t seed = 1;      ///< disorder seed

  std::int64_t rows() const { return 4 * std::int64_t(nx) * ny * nz; }
};

struct cubic_lattice {
  int nx = 16, ny = 16, nz = 16;
  double t = 1.0;
  bool periodic_x = true, periodic_y = true, periodic_z = true;
  std::int64_t rows() const { return std::int64_t(nx) * ny * nz; }
};

/// Rows [row_begin, row_end) of a matrix in CRS arrays on the host, with global columns.
template <class Scalar>
struct host_crs {
  std::int64_t rows = 0, cols = 0;
  std::vector<int> row_map;
  std::vector<int> columns;
  std::vector<Scalar> values;
};

/// Throws nearsparse::invalid_argument for sizes < 1, too many rows for int indices, or a
/// non-finite or negative parameter; names the field.
void validate(const topological_insulator& p);
void validate(const cubic_lattice& p);

host_crs<complex_double> assemble_rows(const topological_insulator& p, std::int64_t row_begin,
                                       std::int64_t row_end);
host_crs<double> assemble_rows(const cubic_lattice& p, std::int64_t row_begin,
                               std::int64_t row_end);

/// The N eigenvalues of the cubic lattice, ascending: -2t sum_d cos(theta_d) with theta = 2 pi
/// k / n (periodic) or pi k / (n + 1), k = 1..n (open); a direction of extent 1 adds nothing.
std::vector<double> cubic_lattice_eigenvalues(const cubic_lattice& p);

/// The host rows as a CRS matrix in ExecSpace's memory, or in MemorySpace (Scalar may widen
/// double to complex).
template <class Scalar, class ExecSpace, class HostScalar,
          class MemorySpace = typename ExecSpace::memory_space>
crs_matrix<Scalar, ExecSpace, MemorySpace> to_device(const ExecSpace& exec,
                                                     const host_crs<HostScalar>& h) {
  using crs = crs_matrix<Scalar, ExecSpace, MemorySpace>;
  const auto rows = std::size_t(h.rows), nnz = h.columns.size();
  typename crs::row_map_type::non_const_type row_map(std::string("nearsparse::kpm::H.row_map"),
                                                     rows + 1);
  typename crs::index_type::non_const_type entries(std::string("nearsparse::kpm::H.entries"), nnz);
  typename crs::values_type::non_const_type values(std::string("nearsparse::kpm::H.values"), nnz);
  auto hr = Kokkos::create_mirror_view(row_map);
  auto he = Kokkos::create_mirror_view(entries);
  auto hv = Kokkos::create_mirror_view(values);
  for (std::size_t i = 0; i <= rows; ++i) hr(i) = h.row_map[i];
  for (std::size_t e = 0; e < nnz; ++e) {
    he(e) = h.columns[e];
    hv(e) = Scalar(h.values[e]);
  }
  Kokkos::deep_copy(exec, row_map, hr);
  Kokkos::deep_copy(exec, entries, he);
  Kokkos::deep_copy(exec, values, hv);
  exec.fence();
  return crs("nearsparse::kpm::H", int(h.rows), int(h.cols), int(nnz), values, row_map, entries);
}

/// The whole topological-insulator Hamiltonian (complex double) on `exec`.
template <class ExecSpace>
crs_matrix<complex_double, ExecSpace> make_topological_insulator(const ExecSpace& exec,
                                                                 const topological_insulator& p) {
  validate(p);
  return to_device<complex_double>(exec, assemble_rows(p, 0, p.rows()));
}

/// The whole cubic-lattice Hamiltonian, as double or complex<double>, on `exec`.
template <class Scalar = double, class ExecSpace>
crs_matrix<Scalar, ExecSpace> make_cubic_lattice(const ExecSpace& exec, const cubic_lattice& p) {
  static_assert(is_kpm_scalar_v<Scalar>,
                "nearsparse::kpm::make_cubic_lattice: the scalar must be double or "
                "Kokkos::complex<double>");
  validate(p);
  return to_device<Scalar>(exec, assemble_rows(p, 0, p.rows()));
}

}  // namespace nearsparse::kpm
