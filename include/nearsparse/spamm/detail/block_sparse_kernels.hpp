#pragma once
// Kernels of the block-sparse (block-CSR) SpAMM matrix (spamm/block_sparse.hpp): tile norms,
// the drop rule's compaction, the conversions from and to dense Views and CRS matrices, and the
// symbolic and numeric phases of C = alpha * A * B + beta * C. Every kernel is a labelled
// RangePolicy or TeamPolicy on the caller's execution space instance and runs on every backend.
//
// The arrays of one matrix (block_sparse_parts): tile row pointers row_map (tile_rows + 1,
// int64), tile column indices cols (ascending within a tile row), values (tile x tile per kept
// tile, row-major, zero-padded at the edges) and one Frobenius norm per kept tile (double).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nearsparse::spamm::detail {

/// The arrays and extents of one block-sparse matrix.
template <class Scalar, class MemorySpace>
struct block_sparse_parts {
  int rows = 0, cols = 0, tile = 64;
  Kokkos::View<std::int64_t*, MemorySpace> row_map;
  Kokkos::View<int*, MemorySpace> cols_idx;
  Kokkos::View<Scalar*, MemorySpace> values;
  Kokkos::View<double*, MemorySpace> norms;
  double dropped_norm = 0.0;

  int tile_rows() const { return (rows + tile - 1) / tile; }
  int tile_cols() const { return (cols + tile - 1) / tile; }
};

/// Team scratch holding `bytes`: fast (level 0) scratch up to 32 KiB, level 1 beyond.
inline int scratch_level(std::size_t bytes) {
  return bytes <= 32768 ? 0 : 1;
}

template <class T, class MemorySpace, class ExecSpace>
Kokkos::View<T*, MemorySpace> bs_alloc(const ExecSpace& exec, const char* label, std::size_t n) {
  return Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(exec, std::string(label)), n);
}

template <class T, class MemorySpace, class ExecSpace>
Kokkos::View<T*, MemorySpace> bs_alloc_raw(const ExecSpace& exec, const char* label,
                                           std::size_t n) {
  return Kokkos::View<T*, MemorySpace>(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), n);
}

/// New column indices, norms and values (contents unset) for `count` tiles of m's tile size.
template <class ExecSpace, class Scalar, class MemorySpace>
void allocate_tiles(const ExecSpace& exec, block_sparse_parts<Scalar, MemorySpace>& m,
                    std::int64_t count) {
  const std::size_t tt = std::size_t(m.tile) * std::size_t(m.tile);
  m.cols_idx = bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols",
                                              std::size_t(count));
  m.norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                              std::size_t(count));
  m.values = bs_alloc_raw<Scalar, MemorySpace>(exec, "nearsparse::spamm::block_sparse::values",
                                               std::size_t(count) * tt);
}

/// v(i) on the host (waits for exec).
template <class ExecSpace, class View>
typename View::non_const_value_type read_back(const ExecSpace& exec, const View& v, std::size_t i) {
  Kokkos::View<typename View::non_const_value_type, Kokkos::HostSpace> h(
      "nearsparse::spamm::block_sparse::read_back");
  Kokkos::deep_copy(exec, h, Kokkos::subview(v, i));
  exec.fence();
  return h();
}

KOKKOS_INLINE_FUNCTION int popcount32(std::uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return static_cast<int>((x * 0x01010101u) >> 24);
}

/// Writes base + the position of each set bit of `word`, lowest first, to cols(out), cols(out +
/// 1), ...; returns the position after the last written. With `base` the tile column of the
/// word's bit 0, the set bits of a bitmap word become ascending tile column indices.
template <class ColView>
KOKKOS_INLINE_FUNCTION std::int64_t write_set_bits(std::uint32_t word, int base,
                                                   const ColView& cols, std::int64_t out) {
  while (word != 0u) {
    cols(out++) = base + popcount32((word & (~word + 1u)) - 1u);  // the lowest set bit's position
    word &= word - 1u;
  }
  return out;
}

/// Position of column j in cols[begin, end) (ascending), or -1.
template <class ColView>
KOKKOS_INLINE_FUNCTION std::int64_t find_tile(const ColView& cols, std::int64_t begin,
                                              std::int64_t end, int j) {
  std::int64_t lo = begin, hi = end;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (cols(mid) < j) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return (lo < end && cols(lo) == j) ? lo : std::int64_t(-1);
}

/// The tile row holding stored tile p: the largest i < tile_rows with row_map(i) <= p.
template <class RowMap>
KOKKOS_INLINE_FUNCTION int tile_row_of(const RowMap& row_map, int tile_rows, std::int64_t p) {
  int lo = 0, hi = tile_rows;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (row_map(mid) <= p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Exclusive prefix sums of counts (n) into offsets (n + 1, offsets(n) the total); returns the
/// total (waits for exec).
template <class ExecSpace, class CountView, class OffsetView>
std::int64_t exclusive_scan(const ExecSpace& exec, const char* label, const CountView& counts,
                            const OffsetView& offsets, int n) {
  if (n > 0) {
    Kokkos::parallel_scan(
        label, Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        KOKKOS_LAMBDA(const int i, std::int64_t& update, const bool final) {
          if (final) offsets(i) = update;
          update += static_cast<std::int64_t>(counts(i));
          if (final && i == n - 1) offsets(n) = update;
        });
  } else {
    Kokkos::deep_copy(exec, offsets, std::int64_t(0));
  }
  return read_back(exec, offsets, std::size_t(n));
}

/// Frobenius norm of every stored tile of m, into m.norms.
template <class ExecSpace, class Scalar, class MemorySpace>
void compute_tile_norms(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m) {
  const int n = static_cast<int>(m.cols_idx.extent(0));
  if (n == 0) return;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  const int tt = m.tile * m.tile;
  const auto values = m.values;
  const auto norms = m.norms;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::tile_norms", team_policy(exec, n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
        const std::int64_t p = team.league_rank();
        const Scalar* tile_values = values.data() + p * tt;
        double sum = 0.0;
        nearsparse::detail::team_reduce_fenced(
            team, tt,
            [&](const int e, double& s) {
              const double v = static_cast<double>(tile_values[e]);
              s += v * v;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { norms(p) = ::sqrt(sum); });
      });
}

/// Sum of the squares of a norm array and the count of its non-finite entries (waits).
template <class ExecSpace, class NormView>
double sum_of_squares(const ExecSpace& exec, const NormView& norms, std::int64_t& non_finite) {
  const int n = static_cast<int>(norms.extent(0));
  double sum = 0.0;
  std::int64_t bad = 0;
  if (n > 0) {
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::sum_of_squares",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        KOKKOS_LAMBDA(const int p, double& s) { s += norms(p) * norms(p); }, sum);
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::count_non_finite",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        KOKKOS_LAMBDA(const int p, std::int64_t& c) {
          const double x = norms(p);
          if (!(x - x == 0.0)) ++c;  // NaN and Inf
        },
        bad);
  }
  non_finite = bad;
  return sum;
}

/// The drop rule: removes the stored tiles of m whose norm is 0 or below `threshold` (a tile is
/// kept when norm > 0 and norm >= threshold). Returns the sum of the squared norms of the tiles
/// dropped; `dropped` receives their count.
template <class ExecSpace, class Scalar, class MemorySpace>
double compact(const ExecSpace& exec, block_sparse_parts<Scalar, MemorySpace>& m, double threshold,
               std::int64_t& dropped) {
  const int n = static_cast<int>(m.cols_idx.extent(0));
  dropped = 0;
  if (n == 0) return 0.0;
  const auto norms = m.norms;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  const auto row_map = m.row_map;
  auto prefix = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::compact_prefix", std::size_t(n) + 1);
  Kokkos::parallel_scan(
      "nearsparse::spamm::block_sparse::compact_scan", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const int p, std::int64_t& update, const bool final) {
        if (final) prefix(p) = update;
        const double x = norms(p);
        update += (x > 0.0 && x >= threshold) ? 1 : 0;
        if (final && p == n - 1) prefix(n) = update;
      });
  const std::int64_t kept = read_back(exec, prefix, std::size_t(n));
  if (kept == n) return 0.0;
  dropped = n - kept;
  double dropped_sq = 0.0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::block_sparse::dropped_norm", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const int p, double& s) {
        const double x = norms(p);
        if (!(x > 0.0 && x >= threshold)) s += x * x;
      },
      dropped_sq);
  const int tile_rows = m.tile_rows();
  const std::int64_t tt = std::int64_t(m.tile) * m.tile;
  auto new_row_map = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(tile_rows) + 1);
  auto new_cols = bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols",
                                                 std::size_t(kept));
  auto new_norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                                     std::size_t(kept));
  auto new_values = bs_alloc_raw<Scalar, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::values", std::size_t(kept * tt));
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::compact_row_map",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, tile_rows + 1),
      KOKKOS_LAMBDA(const int i) { new_row_map(i) = prefix(row_map(i)); });
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::compact_tiles", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const int p) {
        const double x = norms(p);
        if (x > 0.0 && x >= threshold) {
          new_cols(prefix(p)) = cols_idx(p);
          new_norms(prefix(p)) = x;
        }
      });
  if (kept > 0) {
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::compact_values",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n * tt),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const std::int64_t p = e / tt;
          const double x = norms(p);
          if (x > 0.0 && x >= threshold) new_values(prefix(p) * tt + e % tt) = values(e);
        });
  }
  exec.fence();
  m.row_map = new_row_map;
  m.cols_idx = new_cols;
  m.norms = new_norms;
  m.values = new_values;
  return dropped_sq;
}

/// The threshold of the drop rule: tolerance, or tolerance * sqrt(norm_sq) when relative.
inline double drop_threshold(double tolerance, bool relative, double norm_sq) {
  return relative ? tolerance * std::sqrt(norm_sq) : tolerance;
}

// ---------------------------------------------------------------------------------------------
// Dense -> block-sparse

/// Builds m (rows, cols, tile set) from the dense view a. `relative` and `tolerance` are the
/// drop rule; returns the number of non-finite tile norms found (the caller throws).
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
std::int64_t from_dense_impl(const ExecSpace& exec, const AView& a, double tolerance, bool relative,
                             block_sparse_parts<Scalar, MemorySpace>& m) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
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
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::from_dense_norms", team_policy(exec, all, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
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
        Kokkos::single(Kokkos::PerTeam(team),
                       [&]() { all_norms(team.league_rank()) = ::sqrt(sum); });
      });
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
      KOKKOS_LAMBDA(const int t, std::int64_t& update, const bool final) {
        if (final) {
          pos(t) = update;
          if (t % nt == 0) row_map(t / nt) = update;
        }
        const double x = all_norms(t);
        update += (x > 0.0 && x >= threshold) ? 1 : 0;
        if (final && t == all - 1) row_map(mt) = update;
      });
  const std::int64_t kept = read_back(exec, row_map, std::size_t(mt));
  double dropped_sq = 0.0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::block_sparse::from_dense_dropped",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, all),
      KOKKOS_LAMBDA(const int t, double& s) {
        const double x = all_norms(t);
        if (!(x > 0.0 && x >= threshold)) s += x * x;
      },
      dropped_sq);
  m.dropped_norm = std::sqrt(dropped_sq);
  allocate_tiles(exec, m, kept);
  const auto cols_idx = m.cols_idx;
  const auto norms = m.norms;
  const auto values = m.values;
  if (kept == 0) return 0;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::from_dense_values", team_policy(exec, all, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
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
      });
  exec.fence();
  return 0;
}

/// Writes m into the dense view a (every element: zeros where no tile is stored).
template <class ExecSpace, class Scalar, class MemorySpace, class AView>
void to_dense_impl(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m,
                   const AView& a) {
  using value_type = typename AView::non_const_value_type;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  const int rows = m.rows, cols = m.cols, tile = m.tile, mt = m.tile_rows();
  const int tt = tile * tile;
  if (rows == 0 || cols == 0) return;
  const std::int64_t elements = std::int64_t(rows) * cols;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::to_dense_zero",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, elements),
      KOKKOS_LAMBDA(const std::int64_t e) {
        a(static_cast<int>(e / cols), static_cast<int>(e % cols)) = value_type(0);
      });
  const int n = static_cast<int>(m.cols_idx.extent(0));
  if (n == 0) return;
  const auto row_map = m.row_map;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::to_dense", team_policy(exec, n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
        const std::int64_t p = team.league_rank();
        const int ti = tile_row_of(row_map, mt, p), tj = cols_idx(p);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tt), [&](const int e) {
          const int r = ti * tile + e / tile, c = tj * tile + e % tile;
          if (r < rows && c < cols) a(r, c) = static_cast<value_type>(values(p * tt + e));
        });
      });
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

/// Builds m (rows, cols, tile set) from a CRS matrix's arrays: the tiles holding a nonzero,
/// then the drop rule. Column indices must be checked by the caller.
template <class ExecSpace, class Scalar, class MemorySpace, class RowMap, class Entries,
          class Values>
std::int64_t from_crs_impl(const ExecSpace& exec, const RowMap& crs_row_map, const Entries& entries,
                           const Values& crs_values, double tolerance, bool relative,
                           block_sparse_parts<Scalar, MemorySpace>& m) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
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
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::from_crs_count", policy,
        KOKKOS_LAMBDA(const member& team) {
          bits_view bits(team.team_scratch(level), words);
          const int i = team.league_rank();
          mark_crs_row(team, bits, words, i, tile, rows, crs_row_map, entries, crs_values);
          int count = 0;
          nearsparse::detail::team_reduce_fenced(
              team, words, [&](const int w, int& s) { s += popcount32(bits(w)); }, count);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { counts(i) = count; });
        });
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
        KOKKOS_LAMBDA(const member& team) {
          bits_view bits(team.team_scratch(level), words);
          const int i = team.league_rank();
          mark_crs_row(team, bits, words, i, tile, rows, crs_row_map, entries, crs_values);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            std::int64_t out = row_map(i);
            for (int w = 0; w < words; ++w) out = write_set_bits(bits(w), w * 32, cols_idx, out);
          });
        });
  }
  // Each CRS row is one thread's: duplicates of an element sum without atomics.
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::from_crs_values",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, rows), KOKKOS_LAMBDA(const int r) {
        const int i = r / tile, rr = r % tile;
        const std::int64_t begin = row_map(i), end = row_map(i + 1);
        for (auto e = crs_row_map(r); e < crs_row_map(r + 1); ++e) {
          const auto v = crs_values(e);
          if (v == 0) continue;
          const int c = entries(e);
          const std::int64_t p = find_tile(cols_idx, begin, end, c / tile);
          values(p * tt + std::int64_t(rr) * tile + c % tile) += static_cast<Scalar>(v);
        }
      });
  compute_tile_norms(exec, m);
  std::int64_t non_finite = 0;
  const double norm_sq = sum_of_squares(exec, m.norms, non_finite);
  if (non_finite > 0) return non_finite;
  std::int64_t dropped = 0;
  const double dropped_sq = compact(exec, m, drop_threshold(tolerance, relative, norm_sq), dropped);
  m.dropped_norm = std::sqrt(dropped_sq);
  return 0;
}

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
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::to_crs_count",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, rows), KOKKOS_LAMBDA(const int r) {
          const int i = r / tile, rr = r % tile;
          std::int64_t count = 0;
          for (auto p = row_map(i); p < row_map(i + 1); ++p) {
            const int c0 = cols_idx(p) * tile;
            const int c_end = c0 + tile <= cols ? tile : cols - c0;
            const Scalar* row = values.data() + p * tt + std::int64_t(rr) * tile;
            for (int c = 0; c < c_end; ++c) count += row[c] != Scalar(0) ? 1 : 0;
          }
          counts(r) = count;
        });
  }
  return exclusive_scan(exec, "nearsparse::spamm::block_sparse::to_crs_scan", counts, offsets,
                        rows);
}

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
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::to_crs_fill",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, rows + 1), KOKKOS_LAMBDA(const int r) {
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
      });
}

// ---------------------------------------------------------------------------------------------
// C = alpha * A * B + beta * C

/// Marks, for tile row i of C, the tile columns with a kept product (and C's own tiles when
/// beta != 0) in `kept_bits`, and those with any candidate product in `any_bits`; returns the
/// team's count of kept products. Ends with a barrier.
template <class Scalar, class MemorySpace>
struct product_row_marker {
  Kokkos::View<const std::int64_t*, MemorySpace> a_row_map, b_row_map, c_row_map;
  Kokkos::View<const int*, MemorySpace> a_cols, b_cols, c_cols;
  Kokkos::View<const double*, MemorySpace> a_norms, b_norms;
  double tau = 0.0;
  bool with_c = false;

  template <class Member, class Bits>
  KOKKOS_INLINE_FUNCTION std::int64_t mark(const Member& team, int i, const Bits& kept_bits,
                                           const Bits& any_bits, int words) const {
    // A team that runs several league ranks in turn may still read the last rank's bits.
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, words), [&](const int w) {
      kept_bits(w) = 0u;
      any_bits(w) = 0u;
    });
    team.team_barrier();
    const std::int64_t a0 = a_row_map(i);
    const int la = static_cast<int>(a_row_map(i + 1) - a0);
    std::int64_t kept = 0;
    nearsparse::detail::team_reduce_fenced(
        team, la,
        [&](const int s, std::int64_t& count) {
          const int k = a_cols(a0 + s);
          const double na = a_norms(a0 + s);
          for (auto q = b_row_map(k); q < b_row_map(k + 1); ++q) {
            const int j = b_cols(q);
            const std::uint32_t bit = std::uint32_t(1u) << (j & 31);
            Kokkos::atomic_fetch_or(&any_bits(j >> 5), bit);
            if (na * b_norms(q) >= tau) {
              Kokkos::atomic_fetch_or(&kept_bits(j >> 5), bit);
              ++count;
            }
          }
        },
        kept);
    if (with_c) {
      const std::int64_t c0 = c_row_map(i);
      const int lc = static_cast<int>(c_row_map(i + 1) - c0);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, lc), [&](const int s) {
        const int j = c_cols(c0 + s);
        Kokkos::atomic_fetch_or(&kept_bits(j >> 5), std::uint32_t(1u) << (j & 31));
      });
      team.team_barrier();
    }
    return kept;
  }
};

/// The numeric phase of a block-sparse product on raw pointers, for a specialized path: tile q
/// of C (tile row found in c_row_map, column c_cols[q]) becomes alpha * sum of the kept A[i,k]
/// B[k,j] (norm product >= tau) + beta * C_old[i,j] (old arrays null when beta == 0), written to
/// c_values + q * tile^2 with zeros outside the matrix; c_norms[q] its Frobenius norm and
/// tile_bound[q] the sum of its dropped norm products.
template <class Scalar>
struct block_sparse_products {
  int tile = 0, tile_rows = 0, rows = 0, cols = 0;
  std::int64_t c_tiles = 0;
  Scalar alpha = Scalar(1), beta = Scalar(0);
  double tau = 0.0;
  const std::int64_t *a_row_map = nullptr, *b_row_map = nullptr, *c_row_map = nullptr,
                     *old_row_map = nullptr;
  const int *a_cols = nullptr, *b_cols = nullptr, *c_cols = nullptr, *old_cols = nullptr;
  const Scalar *a_values = nullptr, *b_values = nullptr, *old_values = nullptr;
  const double *a_norms = nullptr, *b_norms = nullptr;
  Scalar* c_values = nullptr;
  double* c_norms = nullptr;
  double* tile_bound = nullptr;
};

/// The specialized numeric phase, where the execution space has one that `choice` takes: returns
/// true when it ran. This template (spaces without one) returns false, or throws
/// nearsparse::unsupported for implementation::specialized; CUDA overloads it with a kernel of
/// its own and the host spaces with the host BLAS path (src/spamm/host_block_sparse.cpp).
template <class ExecSpace, class Scalar>
bool block_sparse_products_specialized(const ExecSpace&, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<Scalar>&) {
  nearsparse::detail::take_specialized_none<ExecSpace>(function, choice);
  return false;
}
#ifdef KOKKOS_ENABLE_CUDA
// The CUDA kernel (src/spamm/cuda_block_sparse.cpp).
bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif

/// Counts of the multiply's phases.
struct product_counts {
  std::int64_t kept_products = 0, candidate_products = 0;
  std::int64_t tiles_before_drop = 0, tiles_dropped = 0;
  double bound_sq = 0.0, dropped_sq = 0.0;
  std::int64_t non_finite = 0;
};

/// C_new = alpha * A * B + beta * C (C's arrays when beta != 0) over the products kept at tau,
/// then the drop rule at (tolerance, relative). `c_new` comes with rows, cols and tile set.
template <class ExecSpace, class Scalar, class MemorySpace>
product_counts multiply_impl(const ExecSpace& exec, Scalar alpha,
                             const block_sparse_parts<Scalar, MemorySpace>& a,
                             const block_sparse_parts<Scalar, MemorySpace>& b, Scalar beta,
                             const block_sparse_parts<Scalar, MemorySpace>& c, double tau,
                             double tolerance, bool relative,
                             block_sparse_parts<Scalar, MemorySpace>& c_new, const char* function,
                             nearsparse::implementation choice) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using bits_view =
      Kokkos::View<std::uint32_t*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using list_view =
      Kokkos::View<std::int64_t*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  product_counts out;
  const int tile = a.tile, mt = a.tile_rows(), nt = b.tile_cols();
  const int m_rows = c_new.rows, n_cols = c_new.cols;
  const int tt = tile * tile;
  const int words = (nt + 31) / 32;
  const bool with_c = beta != Scalar(0);
  c_new.row_map = bs_alloc<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(mt) + 1);
  auto d_row_map = bs_alloc<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dropped_row_map", std::size_t(mt) + 1);
  if (mt == 0 || nt == 0) {
    allocate_tiles(exec, c_new, 0);
    return out;
  }
  product_row_marker<Scalar, MemorySpace> marker;
  marker.a_row_map = a.row_map;
  marker.b_row_map = b.row_map;
  marker.c_row_map = c.row_map;
  marker.a_cols = a.cols_idx;
  marker.b_cols = b.cols_idx;
  marker.c_cols = c.cols_idx;
  marker.a_norms = a.norms;
  marker.b_norms = b.norms;
  marker.tau = tau;
  marker.with_c = with_c;

  // Symbolic phase, count: per tile row of C, the tile columns kept and those with only dropped
  // products, in two bitmaps of team scratch.
  const std::size_t bytes = 2 * bits_view::shmem_size(words);
  const int level = scratch_level(bytes);
  auto kept_counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::kept_counts", std::size_t(mt));
  auto drop_counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::drop_counts", std::size_t(mt));
  auto row_products = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_products", 2 * std::size_t(mt));
  const auto a_row_map = a.row_map;
  const auto b_row_map = b.row_map;
  const auto a_cols = a.cols_idx;
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::multiply_symbolic_count", policy,
        KOKKOS_LAMBDA(const member& team) {
          const int i = team.league_rank();
          bits_view kept_bits(team.team_scratch(level), words);
          bits_view any_bits(team.team_scratch(level), words);
          const std::int64_t kept = marker.mark(team, i, kept_bits, any_bits, words);
          const std::int64_t a0 = a_row_map(i);
          const int la = static_cast<int>(a_row_map(i + 1) - a0);
          std::int64_t candidates = 0;
          nearsparse::detail::team_reduce_fenced(
              team, la,
              [&](const int s, std::int64_t& sum) {
                const int k = a_cols(a0 + s);
                sum += b_row_map(k + 1) - b_row_map(k);
              },
              candidates);
          int kept_tiles = 0, drop_tiles = 0;
          nearsparse::detail::team_reduce_fenced(
              team, words, [&](const int w, int& sum) { sum += popcount32(kept_bits(w)); },
              kept_tiles);
          nearsparse::detail::team_reduce_fenced(
              team, words,
              [&](const int w, int& sum) { sum += popcount32(any_bits(w) & ~kept_bits(w)); },
              drop_tiles);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            kept_counts(i) = kept_tiles;
            drop_counts(i) = drop_tiles;
            row_products(2 * i) = kept;
            row_products(2 * i + 1) = candidates;
          });
        });
  }
  {
    std::int64_t kept = 0, candidates = 0;
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_kept_products",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
        KOKKOS_LAMBDA(const int i, std::int64_t& s) { s += row_products(2 * i); }, kept);
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_candidate_products",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
        KOKKOS_LAMBDA(const int i, std::int64_t& s) { s += row_products(2 * i + 1); }, candidates);
    out.kept_products = kept;
    out.candidate_products = candidates;
  }
  const auto c_row_map = c_new.row_map;
  const std::int64_t n_c = exclusive_scan(exec, "nearsparse::spamm::block_sparse::multiply_scan",
                                          kept_counts, c_row_map, mt);
  const std::int64_t n_d = exclusive_scan(
      exec, "nearsparse::spamm::block_sparse::multiply_dropped_scan", drop_counts, d_row_map, mt);
  // The tiles of C and those whose products were all dropped are counted with int below.
  constexpr std::int64_t int_max = 2147483647;
  nearsparse::require(n_c <= int_max && n_d <= int_max, "nearsparse::spamm::multiply", "C",
                      nearsparse::detail::concat("would have ", n_c, " tiles and ", n_d,
                                                 " tiles whose products were all dropped; at most ",
                                                 int_max, " of each are supported"));
  auto c_cols = bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols",
                                               std::size_t(n_c));
  auto d_cols = bs_alloc_raw<int, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dropped_cols", std::size_t(n_d));
  out.tiles_before_drop = n_c;

  // Symbolic phase, fill: the same bitmaps, read out in ascending order.
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::multiply_symbolic_fill", policy,
        KOKKOS_LAMBDA(const member& team) {
          const int i = team.league_rank();
          bits_view kept_bits(team.team_scratch(level), words);
          bits_view any_bits(team.team_scratch(level), words);
          marker.mark(team, i, kept_bits, any_bits, words);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            std::int64_t out_c = c_row_map(i), out_d = d_row_map(i);
            for (int w = 0; w < words; ++w) {
              out_c = write_set_bits(kept_bits(w), w * 32, c_cols, out_c);
              out_d = write_set_bits(any_bits(w) & ~kept_bits(w), w * 32, d_cols, out_d);
            }
          });
        });
  }

  // Error bound of the tiles with dropped products only: d_ij = sum of their norm products.
  const auto b_cols = b.cols_idx;
  const auto a_norms = a.norms;
  const auto b_norms = b.norms;
  if (n_d > 0) {
    double sq = 0.0;
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_dropped_tiles",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<int>(n_d)),
        KOKKOS_LAMBDA(const int p, double& s) {
          const int i = tile_row_of(d_row_map, mt, p), j = d_cols(p);
          double d = 0.0;
          for (auto ap = a_row_map(i); ap < a_row_map(i + 1); ++ap) {
            const int k = a_cols(ap);
            const std::int64_t q = find_tile(b_cols, b_row_map(k), b_row_map(k + 1), j);
            if (q >= 0) d += a_norms(ap) * b_norms(q);
          }
          s += d * d;
        },
        sq);
    out.bound_sq += sq;
  }

  // Numeric phase: one team per tile of C.
  auto c_values = bs_alloc_raw<Scalar, MemorySpace>(exec, "nearsparse::spamm::block_sparse::values",
                                                    std::size_t(n_c) * std::size_t(tt));
  auto c_norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                                   std::size_t(n_c));
  c_new.cols_idx = c_cols;
  c_new.values = c_values;
  c_new.norms = c_norms;
  if (n_c > 0) {
    auto tile_bound = bs_alloc_raw<double, MemorySpace>(
        exec, "nearsparse::spamm::block_sparse::tile_bound", std::size_t(n_c));
    int max_row = 0;
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_longest_row",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
        KOKKOS_LAMBDA(const int i, int& longest) {
          const int len = static_cast<int>(a_row_map(i + 1) - a_row_map(i));
          if (len > longest) longest = len;
        },
        Kokkos::Max<int>(max_row));
    block_sparse_products<Scalar> sp;
    sp.tile = tile;
    sp.tile_rows = mt;
    sp.rows = m_rows;
    sp.cols = n_cols;
    sp.c_tiles = n_c;
    sp.alpha = alpha;
    sp.beta = beta;
    sp.tau = tau;
    sp.a_row_map = a.row_map.data();
    sp.b_row_map = b.row_map.data();
    sp.c_row_map = c_row_map.data();
    sp.a_cols = a.cols_idx.data();
    sp.b_cols = b.cols_idx.data();
    sp.c_cols = c_cols.data();
    sp.a_values = a.values.data();
    sp.b_values = b.values.data();
    sp.a_norms = a.norms.data();
    sp.b_norms = b.norms.data();
    if (with_c) {
      sp.old_row_map = c.row_map.data();
      sp.old_cols = c.cols_idx.data();
      sp.old_values = c.values.data();
    }
    sp.c_values = c_values.data();
    sp.c_norms = c_norms.data();
    sp.tile_bound = tile_bound.data();
    if (!block_sparse_products_specialized(exec, function, choice, sp)) {
      const std::size_t list_bytes = list_view::shmem_size(std::size_t(max_row) + 1);
      const int list_level = scratch_level(list_bytes);
      const auto a_values = a.values;
      const auto b_values = b.values;
      const auto old_row_map = c.row_map;
      const auto old_cols = c.cols_idx;
      const auto old_values = c.values;
      team_policy policy(exec, static_cast<int>(n_c), Kokkos::AUTO);
      policy.set_scratch_size(list_level, Kokkos::PerTeam(list_bytes));
      Kokkos::parallel_for(
          "nearsparse::spamm::block_sparse::multiply_numeric", policy,
          KOKKOS_LAMBDA(const member& team) {
            list_view list(team.team_scratch(list_level), max_row + 1);
            const std::int64_t p = team.league_rank();
            const int i = tile_row_of(c_row_map, mt, p), j = c_cols(p);
            const std::int64_t a0 = a_row_map(i);
            const int la = static_cast<int>(a_row_map(i + 1) - a0);
            // list(s): the tile of B kept with A's s-th tile of row i, or -1.
            double dropped = 0.0;
            nearsparse::detail::team_reduce_fenced(
                team, la,
                [&](const int s, double& sum) {
                  const int k = a_cols(a0 + s);
                  const std::int64_t q = find_tile(b_cols, b_row_map(k), b_row_map(k + 1), j);
                  std::int64_t keep = -1;
                  if (q >= 0) {
                    const double np = a_norms(a0 + s) * b_norms(q);
                    if (np >= tau) {
                      keep = q;
                    } else {
                      sum += np;
                    }
                  }
                  list(s) = keep;
                },
                dropped);
            const std::int64_t old =
                with_c ? find_tile(old_cols, old_row_map(i), old_row_map(i + 1), j) : -1;
            const int r_end = (i + 1) * tile <= m_rows ? tile : m_rows - i * tile;
            const int c_end = (j + 1) * tile <= n_cols ? tile : n_cols - j * tile;
            double sq = 0.0;
            nearsparse::detail::team_reduce_fenced(
                team, tt,
                [&](const int e, double& sum) {
                  const int r = e / tile, col = e % tile;
                  Scalar value = Scalar(0);
                  if (r < r_end && col < c_end) {
                    Scalar acc = Scalar(0);
                    for (int s = 0; s < la; ++s) {
                      const std::int64_t q = list(s);
                      if (q < 0) continue;
                      const Scalar* a_row = a_values.data() + (a0 + s) * tt + r * tile;
                      const Scalar* b_col = b_values.data() + q * tt + col;
                      Scalar part = Scalar(0);
                      for (int l = 0; l < tile; ++l) part += a_row[l] * b_col[l * tile];
                      acc += part;
                    }
                    value = alpha * acc;
                    if (old >= 0) value += beta * old_values(old * tt + e);
                  }
                  c_values(p * tt + e) = value;
                  const double v = static_cast<double>(value);
                  sum += v * v;
                },
                sq);
            Kokkos::single(Kokkos::PerTeam(team), [&]() {
              c_norms(p) = ::sqrt(sq);
              tile_bound(p) = dropped;
            });
          });
    }
    double sq = 0.0;
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_bound",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<int>(n_c)),
        KOKKOS_LAMBDA(const int p, double& s) { s += tile_bound(p) * tile_bound(p); }, sq);
    out.bound_sq += sq;
  }
  const double norm_sq = sum_of_squares(exec, c_new.norms, out.non_finite);
  if (out.non_finite > 0) return out;
  out.dropped_sq =
      compact(exec, c_new, drop_threshold(tolerance, relative, norm_sq), out.tiles_dropped);
  return out;
}

}  // namespace nearsparse::spamm::detail
