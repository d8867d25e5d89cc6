#pragma once
// SpAMM over MPI processes, one process per GPU (builds with NEARSPARSE_ENABLE_MPI).
//
// The processes form a P_r x P_c grid (rank = row * P_c + column). Process (I, J) holds the
// block of A with the rows of process row I and the columns (k) of process column J, the block
// of B with the rows (k) of process row I and the columns of process column J, and the block of
// C with the rows of I and the columns of J. Block edges lie on the tile grid of the whole
// product, so every process sees the tiles, norms and kept tile pairs a single process would.
//
// - P_c = 1 (the default) is the paper's Algorithm 4: rows of A and C split over the processes,
//   B replicated with its norm map. Each process holds only its rows of B at the start; the
//   first product moves every process's block (packed, in the input format) in panels along k
//   while the panels already here are multiplied, and keeps them for later products. With
//   tau > 0 each process receives only the tiles its kept tile products read
//   (distributed_options::kept_tiles_only); whole panels are broadcast otherwise.
// - P_c > 1 is SUMMA for a B that does not fit one GPU: panels of A travel along process rows and
//   panels of B along process columns; with keep_panels = false only two of each are held.
//
// The norm maps (small) are exchanged when the plan is built and at every update, so tau and the
// tau search are global: the valid ratio counts the kept tile products of the whole product, and
// a target ratio gives the tau one process would find.
//
//   auto blocks = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, m, n, k, opt.tile);
//   // fill A (blocks.row_end - blocks.row_begin) x (blocks.a_col_end - blocks.a_col_begin), ...
//   nearsparse::spamm::distributed_plan plan(MPI_COMM_WORLD, exec, A, B, opt);
//   plan.multiply(exec, 1.0f, 0.0f, C);   // this process's block of C
//
// Every member function is collective over the communicator; an error found by one process is
// raised on all of them. The plan must be destroyed before MPI_Finalize.

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/broadcast_channel.hpp>
#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/detail/peer_transfer.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/detail/pack_norms.hpp>
#include <nearsparse/spamm/plan.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nearsparse::spamm {

struct distributed_options {
  /// Process grid P_r x P_c; P_r = 0 takes all processes over P_c columns.
  int process_rows = 0;
  int process_cols = 1;
  /// Each block of k (a process's rows of B, or columns of A) travels and is multiplied in this
  /// many panels: more panels overlap more of the transfer, at one more pass over C each.
  int panels_per_block = 1;
  /// Keep the panels received for later products (B replicated, Algorithm 4). false holds two
  /// panels of each operand at a time (SUMMA's memory) and sends them again every product.
  bool keep_panels = true;
  /// With tau > 0, a panel travels to each process as the tiles that process's kept tile
  /// products read (a tile of B's panel (k, j) when ||A[i,k]|| ||B[k,j]|| >= tau for one of its
  /// rows i; likewise for A's panels along process rows), each process its own set, instead of
  /// broadcast whole. A panel received this way serves only the same tau and the same other
  /// operand: set_tau, update_a and update_b make the next product send it again.
  bool kept_tiles_only = true;
  gpu_transport transport = gpu_transport::automatic;
};

/// This process's part of an m x k times k x n product (half-open ranges).
struct process_blocks {
  int process_row = 0, process_col = 0;
  int row_begin = 0, row_end = 0;      ///< rows of A and C
  int col_begin = 0, col_end = 0;      ///< columns of B and C
  int a_col_begin = 0, a_col_end = 0;  ///< columns of A (a range of k)
  int b_row_begin = 0, b_row_end = 0;  ///< rows of B (a range of k)
};

namespace detail {

/// Part p of `extent` split over `parts` in whole tiles, as even as tiles allow.
inline std::pair<int, int> tile_share(int extent, int tile, int parts, int p) {
  const std::int64_t tiles = (std::int64_t(extent) + tile - 1) / tile;
  auto edge = [&](int q) { return int(std::min<std::int64_t>(extent, tiles * q / parts * tile)); };
  return {edge(p), p + 1 == parts ? extent : edge(p + 1)};
}

/// Tile-row edges of `parts` blocks of `extent` rows whose summed weights (one per tile row)
/// are as even as whole tiles allow; edges in rows.
inline std::vector<int> weighted_tile_edges(int extent, int tile, int parts,
                                            const std::vector<double>& weight) {
  std::vector<double> cum(weight.size() + 1, 0.0);
  for (std::size_t i = 0; i < weight.size(); ++i) cum[i + 1] = cum[i] + weight[i];
  std::vector<int> edges(std::size_t(parts) + 1, extent);
  edges[0] = 0;
  for (int q = 1; q < parts; ++q) {
    const double target = cum.back() * q / parts;
    // The first tile edge at or past the target, but never before the previous edge.
    const auto at = std::lower_bound(cum.begin(), cum.end(), target) - cum.begin();
    edges[std::size_t(q)] =
        std::max(edges[std::size_t(q) - 1], int(std::min<std::int64_t>(extent, at * tile)));
  }
  return edges;
}

/// {P_r, P_c} for `size` processes; throws unless they multiply to `size`.
inline std::pair<int, int> process_grid(const char* fn, int size, const distributed_options& o) {
  require(o.process_cols >= 1, fn, "options.process_cols",
          nearsparse::detail::concat("is ", o.process_cols, "; it must be at least 1"));
  require(o.process_rows >= 0, fn, "options.process_rows",
          nearsparse::detail::concat("is ", o.process_rows,
                                     "; it must be at least 1, or 0 for all processes"));
  const int pr = o.process_rows == 0 ? size / o.process_cols : o.process_rows;
  require(
      pr >= 1 && pr * o.process_cols == size, fn, "options.process_rows",
      nearsparse::detail::concat("and options.process_cols give a ", pr, " x ", o.process_cols,
                                 " process grid, but the communicator has ", size, " processes"));
  require(o.panels_per_block >= 1, fn, "options.panels_per_block",
          nearsparse::detail::concat("is ", o.panels_per_block, "; it must be at least 1"));
  return {pr, o.process_cols};
}

/// Raises on every process when `ok` is false on any, so that no process is left waiting in a
/// collective: `problem` where it failed, `summary` and the failing process elsewhere.
inline void collective_require(MPI_Comm comm, bool ok, const char* fn, const char* argument,
                               const std::string& problem, const std::string& summary) {
  int mine = ok ? 1 : 0, all = 0;
  nearsparse::detail::mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm), fn,
                                "MPI_Allreduce");
  if (all) return;
  int first = ok ? nearsparse::detail::mpi_size(comm) : nearsparse::detail::mpi_rank(comm);
  nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), fn,
                                "MPI_Allreduce");
  nearsparse::detail::throw_invalid_argument(
      fn, argument,
      ok ? nearsparse::detail::concat(summary, " on process ", first)
         : nearsparse::detail::concat(problem, " (on process ", nearsparse::detail::mpi_rank(comm),
                                      ")"));
}

/// v(i, j) += part(i, j).
template <class Mem>
struct add_work_element {
  work_matrix<Mem> v, part;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    v(i, j) += part(i, j);
  }
};

/// v += part, element by element (work matrices of one extent).
template <class ExecSpace, class Mem>
void add_work(const ExecSpace& exec, const work_matrix<Mem>& v, const work_matrix<Mem>& part) {
  nearsparse::detail::for_each_element(exec, "nearsparse::spamm::sum_V", v.extent(0), v.extent(1),
                                       nearsparse::detail::second_index_contiguous(v),
                                       add_work_element<Mem>{v, part});
}

/// Word u of row r of a column block: d[r * dst_width + offset + u] = s[r * width + u].
struct copy_columns_element {
  const std::uint64_t* s;
  int width;
  std::uint64_t* d;
  int dst_width, offset;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r, const std::int64_t u) const {
    d[r * dst_width + offset + u] = s[r * width + u];
  }
};

/// Copies `rows` rows of `width` 8-byte words from src (rows `width` apart) to dst (rows
/// `dst_width` apart), starting at word `offset` of each: a column block of a packed operand.
/// Panels start on the tile grid and span whole tiles (32 elements of 2 bytes or more), so their
/// edges are always whole words.
template <class ExecSpace>
void copy_columns(const ExecSpace& exec, const void* src, int rows, int width, void* dst,
                  int dst_width, int offset) {
  const auto* s = static_cast<const std::uint64_t*>(src);
  auto* d = static_cast<std::uint64_t*>(dst);
  nearsparse::detail::for_each_element(exec, "nearsparse::spamm::assemble_panels", rows, width,
                                       true, copy_columns_element{s, width, d, dst_width, offset});
}

/// Word e of the compact buffer c (tile e / tile_size of it) and its word in the panel p, copied
/// from the panel to c (gather) or back.
template <class Mem>
struct move_tiles_kernel {
  bool gather;
  std::uint64_t* p;
  std::int64_t row_words;
  int kt, tile, tile_words;
  Kokkos::View<int*, Mem> tiles;
  std::int64_t first;
  std::uint64_t* c;
  std::int64_t tile_size;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t t = e / tile_size, in = e - t * tile_size;
    const std::int64_t row = in / tile_words, u = in - row * tile_words;
    const std::int64_t id = tiles(first + t);
    const std::int64_t r = id / kt, k = id - r * kt;
    std::uint64_t* in_panel = p + (r * tile + row) * row_words + k * tile_words + u;
    if (gather) {
      c[e] = *in_panel;
    } else {
      *in_panel = c[e];
    }
  }
};

/// Whole tiles of a packed operand panel (rows of `row_words` 8-byte words, tile rows of
/// `tile_words` words) copied to a compact buffer (gather) or back from one: compact tile t is
/// tile tiles(first + t) = r * kt + k of the panel, rows [r tile, r tile + tile) and words
/// [k tile_words, k tile_words + tile_words) of each, its rows one after the other.
template <class ExecSpace, class Mem>
void move_tiles(const ExecSpace& exec, bool gather, void* panel, std::int64_t row_words, int kt,
                int tile, int tile_words, const Kokkos::View<int*, Mem>& tiles, std::int64_t first,
                std::int64_t count, void* compact) {
  auto* p = static_cast<std::uint64_t*>(panel);
  auto* c = static_cast<std::uint64_t*>(compact);
  const std::int64_t tile_size = std::int64_t(tile) * tile_words;  // words of one tile
  // One word per thread, consecutive threads along a tile row.
  Kokkos::parallel_for(
      gather ? "nearsparse::spamm::gather_kept_tiles" : "nearsparse::spamm::place_kept_tiles",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, count * tile_size),
      move_tiles_kernel<Mem>{gather, p, row_words, kt, tile, tile_words, tiles, first, c,
                             tile_size});
}

/// out[k] = the largest of the `across` norms of tile column k (by_rows) or tile row k of norms.
template <class Mem>
struct largest_norms_kernel {
  norm_map<Mem> norms;
  bool by_rows;
  int across;
  double* out;

  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    double m = 0.0;
    for (int o = 0; o < across; ++o) {
      const double x = by_rows ? norms(o, k) : norms(k, o);
      m = x > m ? x : m;
    }
    out[k] = m;
  }
};

/// out[k] = the largest norm of tile column k of an A norm map (over its rows, by_rows) or of
/// tile row k of a B norm map (over its columns): what a process's own block multiplies the
/// other operand's tiles of k with.
template <class ExecSpace, class Mem>
void largest_norms(const ExecSpace& exec, const norm_map<Mem>& norms, bool by_rows, double* out) {
  const int kt = int(by_rows ? norms.extent(1) : norms.extent(0));
  const int across = int(by_rows ? norms.extent(0) : norms.extent(1));
  Kokkos::parallel_for("nearsparse::spamm::largest_norms",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, kt),
                       largest_norms_kernel<Mem>{norms, by_rows, across, out});
}

/// C = beta * C (C = 0 when beta is 0, so NaN in C does not survive).
template <class ExecSpace, class CView>
void scale_c(const ExecSpace& exec, typename CView::non_const_value_type beta, const CView& c) {
  nearsparse::detail::for_each_element(exec, "nearsparse::spamm::scale_c", c.extent(0), c.extent(1),
                                       nearsparse::detail::second_index_contiguous(c),
                                       scale_c_element<CView>{c, beta});
}

}  // namespace detail

/// Tile-aligned blocks of an m x k times k x n product for this process of `comm`: equal, or,
/// with `row_work` (one weight per tile row of C, the same on every process, such as
/// distributed_plan::tile_row_work of a first plan), rows of A and C split so that every
/// process row gets an even share of the work. The rows of B follow the rows of C when k == m,
/// so a product can be fed back as the next B (matrix powers).
inline process_blocks distributed_blocks(MPI_Comm comm, int m, int n, int k, int tile,
                                         const distributed_options& o = {},
                                         const std::vector<double>& row_work = {}) {
  constexpr const char* fn = "nearsparse::spamm::distributed_blocks";
  require(m >= 0 && n >= 0 && k >= 0, fn, "m",
          nearsparse::detail::concat("n and k must not be negative; got ", m, ", ", n, ", ", k));
  require(tile >= 1, fn, "tile", nearsparse::detail::concat("is ", tile, "; it must be positive"));
  const auto [pr, pc] = detail::process_grid(fn, nearsparse::detail::mpi_size(comm), o);
  const int rank = nearsparse::detail::mpi_rank(comm);
  process_blocks b;
  b.process_row = rank / pc;
  b.process_col = rank % pc;
  std::tie(b.row_begin, b.row_end) = detail::tile_share(m, tile, pr, b.process_row);
  std::tie(b.col_begin, b.col_end) = detail::tile_share(n, tile, pc, b.process_col);
  std::tie(b.a_col_begin, b.a_col_end) = detail::tile_share(k, tile, pc, b.process_col);
  std::tie(b.b_row_begin, b.b_row_end) = detail::tile_share(k, tile, pr, b.process_row);
  if (!row_work.empty()) {
    const std::size_t mt = (std::size_t(m) + tile - 1) / tile;
    require(row_work.size() == mt, fn, "row_work",
            nearsparse::detail::concat("has ", row_work.size(),
                                       " entries; it needs one per tile row of C (", mt, ")"));
    require(std::all_of(row_work.begin(), row_work.end(),
                        [](double w) { return std::isfinite(w) && w >= 0; }),
            fn, "row_work", "must be finite and non-negative");
    const auto edges = detail::weighted_tile_edges(m, tile, pr, row_work);
    b.row_begin = edges[std::size_t(b.process_row)];
    b.row_end = edges[std::size_t(b.process_row) + 1];
    if (k == m) {
      b.b_row_begin = b.row_begin;
      b.b_row_end = b.row_end;
    }
  }
  return b;
}

template <class ExecSpace>
class distributed_plan {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using norm_map_type = detail::norm_map<memory_space>;
  using work_matrix_type = detail::work_matrix<memory_space>;

  /// Collective. `a` and `b` are this process's blocks (see the file comment); options as for
  /// spamm::plan, with tau or the target valid ratio applying to the whole product
  /// (options::target_error is refused: nearsparse::invalid_argument).
  template <class AView, class BView>
  distributed_plan(MPI_Comm comm, const ExecSpace& exec, const AView& a, const BView& b,
                   const spamm::options& opt = spamm::options{},
                   const distributed_options& dist = distributed_options{})
      : options_(opt), dist_(dist) {
    detail::static_assert_operands<ExecSpace, AView, BView>();
    detail::validate_options(fn, opt);
    // The error bound sums each output tile's dropped products over k before squaring, and the
    // k of a tile are spread over panels and processes here, so options::target_error is refused
    // rather than ignored.
    require(opt.target_error == 0, fn, "options.target_error",
            nearsparse::detail::concat("is ", opt.target_error,
                                       "; a distributed plan takes tau or target_valid_ratio "
                                       "only (spamm::plan supports target_error)"));
    // A transport this build cannot use is refused also where nothing travels (one process).
    (void)nearsparse::detail::resolve_transport<ExecSpace>(dist.transport, fn);
    world_ = comm;
    std::tie(pr_, pc_) = detail::process_grid(fn, nearsparse::detail::mpi_size(comm), dist);
    const int rank = nearsparse::detail::mpi_rank(comm);
    prow_ = rank / pc_;
    pcol_ = rank % pc_;
    split_communicators();
    lay_out(a, b);
    if (pc_ > 1) a_channel_ = std::make_unique<channel>(row_comm_->comm, dist.transport, fn);
    if (pr_ > 1) b_channel_ = std::make_unique<channel>(col_comm_->comm, dist.transport, fn);
    work_ = work_matrix_type(Kokkos::view_alloc(exec, "nearsparse::spamm::V"), local_geo_.mt,
                             local_geo_.nt);
    bad_ = Kokkos::View<std::int64_t*, memory_space>(
        Kokkos::view_alloc(exec, "nearsparse::spamm::non_finite_count"), panels_.size());
    prepare(exec, a, detail::operand::a);
    prepare(exec, b, detail::operand::b);
    if (opt.target_valid_ratio > 0) {
      search_tau(exec, opt.target_valid_ratio, opt.search);
    } else {
      set_tau(exec, opt.tau);
    }
  }

  distributed_plan(const distributed_plan&) = delete;
  distributed_plan& operator=(const distributed_plan&) = delete;

  /// Replaces this process's block of A (same extents); tau kept. Collective.
  template <class AView>
  void update_a(const ExecSpace& exec, const AView& a) {
    static_assert_matrix<ExecSpace, AView>();
    check_block_extents("update_a", "A", a, local_geo_.m, a_cols_);
    prepare(exec, a, detail::operand::a);
    set_tau(exec, tau_);
  }

  /// Replaces this process's block of B (same extents): for a power A^p, pass the product's
  /// block back in when the rows of A and the rows of B are split alike. Collective.
  template <class BView>
  void update_b(const ExecSpace& exec, const BView& b) {
    static_assert_matrix<ExecSpace, BView>();
    check_block_extents("update_b", "B", b, b_rows_, local_geo_.n);
    prepare(exec, b, detail::operand::b);
    set_tau(exec, tau_);
  }

  /// Sets the threshold for the whole product; recomputes V and the valid ratio. Collective.
  void set_tau(const ExecSpace& exec, double tau) {
    require_nonnegative("nearsparse::spamm::distributed_plan::set_tau", "tau", tau);
    tau_ = tau;
    // Panels that arrived as kept tiles only served the kept set they were sent for.
    for (bool is_a : {true, false}) {
      bool& partial = is_a ? a_partial_ : b_partial_;
      if (!partial) continue;
      for (auto& p : panels_) (is_a ? p.a_kept : p.b_kept) = false;
      whole_.ready = false;
      partial = false;
    }
    local_kept_ = count_local(exec, tau, true);
    kept_ = local_kept_;
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, &kept_, 1, MPI_INT64_T, MPI_SUM, world_), fn, "MPI_Allreduce");
  }

  /// The tau whose valid ratio over the whole product came closest to `target` among those the
  /// search evaluated (plan::search_tau says when it stops), as a single
  /// process would find it; sets it. Collective.
  search_report search_tau(const ExecSpace& exec, double target,
                           const search_options& search = search_options{}) {
    detail::validate_search("nearsparse::spamm::distributed_plan::search_tau", target, search);
    search_report result;
    result.target = target;
    const double total = global_geo_.tile_products();
    if (total == 0 || target >= 1.0) {
      set_tau(exec, 0.0);
      result.valid_ratio = valid_ratio();
      result.converged = true;
      return result;
    }
    // The mean of all norm products: each process's panels hold a disjoint part of them.
    double sum = 0.0;
    for (const auto& p : panels_)
      sum += detail::average_norm_product(exec, p.a_norms, p.b_norms) * p.geo.tile_products();
    nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, world_),
                                  fn, "MPI_Allreduce");
    const auto found = detail::bisect_tau(target, search, sum / total, [&](double tau) {
      std::int64_t kept = count_local(exec, tau, false);
      nearsparse::detail::mpi_check(
          MPI_Allreduce(MPI_IN_PLACE, &kept, 1, MPI_INT64_T, MPI_SUM, world_), fn, "MPI_Allreduce");
      return double(kept) / total;
    });
    set_tau(exec, found.tau);
    result.iterations = found.iterations;
    result.tau = found.tau;
    result.valid_ratio = valid_ratio();
    result.converged = std::abs(result.valid_ratio - target) <= search.tolerance;
    return result;
  }

  /// This process's block of C = alpha * A * B + beta * C over the kept tile products of the
  /// whole product. Collective: every process calls it, also one whose block of C is empty.
  template <class CView>
  void multiply(const ExecSpace& exec, typename CView::const_value_type alpha,
                typename CView::const_value_type beta, const CView& c) {
    detail::static_assert_output<ExecSpace, CView>();
    using c_value = typename CView::non_const_value_type;
    check_block_extents("multiply", "C", c, local_geo_.m, local_geo_.n);
    detail::collective_require(world_, std::isfinite(double(alpha)) && std::isfinite(double(beta)),
                               fn, "alpha", "and beta must be finite", "and beta must be finite");
    const bool empty_c = local_geo_.m == 0 || local_geo_.n == 0;
    if (panels_.empty()) {  // k = 0: C = beta * C
      if (!empty_c) detail::scale_c(exec, c_value(beta), c);
      return;
    }
    received_bytes_ = 0;
    // Every panel here (kept from the last product, or owned): assembled once, so this product
    // and later ones run as one product over all of k. A product that brings panels after an
    // update runs panel by panel, so an iteration that updates every step never assembles.
    if (!whole_.ready && dist_.keep_panels && all_panels_here()) assemble(exec);
    if (whole_.ready) {
      // Every panel is here and assembled: one product over all of k, as on one GPU.
      if (!empty_c)
        run_product(exec, whole_.geo, whole_.a.data(), whole_.b.data(), whole_.a_norms.data(),
                    whole_.b_norms.data(), alpha, beta, c);
      return;
    }
    if (a_channel_) a_channel_->begin_round(exec);
    if (b_channel_) b_channel_->begin_round(exec);
    // Whether A's (B's) panels move in this product: the same on every process.
    const bool moves_a = !all_kept(true), moves_b = !all_kept(false);
    if (moves_a && tiles_only(true)) list_kept_tiles(exec, true);
    if (moves_b && tiles_only(false)) list_kept_tiles(exec, false);
    const std::size_t count = panels_.size();
    std::vector<transfer> moves(count);
    bool first = true;
    auto compute = [&](std::size_t t) {
      for (bool is_a : {true, false}) {
        const int receive = is_a ? moves[t].a_receive : moves[t].b_receive;
        if (receive < 0) continue;
        (is_a ? a_channel_ : b_channel_)->finish(exec, receive);
        void* compact = is_a ? moves[t].a_compact : moves[t].b_compact;
        if (compact != nullptr) {
          const std::vector<std::int64_t>& from = is_a ? panels_[t].a_first : panels_[t].b_first;
          move_kept(exec, panels_[t], is_a, false,
                    const_cast<void*>(is_a ? moves[t].a : moves[t].b), 0, from[1] - from[0],
                    compact);
        }
      }
      if (empty_c) return;
      const panel& p = panels_[t];
      run_product(exec, p.geo, moves[t].a, moves[t].b, p.a_norms.data(), p.b_norms.data(), alpha,
                  first ? beta : c_value(1), c);
      first = false;
    };
    if (dist_.keep_panels) {
      // Every missing panel starts travelling at once (in the same order on every process);
      // the panels already here are multiplied while they do.
      for (std::size_t t = 0; t < count; ++t) moves[t] = start(exec, t, t);
      for (std::size_t t = 0; t < count; ++t)
        if (moves[t].local()) compute(t);
      for (std::size_t t = 0; t < count; ++t)
        if (!moves[t].local()) compute(t);
      for (auto& p : panels_) p.a_kept = p.b_kept = true;
      if (moves_a) a_partial_ = tiles_only(true);
      if (moves_b) b_partial_ = tiles_only(false);
    } else {
      // Two slots per operand: panel t + 1 travels while panel t is multiplied.
      moves[0] = start(exec, 0, 0);
      for (std::size_t t = 0; t < count; ++t) {
        if (t + 1 < count) {
          if (a_channel_) a_channel_->release(exec);
          if (b_channel_) b_channel_->release(exec);
          moves[t + 1] = start(exec, t + 1, (t + 1) % 2);
        }
        compute(t);
      }
    }
    // The sends complete too: the next update or product may overwrite what they read.
    for (const auto& m : moves) {
      if (m.a_send >= 0) a_channel_->finish(exec, m.a_send);
      if (m.b_send >= 0) b_channel_->finish(exec, m.b_send);
    }
  }

  /// Kept tile products of each tile row of the whole C, plus one per output tile for writing
  /// it: the weights for a balanced distributed_blocks. The same on every process.
  /// Collective.
  std::vector<double> tile_row_work(const ExecSpace& exec) const {
    exec.fence();  // V was counted on exec
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), work_);
    std::vector<double> mine(std::size_t(local_geo_.mt), 0.0);
    for (int i = 0; i < local_geo_.mt; ++i)
      for (int j = 0; j < local_geo_.nt; ++j) mine[std::size_t(i)] += v(i, j) + 1.0;
    // Sum over the process row, then gather the process rows in order.
    nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, mine.data(), int(mine.size()),
                                                MPI_DOUBLE, MPI_SUM, row_comm_->comm),
                                  fn, "MPI_Allreduce");
    std::vector<int> counts(static_cast<std::size_t>(pr_)), displs(counts.size(), 0);
    const int local = int(mine.size());
    nearsparse::detail::mpi_check(
        MPI_Allgather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, col_comm_->comm), fn,
        "MPI_Allgather");
    for (int i = 1; i < pr_; ++i)
      displs[std::size_t(i)] = displs[std::size_t(i) - 1] + counts[std::size_t(i) - 1];
    std::vector<double> all(std::size_t(global_geo_.mt), 0.0);
    nearsparse::detail::mpi_check(
        MPI_Allgatherv(mine.data(), local, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                       MPI_DOUBLE, col_comm_->comm),
        fn, "MPI_Allgatherv");
    return all;
  }

  double tau() const { return tau_; }
  /// True once products run as one product over all of k: keep_panels, from the product after
  /// the one that brought the panels here (from the first on one process) until an update, or
  /// until set_tau where panels arrived as kept tiles only.
  bool assembled() const { return whole_.ready; }
  /// Kept tile products of the whole product over MT * KT * NT (0 for an empty product).
  double valid_ratio() const {
    const double total = global_geo_.tile_products();
    return total > 0 ? double(kept_) / total : 0.0;
  }
  std::int64_t kept_count() const { return kept_; }
  /// Kept tile products of this process's block of C.
  std::int64_t local_kept_count() const { return local_kept_; }
  /// V for this process's block of C (its MT_I x NT_J output tiles).
  const work_matrix_type& work_matrix() const { return work_; }
  const spamm::options& options() const { return options_; }
  const distributed_options& distribution() const { return dist_; }
  int rows() const { return global_geo_.m; }
  int cols() const { return global_geo_.n; }
  int inner() const { return global_geo_.k; }
  int process_rows() const { return pr_; }
  int process_cols() const { return pc_; }
  /// Panels of k the product runs in, and the bytes this process received in the last
  /// multiply (0 once kept panels are all here).
  int panel_count() const { return int(panels_.size()); }
  std::size_t received_bytes() const { return received_bytes_; }
  /// How GPU buffers travel (host_staging on host backends, where nothing is staged).
  gpu_transport transport() const {
    return b_channel_   ? b_channel_->kind()
           : a_channel_ ? a_channel_->kind()
                        : nearsparse::detail::resolve_transport<ExecSpace>(dist_.transport, fn);
  }

 private:
  static constexpr const char* fn = "nearsparse::spamm::distributed_plan";
  using raw_buffer = Kokkos::View<double*, memory_space>;
  using channel = nearsparse::detail::broadcast_channel<ExecSpace>;
  static std::size_t words(std::size_t bytes) { return (bytes + 7) / 8; }

  struct comm_holder {
    MPI_Comm comm = MPI_COMM_NULL;
    ~comm_holder() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
    }
  };

  /// A panel of k: columns [k0, k1) of A and rows [k0, k1) of B, packed as spamm::plan packs a
  /// whole operand (A: mp x kp_t, B^T: np x kp_t), with the norms of its tiles.
  struct panel {
    int k0 = 0, k1 = 0;
    int a_owner = 0, b_owner = 0;  ///< process column holding A's part, row holding B's
    detail::geometry geo;
    raw_buffer a, b;  ///< owned here, or kept after being received
    bool a_kept = false, b_kept = false;
    norm_map_type a_norms, b_norms;
    /// Kept tiles only (distributed_options::kept_tiles_only): the tiles (r * kt + k) that
    /// travel, for every other process of the row or column one after the other on the owner
    /// (from *_first[q]), the ones this process reads elsewhere; the compact buffers they travel
    /// in (sent from the owner, received here while panels are kept).
    Kokkos::View<int*, memory_space> a_tiles, b_tiles;
    std::vector<std::int64_t> a_first, b_first;
    raw_buffer a_out, b_out, a_in, b_in;
  };

  /// Where one panel's operands are for a multiply, and the broadcasts that bring them here
  /// (receive) or take them from here (send).
  struct transfer {
    const void* a = nullptr;
    const void* b = nullptr;
    int a_receive = -1, b_receive = -1, a_send = -1, b_send = -1;
    void* a_compact = nullptr;  ///< kept tiles received here, to place into a (likewise b)
    void* b_compact = nullptr;
    bool local() const { return a_receive < 0 && b_receive < 0; }
  };

  std::size_t a_bytes(const panel& p) const { return a_bytes_of(p.geo); }
  std::size_t b_bytes(const panel& p) const { return b_bytes_of(p.geo); }

  template <class CView>
  void run_product(const ExecSpace& exec, const detail::geometry& geo, const void* a, const void* b,
                   const double* a_norms, const double* b_norms,
                   typename CView::const_value_type alpha, typename CView::const_value_type beta,
                   const CView& c) const {
    using c_value = typename CView::non_const_value_type;
    detail::multiply(exec, fn, options_,
                     detail::make_problem(options_, geo, a, b, a_norms, b_norms, tau_),
                     c_value(alpha), c_value(beta), c);
  }

  /// Copies every panel (all here: kept) into one packed A (mp x kp) and B^T (np x kp) with
  /// whole norm maps, so later products are one launch and one pass over C instead of one per
  /// panel. Costs a second copy of the operands.
  void assemble(const ExecSpace& exec) {
    auto& w = whole_;
    w.geo = detail::geometry(local_geo_.m, local_geo_.n, global_geo_.k, options_.tile);
    if (panels_.size() == 1) {  // one panel is all of k already: no copy
      const panel& p = panels_.front();
      w.geo = p.geo;
      w.a = p.a;
      w.b = p.b;
      w.a_norms = p.a_norms;
      w.b_norms = p.b_norms;
      w.ready = true;
      return;
    }
    const int bytes = detail::storage_bytes(options_.precision);
    // In 64 bits: kp * bytes passes 2^31 for a k of more than 2^28 in fp64.
    auto words_of = [&](int elements) { return int(std::int64_t(elements) * bytes / 8); };
    ensure(w.a, a_bytes_of(w.geo), exec, "A_whole");
    ensure(w.b, b_bytes_of(w.geo), exec, "Bt_whole");
    if (w.a_norms.extent(0) != std::size_t(w.geo.mt) ||
        w.a_norms.extent(1) != std::size_t(w.geo.kt))
      w.a_norms = norm_map_type(Kokkos::view_alloc(exec, "nearsparse::spamm::A_normmap_whole"),
                                w.geo.mt, w.geo.kt);
    if (w.b_norms.extent(0) != std::size_t(w.geo.kt) ||
        w.b_norms.extent(1) != std::size_t(w.geo.nt))
      w.b_norms = norm_map_type(Kokkos::view_alloc(exec, "nearsparse::spamm::B_normmap_whole"),
                                w.geo.kt, w.geo.nt);
    for (const auto& p : panels_) {
      const int k0 = p.k0 / options_.tile;  // whole tiles: panels start on the tile grid
      detail::copy_columns(exec, p.a.data(), p.geo.mp, words_of(p.geo.kp), w.a.data(),
                           words_of(w.geo.kp), words_of(p.k0));
      detail::copy_columns(exec, p.b.data(), p.geo.np, words_of(p.geo.kp), w.b.data(),
                           words_of(w.geo.kp), words_of(p.k0));
      Kokkos::deep_copy(
          exec, Kokkos::subview(w.a_norms, Kokkos::ALL(), std::make_pair(k0, k0 + p.geo.kt)),
          p.a_norms);
      Kokkos::deep_copy(
          exec, Kokkos::subview(w.b_norms, std::make_pair(k0, k0 + p.geo.kt), Kokkos::ALL()),
          p.b_norms);
    }
    w.ready = true;
  }

  /// Whether every panel's operands are on every process: nothing travels (one process in the
  /// row or column), or a product since the last update brought them. The same on every process
  /// (kept flags change only in collective calls), so all take the same path in multiply.
  bool all_panels_here() const {
    for (const auto& p : panels_) {
      if (a_channel_ && !p.a_kept) return false;
      if (b_channel_ && !p.b_kept) return false;
    }
    return true;
  }

  std::size_t a_bytes_of(const detail::geometry& g) const {
    return std::size_t(g.mp) * g.kp * detail::storage_bytes(options_.precision);
  }
  std::size_t b_bytes_of(const detail::geometry& g) const {
    return std::size_t(g.np) * g.kp * detail::storage_bytes(options_.precision);
  }

  raw_buffer& ensure(raw_buffer& buf, std::size_t bytes, const ExecSpace& exec, const char* label,
                     bool zeroed = false) {
    if (buf.extent(0) < words(bytes)) {
      const std::string name = std::string("nearsparse::spamm::") + label;
      buf = zeroed ? raw_buffer(Kokkos::view_alloc(exec, name), words(bytes))
                   : raw_buffer(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, name),
                                words(bytes));
    }
    return buf;
  }

  /// Starts moving what panel t lacks on the processes that lack it: into the panel's own
  /// buffers (keep_panels) or slot s. Whether an operand travels is decided alike on every
  /// process of its row or column (`*_kept` changes only in collective calls).
  transfer start(const ExecSpace& exec, std::size_t t, std::size_t s) {
    transfer m;
    for (bool is_a : {true, false}) start_operand(exec, panels_[t], s, is_a, m);
    return m;
  }

  void start_operand(const ExecSpace& exec, panel& p, std::size_t s, bool is_a, transfer& m) {
    channel* ch = is_a ? a_channel_.get() : b_channel_.get();
    const bool owner = is_a ? p.a_owner == pcol_ : p.b_owner == prow_;
    const bool kept = is_a ? p.a_kept : p.b_kept;
    const int root = is_a ? p.a_owner : p.b_owner;
    const std::size_t bytes = is_a ? a_bytes(p) : b_bytes(p);
    raw_buffer& own = is_a ? p.a : p.b;
    const void*& where = is_a ? m.a : m.b;
    if (owner || !ch || kept) {  // here already
      where = own.data();
      if (owner && ch && !kept)
        (is_a ? m.a_send : m.b_send) =
            tiles_only(is_a) ? send_tiles(exec, p, is_a) : ch->start(exec, own.data(), bytes, root);
      return;
    }
    std::vector<raw_buffer>& slots = is_a ? a_slots_ : b_slots_;
    const char* label = is_a ? "A_panel" : "Bt_panel";
    // Where only kept tiles arrive the others are never written: they start as zeros, so a
    // kernel that multiplies a tile of a dropped product by zeros (the wgmma kernel does, for a
    // row of tiles its block's other row keeps) reads finite values. Later they hold finite
    // values of earlier products.
    const bool zeroed = tiles_only(is_a);
    if (dist_.keep_panels) {
      ensure(own, bytes, exec, label, zeroed);
    } else {
      if (slots.size() <= s) slots.resize(s + 1);
      ensure(slots[s], bytes, exec, label, zeroed);
    }
    raw_buffer& buf = dist_.keep_panels ? own : slots[s];
    where = buf.data();
    int& receive = is_a ? m.a_receive : m.b_receive;
    if (!tiles_only(is_a)) {
      receive = ch->start(exec, buf.data(), bytes, root);
      received_bytes_ += bytes;
      return;
    }
    // Kept tiles only: into a compact buffer (the panel's while panels are kept, else slot s's),
    // placed into the panel's layout before the panel is multiplied.
    std::vector<raw_buffer>& compact_slots = is_a ? a_in_slots_ : b_in_slots_;
    if (!dist_.keep_panels && compact_slots.size() <= s) compact_slots.resize(s + 1);
    raw_buffer& compact = dist_.keep_panels ? (is_a ? p.a_in : p.b_in) : compact_slots[s];
    const std::vector<std::int64_t>& first = is_a ? p.a_first : p.b_first;
    const std::size_t in_bytes = std::size_t(first[1] - first[0]) * tile_bytes(p);
    ensure(compact, in_bytes, exec, is_a ? "A_kept_tiles" : "Bt_kept_tiles");
    nearsparse::detail::peer_transfer move;
    move.peer = root;
    move.recv = compact.data();
    move.recv_bytes = in_bytes;
    receive = ch->start_exchange(exec, {move});
    (is_a ? m.a_compact : m.b_compact) = compact.data();
    received_bytes_ += in_bytes;
  }

  /// Whether operand A's (is_a) or B's panels travel as kept tiles only: the option, a threshold
  /// that drops tile products, and a row or column to travel along. The same on every process.
  bool tiles_only(bool is_a) const {
    return dist_.kept_tiles_only && tau_ > 0 && (is_a ? a_channel_ : b_channel_) != nullptr;
  }

  bool all_kept(bool is_a) const {
    for (const auto& p : panels_)
      if (!(is_a ? p.a_kept : p.b_kept)) return false;
    return true;
  }

  std::size_t tile_bytes(const panel& p) const {
    return std::size_t(p.geo.tile) * p.geo.tile * detail::storage_bytes(options_.precision);
  }

  /// The owner's part of moving panel p's kept tiles: every other process of the row or column
  /// gets its own tiles, gathered into one compact buffer.
  int send_tiles(const ExecSpace& exec, panel& p, bool is_a) {
    const std::vector<std::int64_t>& first = is_a ? p.a_first : p.b_first;
    const int members = int(first.size()) - 1, me = is_a ? pcol_ : prow_;
    raw_buffer& out = is_a ? p.a_out : p.b_out;
    ensure(out, std::size_t(first.back()) * tile_bytes(p), exec,
           is_a ? "A_kept_tiles_out" : "Bt_kept_tiles_out");
    move_kept(exec, p, is_a, true, (is_a ? p.a : p.b).data(), 0, first.back(), out.data());
    std::vector<nearsparse::detail::peer_transfer> moves;
    for (int q = 0; q < members; ++q) {
      if (q == me) continue;
      nearsparse::detail::peer_transfer move;
      move.peer = q;
      move.send = reinterpret_cast<const char*>(out.data()) +
                  std::size_t(first[std::size_t(q)]) * tile_bytes(p);
      move.send_bytes =
          std::size_t(first[std::size_t(q) + 1] - first[std::size_t(q)]) * tile_bytes(p);
      moves.push_back(move);
    }
    return (is_a ? a_channel_ : b_channel_)->start_exchange(exec, moves);
  }

  /// Copies `count` kept tiles of panel p's A (is_a) or B from the panel's layout at `panel`
  /// to `compact` (gather) or back, from tile `from` of its list.
  void move_kept(const ExecSpace& exec, const panel& p, bool is_a, bool gather, void* panel_data,
                 std::int64_t from, std::int64_t count, void* compact) const {
    const int bytes = detail::storage_bytes(options_.precision);
    detail::move_tiles(exec, gather, panel_data, std::int64_t(p.geo.kp) * bytes / 8, p.geo.kt,
                       p.geo.tile, p.geo.tile * bytes / 8, is_a ? p.a_tiles : p.b_tiles, from,
                       count, compact);
  }

  /// Which tiles of each panel of A (is_a) or B travel to which process, from the norm maps and
  /// tau. Process q of the row (A) or column (B) reads tile (r, k) of a panel exactly when the
  /// tile's norm times the largest norm that q's block of the other operand has at k is >= tau
  /// (rounding is monotone, so this is one of q's kept tile products). Each process lists the
  /// tiles of its own panels for every other process, and its own for the panels it receives.
  void list_kept_tiles(const ExecSpace& exec, bool is_a) {
    MPI_Comm comm = is_a ? row_comm_->comm : col_comm_->comm;
    const int members = is_a ? pc_ : pr_, me = is_a ? pcol_ : prow_;
    std::size_t kt_total = 0;
    for (const auto& p : panels_) kt_total += std::size_t(p.geo.kt);
    if (largest_.extent(0) < kt_total)
      largest_ = Kokkos::View<double*, memory_space>(
          Kokkos::view_alloc(exec, "nearsparse::spamm::largest_norms"), kt_total);
    std::size_t k_at = 0;
    for (const auto& p : panels_) {
      detail::largest_norms(exec, is_a ? p.b_norms : p.a_norms, !is_a, largest_.data() + k_at);
      k_at += std::size_t(p.geo.kt);
    }
    std::vector<double> largest(std::size_t(members) * kt_total);
    Kokkos::deep_copy(exec,
                      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          largest.data() + std::size_t(me) * kt_total, kt_total),
                      Kokkos::subview(largest_, std::make_pair(std::size_t(0), kt_total)));
    exec.fence();
    nearsparse::detail::mpi_check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, largest.data(),
                                                int(kt_total), MPI_DOUBLE, comm),
                                  fn, "MPI_Allgather");
    // This operand's norm maps, as share_norms left them on the host.
    const std::vector<double>& norms = host_norms_[is_a ? 0 : 1];
    std::vector<std::vector<int>> lists(panels_.size());
    std::size_t norm_at = 0;
    k_at = 0;
    for (std::size_t t = 0; t < panels_.size(); ++t) {
      panel& p = panels_[t];
      const int kt = p.geo.kt, rows = is_a ? p.geo.mt : p.geo.nt;
      const double* h = norms.data() + norm_at;
      std::vector<int>& list = lists[t];
      std::vector<std::int64_t>& first = is_a ? p.a_first : p.b_first;
      first.assign(1, 0);
      auto add = [&](int q) {
        const double* m = largest.data() + std::size_t(q) * kt_total + k_at;
        if (is_a) {  // A's map is rows x kt
          for (int r = 0; r < rows; ++r)
            for (int k = 0; k < kt; ++k)
              if (h[std::size_t(r) * kt + k] * m[k] >= tau_) list.push_back(r * kt + k);
        } else {  // B's map is kt x columns
          for (int k = 0; k < kt; ++k)
            for (int r = 0; r < rows; ++r)
              if (m[k] * h[std::size_t(k) * rows + r] >= tau_) list.push_back(r * kt + k);
        }
        first.push_back(std::int64_t(list.size()));
      };
      if ((is_a ? p.a_owner : p.b_owner) == me) {
        for (int q = 0; q < members; ++q) {
          if (q == me) {
            first.push_back(first.back());
          } else {
            add(q);
          }
        }
      } else {
        add(me);
      }
      auto& tiles = is_a ? p.a_tiles : p.b_tiles;
      if (tiles.extent(0) < list.size())
        tiles = Kokkos::View<int*, memory_space>(
            Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::spamm::kept_tiles"),
            list.size());
      if (!list.empty())
        Kokkos::deep_copy(exec, Kokkos::subview(tiles, std::make_pair(std::size_t(0), list.size())),
                          Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                              list.data(), list.size()));
      norm_at += std::size_t(kt) * std::size_t(rows);
      k_at += std::size_t(kt);
    }
    exec.fence();  // the lists are copied up before they go out of scope
  }

  void split_communicators() {
    row_comm_ = std::make_shared<comm_holder>();
    col_comm_ = std::make_shared<comm_holder>();
    nearsparse::detail::mpi_check(MPI_Comm_split(world_, prow_, pcol_, &row_comm_->comm), fn,
                                  "MPI_Comm_split");
    nearsparse::detail::mpi_check(MPI_Comm_split(world_, pcol_, prow_, &col_comm_->comm), fn,
                                  "MPI_Comm_split");
  }

  /// Gathers every process's block extents, checks that they form the grid on the tile grid,
  /// and cuts k into panels.
  template <class AView, class BView>
  void lay_out(const AView& a, const BView& b) {
    const int size = pr_ * pc_, tile = options_.tile;
    const std::int64_t limit = std::numeric_limits<int>::max() - detail::block_pad;
    const std::int64_t mine[4] = {std::int64_t(a.extent(0)), std::int64_t(a.extent(1)),
                                  std::int64_t(b.extent(0)), std::int64_t(b.extent(1))};
    std::vector<std::int64_t> all(4 * std::size_t(size));
    nearsparse::detail::mpi_check(
        MPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, world_), fn,
        "MPI_Allgather");
    auto at = [&](int r, int what) { return all[4 * std::size_t(r) + std::size_t(what)]; };
    // Block extents by process row (rows of A and C, rows of B) and column (columns of A, of B).
    std::vector<std::int64_t> m_of(pr_), kb_of(pr_), ka_of(pc_), n_of(pc_);
    for (int i = 0; i < pr_; ++i) {
      m_of[i] = at(i * pc_, 0);
      kb_of[i] = at(i * pc_, 2);
    }
    for (int j = 0; j < pc_; ++j) {
      ka_of[j] = at(j, 1);
      n_of[j] = at(j, 3);
    }
    for (int r = 0; r < size; ++r) {
      const int i = r / pc_, j = r % pc_;
      // Each extent is compared with the first process of the same process row or column.
      auto agree = [&](const char* name, const char* what, std::int64_t got, std::int64_t want,
                       int ref, const char* along) {
        require(got == want, fn, name,
                nearsparse::detail::concat("of process ", r, " has ", got, " ", what,
                                           ", but process ", ref, " of the same process ", along,
                                           " has ", want, " (grid ", pr_, " x ", pc_, ")"));
      };
      agree("A", "rows", at(r, 0), m_of[i], i * pc_, "row");
      agree("A", "columns", at(r, 1), ka_of[j], j, "column");
      agree("B", "rows", at(r, 2), kb_of[i], i * pc_, "row");
      agree("B", "columns", at(r, 3), n_of[j], j, "column");
    }
    auto offsets = [&](const std::vector<std::int64_t>& ext, const char* name) {
      std::vector<std::int64_t> off(1, 0);
      for (std::int64_t e : ext) off.push_back(off.back() + e);
      for (std::size_t q = 1; q + 1 < off.size(); ++q)
        require(off[q] % tile == 0 || off[q] == off.back(), fn, name,
                nearsparse::detail::concat("of block ", q, " start at ", off[q],
                                           ", off the tile grid: every "
                                           "block but the last must hold whole tiles (",
                                           tile, ")"));
      require(
          off.back() <= limit, fn, name,
          nearsparse::detail::concat("total ", off.back(), ", more than the supported ", limit));
      return off;
    };
    const auto m_off = offsets(m_of, "rows of A");
    const auto n_off = offsets(n_of, "columns of B");
    const auto ka_off = offsets(ka_of, "columns of A");
    const auto kb_off = offsets(kb_of, "rows of B");
    require(ka_off.back() == kb_off.back(), fn, "B",
            nearsparse::detail::concat("has ", kb_off.back(), " rows in all, but A has ",
                                       ka_off.back(), " columns: the inner extents must match"));
    global_geo_ = detail::geometry(int(m_off.back()), int(n_off.back()), int(ka_off.back()), tile);
    local_geo_ = detail::geometry(int(m_of[prow_]), int(n_of[pcol_]), 0, tile);
    a_col_begin_ = int(ka_off[pcol_]);
    a_cols_ = int(ka_of[pcol_]);
    b_row_begin_ = int(kb_off[prow_]);
    b_rows_ = int(kb_of[prow_]);
    // Panels: the union of both block edges along k, each block cut in panels_per_block.
    std::vector<std::int64_t> edges(ka_off.begin(), ka_off.end());
    edges.insert(edges.end(), kb_off.begin(), kb_off.end());
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
      const int lo = int(edges[e]), hi = int(edges[e + 1]);
      const int pieces = dist_.panels_per_block;
      for (int q = 0; q < pieces; ++q) {
        const auto [s0, s1] = detail::tile_share(hi - lo, tile, pieces, q);
        if (s1 <= s0) continue;
        panel p;
        p.k0 = lo + s0;
        p.k1 = lo + s1;
        p.a_owner = int(std::upper_bound(ka_off.begin(), ka_off.end(), p.k0) - ka_off.begin()) - 1;
        p.b_owner = int(std::upper_bound(kb_off.begin(), kb_off.end(), p.k0) - kb_off.begin()) - 1;
        p.geo = detail::geometry(local_geo_.m, local_geo_.n, p.k1 - p.k0, tile);
        panels_.push_back(p);
      }
    }
  }

  template <class View>
  void check_block_extents(const char* what, const char* name, const View& v, int rows,
                           int cols) const {
    const bool ok = v.extent(0) == std::size_t(rows) && v.extent(1) == std::size_t(cols);
    detail::collective_require(
        world_, ok,
        nearsparse::detail::concat("nearsparse::spamm::distributed_plan::", what).c_str(), name,
        nearsparse::detail::concat("is ", nearsparse::detail::extents_string(v),
                                   ", but this process's block is ", rows, " x ", cols),
        "has the wrong extents");
  }

  /// Queues the packing of one panel's part of an operand with its norm map (one kernel on
  /// CUDA), its non-finite values counted into word t of bad_.
  template <class Part>
  void queue_pack(const ExecSpace& exec, const Part& part, detail::operand which, raw_buffer& buf,
                  const detail::geometry& geo, const norm_map_type& norms, std::size_t t) const {
    detail::with_format(options_.precision, [&](auto fmt) {
      using Format = decltype(fmt);
      using storage = typename Format::storage;
      detail::pack_and_norms_queued<Format>(exec, fn, options_, part, which,
                                            reinterpret_cast<storage*>(buf.data()), geo,
                                            Kokkos::subview(bad_, t), norms);
    });
  }

  static Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host_words(
      std::vector<std::int64_t>& w) {
    return Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(w.data(),
                                                                                   w.size());
  }

  /// Kept tile products of this process's block of C at `tau`, over every panel; V (work_)
  /// when `store`. One wait for all panels.
  std::int64_t count_local(const ExecSpace& exec, double tau, bool store) {
    const std::size_t count = panels_.size();
    if (count == 0) {
      if (store) Kokkos::deep_copy(exec, work_, 0);
      return 0;
    }
    if (counts_.extent(0) != count)
      counts_ = Kokkos::View<std::int64_t*, memory_space>(
          Kokkos::view_alloc(exec, "nearsparse::spamm::panel_kept"), count);
    // One panel counts straight into V; more count into part_ and add it up.
    const bool direct = count == 1;
    if (store && !direct) {
      if (part_.extent(0) != std::size_t(local_geo_.mt) ||
          part_.extent(1) != std::size_t(local_geo_.nt))
        part_ = work_matrix_type(Kokkos::view_alloc(exec, "nearsparse::spamm::V_panel"),
                                 local_geo_.mt, local_geo_.nt);
      Kokkos::deep_copy(exec, work_, 0);
    }
    const work_matrix_type none;
    for (std::size_t t = 0; t < count; ++t) {
      const panel& p = panels_[t];
      const work_matrix_type& v = !store ? none : direct ? work_ : part_;
      detail::count_kept_into(exec, p.a_norms, p.b_norms, tau, v, Kokkos::subview(counts_, t));
      if (store && !direct) {
        detail::add_work(exec, work_, part_);
      }
    }
    host_counts_.resize(count);
    Kokkos::deep_copy(exec, host_words(host_counts_), counts_);
    exec.fence();
    std::int64_t local = 0;
    for (std::int64_t c : host_counts_) local += c;
    return local;
  }

  /// Packs this process's parts of one operand panel by panel with their norms, and shares the
  /// norms along its process row (A) or column (B).
  template <class View>
  void prepare(const ExecSpace& exec, const View& x, detail::operand which) {
    const bool is_a = which == detail::operand::a;
    whole_.ready = false;  // assembled again after the next product
    for (std::size_t t = 0; t < panels_.size(); ++t) {
      panel& p = panels_[t];
      const bool mine = is_a ? p.a_owner == pcol_ : p.b_owner == prow_;
      norm_map_type& norms = is_a ? p.a_norms : p.b_norms;
      if (norms.extent(0) == 0 && norms.extent(1) == 0)
        norms = is_a ? norm_map_type(Kokkos::view_alloc(exec, "nearsparse::spamm::A_normmap"),
                                     p.geo.mt, p.geo.kt)
                     : norm_map_type(Kokkos::view_alloc(exec, "nearsparse::spamm::B_normmap"),
                                     p.geo.kt, p.geo.nt);
      if (is_a) {
        p.a_kept = false;
      } else {
        p.b_kept = false;
      }
      if (!mine) continue;
      raw_buffer& buf = ensure(is_a ? p.a : p.b, is_a ? a_bytes(p) : b_bytes(p), exec,
                               is_a ? "A_panel" : "Bt_panel");
      if (is_a) {
        queue_pack(exec,
                   Kokkos::subview(x, Kokkos::ALL(),
                                   std::make_pair(p.k0 - a_col_begin_, p.k1 - a_col_begin_)),
                   which, buf, p.geo, norms, t);
      } else {
        queue_pack(exec,
                   Kokkos::subview(x, std::make_pair(p.k0 - b_row_begin_, p.k1 - b_row_begin_),
                                   Kokkos::ALL()),
                   which, buf, p.geo, norms, t);
      }
    }
    // Each packing sets its own word: one copy and one wait for all of them.
    host_counts_.resize(panels_.size());
    Kokkos::deep_copy(exec, host_words(host_counts_), bad_);
    exec.fence();
    std::int64_t bad = 0;
    for (std::size_t t = 0; t < panels_.size(); ++t)
      if (is_a ? panels_[t].a_owner == pcol_ : panels_[t].b_owner == prow_) bad += host_counts_[t];
    detail::collective_require(
        world_, bad == 0, fn, is_a ? "A" : "B",
        nearsparse::detail::concat("(", nearsparse::detail::extents_string(x), ") holds ", bad,
                                   " non-finite value(s) (NaN or Inf)"),
        "holds non-finite values (NaN or Inf)");
    if ((is_a ? pc_ : pr_) > 1) share_norms(exec, which);
  }

  /// Every panel's norm map of one operand on every process of its row (A) or column (B): the
  /// owners' maps go through the host in one MPI_Allgatherv (norm maps are small). Panels run
  /// along k, so each owner's panels are consecutive, in the order of the ranks of the row's or
  /// column's communicator.
  void share_norms(const ExecSpace& exec, detail::operand which) {
    const bool is_a = which == detail::operand::a;
    MPI_Comm comm = is_a ? row_comm_->comm : col_comm_->comm;
    const int members = is_a ? pc_ : pr_, me = is_a ? pcol_ : prow_;
    using host_map = Kokkos::View<double**, typename norm_map_type::array_layout, Kokkos::HostSpace,
                                  Kokkos::MemoryUnmanaged>;
    std::vector<int> counts(std::size_t(members), 0), displs(std::size_t(members), 0);
    std::size_t total = 0;
    for (const auto& p : panels_) {
      const norm_map_type& norms = is_a ? p.a_norms : p.b_norms;
      counts[std::size_t(is_a ? p.a_owner : p.b_owner)] += int(norms.size());
      total += norms.size();
    }
    for (int q = 1; q < members; ++q)
      displs[std::size_t(q)] = displs[std::size_t(q) - 1] + counts[std::size_t(q) - 1];
    std::vector<double>& host = host_norms_[is_a ? 0 : 1];
    host.resize(total);
    auto for_each_map = [&](auto&& f) {
      std::size_t at = 0;
      for (auto& p : panels_) {
        norm_map_type& norms = is_a ? p.a_norms : p.b_norms;
        f(norms, (is_a ? p.a_owner : p.b_owner) == me,
          host_map(host.data() + at, norms.extent(0), norms.extent(1)));
        at += norms.size();
      }
    };
    for_each_map([&](const norm_map_type& norms, bool mine, const host_map& h) {
      if (mine) Kokkos::deep_copy(exec, h, norms);
    });
    exec.fence();  // the norms were computed on exec
    nearsparse::detail::mpi_check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, host.data(),
                                                 counts.data(), displs.data(), MPI_DOUBLE, comm),
                                  fn, "MPI_Allgatherv");
    for_each_map([&](const norm_map_type& norms, bool mine, const host_map& h) {
      if (!mine) Kokkos::deep_copy(exec, norms, h);
    });
    exec.fence();  // nothing reads the host copies after this call
  }

  spamm::options options_;
  distributed_options dist_;
  MPI_Comm world_ = MPI_COMM_NULL;
  std::shared_ptr<comm_holder> row_comm_, col_comm_;
  int pr_ = 1, pc_ = 1, prow_ = 0, pcol_ = 0;
  detail::geometry global_geo_, local_geo_;  ///< local: this process's block of C
  int a_col_begin_ = 0, a_cols_ = 0, b_row_begin_ = 0, b_rows_ = 0;
  std::vector<panel> panels_;
  /// All panels in one, once every one is here (keep_panels).
  struct whole_operands {
    bool ready = false;
    detail::geometry geo;
    raw_buffer a, b;
    norm_map_type a_norms, b_norms;
  } whole_;
  std::vector<raw_buffer> a_slots_, b_slots_;
  std::vector<raw_buffer> a_in_slots_, b_in_slots_;  ///< kept tiles received, without keep_panels
  Kokkos::View<double*, memory_space> largest_;      ///< see list_kept_tiles
  /// The last transfer of A's (B's) panels carried kept tiles only: the panels here serve the
  /// current tau and other operand only.
  bool a_partial_ = false, b_partial_ = false;
  std::unique_ptr<channel> a_channel_, b_channel_;
  work_matrix_type work_, part_;  ///< V of this process's block of C, and one panel's share
  Kokkos::View<std::int64_t*, memory_space> bad_;  ///< non-finite values each panel's packing found
  Kokkos::View<std::int64_t*, memory_space> counts_;  ///< kept products of each panel
  std::vector<std::int64_t> host_counts_;
  std::vector<double> host_norms_[2];  ///< A's and B's norm maps as they travel
  double tau_ = 0.0;
  std::int64_t kept_ = 0, local_kept_ = 0;
  std::size_t received_bytes_ = 0;
};

template <class ExecSpace, class AView, class BView>
distributed_plan(MPI_Comm, const ExecSpace&, const AView&, const BView&, const options&,
                 const distributed_options&) -> distributed_plan<ExecSpace>;
template <class ExecSpace, class AView, class BView>
distributed_plan(MPI_Comm, const ExecSpace&, const AView&, const BView&, const options&)
    -> distributed_plan<ExecSpace>;
template <class ExecSpace, class AView, class BView>
distributed_plan(MPI_Comm, const ExecSpace&, const AView&, const BView&)
    -> distributed_plan<ExecSpace>;

}  // namespace nearsparse::spamm

#endif
