#pragma once
// Conversions of the block-sparse SpAMM matrix (spamm/block_sparse.hpp): from dense Views and
// CRS arrays (tile norms, the drop rule, the kept tiles), and to dense Views and CRS arrays. Every
// kernel is a named functor.

#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/spamm/detail/block_sparse_parts.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nearsparse::spamm::detail {

// ---------------------------------------------------------------------------------------------
// Dense -> block-sparse

/// Frobenius norm of tile t = (t / nt, t % nt) of the dense view a (one team per tile, the edge
/// tiles clipped to a's extents) into all_norms(t).
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
struct dense_tile_norms_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  AView a;
  Kokkos::View<double*, MemorySpace> all_norms;
  int tile, rows, cols, nt;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int ti = team.league_rank() / nt, tj = team.league_rank() % nt;
    const int r_end = (ti + 1) * tile <= rows ? tile : rows - ti * tile;
    const int c_end = (tj + 1) * tile <= cols ? tile : cols - tj * tile;
    double sum = 0.0;
    nearsparse::detail::team_reduce_fenced(
        team, r_end * c_end,
        [&](const int e, double& s) {
          const double v = static_cast<double>(
              static_cast<Scalar>(a(ti * tile + e / c_end, tj * tile + e % c_end)));
          s += v * v;
        },
        sum);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { all_norms(team.league_rank()) = ::sqrt(sum); });
  }
};

/// Exclusive prefix sums of the kept flags (norm > 0 and norm >= threshold) of all tiles, in
/// row-major tile order: each tile's position into pos, each tile row's first into row_map, the
/// number kept into row_map(mt).
template <class MemorySpace>
struct dense_tile_positions_kernel {
  Kokkos::View<const double*, MemorySpace> all_norms;
  Kokkos::View<std::int64_t*, MemorySpace> pos;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  double threshold;
  int nt, mt, all;
  KOKKOS_INLINE_FUNCTION void operator()(const int t, std::int64_t& update,
                                         const bool final) const {
    if (final) {
      pos(t) = update;
      if (t % nt == 0) row_map(t / nt) = update;
    }
    const double x = all_norms(t);
    update += (x > 0.0 && x >= threshold) ? 1 : 0;
    if (final && t == all - 1) row_map(mt) = update;
  }
};

/// Copies kept tile t of the dense view a (one team per tile, zero-padded at the edges) to its
/// position pos(t), with its column index and norm.
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
struct dense_tile_values_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  AView a;
  Kokkos::View<const double*, MemorySpace> all_norms;
  Kokkos::View<const std::int64_t*, MemorySpace> pos;
  Kokkos::View<int*, MemorySpace> cols_idx;
  Kokkos::View<double*, MemorySpace> norms;
  Kokkos::View<Scalar*, MemorySpace> values;
  double threshold;
  int tile, rows, cols, nt, tt;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int t = team.league_rank();
    const double x = all_norms(t);
    if (!(x > 0.0 && x >= threshold)) return;  // the same for the whole team
    const int ti = t / nt, tj = t % nt;
    const std::int64_t p = pos(t);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tt), [&](const int e) {
      const int r = ti * tile + e / tile, c = tj * tile + e % tile;
      values(p * tt + e) = (r < rows && c < cols) ? static_cast<Scalar>(a(r, c)) : Scalar(0);
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      cols_idx(p) = tj;
      norms(p) = x;
    });
  }
};

/// Builds m (rows, cols, tile set) from the dense view a. `relative` and `tolerance` are the
/// drop rule; returns the number of non-finite tile norms found (the caller throws).
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
std::int64_t from_dense_impl(const ExecSpace& exec, const AView& a, double tolerance, bool relative,
                             block_sparse_parts<Scalar, MemorySpace>& m) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  const int tile = m.tile, rows = m.rows, cols = m.cols;
  const int mt = m.tile_rows(), nt = m.tile_cols();
  const int all = mt * nt;
  const int tt = tile * tile;
  m.row_map = bs_alloc<std::int64_t, MemorySpace>(exec, "nearsparse::spamm::block_sparse::row_map",
                                                  std::size_t(mt) + 1);
  if (all == 0) {
    allocate_tiles(exec, m, 0);
    m.dropped_norm = 0.0;
    return 0;
  }
  auto all_norms = bs_alloc_raw<double, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dense_norms", std::size_t(all));
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::from_dense_norms",
                       team_policy(exec, all, Kokkos::AUTO),
                       dense_tile_norms_kernel<ExecSpace, Scalar, MemorySpace, AView>{
                           a, all_norms, tile, rows, cols, nt});
  std::int64_t non_finite = 0;
  const double norm_sq = sum_of_squares(exec, all_norms, non_finite);
  if (non_finite > 0) return non_finite;
  const double threshold = drop_threshold(tolerance, relative, norm_sq);
  auto pos = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dense_positions", std::size_t(all));
  const auto row_map = m.row_map;
  Kokkos::parallel_scan(
      "nearsparse::spamm::block_sparse::from_dense_scan",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, all),
      dense_tile_positions_kernel<MemorySpace>{all_norms, pos, row_map, threshold, nt, mt, all});
  const std::int64_t kept = read_back(exec, row_map, std::size_t(mt));
  double dropped_sq = 0.0;
  Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::from_dense_dropped",
                          Kokkos::RangePolicy<ExecSpace>(exec, 0, all),
                          dropped_squares_kernel<MemorySpace>{all_norms, threshold}, dropped_sq);
  m.dropped_norm = std::sqrt(dropped_sq);
  allocate_tiles(exec, m, kept);
  const auto cols_idx = m.cols_idx;
  const auto norms = m.norms;
  const auto values = m.values;
  if (kept == 0) return 0;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::from_dense_values", team_policy(exec, all, Kokkos::AUTO),
      dense_tile_values_kernel<ExecSpace, Scalar, MemorySpace, AView>{
          a, all_norms, pos, cols_idx, norms, values, threshold, tile, rows, cols, nt, tt});
  exec.fence();
  return 0;
}

/// Zero into element e (row-major, cols columns) of the dense view a.
template <class AView>
struct dense_zero_kernel {
  AView a;
  int cols;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    a(static_cast<int>(e / cols), static_cast<int>(e % cols)) =
        typename AView::non_const_value_type(0);
  }
};

/// Stored tile p of m (one team per tile) into the dense view a, the padding left out.
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
struct dense_write_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using element = typename AView::non_const_value_type;
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<const int*, MemorySpace> cols_idx;
  Kokkos::View<const Scalar*, MemorySpace> values;
  AView a;
  int tile, rows, cols, mt, tt;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t p = team.league_rank();
    const int ti = tile_row_of(row_map, mt, p), tj = cols_idx(p);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tt), [&](const int e) {
      const int r = ti * tile + e / tile, c = tj * tile + e % tile;
      if (r < rows && c < cols) a(r, c) = static_cast<element>(values(p * tt + e));
    });
  }
};

/// Writes m into the dense view a (every element: zeros where no tile is stored).
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
void to_dense_impl(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                   const AView& a) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  const int rows = m.rows, cols = m.cols, tile = m.tile, mt = m.tile_rows();
  const int tt = tile * tile;
  if (rows == 0 || cols == 0) return;
  const std::int64_t elements = std::int64_t(rows) * cols;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::to_dense_zero",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, elements),
      dense_zero_kernel<AView>{a, cols});
  const int n = static_cast<int>(m.cols_idx.extent(0));
  if (n == 0) return;
  const auto row_map = m.row_map;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::to_dense",
                       team_policy(exec, n, Kokkos::AUTO),
                       dense_write_kernel<ExecSpace, Scalar, MemorySpace, AView>{
                           row_map, cols_idx, values, a, tile, rows, cols, mt, tt});
}

// ---------------------------------------------------------------------------------------------
// CRS -> block-sparse

/// Marks the tile columns of tile row i of a CRS matrix (nonzero entries only) in `bits`, with
/// a barrier after.
template <class Member, class Bits, class RowMap, class Entries, class Values>
KOKKOS_INLINE_FUNCTION void mark_crs_row(const Member& team, const Bits& bits, int words, int i,
                                         int tile, int rows, const RowMap& row_map,
                                         const Entries& entries, const Values& values) {
  // A team that runs several league ranks in turn may still read the last rank's bits.
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, words), [&](const int w) { bits(w) = 0u; });
  team.team_barrier();
  const int r_end = (i + 1) * tile <= rows ? tile : rows - i * tile;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r_end), [&](const int rr) {
    const int r = i * tile + rr;
    for (auto e = row_map(r); e < row_map(r + 1); ++e) {
      if (values(e) == 0) continue;
      const int j = entries(e) / tile;
      Kokkos::atomic_fetch_or(&bits(j >> 5), std::uint32_t(1u) << (j & 31));
    }
  });
  team.team_barrier();
}

/// The number of tiles of tile row i of a CRS matrix that hold a nonzero (one team per tile row,
/// a bitmap of its tile columns in team scratch) into counts(i).
template <class ExecSpace, class MemorySpace, class RowMap, class Entries, class Values>
struct crs_tile_count_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using bits_view = Kokkos::View<std::uint32_t*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  RowMap crs_row_map;
  Entries entries;
  Values crs_values;
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  int level, words, tile, rows;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    bits_view bits(team.team_scratch(level), words);
    const int i = team.league_rank();
    mark_crs_row(team, bits, words, i, tile, rows, crs_row_map, entries, crs_values);
    int count = 0;
    nearsparse::detail::team_reduce_fenced(
        team, words, [&](const int w, int& s) { s += popcount32(bits(w)); }, count);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { counts(i) = count; });
  }
};

/// The tile columns of tile row i of a CRS matrix that hold a nonzero, ascending, into cols_idx
/// from row_map(i) on (one team per tile row, a bitmap of its tile columns in team scratch).
template <class ExecSpace, class MemorySpace, class RowMap, class Entries, class Values>
struct crs_tile_columns_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using bits_view = Kokkos::View<std::uint32_t*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  RowMap crs_row_map;
  Entries entries;
  Values crs_values;
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols_idx;
  int level, words, tile, rows;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    bits_view bits(team.team_scratch(level), words);
    const int i = team.league_rank();
    mark_crs_row(team, bits, words, i, tile, rows, crs_row_map, entries, crs_values);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      std::int64_t out = row_map(i);
      for (int w = 0; w < words; ++w) out = write_set_bits(bits(w), w * 32, cols_idx, out);
    });
  }
};

/// The nonzero entries of CRS row r added into their tiles' values (one thread per row).
template <class Scalar, class MemorySpace, class RowMap, class Entries, class Values>
struct crs_tile_values_kernel {
  RowMap crs_row_map;
  Entries entries;
  Values crs_values;
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<const int*, MemorySpace> cols_idx;
  Kokkos::View<Scalar*, MemorySpace> values;
  int tile;
  std::int64_t tt;
  KOKKOS_INLINE_FUNCTION void operator()(const int r) const {
    const int i = r / tile, rr = r % tile;
    const std::int64_t begin = row_map(i), end = row_map(i + 1);
    for (auto e = crs_row_map(r); e < crs_row_map(r + 1); ++e) {
      const auto v = crs_values(e);
      if (v == 0) continue;
      const int c = entries(e);
      const std::int64_t p = find_tile(cols_idx, begin, end, c / tile);
      values(p * tt + std::int64_t(rr) * tile + c % tile) += static_cast<Scalar>(v);
    }
  }
};

/// Builds m (rows, cols, tile set) from a CRS matrix's arrays: the tiles holding a nonzero,
/// then the drop rule. Column indices must be checked by the caller.
template <class ExecSpace, class Scalar, class MemorySpace, class RowMap, class Entries,
          class Values>
std::int64_t from_crs_impl(const ExecSpace& exec, const RowMap& crs_row_map, const Entries& entries,
                           const Values& crs_values, double tolerance, bool relative,
                           block_sparse_parts<Scalar, MemorySpace>& m) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using bits_view =
      Kokkos::View<std::uint32_t*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int tile = m.tile, rows = m.rows;
  const int mt = m.tile_rows(), nt = m.tile_cols();
  const std::int64_t tt = std::int64_t(tile) * tile;
  const int words = (nt + 31) / 32;
  m.row_map = bs_alloc<std::int64_t, MemorySpace>(exec, "nearsparse::spamm::block_sparse::row_map",
                                                  std::size_t(mt) + 1);
  m.dropped_norm = 0.0;
  if (mt == 0 || nt == 0) {
    allocate_tiles(exec, m, 0);
    return 0;
  }
  const std::size_t bytes = bits_view::shmem_size(words);
  const int level = scratch_level(bytes);
  auto counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::crs_counts", std::size_t(mt));
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("nearsparse::spamm::block_sparse::from_crs_count", policy,
                         crs_tile_count_kernel<ExecSpace, MemorySpace, RowMap, Entries, Values>{
                             crs_row_map, entries, crs_values, counts, level, words, tile, rows});
  }
  const auto row_map = m.row_map;
  const std::int64_t n =
      exclusive_scan(exec, "nearsparse::spamm::block_sparse::from_crs_scan", counts, row_map, mt);
  auto cols_idx =
      bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols", std::size_t(n));
  auto values = bs_alloc<Scalar, MemorySpace>(exec, "nearsparse::spamm::block_sparse::values",
                                              std::size_t(n * tt));
  auto norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                                 std::size_t(n));
  m.cols_idx = cols_idx;
  m.values = values;
  m.norms = norms;
  if (n == 0) return 0;
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::from_crs_fill", policy,
        crs_tile_columns_kernel<ExecSpace, MemorySpace, RowMap, Entries, Values>{
            crs_row_map, entries, crs_values, row_map, cols_idx, level, words, tile, rows});
  }
  // Each CRS row is one thread's: duplicates of an element sum without atomics.
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::from_crs_values",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
                       crs_tile_values_kernel<Scalar, MemorySpace, RowMap, Entries, Values>{
                           crs_row_map, entries, crs_values, row_map, cols_idx, values, tile, tt});
  compute_tile_norms(exec, m);
  std::int64_t non_finite = 0;
  const double norm_sq = sum_of_squares(exec, m.norms, non_finite);
  if (non_finite > 0) return non_finite;
  std::int64_t dropped = 0;
  const double dropped_sq = compact(exec, m, drop_threshold(tolerance, relative, norm_sq), dropped);
  m.dropped_norm = std::sqrt(dropped_sq);
  return 0;
}

/// The number of nonzero elements of row r of m, the padding left out, into counts(r).
template <class Scalar, class MemorySpace>
struct crs_row_count_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<const int*, MemorySpace> cols_idx;
  Kokkos::View<const Scalar*, MemorySpace> values;
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  int tile, cols;
  std::int64_t tt;
  KOKKOS_INLINE_FUNCTION void operator()(const int r) const {
    const int i = r / tile, rr = r % tile;
    std::int64_t count = 0;
    for (auto p = row_map(i); p < row_map(i + 1); ++p) {
      const int c0 = cols_idx(p) * tile;
      const int c_end = c0 + tile <= cols ? tile : cols - c0;
      const Scalar* row = values.data() + p * tt + std::int64_t(rr) * tile;
      for (int c = 0; c < c_end; ++c) count += row[c] != Scalar(0) ? 1 : 0;
    }
    counts(r) = count;
  }
};

/// The CRS form of m, first step: the entries of every row (exact zeros skipped) and their
/// exclusive prefix sums into offsets (rows + 1). Returns the number of entries.
template <class ExecSpace, class Scalar, class MemorySpace>
std::int64_t to_crs_count(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                          const Kokkos::View<std::int64_t*, MemorySpace>& offsets) {
  const int rows = m.rows, cols = m.cols, tile = m.tile;
  const std::int64_t tt = std::int64_t(tile) * tile;
  const auto row_map = m.row_map;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  auto counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::to_crs_counts", std::size_t(rows));
  if (rows > 0) {
    Kokkos::parallel_for("nearsparse::spamm::block_sparse::to_crs_count",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
                         crs_row_count_kernel<Scalar, MemorySpace>{row_map, cols_idx, values,
                                                                   counts, tile, cols, tt});
  }
  return exclusive_scan(exec, "nearsparse::spamm::block_sparse::to_crs_scan", counts, offsets,
                        rows);
}

/// Row pointer r of the CRS form of m and, for r < rows, the nonzero elements of row r, columns
/// ascending, into the CRS arrays from offsets(r) on.
template <class Scalar, class MemorySpace, class RowMap, class Entries, class Values>
struct crs_fill_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> offsets;
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<const int*, MemorySpace> cols_idx;
  Kokkos::View<const Scalar*, MemorySpace> values;
  RowMap crs_row_map;
  Entries entries;
  Values crs_values;
  int tile, rows, cols;
  std::int64_t tt;
  KOKKOS_INLINE_FUNCTION void operator()(const int r) const {
    crs_row_map(r) = static_cast<typename RowMap::non_const_value_type>(offsets(r));
    if (r == rows) return;
    const int i = r / tile, rr = r % tile;
    std::int64_t out = offsets(r);
    for (auto p = row_map(i); p < row_map(i + 1); ++p) {
      const int c0 = cols_idx(p) * tile;
      const int c_end = c0 + tile <= cols ? tile : cols - c0;
      const Scalar* row = values.data() + p * tt + std::int64_t(rr) * tile;
      for (int c = 0; c < c_end; ++c) {
        if (row[c] == Scalar(0)) continue;
        entries(out) = c0 + c;
        crs_values(out) = row[c];
        ++out;
      }
    }
  }
};

/// The CRS form of m, second step: the arrays, columns ascending in each row.
template <class ExecSpace, class Scalar, class MemorySpace, class RowMap, class Entries,
          class Values>
void to_crs_fill(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                 const Kokkos::View<std::int64_t*, MemorySpace>& offsets, const RowMap& crs_row_map,
                 const Entries& entries, const Values& crs_values) {
  const int rows = m.rows, cols = m.cols, tile = m.tile;
  const std::int64_t tt = std::int64_t(tile) * tile;
  const auto row_map = m.row_map;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::to_crs_fill",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, rows + 1),
                       crs_fill_kernel<Scalar, MemorySpace, RowMap, Entries, Values>{
                           offsets, row_map, cols_idx, values, crs_row_map, entries, crs_values,
                           tile, rows, cols, tt});
}

}  // namespace nearsparse::spamm::detail
