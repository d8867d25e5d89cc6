#pragma once
// The model matrices of spamm/model_matrices.hpp in the library's CRS type, for sizes where an
// N x N array does not fit: the dimerized chain and cubic lattice Hamiltonians, and the
// exponentially decaying overlap matrices cut off below a threshold.
//
// Entries. Every stored entry equals the entry of the dense filler (fill_dimerized_chain,
// fill_cubic_lattice, fill_overlap_chain, fill_overlap_lattice) at the same position, computed
// by the same expression in double and then converted to Scalar (the on-site disorder by the
// same hash of seed and site):
//   dimerized_chain_crs  the diagonal and the two off-diagonals (|i - j| <= 1): 3 N - 2 entries
//   cubic_lattice_crs    each site and its nearest neighbours (|dx| + |dy| + |dz| <= 1)
//   overlap_chain_crs    S_ij = exp(-alpha |i - j|) where S_ij >= cutoff: the band |i - j| <= r,
//                        r the largest distance with exp(-alpha r) >= cutoff
//   overlap_lattice_crs  S_ij = exp(-alpha (|dx| + |dy| + |dz|)) where S_ij >= cutoff: the
//                        sites within L1 distance r of site i, r as for the chain
// The Hamiltonians store their stencil (diagonal and hoppings) whatever the values, a zero
// hopping or on-site energy included, and nothing outside it (the exact structural zeros).
// Columns are ascending within every row. Sites are ordered as in the dense fillers: (x, y, z)
// at index x + nx (y + ny z).
//
// Cost. All work runs on `exec` with Kokkos kernels ("nearsparse::spamm::<name>_count", a
// scan of the row lengths, computed in closed form (chains) or by counting the sites within
// distance r (lattices), then "nearsparse::spamm::<name>_fill"): O(N + nnz) for the chains
// and the cubic lattice, O(N r^2 + nnz) for the overlap lattice; memory O(N + nnz), no N x N
// array. The number of entries is computed on the host in closed form before anything is
// allocated (O(nx ny) for the overlap lattice). Each function waits for exec before returning.
//
// Limits. The CRS type counts rows, columns and entries with int: N and nnz must not exceed
// 2^31 - 1 (refused with nearsparse::invalid_argument naming the count).

#include <nearsparse/core/crs_matrix.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nearsparse::spamm {

namespace detail {

/// The rows of the dimerized chain.
struct dimerized_chain_rows {
  long n;
  double t1, t2, delta, w;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION int count(long i) const {
    return 1 + (i > 0 ? 1 : 0) + (i + 1 < n ? 1 : 0);
  }
  template <class Entries, class Values>
  KOKKOS_INLINE_FUNCTION void fill(long i, long p, const Entries& entries,
                                   const Values& values) const {
    using value = typename Values::non_const_value_type;
    if (i > 0) {
      entries(p) = static_cast<int>(i - 1);
      values(p++) = static_cast<value>(((i - 1) % 2 == 0) ? -t1 : -t2);
    }
    entries(p) = static_cast<int>(i);
    values(p++) = static_cast<value>(((i % 2 == 0) ? delta : -delta) + onsite_disorder(seed, i, w));
    if (i + 1 < n) {
      entries(p) = static_cast<int>(i + 1);
      values(p) = static_cast<value>((i % 2 == 0) ? -t1 : -t2);
    }
  }
};

/// The rows of the cubic lattice.
struct cubic_lattice_rows {
  long nx, ny, nz;
  double t, delta, w;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION int count(long i) const {
    const long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    return 1 + (z > 0) + (y > 0) + (x > 0) + (x + 1 < nx) + (y + 1 < ny) + (z + 1 < nz);
  }
  template <class Entries, class Values>
  KOKKOS_INLINE_FUNCTION void fill(long i, long p, const Entries& entries,
                                   const Values& values) const {
    using value = typename Values::non_const_value_type;
    const long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    const value hop = static_cast<value>(-t);
    // Ascending columns: z - 1, y - 1, x - 1, the site, x + 1, y + 1, z + 1.
    if (z > 0) {
      entries(p) = static_cast<int>(i - nx * ny);
      values(p++) = hop;
    }
    if (y > 0) {
      entries(p) = static_cast<int>(i - nx);
      values(p++) = hop;
    }
    if (x > 0) {
      entries(p) = static_cast<int>(i - 1);
      values(p++) = hop;
    }
    entries(p) = static_cast<int>(i);
    values(p++) =
        static_cast<value>((((x + y + z) % 2 == 0) ? delta : -delta) + onsite_disorder(seed, i, w));
    if (x + 1 < nx) {
      entries(p) = static_cast<int>(i + 1);
      values(p++) = hop;
    }
    if (y + 1 < ny) {
      entries(p) = static_cast<int>(i + nx);
      values(p++) = hop;
    }
    if (z + 1 < nz) {
      entries(p) = static_cast<int>(i + nx * ny);
      values(p) = hop;
    }
  }
};

/// The rows of the overlap chain cut at distance r.
struct overlap_chain_rows {
  long n, r;
  double alpha;
  KOKKOS_INLINE_FUNCTION int count(long i) const {
    const long lo = i - r < 0 ? 0 : i - r, hi = i + r > n - 1 ? n - 1 : i + r;
    return static_cast<int>(hi - lo + 1);
  }
  template <class Entries, class Values>
  KOKKOS_INLINE_FUNCTION void fill(long i, long p, const Entries& entries,
                                   const Values& values) const {
    using value = typename Values::non_const_value_type;
    const long lo = i - r < 0 ? 0 : i - r, hi = i + r > n - 1 ? n - 1 : i + r;
    for (long j = lo; j <= hi; ++j, ++p) {
      const double d = static_cast<double>(i > j ? i - j : j - i);
      entries(p) = static_cast<int>(j);
      values(p) = static_cast<value>(::exp(-alpha * d));
    }
  }
};

/// The rows of the overlap lattice cut at L1 distance r.
struct overlap_lattice_rows {
  long nx, ny, nz, r;
  double alpha;
  KOKKOS_INLINE_FUNCTION static long lo(long c, long rem) { return c - rem < 0 ? 0 : c - rem; }
  KOKKOS_INLINE_FUNCTION static long hi(long c, long rem, long extent) {
    return c + rem > extent - 1 ? extent - 1 : c + rem;
  }
  KOKKOS_INLINE_FUNCTION static long dist(long a, long b) { return a > b ? a - b : b - a; }
  KOKKOS_INLINE_FUNCTION int count(long i) const {
    const long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    long c = 0;
    for (long zj = lo(z, r); zj <= hi(z, r, nz); ++zj) {
      const long rz = r - dist(z, zj);
      for (long yj = lo(y, rz); yj <= hi(y, rz, ny); ++yj) {
        const long ry = rz - dist(y, yj);
        c += hi(x, ry, nx) - lo(x, ry) + 1;
      }
    }
    return static_cast<int>(c);
  }
  template <class Entries, class Values>
  KOKKOS_INLINE_FUNCTION void fill(long i, long p, const Entries& entries,
                                   const Values& values) const {
    using value = typename Values::non_const_value_type;
    const long x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
    for (long zj = lo(z, r); zj <= hi(z, r, nz); ++zj) {
      const long rz = r - dist(z, zj);
      for (long yj = lo(y, rz); yj <= hi(y, rz, ny); ++yj) {
        const long ry = rz - dist(y, yj);
        for (long xj = lo(x, ry); xj <= hi(x, ry, nx); ++xj, ++p) {
          const long d = dist(x, xj) + dist(y, yj) + dist(z, zj);
          entries(p) = static_cast<int>(xj + nx * (yj + ny * zj));
          values(p) = static_cast<value>(::exp(-alpha * static_cast<double>(d)));
        }
      }
    }
  }
};

/// The largest distance d in [0, max_distance] with exp(-alpha d) >= cutoff (alpha > 0,
/// cutoff in (0, 1]; 0 when max_distance < 0).
inline long overlap_radius(double alpha, double cutoff, long max_distance) {
  if (max_distance <= 0) return 0;
  const double estimate = -std::log(cutoff) / alpha;
  long r =
      estimate >= static_cast<double>(max_distance) ? max_distance : static_cast<long>(estimate);
  while (r < max_distance && std::exp(-alpha * static_cast<double>(r + 1)) >= cutoff) ++r;
  while (r > 0 && std::exp(-alpha * static_cast<double>(r)) < cutoff) --r;
  return r;
}

inline void require_crs_rows(const char* fn, const char* argument, long n) {
  require(
      n <= std::numeric_limits<int>::max(), fn, argument,
      nearsparse::detail::concat("gives ", n, " rows; the CRS type counts rows with int (at most ",
                                 std::numeric_limits<int>::max(), ")"));
}

inline void require_crs_entries(const char* fn, const char* argument, std::int64_t nnz,
                                const std::string& what) {
  require(nnz <= std::numeric_limits<int>::max(), fn, argument,
          nearsparse::detail::concat("(", what, ") gives a matrix of ", nnz,
                                     " entries; the CRS type counts entries with int (at most ",
                                     std::numeric_limits<int>::max(), ")"));
}

/// Row i's entry count from the generator `rows`, scanned into the CRS row offsets: row_map(i)
/// the entries before row i, and row_map(n) the total.
template <class Rows, class RowMap>
struct model_row_count_kernel {
  Rows rows;
  RowMap row_map;
  long n;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, long& update, const bool final) const {
    const int c = rows.count(i);
    if (final) row_map(i) = static_cast<int>(update);
    update += c;
    if (final && i == n - 1) row_map(n) = static_cast<int>(update);
  }
};

/// Row i's column indices and values from the generator `rows`, written from row_map(i) on.
template <class Rows, class RowMap, class Entries, class Values>
struct model_row_fill_kernel {
  Rows rows;
  RowMap row_map;
  Entries entries;
  Values values;

  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    rows.fill(i, row_map(i), entries, values);
  }
};

/// The n x n CRS matrix of nnz entries whose rows `rows` counts and fills (on exec).
template <class Scalar, class ExecSpace, class Rows>
crs_matrix<Scalar, ExecSpace> build_model_crs(const ExecSpace& exec, const std::string& name,
                                              long n, std::int64_t nnz, const Rows& rows) {
  using crs = crs_matrix<Scalar, ExecSpace>;
  typename crs::row_map_type::non_const_type row_map(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, name + "::row_map"),
      std::size_t(n) + 1);
  typename crs::index_type::non_const_type entries(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, name + "::entries"), std::size_t(nnz));
  typename crs::values_type::non_const_type values(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, name + "::values"), std::size_t(nnz));
  if (n == 0) {
    Kokkos::deep_copy(exec, row_map, 0);
  } else {
    Kokkos::parallel_scan(name + "_count",
                          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(exec, 0, n),
                          model_row_count_kernel<Rows, decltype(row_map)>{rows, row_map, n});
    Kokkos::parallel_for(
        name + "_fill", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(exec, 0, n),
        model_row_fill_kernel<Rows, decltype(row_map), decltype(entries), decltype(values)>{
            rows, row_map, entries, values});
  }
  exec.fence();
  return crs(name, static_cast<int>(n), static_cast<int>(n), static_cast<int>(nnz), values, row_map,
             entries);
}

}  // namespace detail

/// The dimerized chain of n sites (fill_dimerized_chain) in CRS form: 3 n - 2 entries.
template <class Scalar, class ExecSpace>
crs_matrix<Scalar, ExecSpace> dimerized_chain_crs(const ExecSpace& exec, long n,
                                                  const chain_model& m = {}) {
  constexpr const char* fn = "nearsparse::spamm::dimerized_chain_crs";
  require(n >= 0, fn, "n", nearsparse::detail::concat("is ", n, "; it must not be negative"));
  detail::require_crs_rows(fn, "n", n);
  require(std::isfinite(m.t1) && std::isfinite(m.t2) && std::isfinite(m.delta), fn, "model",
          nearsparse::detail::concat("has t1 = ", m.t1, ", t2 = ", m.t2, ", delta = ", m.delta,
                                     "; they must be finite"));
  require_nonnegative(fn, "model.disorder", m.disorder);
  const std::int64_t nnz = n == 0 ? 0 : 3 * std::int64_t(n) - 2;
  detail::require_crs_entries(fn, "n", nnz, nearsparse::detail::concat("n = ", n));
  return detail::build_model_crs<Scalar>(
      exec, "nearsparse::spamm::dimerized_chain_crs", n, nnz,
      detail::dimerized_chain_rows{n, m.t1, m.t2, m.delta, m.disorder, m.seed});
}

/// The cubic lattice of m.nx x m.ny x m.nz sites (fill_cubic_lattice) in CRS form.
template <class Scalar, class ExecSpace>
crs_matrix<Scalar, ExecSpace> cubic_lattice_crs(const ExecSpace& exec, const cubic_model& m = {}) {
  constexpr const char* fn = "nearsparse::spamm::cubic_lattice_crs";
  require(m.nx >= 0 && m.ny >= 0 && m.nz >= 0, fn, "model",
          nearsparse::detail::concat("has nx, ny, nz = ", m.nx, ", ", m.ny, ", ", m.nz,
                                     "; they must not be negative"));
  const std::int64_t nx = m.nx, ny = m.ny, nz = m.nz, n = nx * ny * nz;
  detail::require_crs_rows(fn, "model", n);
  require(
      std::isfinite(m.t) && std::isfinite(m.delta), fn, "model",
      nearsparse::detail::concat("has t = ", m.t, ", delta = ", m.delta, "; they must be finite"));
  require_nonnegative(fn, "model.disorder", m.disorder);
  const std::int64_t nnz =
      n == 0 ? 0 : n + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1));
  detail::require_crs_entries(fn, "model", nnz,
                              nearsparse::detail::concat(nx, " x ", ny, " x ", nz, " sites"));
  return detail::build_model_crs<Scalar>(
      exec, "nearsparse::spamm::cubic_lattice_crs", n, nnz,
      detail::cubic_lattice_rows{nx, ny, nz, m.t, m.delta, m.disorder, m.seed});
}

/// S_ij = exp(-alpha |i-j|) stored where S_ij >= cutoff (cutoff in (0, 1]); n x n.
template <class Scalar, class ExecSpace>
crs_matrix<Scalar, ExecSpace> overlap_chain_crs(const ExecSpace& exec, long n, double alpha,
                                                double cutoff) {
  constexpr const char* fn = "nearsparse::spamm::overlap_chain_crs";
  require(n >= 0, fn, "n", nearsparse::detail::concat("is ", n, "; it must not be negative"));
  detail::require_crs_rows(fn, "n", n);
  require_positive(fn, "alpha", alpha);
  require(std::isfinite(cutoff) && cutoff > 0.0 && cutoff <= 1.0, fn, "cutoff",
          nearsparse::detail::concat("is ", cutoff, "; it must lie in (0, 1]"));
  const long r = detail::overlap_radius(alpha, cutoff, n - 1);
  // Row i holds min(i, r) + min(n - 1 - i, r) + 1 entries.
  const std::int64_t nnz =
      n == 0 ? 0 : std::int64_t(n) * (2 * std::int64_t(r) + 1) - std::int64_t(r) * (r + 1);
  detail::require_crs_entries(
      fn, "cutoff", nnz,
      nearsparse::detail::concat("n = ", n, ", alpha = ", alpha, ", cutoff = ", cutoff,
                                 ": the band |i - j| <= ", r));
  return detail::build_model_crs<Scalar>(exec, "nearsparse::spamm::overlap_chain_crs", n, nnz,
                                         detail::overlap_chain_rows{n, r, alpha});
}

/// S_ij = exp(-alpha (|dx|+|dy|+|dz|)) stored where >= cutoff; N = nx ny nz, site order as
/// fill_overlap_lattice.
template <class Scalar, class ExecSpace>
crs_matrix<Scalar, ExecSpace> overlap_lattice_crs(const ExecSpace& exec, int nx, int ny, int nz,
                                                  double alpha, double cutoff) {
  constexpr const char* fn = "nearsparse::spamm::overlap_lattice_crs";
  require(
      nx >= 0 && ny >= 0 && nz >= 0, fn, "nx, ny, nz",
      nearsparse::detail::concat("are ", nx, ", ", ny, ", ", nz, "; they must not be negative"));
  const std::int64_t n = std::int64_t(nx) * ny * nz;
  detail::require_crs_rows(fn, "nx, ny, nz", n);
  require_positive(fn, "alpha", alpha);
  require(std::isfinite(cutoff) && cutoff > 0.0 && cutoff <= 1.0, fn, "cutoff",
          nearsparse::detail::concat("is ", cutoff, "; it must lie in (0, 1]"));
  const long r =
      n == 0 ? 0 : detail::overlap_radius(alpha, cutoff, long(nx) + long(ny) + long(nz) - 3);
  std::int64_t nnz = 0;
  if (n > 0) {
    // Pairs at distance a along one axis of extent e: e for a = 0, 2 (e - a) for 0 < a < e.
    const auto pairs = [](std::int64_t e, std::int64_t a) {
      return a == 0 ? e : (a < e ? 2 * (e - a) : std::int64_t(0));
    };
    std::vector<std::int64_t> z_prefix(std::size_t(r) + 1);  // pairs along z at distance <= c
    for (long c = 0; c <= r; ++c) z_prefix[c] = (c > 0 ? z_prefix[c - 1] : 0) + pairs(nz, c);
    for (long a = 0; a <= r && a < nx; ++a)
      for (long b = 0; a + b <= r && b < ny; ++b)
        nnz += pairs(nx, a) * pairs(ny, b) * z_prefix[std::size_t(r - a - b)];
  }
  detail::require_crs_entries(
      fn, "cutoff", nnz,
      nearsparse::detail::concat(nx, " x ", ny, " x ", nz, " sites, alpha = ", alpha,
                                 ", cutoff = ", cutoff, ": L1 distance <= ", r));
  return detail::build_model_crs<Scalar>(exec, "nearsparse::spamm::overlap_lattice_crs", long(n),
                                         nnz, detail::overlap_lattice_rows{nx, ny, nz, r, alpha});
}

}  // namespace nearsparse::spamm
