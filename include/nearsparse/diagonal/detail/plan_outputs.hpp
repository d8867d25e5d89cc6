#pragma once
// The outputs a product plan makes (C with the product's structure), written once for the HM and
// the CDM plan.

#include <Kokkos_Core.hpp>

namespace nearsparse::diagonal::detail {

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
