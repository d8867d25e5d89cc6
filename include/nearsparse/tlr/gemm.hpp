#pragma once
// Products of TLR matrices (Charara, Keyes and Ltaief, Euro-Par 2018):
//   gemm(exec, alpha, A, B, beta, C)           TLR-GEMM, C = alpha A B + beta C with A and B TLR:
//                                              dense C (GEMM-LLD) or TLR C (GEMM-LLL);
//   gemm_lld_batched / gemm_lll_batched        the batched kernels: independent tile products
//                                              C_c = alpha A_a B_b + beta C_c, listed as triples.
// The driver is the paper's Figure 3: the inner products over k are reordered into nt outer
// products, each a batch over all C tiles. With a dense C the specialized path (cuBLAS, on
// Kokkos::Cuda) gathers several outer products into one batched call
// (gemm_options::outer_products_per_call) so C is read and written fewer times, and the host path
// (Kokkos::OpenMP, Kokkos::Serial with OpenBLAS) gathers them into one BLAS-3 GEMM per C tile. With
// a TLR C the portable kernels recompress every outer product, in order; the specialized paths
// (cuBLAS and the batched randomized SVD on Kokkos::Cuda, BLAS and LAPACK on the host) sum a C
// tile's products into the dense tile and recompress it once (gemm_options::implementation).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/detail/lld_dispatch.hpp>
#include <nearsparse/tlr/detail/lll_dispatch.hpp>
#include <nearsparse/tlr/detail/product_checks.hpp>
#include <nearsparse/tlr/detail/product_kernels.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
#include <nearsparse/tlr/detail/tile_access.hpp>
#include <nearsparse/tlr/options.hpp>
#include <nearsparse/tlr/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::tlr {

namespace detail {

template <class MemorySpace>
operand_shape shape_of(const char* name, const tlr_matrix<MemorySpace>& m) {
  return {name, m.grid(), &m.host_dense_slots()};
}
inline operand_shape dense_shape(const char* name, std::size_t rows, std::size_t cols,
                                 std::size_t tile) {
  return {name, tile_grid(rows, cols, tile), nullptr};
}

void require_finite_scalars(const char* function, double alpha, double beta);

/// Groups of a GEMM-LLL launch: dense C tiles as in GEMM-LLD, low-rank ones recompressed after
/// every product. Adds the squared dropped norm and the at-cap count to per-tile totals.
template <class ExecSpace>
struct lll_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using mem = typename ExecSpace::memory_space;
  tile_access a, b, c;
  product_pairs<mem> pairs;
  double alpha = 1, beta = 0, accuracy = 0;
  int fixed_rank = -1, first = 0;
  lowrank_work lw;
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> work;
  Kokkos::View<int**, Kokkos::LayoutLeft, mem> iwork;
  Kokkos::View<double*, mem> dropped2;
  Kokkos::View<int*, mem> at_cap;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int g = first + team.league_rank();
    const int ct = pairs.c_tile(g);
    double* ws = &work(0, team.league_rank());
    const int count = pairs.pair_count(g);
    if (c.slot(ct) >= 0) {
      const int m = c.row_extent(ct), n = c.col_extent(ct);
      if (count == 0) team_scale(team, m, n, beta, c.dense_of(ct), c.nb);
      for (int p = 0; p < count; ++p)
        dense_update(team, a, pairs.a_tile(g, p), b, pairs.b_tile(g, p), alpha, p == 0 ? beta : 1.0,
                     c.dense_of(ct), c.nb, m, n, ws);
      return;
    }
    if (count == 0) {  // C = beta C
      if (beta == 0) {
        team_scale(team, c.nb, c.kmax, 0.0, c.u_of(ct), c.nb);
        team_scale(team, c.nb, c.kmax, 0.0, c.v_of(ct), c.nb);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { c.ranks[ct] = 0; });
      } else {
        team_scale(team, c.nb, c.kmax, beta, c.v_of(ct), c.nb);
      }
      return;
    }
    double lost = 0;
    int capped = 0;
    for (int p = 0; p < count; ++p) {
      const lowrank_outcome o = lowrank_update(team, a, pairs.a_tile(g, p), b, pairs.b_tile(g, p),
                                               c, ct, alpha, p == 0 ? beta : 1.0, accuracy,
                                               fixed_rank, lw, ws, &iwork(0, team.league_rank()));
      lost += o.dropped2;
      capped += o.at_cap ? 1 : 0;
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      dropped2(ct) += lost;
      at_cap(ct) += capped;
    });
  }
};

/// GEMM-LLL over `pairs`; accumulates the report's per-tile totals.
template <class ExecSpace>
void run_lll(const ExecSpace& exec, const tile_access& a, const tile_access& b,
             const tile_access& c, const product_pairs<typename ExecSpace::memory_space>& pairs,
             double alpha, double beta, const truncation& trunc, std::size_t workspace_bytes,
             const Kokkos::View<double*, typename ExecSpace::memory_space>& dropped2,
             const Kokkos::View<int*, typename ExecSpace::memory_space>& at_cap) {
  const int groups = pairs.groups();
  if (groups == 0) return;
  lll_kernel<ExecSpace> k;
  k.lw.nb = a.nb;
  k.lw.w = c.kmax + std::max(a.kmax, b.kmax);
  k.lw.ka = a.kmax;
  k.lw.kb = b.kmax;
  const std::size_t doubles = std::max<std::size_t>(
      {std::size_t(1), std::size_t(k.lw.doubles()), std::size_t(dense_update_work(a, b))});
  const std::size_t per = doubles * sizeof(double) + k.lw.ints() * sizeof(int);
  const std::size_t batch = teams_per_launch(groups, per, workspace_bytes);
  k.a = a;
  k.b = b;
  k.c = c;
  k.pairs = pairs;
  k.alpha = alpha;
  k.beta = beta;
  k.accuracy = trunc.accuracy;
  k.fixed_rank = trunc.fixed_rank;
  k.dropped2 = dropped2;
  k.at_cap = at_cap;
  k.work = decltype(k.work)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::lll_work")),
      doubles, batch);
  k.iwork = decltype(k.iwork)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::lll_iwork")),
      k.lw.ints(), batch);
  launch_in_batches(exec, "nearsparse::tlr::gemm_lll", groups, batch, k);
}

template <class ExecSpace, class MemorySpace>
gemm_report make_report(const ExecSpace& exec, const tlr_matrix<MemorySpace>& c,
                        const Kokkos::View<double*, MemorySpace>& dropped2,
                        const Kokkos::View<int*, MemorySpace>& at_cap) {
  gemm_report r;
  const std::vector<int> ranks = c.host_ranks(exec);
  auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dropped2);
  auto cap = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), at_cap);
  double sum = 0, lost = 0;
  std::size_t low = 0;
  for (std::size_t t = 0; t < c.tile_count(); ++t) {
    lost += d(t);
    if (c.is_dense(t)) continue;
    ++low;
    sum += ranks[t];
    r.max_rank = std::max(r.max_rank, ranks[t]);
    if (cap(t) > 0) ++r.tiles_at_cap;
  }
  r.mean_rank = low ? sum / low : 0.0;
  r.dropped = std::sqrt(lost);
  return r;
}

/// The compile-time checks of the products: the space reaches the TLR operands, and a dense C is
/// a writable column-major View of double it reaches.
template <class ExecSpace, class MemorySpace>
constexpr void static_assert_tlr_operands() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::tlr: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                "nearsparse::tlr: the execution space cannot reach the TLR matrices");
}
template <class ExecSpace, class MemorySpace, class CView>
constexpr void static_assert_dense_product() {
  static_assert_tlr_operands<ExecSpace, MemorySpace>();
  static_assert_matrix<ExecSpace, CView>();
  static_assert(std::is_same<typename CView::non_const_value_type, double>::value &&
                    !std::is_const<typename CView::value_type>::value,
                "nearsparse::tlr::gemm: C must be a non-const View of double");
  static_assert(std::is_same<typename CView::array_layout, Kokkos::LayoutLeft>::value,
                "nearsparse::tlr::gemm: a dense C must be LayoutLeft (column-major)");
}

/// GEMM-LLL over `pairs` on the path take_specialized_lll chose.
template <class ExecSpace>
void dispatch_lll(const ExecSpace& exec, bool specialized, const tile_access& a,
                  const tile_access& b, const tile_access& c,
                  const product_pairs<typename ExecSpace::memory_space>& pairs, double alpha,
                  double beta, const gemm_options& options,
                  const Kokkos::View<double*, typename ExecSpace::memory_space>& dropped2,
                  const Kokkos::View<int*, typename ExecSpace::memory_space>& at_cap) {
  if (!specialized)
    return run_lll(exec, a, b, c, pairs, alpha, beta, options.trunc, options.workspace_bytes,
                   dropped2, at_cap);
  lll_job<typename ExecSpace::memory_space> job;
  job.a = a;
  job.b = b;
  job.c = c;
  job.pairs = pairs;
  job.alpha = alpha;
  job.beta = beta;
  job.trunc = options.trunc;
  job.workspace_bytes = options.workspace_bytes;
  job.dropped2 = dropped2.data();
  job.at_cap = at_cap.data();
  specialized_lll(exec, job);
}

/// The run-time checks every product shares: valid options, finite alpha and beta.
inline void check_product_arguments(const char* function, const gemm_options& options, double alpha,
                                    double beta) {
  validate(function, options);
  require_finite_scalars(function, alpha, beta);
}

}  // namespace detail

/// Batched GEMM-LLD: for every triple, C tile c = alpha A_a B_b + beta C tile c, where C is a dense
/// column-major View tiled like A and B. Throws nearsparse::invalid_argument for non-conforming
/// tiles, repeated C tiles, tiles out of range, or non-finite alpha or beta.
template <class ExecSpace, class MemorySpace, class CView>
void gemm_lld_batched(const ExecSpace& exec, double alpha, const tlr_matrix<MemorySpace>& A,
                      const tlr_matrix<MemorySpace>& B, double beta, const CView& C,
                      const std::vector<tile_triple>& batch, const gemm_options& options = {}) {
  detail::static_assert_dense_product<ExecSpace, MemorySpace, CView>();
  const char* fn = "nearsparse::tlr::gemm_lld_batched";
  detail::check_product_arguments(fn, options, alpha, beta);
  detail::check_batch(fn, detail::shape_of("A", A), detail::shape_of("B", B),
                      detail::dense_shape("C", C.extent(0), C.extent(1), A.tile()), batch);
  if (batch.empty()) return;
  detail::dispatch_gemm_lld_batched(exec, alpha, detail::lld_operands::of(A, B, C), beta, batch,
                                    options);
}

/// Batched GEMM-LLL: for every triple, C tile c = alpha A_a B_b + beta C tile c with C a TLR
/// matrix; low-rank C tiles are recompressed to options.trunc. Returns the ranks reached and what
/// the truncation dropped.
template <class ExecSpace, class MemorySpace>
gemm_report gemm_lll_batched(const ExecSpace& exec, double alpha, const tlr_matrix<MemorySpace>& A,
                             const tlr_matrix<MemorySpace>& B, double beta,
                             tlr_matrix<MemorySpace>& C, const std::vector<tile_triple>& batch,
                             const gemm_options& options = {}) {
  detail::static_assert_tlr_operands<ExecSpace, MemorySpace>();
  const char* fn = "nearsparse::tlr::gemm_lll_batched";
  detail::check_product_arguments(fn, options, alpha, beta);
  detail::validate(fn, options.trunc, C.max_rank());
  detail::check_batch(fn, detail::shape_of("A", A), detail::shape_of("B", B),
                      detail::shape_of("C", C), batch);
  const bool specialized = detail::take_specialized_lll(exec, fn, options);
  using mem = MemorySpace;
  Kokkos::View<double*, mem> dropped2(std::string("nearsparse::tlr::dropped"), C.tile_count());
  Kokkos::View<int*, mem> at_cap(std::string("nearsparse::tlr::at_cap"), C.tile_count());
  if (!batch.empty()) {
    const auto pairs = detail::upload_batch(exec, batch);
    detail::dispatch_lll(exec, specialized, detail::tile_access::of(A), detail::tile_access::of(B),
                         detail::tile_access::of(C), pairs, alpha, beta, options, dropped2, at_cap);
  }
  return detail::make_report(exec, C, dropped2, at_cap);
}

/// TLR-GEMM with a dense C: C = alpha A B + beta C, C a LayoutLeft View. The portable path runs
/// one launch in which each team walks the outer products for its C tile; the specialized path
/// (Kokkos::Cuda) runs cuBLAS batched calls of outer_products_per_call outer products each.
/// Throws nearsparse::unsupported for implementation::specialized where there is no such path.
template <class ExecSpace, class MemorySpace, class CView>
void gemm(const ExecSpace& exec, double alpha, const tlr_matrix<MemorySpace>& A,
          const tlr_matrix<MemorySpace>& B, double beta, const CView& C,
          const gemm_options& options = {}) {
  detail::static_assert_dense_product<ExecSpace, MemorySpace, CView>();
  const char* fn = "nearsparse::tlr::gemm";
  detail::check_product_arguments(fn, options, alpha, beta);
  detail::check_product_shapes(fn, detail::shape_of("A", A), detail::shape_of("B", B),
                               detail::dense_shape("C", C.extent(0), C.extent(1), A.tile()));
  const tile_grid cg(C.extent(0), C.extent(1), A.tile());
  if (cg.tile_count() == 0) return;
  detail::dispatch_gemm_dense(exec, alpha, detail::lld_operands::of(A, B, C), beta, options);
}

/// TLR-GEMM with a TLR C: C = alpha A B + beta C recompressed to options.trunc and C's max_rank.
/// The portable path recompresses each of the nt outer products (GEMM-LLL): each team walks the
/// outer products of its C tile in order, the same arithmetic as nt batched calls. The specialized
/// paths (Kokkos::Cuda; the host with OpenBLAS) recompress each C tile once, after summing its
/// products. Throws nearsparse::invalid_argument
/// when a low-rank C tile would receive the product of two dense tiles.
template <class ExecSpace, class MemorySpace>
gemm_report gemm(const ExecSpace& exec, double alpha, const tlr_matrix<MemorySpace>& A,
                 const tlr_matrix<MemorySpace>& B, double beta, tlr_matrix<MemorySpace>& C,
                 const gemm_options& options = {}) {
  detail::static_assert_tlr_operands<ExecSpace, MemorySpace>();
  const char* fn = "nearsparse::tlr::gemm";
  detail::check_product_arguments(fn, options, alpha, beta);
  detail::validate(fn, options.trunc, C.max_rank());
  const auto sa = detail::shape_of("A", A), sb = detail::shape_of("B", B),
             sc = detail::shape_of("C", C);
  detail::check_product_shapes(fn, sa, sb, sc);
  detail::check_lowrank_targets(fn, sa, sb, sc);
  const bool specialized = detail::take_specialized_lll(exec, fn, options);
  using mem = MemorySpace;
  Kokkos::View<double*, mem> dropped2(std::string("nearsparse::tlr::dropped"), C.tile_count());
  Kokkos::View<int*, mem> at_cap(std::string("nearsparse::tlr::at_cap"), C.tile_count());
  detail::product_pairs<mem> pairs;
  pairs.outer = true;
  pairs.k_begin = 0;
  pairs.k_end = static_cast<int>(A.tile_cols());
  pairs.mt_a = static_cast<int>(A.tile_rows());
  pairs.mt_b = static_cast<int>(B.tile_rows());
  pairs.mt_c = static_cast<int>(C.tile_rows());
  pairs.groups_outer = static_cast<int>(C.tile_count());
  detail::dispatch_lll(exec, specialized, detail::tile_access::of(A), detail::tile_access::of(B),
                       detail::tile_access::of(C), pairs, alpha, beta, options, dropped2, at_cap);
  return detail::make_report(exec, C, dropped2, at_cap);
}

}  // namespace nearsparse::tlr
