#pragma once
// Model matrices for the SpAMM matrix functions (spamm/matrix_functions.hpp): gapped
// tight-binding Hamiltonians whose density matrices decay exponentially, an exponentially
// decaying overlap matrix with known conditioning, and Gershgorin bounds of a spectrum.
//
// Both Hamiltonians are bipartite hoppings plus a staggered on-site energy +Delta on one
// sublattice and -Delta on the other. The hopping part K anticommutes with the staggered part
// P (K P = -P K), so H^2 = K^2 + Delta^2 I and every eigenvalue is +-sqrt(Delta^2 + k^2) for an
// eigenvalue k of K: without disorder the spectrum is symmetric about 0, the gap around 0 is at
// least 2 Delta (closed form below), and half filling (N/2 occupied states, N even) is gapped.
// Disorder adds on-site energies uniform in [-W/2, W/2] (a hash of seed and site: the same on
// every backend), which shrinks the gap by at most W.
//
//   dimerized chain (fill_dimerized_chain): N sites, open ends, bonds t1, t2, t1, ... (bond i
//     between sites i and i+1 has t1 for even i), on-site +Delta on even sites, -Delta on odd.
//     For N even both end bonds are t1; with |t1| > |t2| (the trivial phase, no edge states)
//     every eigenvalue lies in the bulk bands +-[sqrt(Delta^2 + (t1 - t2)^2),
//     sqrt(Delta^2 + (t1 + t2)^2)]: the gap is at least 2 sqrt(Delta^2 + (t1 - t2)^2)
//     (dimerized_chain_gap). With |t1| < |t2| edge states sit at +-Delta: the gap is 2 Delta.
//   cubic lattice (fill_cubic_lattice): nx x ny x nz sites, site (x, y, z) at index
//     x + nx (y + ny z), open boundaries, nearest-neighbour hopping t, on-site +Delta where
//     x + y + z is even and -Delta where it is odd (a two-site basis, rock-salt order). The
//     eigenvalues of the hopping are 2 t (cos(pi a/(nx+1)) + cos(pi b/(ny+1)) + cos(pi c/(nz+1))),
//     so the gap is exactly 2 sqrt(Delta^2 + k_min^2) >= 2 Delta, k_min the smallest |k|
//     (cubic_lattice_gap).
//
// The overlap matrices are Kac-Murdock-Szego matrices S_ij = rho^|i-j|, rho = exp(-alpha), and
// their 3-D tensor products S = S_x (x) S_y (x) S_z, S_(i, j) = rho^(|dx| + |dy| + |dz|), both
// symmetric positive definite. The 1-D symbol is the Poisson kernel (1 - rho^2) / (1 - 2 rho
// cos theta + rho^2), so every eigenvalue of S lies in ((1 - rho)/(1 + rho), (1 + rho)/(1 - rho))
// and cond(S) < coth(alpha/2)^2 in 1-D, coth(alpha/2)^6 in 3-D (overlap_condition_bound).

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace nearsparse::spamm {

/// The dimerized chain: hoppings t1 (even bonds) and t2 (odd bonds), staggered on-site +-delta,
/// on-site disorder uniform in [-disorder/2, disorder/2] drawn from `seed`.
struct chain_model {
  double t1 = 1.0;
  double t2 = 0.5;
  double delta = 0.5;
  double disorder = 0.0;
  std::uint64_t seed = 1;
};

/// The cubic lattice: hopping t, staggered on-site +-delta, disorder as for the chain.
struct cubic_model {
  int nx = 8, ny = 8, nz = 8;
  double t = 1.0;
  double delta = 1.0;
  double disorder = 0.0;
  std::uint64_t seed = 1;
};

/// Spectral bounds: every eigenvalue of a symmetric matrix lies in [lower, upper].
struct spectral_bounds {
  double lower = 0.0;
  double upper = 0.0;
};

/// The gap around 0 of the disorder-free dimerized chain with an even number of sites (see the
/// header's comment): 2 sqrt(delta^2 + (t1 - t2)^2) when |t1| > |t2|, 2 |delta| otherwise.
inline double dimerized_chain_gap(const chain_model& m) {
  const double d = std::abs(m.t1) > std::abs(m.t2) ? std::abs(m.t1) - std::abs(m.t2) : 0.0;
  return 2.0 * std::sqrt(m.delta * m.delta + d * d);
}

/// The gap around 0 of the disorder-free cubic lattice: 2 sqrt(delta^2 + k_min^2), k_min the
/// smallest magnitude of an eigenvalue of the hopping.
inline double cubic_lattice_gap(const cubic_model& m) {
  const double pi = 3.14159265358979323846;
  double k_min = -1.0;
  for (int a = 1; a <= m.nx; ++a)
    for (int b = 1; b <= m.ny; ++b)
      for (int c = 1; c <= m.nz; ++c) {
        const double k = std::abs(2.0 * m.t *
                                  (std::cos(pi * a / (m.nx + 1)) + std::cos(pi * b / (m.ny + 1)) +
                                   std::cos(pi * c / (m.nz + 1))));
        if (k_min < 0 || k < k_min) k_min = k;
      }
  if (k_min < 0) k_min = 0;
  return 2.0 * std::sqrt(m.delta * m.delta + k_min * k_min);
}

/// An upper bound of cond(S) for the overlap matrices below: coth(alpha/2)^(2 dimensions).
inline double overlap_condition_bound(double alpha, int dimensions) {
  const double coth = 1.0 / std::tanh(alpha / 2.0);
  return std::pow(coth, 2.0 * dimensions);
}

namespace detail {
KOKKOS_INLINE_FUNCTION double onsite_disorder(std::uint64_t seed, long site, double width) {
  if (width == 0.0) return 0.0;
  return width * (nearsparse::detail::uniform01(seed, static_cast<std::uint64_t>(site), 7) - 0.5);
}

/// Element (i, j) of the dimerized chain into h.
template <class HView>
struct dimerized_chain_element {
  HView h;
  double t1, t2, delta, w;
  std::uint64_t seed;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    double v = 0.0;
    if (i == j) {
      v = ((i % 2 == 0) ? delta : -delta) + onsite_disorder(seed, i, w);
    } else if (i == j + 1 || j == i + 1) {
      const long bond = i < j ? i : j;
      v = (bond % 2 == 0) ? -t1 : -t2;
    }
    h(i, j) = static_cast<typename HView::non_const_value_type>(v);
  }
};

/// Element (i, j) of the cubic lattice (nx x ny x nz sites, x fastest) into h.
template <class HView>
struct cubic_lattice_element {
  HView h;
  long nx, ny;
  double t, delta, w;
  std::uint64_t seed;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const long xi = i % nx, yi = (i / nx) % ny, zi = i / (nx * ny);
    const long xj = j % nx, yj = (j / nx) % ny, zj = j / (nx * ny);
    const long d = (xi > xj ? xi - xj : xj - xi) + (yi > yj ? yi - yj : yj - yi) +
                   (zi > zj ? zi - zj : zj - zi);
    double v = 0.0;
    if (d == 0) {
      v = (((xi + yi + zi) % 2 == 0) ? delta : -delta) + onsite_disorder(seed, i, w);
    } else if (d == 1) {
      v = -t;
    }
    h(i, j) = static_cast<typename HView::non_const_value_type>(v);
  }
};

/// Element (i, j) of the overlap chain exp(-alpha |i - j|) into s.
template <class SView>
struct overlap_chain_element {
  SView s;
  double alpha;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const double d = static_cast<double>(i > j ? i - j : j - i);
    s(i, j) = static_cast<typename SView::non_const_value_type>(::exp(-alpha * d));
  }
};

/// Element (i, j) of the lattice overlap exp(-alpha (|dx| + |dy| + |dz|)) into s.
template <class SView>
struct overlap_lattice_element {
  SView s;
  long lx, ly;
  double alpha;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const long xi = i % lx, yi = (i / lx) % ly, zi = i / (lx * ly);
    const long xj = j % lx, yj = (j / lx) % ly, zj = j / (lx * ly);
    const long d = (xi > xj ? xi - xj : xj - xi) + (yi > yj ? yi - yj : yj - yi) +
                   (zi > zj ? zi - zj : zj - zi);
    s(i, j) =
        static_cast<typename SView::non_const_value_type>(::exp(-alpha * static_cast<double>(d)));
  }
};

/// One team per row i of a: a_ii - r_i (Upper false) or a_ii + r_i (Upper true), r_i the sum of
/// |a_ij| over j != i, reduced by the caller's Min or Max.
template <class Member, class AView, bool Upper>
struct gershgorin_row_end {
  AView a;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, double& end) const {
    const int i = team.league_rank();
    double r = 0.0;
    nearsparse::detail::team_reduce_fenced(
        team, n,
        [&](const int j, double& s) {
          const double v = static_cast<double>(a(i, j));
          if (j != i) s += v < 0 ? -v : v;
        },
        r);
    const double v = static_cast<double>(a(i, i)) + (Upper ? r : -r);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (Upper ? v > end : v < end) end = v;
    });
  }
};
}  // namespace detail

/// Fills the N x N matrix h with the dimerized chain of N sites (see the header's comment).
template <class ExecSpace, class HView>
void fill_dimerized_chain(const ExecSpace& exec, const HView& h, const chain_model& m = {}) {
  static_assert_matrix<ExecSpace, HView>();
  constexpr const char* fn = "nearsparse::spamm::fill_dimerized_chain";
  require(h.extent(0) == h.extent(1), fn, "H",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(h),
                                     "; it must be square"));
  require(std::isfinite(m.t1) && std::isfinite(m.t2) && std::isfinite(m.delta), fn, "model",
          nearsparse::detail::concat("has t1 = ", m.t1, ", t2 = ", m.t2, ", delta = ", m.delta,
                                     "; they must be finite"));
  require_nonnegative(fn, "model.disorder", m.disorder);
  const long n = static_cast<long>(h.extent(0));
  const double t1 = m.t1, t2 = m.t2, delta = m.delta, w = m.disorder;
  const std::uint64_t seed = m.seed;
  nearsparse::detail::for_each_element(
      exec, "nearsparse::spamm::fill_dimerized_chain", n, n,
      nearsparse::detail::second_index_contiguous(h),
      detail::dimerized_chain_element<HView>{h, t1, t2, delta, w, seed});
}

/// Fills the N x N matrix h, N = nx ny nz, with the cubic lattice (see the header's comment).
template <class ExecSpace, class HView>
void fill_cubic_lattice(const ExecSpace& exec, const HView& h, const cubic_model& m = {}) {
  static_assert_matrix<ExecSpace, HView>();
  constexpr const char* fn = "nearsparse::spamm::fill_cubic_lattice";
  require(m.nx >= 0 && m.ny >= 0 && m.nz >= 0, fn, "model",
          nearsparse::detail::concat("has nx, ny, nz = ", m.nx, ", ", m.ny, ", ", m.nz,
                                     "; they must not be negative"));
  const std::size_t sites = std::size_t(m.nx) * std::size_t(m.ny) * std::size_t(m.nz);
  require_extents(fn, "H", h, sites, sites);
  require(
      std::isfinite(m.t) && std::isfinite(m.delta), fn, "model",
      nearsparse::detail::concat("has t = ", m.t, ", delta = ", m.delta, "; they must be finite"));
  require_nonnegative(fn, "model.disorder", m.disorder);
  const long n = static_cast<long>(sites);
  const long nx = m.nx, ny = m.ny;
  const double t = m.t, delta = m.delta, w = m.disorder;
  const std::uint64_t seed = m.seed;
  nearsparse::detail::for_each_element(
      exec, "nearsparse::spamm::fill_cubic_lattice", n, n,
      nearsparse::detail::second_index_contiguous(h),
      detail::cubic_lattice_element<HView>{h, nx, ny, t, delta, w, seed});
}

/// Fills the N x N overlap matrix S_ij = exp(-alpha |i - j|) (alpha > 0; see the header's
/// comment for its conditioning).
template <class ExecSpace, class SView>
void fill_overlap_chain(const ExecSpace& exec, const SView& s, double alpha = 1.0) {
  static_assert_matrix<ExecSpace, SView>();
  constexpr const char* fn = "nearsparse::spamm::fill_overlap_chain";
  require(s.extent(0) == s.extent(1), fn, "S",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(s),
                                     "; it must be square"));
  require_positive(fn, "alpha", alpha);
  const long n = static_cast<long>(s.extent(0));
  nearsparse::detail::for_each_element(exec, "nearsparse::spamm::fill_overlap_chain", n, n,
                                       nearsparse::detail::second_index_contiguous(s),
                                       detail::overlap_chain_element<SView>{s, alpha});
}

/// Fills the N x N overlap matrix of an nx x ny x nz lattice (N = nx ny nz, site (x, y, z) at
/// x + nx (y + ny z)): S_ij = exp(-alpha (|dx| + |dy| + |dz|)).
template <class ExecSpace, class SView>
void fill_overlap_lattice(const ExecSpace& exec, const SView& s, int nx, int ny, int nz,
                          double alpha = 1.0) {
  static_assert_matrix<ExecSpace, SView>();
  constexpr const char* fn = "nearsparse::spamm::fill_overlap_lattice";
  require(
      nx >= 0 && ny >= 0 && nz >= 0, fn, "nx, ny, nz",
      nearsparse::detail::concat("are ", nx, ", ", ny, ", ", nz, "; they must not be negative"));
  const std::size_t sites = std::size_t(nx) * std::size_t(ny) * std::size_t(nz);
  require_extents(fn, "S", s, sites, sites);
  require_positive(fn, "alpha", alpha);
  const long n = static_cast<long>(sites), lx = nx, ly = ny;
  nearsparse::detail::for_each_element(exec, "nearsparse::spamm::fill_overlap_lattice", n, n,
                                       nearsparse::detail::second_index_contiguous(s),
                                       detail::overlap_lattice_element<SView>{s, lx, ly, alpha});
}

/// Gershgorin bounds of a square matrix's spectrum: [min_i (a_ii - r_i), max_i (a_ii + r_i)],
/// r_i = sum_(j != i) |a_ij|, computed on exec (one team per row). {0, 0} for an empty matrix.
template <class ExecSpace, class AView>
spectral_bounds gershgorin_bounds(const ExecSpace& exec, const AView& a) {
  static_assert_matrix<ExecSpace, AView>();
  constexpr const char* fn = "nearsparse::spamm::gershgorin_bounds";
  require(a.extent(0) == a.extent(1), fn, "A",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(a),
                                     "; it must be square"));
  const int n = static_cast<int>(a.extent(0));
  if (n == 0) return {};
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  double lower = 0.0, upper = 0.0;
  Kokkos::parallel_reduce("nearsparse::spamm::gershgorin_lower", team_policy(exec, n, Kokkos::AUTO),
                          detail::gershgorin_row_end<member, AView, false>{a, n},
                          Kokkos::Min<double>(lower));
  Kokkos::parallel_reduce("nearsparse::spamm::gershgorin_upper", team_policy(exec, n, Kokkos::AUTO),
                          detail::gershgorin_row_end<member, AView, true>{a, n},
                          Kokkos::Max<double>(upper));
  exec.fence();
  return {lower, upper};
}

}  // namespace nearsparse::spamm
