#pragma once
// The CDM product's dispatch (core/detail/dispatch.hpp): one detail function, the product with a
// plan, which runs the portable kernels on any execution space and, on OpenMP and Serial for
// matrices in HostSpace, the host kernel (declared at the end, defined in
// src/diagonal/host_cdm_product.cpp).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/detail/cdm_product_kernel.hpp>
#include <nearsparse/diagonal/detail/plan_outputs.hpp>
#include <nearsparse/diagonal/detail/product_checks.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace nearsparse::diagonal::detail {

/// Whether ExecSpace has a specialized CDM product for matrices in Mem (the host overloads below).
template <class ExecSpace, class Mem>
struct cdm_specialized : std::false_type {};
#ifdef KOKKOS_ENABLE_OPENMP
template <>
struct cdm_specialized<Kokkos::OpenMP, Kokkos::HostSpace> : std::true_type {};
#endif
#ifdef KOKKOS_ENABLE_SERIAL
template <>
struct cdm_specialized<Kokkos::Serial, Kokkos::HostSpace> : std::true_type {};
#endif

/// Why implementation::specialized found no CDM path.
inline constexpr const char cdm_declined[] =
    "the CDM product's specialized kernel is the host backends' (OpenMP, Serial) for matrices in "
    "HostSpace";

/// Throws nearsparse::unsupported for implementation::specialized where ExecSpace has no
/// specialized CDM product for Mem (a whole product refuses before the plan's work).
template <class ExecSpace, class Mem>
void cdm_refuse_unavailable(const product_options& options) {
  nearsparse::detail::take_specialized(multiply_name, options.implementation,
                                       cdm_specialized<ExecSpace, Mem>::value, ExecSpace::name(),
                                       cdm_declined);
}

/// C's values for a CDM product (rows compact diagonals of n), from the allocation cache.
template <class Scalar, class Mem>
typename cdm_matrix<Scalar, Mem>::values_view cdm_c_values(std::size_t rows, std::size_t n) {
  return product_values<typename cdm_matrix<Scalar, Mem>::values_view>(
      "nearsparse::cdm_product.C.values", rows, n);
}

/// The portable product with a plan: the banded kernel, in its host form on host backends and
/// its team form elsewhere.
template <class ExecSpace, class Scalar, class Mem>
void cdm_multiply_with_plan_portable(const ExecSpace& exec,
                                     const cdm_product_plan<Scalar, Mem>& plan, Scalar alpha,
                                     const cdm_matrix<Scalar, Mem>& a,
                                     const cdm_matrix<Scalar, Mem>& b, Scalar beta,
                                     const cdm_matrix<Scalar, Mem>& c) {
  const bool ta = plan.op_a() == op::transpose, tb = plan.op_b() == op::transpose;
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible)
    cdm_banded_multiply_host(exec, plan.size(), alpha, a.values(), plan.a_logical(), ta, b.values(),
                             b.lookup(), tb, beta, c.values(), c.indices());
  else
    cdm_banded_multiply(exec, plan.size(), alpha, a.values(), plan.a_logical(), ta, b.values(),
                        b.lookup(), tb, beta, c.values(), c.indices());
}

// Host backends (src/diagonal/host_cdm_product.cpp): every stored diagonal of A whose partner B
// stores, four of them fused per pass over a block of C's positions. The specialized kernel only:
// the choice and the portable fallback stay in cdm_multiply_with_plan below, so the portable
// kernels are instantiated in the caller's translation unit alone (nvcc's extended lambdas go
// wrong where one kernel is instantiated in the library and in the caller too). Defined for
// Scalar double and float. `widest`: the widest vectors the kernel may use, where the processor
// runs them: 2 AVX-512, 1 AVX2 with FMA (both x86-64), 0 the baseline instruction set (tests
// compare the copies).
#ifdef KOKKOS_ENABLE_OPENMP
template <class Scalar>
void cdm_multiply_host(const Kokkos::OpenMP& exec,
                       const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& a,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& c, int widest = 2);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
template <class Scalar>
void cdm_multiply_host(const Kokkos::Serial& exec,
                       const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& a,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
                       const cdm_matrix<Scalar, Kokkos::HostSpace>& c, int widest = 2);
#endif

/// C = alpha op(A) op(B) + beta C with a plan (arguments checked): the host kernel where
/// cdm_specialized says ExecSpace has one for Mem and the options let it run, the portable
/// kernels otherwise.
template <class ExecSpace, class Scalar, class Mem>
void cdm_multiply_with_plan(const ExecSpace& exec, const cdm_product_plan<Scalar, Mem>& plan,
                            Scalar alpha, const cdm_matrix<Scalar, Mem>& a,
                            const cdm_matrix<Scalar, Mem>& b, Scalar beta,
                            const cdm_matrix<Scalar, Mem>& c, const product_options& options) {
  constexpr bool available = cdm_specialized<ExecSpace, Mem>::value;
  if (nearsparse::detail::take_specialized(multiply_name, options.implementation, available,
                                           ExecSpace::name(), cdm_declined)) {
    if constexpr (available) cdm_multiply_host(exec, plan, alpha, a, b, beta, c);
  } else {
    cdm_multiply_with_plan_portable(exec, plan, alpha, a, b, beta, c);
  }
}

}  // namespace nearsparse::diagonal::detail
