#pragma once
// Checks every entry point makes on the Views it is given: compile-time checks of the view type
// (rank, accessibility from the execution space) and run-time checks of extents.

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace nearsparse {

/// True for a Kokkos::View of the given rank.
template <class View, unsigned Rank, class = void>
struct is_view_of_rank : std::false_type {};
template <class View, unsigned Rank>
struct is_view_of_rank<View, Rank, std::enable_if_t<Kokkos::is_view<View>::value>>
    : std::bool_constant<View::rank == Rank> {};
template <class View, unsigned Rank>
inline constexpr bool is_view_of_rank_v = is_view_of_rank<View, Rank>::value;

/// True when code running in ExecSpace may read and write the memory of View.
template <class ExecSpace, class View>
inline constexpr bool is_accessible_from_v =
    Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible;

/// Compile-time check for any View argument: an execution space first, a Kokkos::View whose
/// memory that space can reach. Use at the API boundary so a wrong type fails with a message
/// instead of deep inside a kernel.
template <class ExecSpace, class View>
constexpr void static_assert_view() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view<View>::value, "nearsparse: array arguments must be Kokkos::Views");
  static_assert(is_accessible_from_v<ExecSpace, View>,
                "nearsparse: an argument lives in memory the execution space cannot access");
}

/// Compile-time check for a matrix argument: a rank-2 View the execution space can reach.
template <class ExecSpace, class View>
constexpr void static_assert_matrix() {
  static_assert_view<ExecSpace, View>();
  static_assert(is_view_of_rank_v<View, 2>, "nearsparse: matrix arguments must be rank-2 Views");
}

/// Compile-time check for a vector argument: a rank-1 View the execution space can reach.
template <class ExecSpace, class View>
constexpr void static_assert_vector() {
  static_assert_view<ExecSpace, View>();
  static_assert(is_view_of_rank_v<View, 1>, "nearsparse: vector arguments must be rank-1 Views");
}

/// Compile-time check for an argument that may be a vector or a matrix.
template <class ExecSpace, class View>
constexpr void static_assert_vector_or_matrix() {
  static_assert_view<ExecSpace, View>();
  static_assert(is_view_of_rank_v<View, 1> || is_view_of_rank_v<View, 2>,
                "nearsparse: this argument must be a rank-1 or rank-2 View");
}

/// Requires `view.extent(dim) == expected`, where `expected` is extent `other_dim` of another
/// argument; the message names both arguments and gives both sets of extents.
template <class View, class OtherView>
void require_extent_match(const char* function, const char* name, const View& view, unsigned dim,
                          const char* other_name, const OtherView& other, unsigned other_dim) {
  if (view.extent(dim) == other.extent(other_dim)) return;
  detail::throw_invalid_argument(
      function, name,
      detail::concat("has extents ", detail::extents_string(view), ", but its extent(", dim,
                     ") = ", view.extent(dim), " must equal extent(", other_dim, ") of '",
                     other_name, "' = ", other.extent(other_dim), " (", other_name, " is ",
                     detail::extents_string(other), ")"));
}

/// Requires `view` to have exactly the given rows and columns.
template <class View>
void require_extents(const char* function, const char* name, const View& view, std::size_t rows,
                     std::size_t cols) {
  static_assert(View::rank == 2, "require_extents checks rank-2 Views");
  if (view.extent(0) == rows && view.extent(1) == cols) return;
  detail::throw_invalid_argument(function, name,
                                 detail::concat("has extents ", detail::extents_string(view),
                                                ", expected ", rows, " x ", cols));
}

/// Requires a scalar parameter to be finite and not negative (a tolerance, a threshold).
void require_nonnegative(const char* function, const char* name, double value);

/// Requires a scalar parameter to be finite and strictly positive (a size, a scale).
void require_positive(const char* function, const char* name, double value);

}  // namespace nearsparse
