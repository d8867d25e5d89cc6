#pragma once
// Argument checks the HM and CDM products share (src/diagonal/structure.cpp).

#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::diagonal::detail {

/// The name the products' messages start with.
inline constexpr const char multiply_name[] = "nearsparse::diagonal::multiply";

/// Throws nearsparse::invalid_argument naming `function` unless `value` is finite.
void require_finite_scalar(const char* function, const char* name, double value);

/// Throws nearsparse::invalid_argument naming `function` for an algorithm or an implementation
/// outside its enumeration.
void check_product_options(const char* function, const product_options& options);

/// Compile-time checks of a product's execution space and the matrices' memory space.
template <class ExecSpace, class Mem>
constexpr void static_assert_product() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::diagonal::multiply: the first argument must be an execution space "
                "instance");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "nearsparse::diagonal::multiply: the execution space cannot reach the matrices' "
                "memory");
}

/// The checks of a product with a plan (HM or CDM): alpha and beta finite, the options' values
/// valid, and A, B and C of the plan's structures.
template <class ExecSpace, class Plan, class Matrix>
void check_plan_product(const Plan& plan, double alpha, const Matrix& a, const Matrix& b,
                        double beta, const Matrix& c, const product_options& options) {
  static_assert_product<ExecSpace, typename Matrix::memory_space>();
  require_finite_scalar(multiply_name, "alpha", alpha);
  require_finite_scalar(multiply_name, "beta", beta);
  check_product_options(multiply_name, options);
  plan.check(multiply_name, a, b, c);
}

}  // namespace nearsparse::diagonal::detail
