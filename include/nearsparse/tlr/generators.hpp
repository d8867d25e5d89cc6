#pragma once
// Dense test matrices with data-sparse structure, the inputs of compression and TLR products:
//   hilbert                 a_ij = 1 / (i + j + 1), singular values decaying exponentially (the
//                           kernel of the TLR-GEMM paper's experiments);
//   exponential_covariance  a_ij = exp(-|x_i - x_j| / length) on n random points in the unit
//                           square or cube, ordered along a Morton (Z-order) curve so that a tile
//                           couples two compact clusters and far tiles have low rank (the
//                           climate and spatial-statistics matrices TLR methods target).

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nearsparse::tlr {

namespace detail {

/// Element (i, j) of the Hilbert matrix, 1 / (i + j + 1), into a.
template <class MemorySpace>
struct hilbert_kernel {
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> a;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, const std::size_t j) const {
    a(i, j) = 1.0 / static_cast<double>(i + j + 1);
  }
};

/// Element (i, j) of the exponential covariance, exp(-|x_i - x_j| * inv), of the d-dimensional
/// points (row-major) into a.
template <class MemorySpace>
struct exponential_covariance_kernel {
  Kokkos::View<double*, MemorySpace> points;
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> a;
  int d;
  double inv;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, const std::size_t j) const {
    double r2 = 0;
    for (int k = 0; k < d; ++k) {
      const double x = points(i * d + k) - points(j * d + k);
      r2 += x * x;
    }
    a(i, j) = ::exp(-::sqrt(r2) * inv);
  }
};

}  // namespace detail

/// The m x n Hilbert matrix, column-major, computed on exec.
template <class ExecSpace>
Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> hilbert(
    const ExecSpace& exec, std::size_t m, std::size_t n) {
  Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> a(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::hilbert")), m,
      n);
  Kokkos::parallel_for("nearsparse::tlr::hilbert",
                       Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left>>(
                           exec, {0, 0}, {m, n}),
                       detail::hilbert_kernel<typename ExecSpace::memory_space>{a});
  return a;
}

/// n points uniform in [0, 1)^dimension from `seed`, sorted by their Morton code; row-major
/// (point p's coordinates at [p * dimension, (p + 1) * dimension)). Throws
/// nearsparse::invalid_argument unless dimension is 2 or 3.
std::vector<double> morton_ordered_points(std::size_t n, int dimension, std::uint64_t seed);

/// The n x n exponential covariance matrix of morton_ordered_points(n, dimension, seed) with
/// correlation length `length` (> 0), column-major, computed on exec.
template <class ExecSpace>
Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> exponential_covariance(
    const ExecSpace& exec, std::size_t n, int dimension = 2, double length = 0.1,
    std::uint64_t seed = 7) {
  require(std::isfinite(length) && length > 0, "nearsparse::tlr::exponential_covariance", "length",
          nearsparse::detail::concat("must be finite and > 0, got ", length));
  using memory_space = typename ExecSpace::memory_space;
  const std::vector<double> host = morton_ordered_points(n, dimension, seed);
  Kokkos::View<double*, memory_space> points(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::points")),
      host.size());
  Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> staged(
      host.data(), host.size());
  Kokkos::deep_copy(exec, points, staged);
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> a(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::covariance")),
      n, n);
  const int d = dimension;
  const double inv = 1.0 / length;
  Kokkos::parallel_for("nearsparse::tlr::exponential_covariance",
                       Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2, Kokkos::Iterate::Left>>(
                           exec, {0, 0}, {n, n}),
                       detail::exponential_covariance_kernel<memory_space>{points, a, d, inv});
  exec.fence();  // `host` dies here
  return a;
}

}  // namespace nearsparse::tlr
