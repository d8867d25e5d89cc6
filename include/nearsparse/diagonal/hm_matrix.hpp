#pragma once
// HM diagonal storage: only the stored diagonals of a rows x cols matrix, one after the other in
// one array, with their offsets (column - row) and the index where each starts. Dense,
// triangular, banded and arbitrary diagonal sets are all the same structure. Rectangular matrices
// are allowed.
//
// Diagonals are kept in ascending order of offset; the element at position p of the diagonal
// with index t is values()(starts()(t) + p) and is element (row_of(d, p), col_of(d, p)) with
// d = offsets()(t) (see detail/indexing.hpp).

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/diagonal/detail/indexing.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

namespace detail {
struct hm_product_access;
/// Sorts `offsets` and checks them for a rows x cols matrix: each in (-rows, cols), none twice.
/// Throws nearsparse::invalid_argument naming `function` and `argument` otherwise.
std::vector<int> checked_offsets(const char* function, const char* argument, int rows, int cols,
                                 std::vector<int> offsets);
/// Start of every diagonal in the value array, plus the total at the end.
std::vector<index_type> diagonal_starts(int rows, int cols, const std::vector<int>& sorted_offsets);
/// Requires rows >= 0 and cols >= 0.
void check_shape(const char* function, int rows, int cols);
}  // namespace detail

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class hm_matrix {
  static_assert(std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float>,
                "nearsparse::diagonal::hm_matrix holds double or float");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "nearsparse::diagonal::hm_matrix: the second parameter must be a memory space");

 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  using index_type = detail::index_type;
  using values_view = Kokkos::View<Scalar*, MemorySpace>;
  using offsets_view = Kokkos::View<int*, MemorySpace>;
  using starts_view = Kokkos::View<index_type*, MemorySpace>;

  hm_matrix() = default;

  /// A rows x cols matrix storing the diagonals `offsets` (any order, each once), all zero
  /// (or, with values_init::uninitialized, unset).
  template <class ExecSpace>
  hm_matrix(const ExecSpace& exec, int rows, int cols, std::vector<int> offsets,
            const std::string& label = "nearsparse::hm_matrix",
            values_init init = values_init::zero)
      : rows_(rows), cols_(cols) {
    static_assert(
        Kokkos::is_execution_space<ExecSpace>::value,
        "nearsparse::diagonal::hm_matrix: the first argument must be an execution space instance");
    static_assert(
        Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
        "nearsparse::diagonal::hm_matrix: the execution space cannot reach the memory space");
    detail::check_shape("nearsparse::diagonal::hm_matrix", rows, cols);
    host_offsets_ = detail::checked_offsets("nearsparse::diagonal::hm_matrix", "offsets", rows,
                                            cols, std::move(offsets));
    host_starts_ = detail::diagonal_starts(rows, cols, host_offsets_);
    const auto count = host_offsets_.size();
    // From the device-allocation cache (core/detail/view_cache.hpp): a whole product's C is
    // otherwise several cudaMalloc/cudaFree pairs, more than its kernel on small products.
    offsets_ = nearsparse::detail::cached_view<offsets_view>(label + ".offsets", count);
    starts_ = nearsparse::detail::cached_view<starts_view>(label + ".starts", count + 1);
    values_ = nearsparse::detail::cached_view<values_view>(label + ".values", host_starts_.back());
    if (init == values_init::zero) Kokkos::deep_copy(exec, values_, Scalar(0));
    // Through host Views that own their data, so the asynchronous copies never read a buffer that
    // is gone.
    Kokkos::View<int*, Kokkos::HostSpace> ho("offsets", count);
    Kokkos::View<index_type*, Kokkos::HostSpace> hs("starts", count + 1);
    for (std::size_t t = 0; t < count; ++t) ho(t) = host_offsets_[t];
    for (std::size_t t = 0; t <= count; ++t) hs(t) = host_starts_[t];
    Kokkos::deep_copy(exec, offsets_, ho);
    Kokkos::deep_copy(exec, starts_, hs);
    exec.fence();
  }

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// Number of stored diagonals.
  int diagonal_count() const { return static_cast<int>(host_offsets_.size()); }
  /// Number of stored values (explicit zeros included).
  index_type stored_count() const { return host_starts_.empty() ? 0 : host_starts_.back(); }

  /// Offsets of the stored diagonals in ascending order, and where each starts in values().
  const std::vector<int>& host_offsets() const { return host_offsets_; }
  const std::vector<index_type>& host_starts() const { return host_starts_; }
  offsets_view offsets() const { return offsets_; }
  starts_view starts() const { return starts_; }
  values_view values() const { return values_; }

  /// Index of the stored diagonal with this offset, or -1.
  int find_diagonal(int offset) const {
    const auto it = std::lower_bound(host_offsets_.begin(), host_offsets_.end(), offset);
    return it != host_offsets_.end() && *it == offset ? int(it - host_offsets_.begin()) : -1;
  }

 private:
  friend struct detail::hm_product_access;

  // A product's C: its structure from the symbolic phase, which checked it; the device offsets
  // and starts are a plan's (shared, never written) or written by the product's kernel.
  hm_matrix(int rows, int cols, std::vector<int> host_offsets, std::vector<index_type> host_starts,
            offsets_view offsets, starts_view starts, values_view values)
      : rows_(rows),
        cols_(cols),
        host_offsets_(std::move(host_offsets)),
        host_starts_(std::move(host_starts)),
        offsets_(std::move(offsets)),
        starts_(std::move(starts)),
        values_(std::move(values)) {}

  int rows_ = 0;
  int cols_ = 0;
  std::vector<int> host_offsets_;
  std::vector<index_type> host_starts_{0};
  offsets_view offsets_;
  starts_view starts_;
  values_view values_;
};

}  // namespace nearsparse::diagonal
