#pragma once
// The cuBLAS tile products of the Kokkos::Cuda paths, shared by GEMM-LLD (cuda_lld.cpp, which
// defines them) and GEMM-LLL (cuda_lll.cpp, which sums a C tile's products into a dense tile
// before recompressing it): groups of tile products summed into dense nb x nb C tiles with
// batched GEMMs, reading and writing each C tile once per launch (the scheme is described at the
// top of cuda_lld.cpp). The CUDA counterpart of host_products.hpp.

#include <nearsparse/tlr/detail/lld_dispatch.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

namespace nearsparse::tlr::detail {

/// One launch: groups of pairs_per_group (>= 1) products, C tile c_tile[g] and A, B tiles a_tile
/// and b_tile listed group after group; C tile = beta C tile + alpha sum of its products.
struct cublas_launch {
  int pairs_per_group = 1;
  std::vector<int> c_tile;          // per group
  std::vector<int> a_tile, b_tile;  // per product, group after group
  double beta = 1;
  /// Where each group's C tile is: empty, in ops.c at the tile's place (leading dimension
  /// ops.ldc); otherwise target[g] (leading dimension nb: a dense tile of a TLR C, or a tile of a
  /// packed buffer). The extents are those of C tile c_tile[g] of ops' C either way.
  std::vector<double*> target;
  /// Optional, per group (with seed_k > 0): before beta and the products apply, the whole nb x nb
  /// target is set to seed_scale U V^T, U = seed_u[g] and V = seed_v[g] (nb x seed_k, leading
  /// dimension nb, zero beyond the tile's extents): the own term of a low-rank C tile.
  std::vector<const double*> seed_u, seed_v;
  int seed_k = 0;
  double seed_scale = 1;
};

/// Doubles of workspace one launch of `groups` groups of P products needs.
std::size_t cublas_work_doubles(const lld_operands& ops, std::size_t groups, int P);

/// The largest k for which the last GEMM of a launch, C = beta C + alpha L R^T over k = P w
/// columns, goes to low_rank_update_batched rather than cuBLAS: up to it the product is bound by
/// C's traffic, which that kernel reads and writes once.
constexpr int low_rank_update_max_k = 128;

/// Whether low_rank_update_batched runs on exec's device: compute capability 9.0 or later with its
/// fp64 tensor-core code compiled in (cuda_low_rank_update.cpp). Read once per device.
bool low_rank_update_runs(const Kokkos::Cuda& exec);

/// C_g = beta C_g + alpha L_g R_g^T for g < count, all column-major: L_g m x k (leading dimension
/// ldl), R_g n x k (ldr), C_g m x n (ldc); the pointer arrays in device memory. beta = 0 does not
/// read C. Queued on exec's stream; throws nearsparse::runtime_error naming `function` when the
/// launch fails.
void low_rank_update_batched(const Kokkos::Cuda& exec, const char* function, int m, int n, int k,
                             double alpha, const double* const* l, int ldl, const double* const* r,
                             int ldr, double beta, double* const* c, int ldc, int count);

/// Queues the launches in order on exec's stream, with workspace kept per stream between calls
/// (separate from job.workspace_bytes' accounting: cublas_work_doubles says how much). Throws
/// nearsparse::runtime_error naming `function` when CUDA or cuBLAS reports an error. ops.a_slots
/// and ops.b_slots are read on the host; ops.c is read only for launches without targets.
void cublas_lld(const Kokkos::Cuda& exec, const char* function, double alpha,
                const lld_operands& ops, const std::vector<cublas_launch>& launches);

}  // namespace nearsparse::tlr::detail
