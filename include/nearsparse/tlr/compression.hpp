#pragma once
// Compression of a dense matrix into TLR form, and the way back.
//
//   auto A_tlr = nearsparse::tlr::compress(exec, A, 512, options, report);
//   auto A_back = nearsparse::tlr::to_dense(exec, A_tlr);
//
// Each low-rank tile gets a truncated SVD, T ~ U V^T with orthonormal U and V = W Sigma; the rank
// follows options.trunc (a fixed rank, or an accuracy: the error budget accuracy * |A|_F is split
// evenly over the tiles, so |A - A_tlr|_F <= accuracy * |A|_F) and never exceeds max_rank.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/detail/compression_kernels.hpp>
#include <nearsparse/tlr/detail/team_linalg.hpp>
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

/// One team per tile: a dense tile's nb x nb block of A (zero beyond A's extents) into its slot.
template <class ExecSpace, class AView, class MemorySpace>
struct copy_dense_tiles_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  AView a;
  typename tlr_matrix<MemorySpace>::factor_view dense;
  typename tlr_matrix<MemorySpace>::index_view slots;
  int mt, nb, rows, cols;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int slot = slots(t);
    if (slot < 0) return;
    const int row0 = (t % mt) * nb, col0 = (t / mt) * nb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const int q) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nb), [&](const int r) {
        dense(r, q, slot) =
            row0 + r < rows && col0 + q < cols ? double(a(row0 + r, col0 + q)) : 0.0;
      });
    });
  }
};

template <class ExecSpace, class AView, class MemorySpace>
void copy_dense_tiles(const ExecSpace& exec, const AView& a, const tlr_matrix<MemorySpace>& out) {
  const int mt = static_cast<int>(out.tile_rows()), nb = static_cast<int>(out.tile());
  const int rows = static_cast<int>(out.rows()), cols = static_cast<int>(out.cols());
  auto dense = out.dense();
  auto slots = out.dense_slots();
  const int tiles = static_cast<int>(out.tile_count());
  Kokkos::parallel_for(
      "nearsparse::tlr::compress::dense_tiles", tile_team_policy(exec, tiles),
      copy_dense_tiles_kernel<ExecSpace, AView, MemorySpace>{a, dense, slots, mt, nb, rows, cols});
}

/// One team per low-rank tile compressed to rank 0: its error is the tile's Frobenius norm.
template <class ExecSpace, class AView, class MemorySpace>
struct zero_rank_tiles_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  compression_target<AView, MemorySpace> c;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const auto f = c.frame(team.league_rank());
    const double s = team_sum(team, f.m, f.n, [&](const int r, const int q) {
      const double x = c.a(f.row0 + r, f.col0 + q);
      return x * x;
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      c.ranks(f.t) = 0;
      c.errors(f.t) = ::sqrt(s);
    });
  }
};

/// One team per tile: the tile's dense block, or U V^T of a low-rank tile, written into the
/// column-major matrix at base (leading dimension ld).
template <class ExecSpace, class MemorySpace>
struct tlr_to_dense_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename tlr_matrix<MemorySpace>::factor_view u, v, dense;
  typename tlr_matrix<MemorySpace>::index_view slots, ranks;
  double* base;
  int mt, nb, rows, cols, kmax, ld;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const int row0 = (t % mt) * nb, col0 = (t / mt) * nb;
    const int m = rows - row0 < nb ? rows - row0 : nb, n = cols - col0 < nb ? cols - col0 : nb;
    double* c = base + row0 + std::size_t(col0) * ld;
    const int slot = slots(t);
    if (slot >= 0) {
      team_copy(team, m, n, n, &dense(0, 0, slot), nb, c, ld);
    } else {
      const std::size_t offset = std::size_t(t) * nb * kmax;
      team_gemm_nx(team, true, m, n, ranks(t), 1.0, u.data() + offset, nb, v.data() + offset, nb,
                   0.0, c, ld);
    }
  }
};

}  // namespace detail

/// Compresses the dense matrix A (any layout, double, reachable from exec) into a TLR matrix with
/// tile x tile tiles. Fills `report` with the ranks, the error and the memory. Throws
/// nearsparse::invalid_argument for a zero tile, a max_rank above the tile size, a fixed rank above
/// max_rank, a negative accuracy, or non-finite values in A, and nearsparse::unsupported for
/// implementation::specialized where there is no specialized path (see
/// compression_options::implementation).
template <class ExecSpace, class AView>
tlr_matrix<typename ExecSpace::memory_space> compress(const ExecSpace& exec, const AView& A,
                                                      std::size_t tile,
                                                      const compression_options& options,
                                                      compression_report& report) {
  static_assert_matrix<ExecSpace, AView>();
  static_assert(std::is_same<typename AView::non_const_value_type, double>::value,
                "nearsparse::tlr::compress: A must hold double");
  using memory_space = typename ExecSpace::memory_space;
  const char* fn = "nearsparse::tlr::compress";
  require(tile > 0, fn, "tile", "must be > 0, got 0");
  detail::validate(fn, options, tile);
  const bool specialized = detail::take_specialized_compression(exec, options);
  require(A.extent(0) < (std::size_t(1) << 31) && A.extent(1) < (std::size_t(1) << 31), fn, "A",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(A),
                                     "; each must be below 2^31"));
  require_finite(exec, fn, "A", A);

  tlr_matrix<memory_space> out(exec, A.extent(0), A.extent(1), tile, options.max_rank,
                               options.dense_diagonal);
  report = compression_report{};
  report.norm = frobenius_norm(exec, A);
  if (options.trunc.fixed_rank < 0) report.requested_accuracy = options.trunc.accuracy;
  if (out.tile_count() == 0) return out;
  detail::copy_dense_tiles(exec, A, out);

  std::vector<int> low_rank;
  for (std::size_t t = 0; t < out.tile_count(); ++t)
    if (!out.is_dense(t)) low_rank.push_back(static_cast<int>(t));
  // Each low-rank tile's share of the error budget accuracy * |A|_F.
  const double tolerance = low_rank.empty() ? 0.0
                                            : options.trunc.accuracy * report.norm /
                                                  std::sqrt(static_cast<double>(low_rank.size()));
  Kokkos::View<double*, memory_space> errors(
      Kokkos::view_alloc(exec, std::string("nearsparse::tlr::compress::errors")), out.tile_count());
  if (!low_rank.empty() && specialized) {
    detail::compression_job job;
    job.a = A.data();
    job.a_row_stride = A.stride(0);
    job.a_col_stride = A.stride(1);
    job.u = out.u().data();
    job.v = out.v().data();
    job.ranks = out.ranks().data();
    job.errors = errors.data();
    job.tiles = low_rank.data();
    job.tile_count = static_cast<int>(low_rank.size());
    job.tile_rows = static_cast<int>(out.tile_rows());
    job.nb = static_cast<int>(tile);
    job.rows = static_cast<int>(out.rows());
    job.cols = static_cast<int>(out.cols());
    job.max_rank = options.max_rank;
    job.fixed_rank = options.trunc.fixed_rank;
    job.tolerance = tolerance;
    detail::specialized_compress(exec, job, options);
  } else if (!low_rank.empty()) {
    Kokkos::View<int*, memory_space> tiles(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::tiles")),
        low_rank.size());
    auto staged = Kokkos::create_mirror_view(tiles);
    for (std::size_t k = 0; k < low_rank.size(); ++k) staged(k) = low_rank[k];
    Kokkos::deep_copy(exec, tiles, staged);

    detail::compression_target<AView, memory_space> c;
    c.a = A;
    c.u = out.u();
    c.v = out.v();
    c.ranks = out.ranks();
    c.errors = errors;
    c.tiles = tiles;
    c.tile_rows = static_cast<int>(out.tile_rows());
    c.nb = static_cast<int>(tile);
    c.rows = static_cast<int>(out.rows());
    c.cols = static_cast<int>(out.cols());
    c.max_rank = options.max_rank;
    c.fixed_rank = options.trunc.fixed_rank;
    c.tolerance = tolerance;

    const int nb = static_cast<int>(tile);
    const bool exact = options.method == compression_method::svd;
    const int ell = std::min(nb, options.max_rank + options.oversampling);
    const std::size_t doubles =
        exact ? detail::jacobi_compression<AView, memory_space>::doubles_per_tile(nb)
              : std::size_t(
                    detail::randomized_compression<AView, memory_space>::doubles_per_tile(nb, ell));
    const std::size_t ints =
        exact ? detail::jacobi_compression<AView, memory_space>::ints_per_tile(nb)
              : detail::randomized_compression<AView, memory_space>::ints_per_tile(ell);
    const std::size_t per_tile = doubles * sizeof(double) + ints * sizeof(int);
    const std::size_t batch =
        detail::teams_per_launch(low_rank.size(), per_tile, options.workspace_bytes);
    c.work = decltype(c.work)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::work")),
        doubles, batch);
    c.iwork = decltype(c.iwork)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::iwork")),
        ints, batch);
    for (std::size_t first = 0; first < low_rank.size(); first += batch) {
      c.first = static_cast<int>(first);
      const int league = static_cast<int>(std::min(batch, low_rank.size() - first));
      if (exact) {
        Kokkos::parallel_for("nearsparse::tlr::compress::svd",
                             detail::tile_team_policy(exec, league),
                             detail::jacobi_compression<AView, memory_space>{c});
      } else if (ell == 0) {
        // max_rank = 0 without oversampling: every low-rank tile is zero; its error is its norm.
        Kokkos::parallel_for("nearsparse::tlr::compress::zero",
                             detail::tile_team_policy(exec, league),
                             detail::zero_rank_tiles_kernel<ExecSpace, AView, memory_space>{c});
      } else {
        detail::randomized_compression<AView, memory_space> kernel{c, ell, options.power_iterations,
                                                                   options.seed};
        Kokkos::parallel_for("nearsparse::tlr::compress::randomized",
                             detail::tile_team_policy(exec, league), kernel);
      }
    }
  }

  // The report, from the ranks and errors on the host.
  const std::vector<int> ranks = out.host_ranks(exec);
  auto host_errors = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), errors);
  report.tiles = out.tile_count();
  report.dense_tiles = static_cast<std::size_t>(out.dense_count());
  double error2 = 0, rank_sum = 0;
  bool first = true;
  for (int t : low_rank) {
    const int r = ranks[t];
    report.min_rank = first ? r : std::min(report.min_rank, r);
    report.max_rank = first ? r : std::max(report.max_rank, r);
    first = false;
    rank_sum += r;
    error2 += host_errors(t) * host_errors(t);
    const std::size_t i = t % out.tile_rows(), j = t / out.tile_rows();
    const int cap = static_cast<int>(
        std::min<std::size_t>({std::size_t(options.max_rank), out.grid().tile_row_extent(i),
                               out.grid().tile_col_extent(j)}));
    if (options.trunc.fixed_rank < 0 && r == cap && host_errors(t) > tolerance)
      ++report.tiles_at_cap;
  }
  report.mean_rank = low_rank.empty() ? 0.0 : rank_sum / low_rank.size();
  report.error = std::sqrt(error2);
  report.relative_error = report.norm > 0 ? report.error / report.norm : 0.0;
  // Relative slack for the rounding of the error sums (the budget is met exactly at best).
  if (options.trunc.fixed_rank < 0)
    report.accuracy_met = report.relative_error <= options.trunc.accuracy * (1 + 1e-9);
  report.compressed_bytes = out.compressed_bytes(exec);
  report.dense_bytes = out.dense_bytes();
  return out;
}

/// compress without a report.
template <class ExecSpace, class AView>
tlr_matrix<typename ExecSpace::memory_space> compress(const ExecSpace& exec, const AView& A,
                                                      std::size_t tile,
                                                      const compression_options& options = {}) {
  compression_report report;
  return compress(exec, A, tile, options, report);
}

/// The dense matrix a TLR matrix stands for (column-major), computed on exec.
template <class ExecSpace, class MemorySpace>
Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> to_dense(const ExecSpace& exec,
                                                                 const tlr_matrix<MemorySpace>& a) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                "nearsparse::tlr::to_dense: the execution space cannot reach the matrix");
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> out(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::tlr::to_dense")),
      a.rows(), a.cols());
  if (a.tile_count() == 0) return out;
  const int mt = static_cast<int>(a.tile_rows()), nb = static_cast<int>(a.tile());
  const int rows = static_cast<int>(a.rows()), cols = static_cast<int>(a.cols());
  const int kmax = a.max_rank();
  auto u = a.u();
  auto v = a.v();
  auto dense = a.dense();
  auto slots = a.dense_slots();
  auto ranks = a.ranks();
  const int ld = static_cast<int>(out.stride(1));
  double* base = out.data();
  Kokkos::parallel_for("nearsparse::tlr::to_dense",
                       detail::tile_team_policy(exec, static_cast<int>(a.tile_count())),
                       detail::tlr_to_dense_kernel<ExecSpace, MemorySpace>{
                           u, v, dense, slots, ranks, base, mt, nb, rows, cols, kmax, ld});
  return out;
}

}  // namespace nearsparse::tlr
