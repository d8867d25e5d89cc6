#pragma once
// CDM compact diagonal storage of a square n x n matrix. Compact diagonal k (0 <= k < n) is
// superdiagonal k stacked on subdiagonal n - k: a vector of length n whose entry p is element
// (p, (p + k) mod n). Only the stored compact diagonals are kept, as rows of a count x n array, so
// every diagonal has the same length and a banded matrix is a short, dense block (its compact
// diagonals carry a few explicit zeros where a superdiagonal's partner subdiagonal lies outside
// the band). Transposed access reads compact diagonal n - k shifted by k: no data moves.

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/diagonal/detail/indexing.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

template <class Scalar, class MemorySpace>
class cdm_product_plan;

namespace detail {
/// Sorts compact diagonal numbers and checks them: each in [0, n), none twice.
std::vector<int> checked_compact_indices(const char* function, const char* argument, int n,
                                         std::vector<int> indices);
}  // namespace detail

/// Compact diagonals holding a band with `lower` subdiagonals and `upper` superdiagonals of an
/// n x n matrix: 0..upper and n-lower..n-1 (fewer when the band covers the matrix).
std::vector<int> banded_compact_indices(int n, int lower, int upper);

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class cdm_matrix {
  static_assert(std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float>,
                "nearsparse::diagonal::cdm_matrix holds double or float");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "nearsparse::diagonal::cdm_matrix: the second parameter must be a memory space");

 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  using values_view = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  using indices_view = Kokkos::View<int*, MemorySpace>;

  cdm_matrix() = default;

  /// An n x n matrix storing the compact diagonals `indices` (any order, each once), all zero
  /// (or, with values_init::uninitialized, unset).
  template <class ExecSpace>
  cdm_matrix(const ExecSpace& exec, int n, std::vector<int> indices,
             const std::string& label = "nearsparse::cdm_matrix",
             values_init init = values_init::zero)
      : n_(n) {
    static_assert(
        Kokkos::is_execution_space<ExecSpace>::value,
        "nearsparse::diagonal::cdm_matrix: the first argument must be an execution space instance");
    static_assert(
        Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
        "nearsparse::diagonal::cdm_matrix: the execution space cannot reach the memory space");
    host_indices_ = detail::checked_compact_indices("nearsparse::diagonal::cdm_matrix", "indices",
                                                    n, std::move(indices));
    host_lookup_.assign(std::size_t(n), -1);
    for (std::size_t t = 0; t < host_indices_.size(); ++t) host_lookup_[host_indices_[t]] = int(t);
    const auto count = host_indices_.size();
    // From the device-allocation cache, as hm_matrix.
    values_ =
        nearsparse::detail::cached_view<values_view>(label + ".values", count, std::size_t(n));
    if (init == values_init::zero) Kokkos::deep_copy(exec, values_, Scalar(0));
    indices_ = nearsparse::detail::cached_view<indices_view>(label + ".indices", count);
    lookup_ = nearsparse::detail::cached_view<indices_view>(label + ".lookup", std::size_t(n));
    Kokkos::View<int*, Kokkos::HostSpace> hi("indices", count), hl("lookup", std::size_t(n));
    for (std::size_t t = 0; t < count; ++t) hi(t) = host_indices_[t];
    for (int k = 0; k < n; ++k) hl(k) = host_lookup_[k];
    Kokkos::deep_copy(exec, indices_, hi);
    Kokkos::deep_copy(exec, lookup_, hl);
    exec.fence();
  }

  int size() const { return n_; }
  int rows() const { return n_; }
  int cols() const { return n_; }
  /// Number of stored compact diagonals.
  int diagonal_count() const { return static_cast<int>(host_indices_.size()); }
  /// Number of stored values (explicit zeros included): diagonal_count() * n.
  std::int64_t stored_count() const { return std::int64_t(host_indices_.size()) * n_; }

  /// Stored compact diagonal numbers in ascending order; values()(t, p) is entry p of the t-th.
  const std::vector<int>& host_indices() const { return host_indices_; }
  /// For each compact diagonal number k, the row of values() holding it, or -1.
  const std::vector<int>& host_lookup() const { return host_lookup_; }
  indices_view indices() const { return indices_; }
  indices_view lookup() const { return lookup_; }
  values_view values() const { return values_; }

  /// Row of values() holding compact diagonal k, or -1.
  int find_diagonal(int k) const { return k >= 0 && k < n_ ? host_lookup_[k] : -1; }

 private:
  template <class, class>
  friend class cdm_product_plan;

  // A product's C: structure from a plan, which owns the device indices and lookup (shared and
  // never written) and found them itself.
  cdm_matrix(int n, std::vector<int> host_indices, std::vector<int> host_lookup,
             indices_view indices, indices_view lookup, values_view values)
      : n_(n),
        host_indices_(std::move(host_indices)),
        host_lookup_(std::move(host_lookup)),
        indices_(std::move(indices)),
        lookup_(std::move(lookup)),
        values_(std::move(values)) {}

  int n_ = 0;
  std::vector<int> host_indices_;
  std::vector<int> host_lookup_;
  indices_view indices_;
  indices_view lookup_;
  values_view values_;
};

}  // namespace nearsparse::diagonal
