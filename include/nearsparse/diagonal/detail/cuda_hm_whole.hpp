#pragma once
// The CUDA specialization of a whole HM product C = op(A) op(B) (src/diagonal/cuda_hm_whole.cpp):
// one kernel launch after the host's symbolic phase, with no plan on the device.
//
// A small whole product is mostly fixed costs: each pageable copy and each Kokkos launch costs
// host time, and each dependent step on the stream adds its latency. Here
// C's structure (offsets and starts, at most cuda_hm_whole_max_diagonals of them) travels in the
// kernel's parameters, and each block finds the pairs of diagonals meeting on its chunk itself,
// from A's and B's device offsets: one binary search in B per diagonal of A, done by the block's
// threads side by side, the pairs kept in shared memory in the order of A's diagonals (the order
// of the portable kernel's sums). The first block of each C diagonal also writes C's device
// offsets and starts, so C needs no copy either. Larger products, reused plans and the other
// backends use the plan (hm_product_plan) and the portable kernels, which the tests compare this
// path with.

#include <nearsparse/diagonal/detail/indexing.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::diagonal::detail {

/// Most diagonals of C the fused kernel takes: C's structure is passed in the kernel's
/// parameters (16 bytes a diagonal, under CUDA's 32 KB parameter limit).
inline constexpr int cuda_hm_whole_max_diagonals = 2000;
/// Most diagonals of A and of B: a block keeps B's offsets and a pair per diagonal of A in
/// shared memory.
inline constexpr int cuda_hm_whole_max_operand_diagonals = 1024;

template <class Scalar>
struct cuda_hm_whole_args {
  int m = 0, k = 0, n = 0;  // op(A) is m x k, op(B) k x n
  bool a_transposed = false, b_transposed = false;
  int a_diagonals = 0, b_diagonals = 0;
  const int* a_offsets = nullptr;  // device, stored order (ascending)
  const index_type* a_starts = nullptr;
  const Scalar* a = nullptr;
  const int* b_offsets = nullptr;
  const index_type* b_starts = nullptr;
  const Scalar* b = nullptr;
  // C's structure from the symbolic phase, on the host: c_diagonals offsets and
  // c_diagonals + 1 starts.
  int c_diagonals = 0;
  const int* host_c_offsets = nullptr;
  const index_type* host_c_starts = nullptr;
  // C on the device: its offsets and starts are written too.
  int* c_offsets = nullptr;
  index_type* c_starts = nullptr;
  Scalar* c = nullptr;
};

#ifdef KOKKOS_ENABLE_CUDA
/// Queues the product on exec's stream. Requires 1 <= c_diagonals <= cuda_hm_whole_max_diagonals
/// and operands of at most cuda_hm_whole_max_operand_diagonals diagonals.
void cuda_hm_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<double>& args);
void cuda_hm_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<float>& args);
#endif

}  // namespace nearsparse::diagonal::detail
