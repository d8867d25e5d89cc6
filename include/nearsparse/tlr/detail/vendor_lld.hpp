#pragma once
// The CUDA specialization of GEMM-LLD (src/tlr/cuda_lld.cpp): cuBLAS batched GEMMs over pointer
// arrays. A launch is a set of groups, each a C tile and the same number P of tile products; for
// every product the two small GEMMs make a left block (U_a (V_a^T U_b), D_a U_b, or U_a) and a
// right block (V_b, or D_b^T V_a) of width w = max(kmax_a, kmax_b), zero-padded; then one batched
// GEMM per tile-extent class does C = beta C + alpha [L_1 .. L_P] [R_1 .. R_P]^T, reading and
// writing each C tile once for all P products. Products of two dense tiles go to one more batched
// GEMM. P = 1 is the paper's batched GEMM-LLD; P = nt is the whole TLR-GEMM in one pass over C.

#include <nearsparse/tlr/detail/tile_access.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

namespace nearsparse::tlr::detail {

struct vendor_launch {
  int pairs_per_group = 1;
  std::vector<int> c_tile;          // per group
  std::vector<int> a_tile, b_tile;  // per product, group after group
  double beta = 1;
};

struct vendor_operands {
  tile_access a, b;
  const std::vector<int>* a_slots = nullptr;  // host copies of the dense-slot maps
  const std::vector<int>* b_slots = nullptr;
  double* c = nullptr;  // column-major, leading dimension ldc
  int ldc = 0, c_rows = 0, c_cols = 0, c_tile_rows = 0;
};

/// Doubles of workspace one launch of `groups` groups of P products needs.
inline std::size_t vendor_lld_work_doubles(const vendor_operands& ops, std::size_t groups, int P) {
  const std::size_t w = ops.a.kmax > ops.b.kmax ? ops.a.kmax : ops.b.kmax;
  return groups * P * (2 * std::size_t(ops.a.nb) * w + std::size_t(ops.a.kmax) * ops.b.kmax);
}

#ifdef KOKKOS_ENABLE_CUDA
/// Queues the launches in order on exec's stream, with workspace kept per stream between calls.
/// Throws nearsparse::runtime_error when CUDA or cuBLAS reports an error.
void cuda_lld(const Kokkos::Cuda& exec, double alpha, const vendor_operands& ops,
              const std::vector<vendor_launch>& launches);
#endif

}  // namespace nearsparse::tlr::detail
