#pragma once
// GEMM-LLD, the products of TLR tiles into a dense C, on both paths (see gemm.hpp), and the
// dispatch between them. Two operations go through it: a batch of explicit tile products
// (gemm_lld_batched) and the outer products of the TLR-GEMM driver (gemm with a dense C).
//   portable_*   one team per C tile walks its products (Kokkos team policies, every backend);
//   dispatch_*   the generic templates take the portable path (and refuse
//                implementation::specialized); the overloads on Kokkos::Cuda, defined in
//                src/tlr/cuda_lld.cpp, take cuBLAS batched GEMMs where the options allow it;
//                the overloads on Kokkos::OpenMP and Kokkos::Serial (src/tlr/host_lld.cpp)
//                take OpenBLAS GEMMs, one thread per C tile.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/tlr/detail/product_checks.hpp>
#include <nearsparse/tlr/detail/product_kernels.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/detail/tile_access.hpp>
#include <nearsparse/tlr/options.hpp>
#include <nearsparse/tlr/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace nearsparse::tlr::detail {

/// The checked operands of a GEMM-LLD: A and B as tile_access, their dense-slot maps on the
/// host, and the dense column-major C, tiled like A and B.
struct lld_operands {
  tile_access a, b;
  const std::vector<int>* a_slots = nullptr;
  const std::vector<int>* b_slots = nullptr;
  double* c = nullptr;  // leading dimension ldc
  int ldc = 0, c_rows = 0, c_cols = 0, c_tile_rows = 0, c_tiles = 0;
  /// Tile columns of A (= tile rows of B): the outer products of the driver.
  int inner_tiles() const { return a.nb > 0 ? (a.cols + a.nb - 1) / a.nb : 0; }

  template <class MemorySpace, class CView>
  static lld_operands of(const tlr_matrix<MemorySpace>& A, const tlr_matrix<MemorySpace>& B,
                         const CView& C) {
    lld_operands ops;
    ops.a = tile_access::of(A);
    ops.b = tile_access::of(B);
    ops.a_slots = &A.host_dense_slots();
    ops.b_slots = &B.host_dense_slots();
    ops.c = C.data();
    ops.ldc = static_cast<int>(C.stride(1));
    ops.c_rows = static_cast<int>(C.extent(0));
    ops.c_cols = static_cast<int>(C.extent(1));
    const tile_grid cg(C.extent(0), C.extent(1), A.tile());
    ops.c_tile_rows = static_cast<int>(cg.tile_rows());
    ops.c_tiles = static_cast<int>(cg.tile_count());
    return ops;
  }
};

/// Explicit batch lists on the device, one product per group.
template <class ExecSpace>
product_pairs<typename ExecSpace::memory_space> upload_batch(
    const ExecSpace& exec, const std::vector<tile_triple>& batch) {
  using mem = typename ExecSpace::memory_space;
  const std::size_t n = batch.size();
  Kokkos::View<int*, mem> c(std::string("nearsparse::tlr::batch_c"), n),
      ptr(std::string("nearsparse::tlr::batch_ptr"), n + 1),
      a(std::string("nearsparse::tlr::batch_a"), n), b(std::string("nearsparse::tlr::batch_b"), n);
  auto hc = Kokkos::create_mirror_view(c);
  auto hp = Kokkos::create_mirror_view(ptr);
  auto ha = Kokkos::create_mirror_view(a);
  auto hb = Kokkos::create_mirror_view(b);
  for (std::size_t e = 0; e < n; ++e) {
    hc(e) = batch[e].c;
    hp(e) = static_cast<int>(e);
    ha(e) = batch[e].a;
    hb(e) = batch[e].b;
  }
  hp(n) = static_cast<int>(n);
  Kokkos::deep_copy(exec, c, hc);
  Kokkos::deep_copy(exec, ptr, hp);
  Kokkos::deep_copy(exec, a, ha);
  Kokkos::deep_copy(exec, b, hb);
  exec.fence();
  product_pairs<mem> p;
  p.group_c = c;
  p.pair_ptr = ptr;
  p.pair_a = a;
  p.pair_b = b;
  return p;
}

/// Groups `first` .. of a portable GEMM-LLD launch: team g updates its C tile with its products.
template <class ExecSpace>
struct lld_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  tile_access a, b;
  product_pairs<typename ExecSpace::memory_space> pairs;
  double alpha = 1, beta = 0;
  double* c = nullptr;
  int ldc = 0, c_rows = 0, c_cols = 0, c_tile_rows = 0, nb = 0, first = 0;
  Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space> work;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int g = first + team.league_rank();
    const int ct = pairs.c_tile(g);
    const int row0 = (ct % c_tile_rows) * nb, col0 = (ct / c_tile_rows) * nb;
    const int m = c_rows - row0 < nb ? c_rows - row0 : nb;
    const int n = c_cols - col0 < nb ? c_cols - col0 : nb;
    double* tile = c + row0 + std::size_t(col0) * ldc;
    const int count = pairs.pair_count(g);
    if (count == 0) team_scale(team, m, n, beta, tile, ldc);
    for (int p = 0; p < count; ++p)
      dense_update(team, a, pairs.a_tile(g, p), b, pairs.b_tile(g, p), alpha, p == 0 ? beta : 1.0,
                   tile, ldc, m, n, &work(0, team.league_rank()));
  }
};

/// GEMM-LLD over `pairs` on a dense column-major C, in launches that fit the workspace budget.
template <class ExecSpace>
void run_lld_portable(const ExecSpace& exec, const tile_access& a, const tile_access& b,
                      const product_pairs<typename ExecSpace::memory_space>& pairs, double alpha,
                      double beta, double* c, int ldc, int c_rows, int c_cols, int c_tile_rows,
                      std::size_t workspace_bytes) {
  const int groups = pairs.groups();
  if (groups == 0) return;
  const std::size_t per = std::max(1, dense_update_work(a, b));
  const std::size_t batch = teams_per_launch(groups, per * sizeof(double), workspace_bytes);
  lld_kernel<ExecSpace> k;
  k.a = a;
  k.b = b;
  k.pairs = pairs;
  k.alpha = alpha;
  k.beta = beta;
  k.c = c;
  k.ldc = ldc;
  k.c_rows = c_rows;
  k.c_cols = c_cols;
  k.c_tile_rows = c_tile_rows;
  k.nb = a.nb;
  k.work = decltype(k.work)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::lld_work")),
      per, batch);
  launch_in_batches(exec, "nearsparse::tlr::gemm_lld", groups, batch, k);
}

/// The portable batched GEMM-LLD: C tile c = alpha A_a B_b + beta C tile c for every triple.
template <class ExecSpace>
void portable_gemm_lld_batched(const ExecSpace& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options) {
  const auto pairs = upload_batch(exec, batch);
  run_lld_portable(exec, ops.a, ops.b, pairs, alpha, beta, ops.c, ops.ldc, ops.c_rows, ops.c_cols,
                   ops.c_tile_rows, options.workspace_bytes);
  exec.fence();  // the batch lists die here
}

/// The portable TLR-GEMM into a dense C: one launch in which each team walks the outer products
/// of its C tile.
template <class ExecSpace>
void portable_gemm_dense(const ExecSpace& exec, double alpha, const lld_operands& ops, double beta,
                         const gemm_options& options) {
  product_pairs<typename ExecSpace::memory_space> pairs;
  pairs.outer = true;
  pairs.k_begin = 0;
  pairs.k_end = ops.inner_tiles();
  pairs.mt_a = ops.a.tile_rows;
  pairs.mt_b = ops.b.tile_rows;
  pairs.mt_c = ops.c_tile_rows;
  pairs.groups_outer = ops.c_tiles;
  run_lld_portable(exec, ops.a, ops.b, pairs, alpha, beta, ops.c, ops.ldc, ops.c_rows, ops.c_cols,
                   ops.c_tile_rows, options.workspace_bytes);
}

#ifdef KOKKOS_ENABLE_CUDA
/// cuBLAS batched GEMMs where options.implementation allows it and Kokkos::Cuda's memory space
/// is device memory, the portable kernels otherwise. Throw nearsparse::unsupported for
/// implementation::specialized where cuBLAS cannot take the call, nearsparse::runtime_error when
/// CUDA or cuBLAS fails.
void dispatch_gemm_lld_batched(const Kokkos::Cuda& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options);
void dispatch_gemm_dense(const Kokkos::Cuda& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options);
#endif

#ifdef KOKKOS_ENABLE_OPENMP
/// One thread per C tile, its products gathered into BLAS-3 GEMMs (OpenBLAS), where this build has
/// OpenBLAS (src/tlr/host_lld.cpp); the portable kernels otherwise. Throw nearsparse::unsupported
/// for implementation::specialized without OpenBLAS.
void dispatch_gemm_lld_batched(const Kokkos::OpenMP& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options);
void dispatch_gemm_dense(const Kokkos::OpenMP& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
void dispatch_gemm_lld_batched(const Kokkos::Serial& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options);
void dispatch_gemm_dense(const Kokkos::Serial& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options);
#endif

/// Every other execution space: the portable kernels; implementation::specialized throws
/// nearsparse::unsupported.
template <class ExecSpace>
void dispatch_gemm_lld_batched(const ExecSpace& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options) {
  nearsparse::detail::take_specialized_none<ExecSpace>("nearsparse::tlr::gemm_lld_batched",
                                                       options.implementation);
  portable_gemm_lld_batched(exec, alpha, ops, beta, batch, options);
}
template <class ExecSpace>
void dispatch_gemm_dense(const ExecSpace& exec, double alpha, const lld_operands& ops, double beta,
                         const gemm_options& options) {
  nearsparse::detail::take_specialized_none<ExecSpace>("nearsparse::tlr::gemm",
                                                       options.implementation);
  portable_gemm_dense(exec, alpha, ops, beta, options);
}

}  // namespace nearsparse::tlr::detail
