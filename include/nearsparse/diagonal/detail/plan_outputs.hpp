#pragma once
// The outputs a product plan makes (C with the product's structure), written once for the HM and
// the CDM plan.

#include <nearsparse/core/detail/view_cache.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace nearsparse::diagonal::detail {

/// Asks the operating system to back the whole 2 MiB pages inside [data, data + bytes) with
/// transparent huge pages (Linux; elsewhere nothing). Advice only: memory it cannot back so stays
/// in ordinary pages (src/diagonal/host_values.cpp).
void advise_huge_pages(void* data, std::size_t bytes);

/// Host C values from this size on are advised onto huge pages.
inline constexpr std::size_t huge_page_min_bytes = std::size_t(4) << 20;

/// A product's C values (unset) from the allocation cache (core/detail/view_cache.hpp), in
/// HostSpace too. A fresh host allocation of C's size is faulted in page by page on first touch
/// and unmapped again when freed, which for a large C costs several times the product itself: host
/// C values are kept for the next product as device ones are, and a large one, which the cache
/// may not keep, is advised onto huge pages (one fault per 2 MiB, no page-by-page unmapping).
/// Other host-accessible spaces take the cache's ordinary policy.
template <class View, class... Extents>
View product_values(const std::string& label, Extents... extents) {
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>) {
    View v = nearsparse::detail::view_cache<View>::instance().get(label, extents...);
    const std::size_t bytes = v.span() * sizeof(typename View::value_type);
    if (bytes >= huge_page_min_bytes) advise_huge_pages(v.data(), bytes);
    return v;
  } else {
    return nearsparse::detail::cached_view<View>(label, extents...);
  }
}

/// Base of a product plan `Plan` whose product is a `Matrix`. Plan provides, to this base,
///   Matrix make_c_with(typename Matrix::values_view values) const  (C around `values`)
///   typename Matrix::values_view c_values_uninitialized() const    (an allocation of C's values)
template <class Plan, class Matrix>
class plan_outputs {
 public:
  /// A zero C with the product's structure. Like the product, its work is queued on `exec`.
  template <class ExecSpace>
  Matrix make_c(const ExecSpace& exec) const {
    auto c = make_c_uninitialized(exec);
    Kokkos::deep_copy(exec, c.values(), typename Matrix::scalar_type(0));
    return c;
  }

  /// C with the product's structure and unset values, for a product with beta = 0. Its
  /// structure's device arrays are the plan's (shared, never written), so it costs one
  /// allocation.
  template <class ExecSpace>
  Matrix make_c_uninitialized(const ExecSpace&) const {
    static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                  "nearsparse::diagonal::make_c_uninitialized: the argument must be an execution "
                  "space instance");
    const Plan& plan = static_cast<const Plan&>(*this);
    return plan.make_c_with(plan.c_values_uninitialized());
  }
};

}  // namespace nearsparse::diagonal::detail
