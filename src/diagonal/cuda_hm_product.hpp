#pragma once
// What the two CUDA overloads of the HM product's dispatch share
// (src/diagonal/cuda_hm_band_tiles.cpp: with a plan; src/diagonal/cuda_hm_whole.cpp: whole).

#include <nearsparse/diagonal/hm_product.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::diagonal::detail {

/// The band kernel's arguments for C = alpha op(A) op(B) + beta C; C must have the symbolic
/// product's structure. write_c_structure: the kernel also writes C's device offsets and starts
/// (C must store every diagonal of its range).
template <class Scalar, class Mem>
cuda_hm_band_args<Scalar> cuda_hm_band_args_of(Scalar alpha, const hm_matrix<Scalar, Mem>& a,
                                               op op_a, const hm_matrix<Scalar, Mem>& b, op op_b,
                                               Scalar beta, const hm_matrix<Scalar, Mem>& c,
                                               bool tensor_cores, bool write_c_structure) {
  const bool ta = op_a == op::transpose, tb = op_b == op::transpose;
  cuda_hm_band_args<Scalar> args;
  args.m = c.rows();
  args.k = ta ? a.rows() : a.cols();
  args.n = c.cols();
  args.a = {a.offsets().data(), a.starts().data(), ta, hm_band_range_of(a.host_offsets(), ta)};
  args.b = {b.offsets().data(), b.starts().data(), tb, hm_band_range_of(b.host_offsets(), tb)};
  args.c = {c.offsets().data(), c.starts().data(), false,
            hm_band_range_of(c.host_offsets(), false)};
  args.a_values = a.values().data();
  args.b_values = b.values().data();
  args.c_values = c.values().data();
  args.alpha = alpha;
  args.beta = beta;
  args.tensor_cores = tensor_cores;
  if (write_c_structure) {
    args.c_offsets_out = c.offsets().data();
    args.c_starts_out = c.starts().data();
  }
  return args;
}

/// Whether the band kernel can run op(A) op(B) into C's diagonals `c_offsets`.
template <class Scalar, class Mem>
bool cuda_hm_band_fits(const hm_matrix<Scalar, Mem>& a, op op_a, const hm_matrix<Scalar, Mem>& b,
                       op op_b, const std::vector<int>& c_offsets) {
  return hm_band_tiles_fit(hm_band_range_of(a.host_offsets(), op_a == op::transpose),
                           hm_band_range_of(b.host_offsets(), op_b == op::transpose),
                           hm_band_range_of(c_offsets, false));
}

/// Why implementation::specialized found no CUDA path for a product.
inline const char* cuda_hm_declined(hm_algorithm algorithm, bool whole) {
  if (algorithm != hm_algorithm::output_stationary)
    return "the atomic algorithm has only the portable kernel";
  return whole ? "the product is past the fused kernel's limits and its diagonal ranges past the "
                 "band tiles'"
               : "the diagonal ranges of A, B and C are past the band tiles'";
}

}  // namespace nearsparse::diagonal::detail

/// Explicit instantiations of the CUDA overloads: Scalar double and float, in every memory space
/// Kokkos::Cuda reaches.
#define NEARSPARSE_DIAGONAL_CUDA_INSTANTIATE(INSTANTIATE) \
  INSTANTIATE(double, Kokkos::CudaSpace)                  \
  INSTANTIATE(float, Kokkos::CudaSpace)                   \
  INSTANTIATE(double, Kokkos::CudaUVMSpace)               \
  INSTANTIATE(float, Kokkos::CudaUVMSpace)                \
  INSTANTIATE(double, Kokkos::CudaHostPinnedSpace)        \
  INSTANTIATE(float, Kokkos::CudaHostPinnedSpace)
