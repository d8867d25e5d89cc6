#pragma once
// The HM product's dispatch (core/detail/dispatch.hpp): one detail function per operation, the
// product with a plan and the whole product, whose generic template runs the portable kernels
// on any execution space. CUDA adds overloads on Kokkos::Cuda (declared at the end, defined in
// src/diagonal/cuda_hm_band_tiles.cpp and src/diagonal/cuda_hm_whole.cpp) that take the band
// tiles or the fused whole-product kernel where they serve the product; OpenMP and Serial add
// overloads (src/diagonal/host_hm_product.cpp) that take the host kernel.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/detail/hm_device_symbolic.hpp>
#include <nearsparse/diagonal/detail/hm_product_kernels.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>
#include <nearsparse/diagonal/detail/plan_outputs.hpp>
#include <nearsparse/diagonal/detail/product_checks.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

template <class Scalar, class MemorySpace>
class hm_product_plan;

namespace detail {

template <class Scalar, class Mem>
hm_symbolic_product hm_symbolic_of(const char* function, const hm_matrix<Scalar, Mem>& a,
                                   const hm_matrix<Scalar, Mem>& b, op op_a, op op_b) {
  return hm_symbolic(function, {a.rows(), a.cols(), &a.host_offsets(), &a.host_starts(), op_a},
                     {b.rows(), b.cols(), &b.host_offsets(), &b.host_starts(), op_b});
}

/// The symbolic product and, when the device pass made it, C's arrays in device memory.
template <class Mem>
struct hm_symbolic_result {
  hm_symbolic_product host;
  hm_device_symbolic<Mem> device;  // storage empty after the host pass
};

/// The symbolic phase where it costs least: on the device for scattered diagonals in device
/// memory from hm_device_symbolic_min_pairs pairs on (or always with `on_device`, which tests
/// and benchmarks of the pass itself use), otherwise on the host.
template <class ExecSpace, class Scalar, class Mem>
hm_symbolic_result<Mem> hm_symbolic_for(const ExecSpace& exec, const char* function,
                                        const hm_matrix<Scalar, Mem>& a,
                                        const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                        bool on_device = false) {
  const hm_operand_structure sa{a.rows(), a.cols(), &a.host_offsets(), &a.host_starts(), op_a};
  const hm_operand_structure sb{b.rows(), b.cols(), &b.host_offsets(), &b.host_starts(), op_b};
  constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  hm_symbolic_result<Mem> r;
  if (on_device || (!host_memory && hm_symbolic_on_device_pays(sa, sb)))
    r.host = hm_symbolic_device(exec, function, sa, a.offsets(), sb, b.offsets(), r.device);
  else
    r.host = hm_symbolic(function, sa, sb);
  return r;
}

/// C's values for a product of `count` stored values, from the allocation cache
/// (detail/plan_outputs.hpp).
template <class Scalar, class Mem>
typename hm_matrix<Scalar, Mem>::values_view hm_c_values(std::size_t count) {
  return product_values<typename hm_matrix<Scalar, Mem>::values_view>(
      "nearsparse::hm_product.C.values", count);
}

/// The private constructors of hm_matrix and hm_product_plan, for the product's code.
struct hm_product_access {
  template <class Scalar, class Mem>
  static hm_matrix<Scalar, Mem> make_matrix(int rows, int cols, std::vector<int> host_offsets,
                                            std::vector<index_type> host_starts,
                                            typename hm_matrix<Scalar, Mem>::offsets_view offsets,
                                            typename hm_matrix<Scalar, Mem>::starts_view starts,
                                            typename hm_matrix<Scalar, Mem>::values_view values) {
    return hm_matrix<Scalar, Mem>(rows, cols, std::move(host_offsets), std::move(host_starts),
                                  std::move(offsets), std::move(starts), std::move(values));
  }

  template <class ExecSpace, class Scalar, class Mem>
  static hm_product_plan<Scalar, Mem> make_plan(const ExecSpace& exec,
                                                const hm_matrix<Scalar, Mem>& a,
                                                const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                                hm_symbolic_result<Mem> symbolic) {
    return hm_product_plan<Scalar, Mem>(exec, a, b, op_a, op_b, std::move(symbolic));
  }

  template <class Scalar, class Mem>
  static hm_matrix<Scalar, Mem> make_c_with(const hm_product_plan<Scalar, Mem>& plan,
                                            typename hm_matrix<Scalar, Mem>::values_view values) {
    return plan.make_c_with(std::move(values));
  }
};

/// Whether the band tiles (detail/hm_band_tiles.hpp) pay for op(A) op(B) with C's structure `s`.
template <class Scalar, class Mem>
bool hm_band_tiles_pay_for(const hm_symbolic_product& s, const hm_matrix<Scalar, Mem>& a,
                           const hm_matrix<Scalar, Mem>& b, op op_a, op op_b) {
  return hm_band_tiles_pay(s.rows, s.inner, s.cols,
                           hm_band_range_of(a.host_offsets(), op_a == op::transpose),
                           hm_band_range_of(b.host_offsets(), op_b == op::transpose),
                           hm_band_range_of(s.c_offsets, false), s.multiply_adds);
}

/// The portable product with a plan: the atomic kernel, or the output-stationary kernel in its
/// host form (host backends) or its team form.
template <class ExecSpace, class Scalar, class Mem>
void hm_multiply_with_plan_portable(const ExecSpace& exec, const hm_product_plan<Scalar, Mem>& plan,
                                    Scalar alpha, const hm_matrix<Scalar, Mem>& a,
                                    const hm_matrix<Scalar, Mem>& b, Scalar beta,
                                    const hm_matrix<Scalar, Mem>& c, hm_algorithm algorithm) {
  if (algorithm == hm_algorithm::atomic)
    hm_atomic(exec, plan.device(), a.offsets(), a.starts(), alpha, a.values(), b.offsets(),
              b.starts(), b.values(), beta, c.values());
  else if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible)
    hm_output_stationary_host(exec, plan.device(), alpha, a.values(), b.values(), beta, c.values());
  else
    hm_output_stationary_device(exec, plan.device(), alpha, a.values(), b.values(), beta,
                                c.values());
}

/// C = alpha op(A) op(B) + beta C with a plan (arguments checked). The portable path on any
/// execution space.
template <class ExecSpace, class Scalar, class Mem>
void hm_multiply_with_plan(const ExecSpace& exec, const hm_product_plan<Scalar, Mem>& plan,
                           Scalar alpha, const hm_matrix<Scalar, Mem>& a,
                           const hm_matrix<Scalar, Mem>& b, Scalar beta,
                           const hm_matrix<Scalar, Mem>& c, const product_options& options) {
  nearsparse::detail::take_specialized_none<ExecSpace>(multiply_name, options.implementation);
  hm_multiply_with_plan_portable(exec, plan, alpha, a, b, beta, c, options.algorithm);
}

/// The portable whole product after the symbolic phase: a plan made and used once.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> hm_multiply_whole_portable(const ExecSpace& exec,
                                                  const hm_matrix<Scalar, Mem>& a,
                                                  const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                                  hm_symbolic_result<Mem> symbolic,
                                                  hm_algorithm algorithm) {
  // C's values are taken before the plan queues its work: a View from the cache waits for the
  // device, and waiting after the plan's copies and kernel would hold the product's launch back.
  auto values = hm_c_values<Scalar, Mem>(std::size_t(symbolic.host.c_starts.back()));
  const auto plan = hm_product_access::make_plan(exec, a, b, op_a, op_b, std::move(symbolic));
  // beta = 0: every value is written
  auto c = hm_product_access::make_c_with(plan, std::move(values));
  hm_multiply_with_plan_portable(exec, plan, Scalar(1), a, b, Scalar(0), c, algorithm);
  return c;
}

/// C = op(A) op(B) after the symbolic phase (arguments checked). The portable path on any
/// execution space.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> hm_multiply_whole(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& a,
                                         const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                         hm_symbolic_result<Mem> symbolic,
                                         const product_options& options) {
  nearsparse::detail::take_specialized_none<ExecSpace>(multiply_name, options.implementation);
  return hm_multiply_whole_portable(exec, a, b, op_a, op_b, std::move(symbolic), options.algorithm);
}

#ifdef KOKKOS_ENABLE_CUDA
/// On CUDA: the band tiles for the output-stationary product where the plan's band_tiles() holds
/// (automatic) or the band kernel can run the product at all (specialized), else the portable
/// path. Defined for Scalar double and float, in CudaSpace, CudaUVMSpace and CudaHostPinnedSpace.
template <class Scalar, class Mem>
void hm_multiply_with_plan(const Kokkos::Cuda& exec, const hm_product_plan<Scalar, Mem>& plan,
                           Scalar alpha, const hm_matrix<Scalar, Mem>& a,
                           const hm_matrix<Scalar, Mem>& b, Scalar beta,
                           const hm_matrix<Scalar, Mem>& c, const product_options& options);

/// On CUDA, for the output-stationary product: one launch and no plan on the device, through
/// the band tiles where they pay, else the fused kernel (detail/cuda_hm_whole.hpp) where it
/// takes the product, else (specialized only) the band tiles where they can run it; otherwise
/// the portable path. Defined for the types hm_multiply_with_plan is.
template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> hm_multiply_whole(const Kokkos::Cuda& exec, const hm_matrix<Scalar, Mem>& a,
                                         const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                         hm_symbolic_result<Mem> symbolic,
                                         const product_options& options);
#endif

// Host backends (src/diagonal/host_hm_product.cpp): the output-stationary product in blocks of
// C's positions, several pairs of diagonals fused per pass, for matrices in HostSpace; the
// atomic algorithm and other memory spaces take the portable path. Defined for Scalar double
// and float.
#ifdef KOKKOS_ENABLE_OPENMP
/// On OpenMP: the host kernel for the output-stationary product (automatic and specialized).
template <class Scalar>
void hm_multiply_with_plan(const Kokkos::OpenMP& exec,
                           const hm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& a,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& c,
                           const product_options& options);

/// On OpenMP: the host kernel with no plan (the pairs in a per-thread buffer, C's values from
/// the allocation cache).
template <class Scalar>
hm_matrix<Scalar, Kokkos::HostSpace> hm_multiply_whole(
    const Kokkos::OpenMP& exec, const hm_matrix<Scalar, Kokkos::HostSpace>& a,
    const hm_matrix<Scalar, Kokkos::HostSpace>& b, op op_a, op op_b,
    hm_symbolic_result<Kokkos::HostSpace> symbolic, const product_options& options);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
/// On Serial: as on OpenMP, in one thread.
template <class Scalar>
void hm_multiply_with_plan(const Kokkos::Serial& exec,
                           const hm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& a,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
                           const hm_matrix<Scalar, Kokkos::HostSpace>& c,
                           const product_options& options);

template <class Scalar>
hm_matrix<Scalar, Kokkos::HostSpace> hm_multiply_whole(
    const Kokkos::Serial& exec, const hm_matrix<Scalar, Kokkos::HostSpace>& a,
    const hm_matrix<Scalar, Kokkos::HostSpace>& b, op op_a, op op_b,
    hm_symbolic_result<Kokkos::HostSpace> symbolic, const product_options& options);
#endif

}  // namespace detail
}  // namespace nearsparse::diagonal
