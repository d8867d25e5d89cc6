#pragma once
// The arrays of a block-sparse (block-CSR) SpAMM matrix (spamm/block_sparse.hpp) and the kernels
// every block-sparse operation shares: allocation, scans, tile norms and the drop rule's
// compaction. Every kernel is a labelled RangePolicy or TeamPolicy on the caller's execution
// space instance, written as a named functor, and runs on every backend.
//
// The arrays of one matrix (block_sparse_parts): tile row pointers row_map (tile_rows + 1,
// int64), tile column indices cols (ascending within a tile row), values (tile x tile per kept
// tile, row-major, zero-padded at the edges) and one Frobenius norm per kept tile (double).

#include <nearsparse/core/detail/free_memory.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/errors.hpp>

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

/// Exclusive prefix sums of counts into offsets, the total into offsets(n).
template <class CountView, class OffsetView>
struct exclusive_scan_kernel {
  CountView counts;
  OffsetView offsets;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, std::int64_t& update,
                                         const bool final) const {
    if (final) offsets(i) = update;
    update += static_cast<std::int64_t>(counts(i));
    if (final && i == n - 1) offsets(n) = update;
  }
};

/// Exclusive prefix sums of counts (n) into offsets (n + 1, offsets(n) the total); returns the
/// total (waits for exec).
template <class ExecSpace, class CountView, class OffsetView>
std::int64_t exclusive_scan(const ExecSpace& exec, const char* label, const CountView& counts,
                            const OffsetView& offsets, int n) {
  if (n > 0) {
    Kokkos::parallel_scan(label, Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                          exclusive_scan_kernel<CountView, OffsetView>{counts, offsets, n});
  } else {
    Kokkos::deep_copy(exec, offsets, std::int64_t(0));
  }
  return read_back(exec, offsets, std::size_t(n));
}

/// Frobenius norm of stored tile p (one team per tile) into norms(p).
template <class ExecSpace, class Scalar, class MemorySpace>
struct tile_norms_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::View<const Scalar*, MemorySpace> values;
  Kokkos::View<double*, MemorySpace> norms;
  int tt;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
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
  }
};

/// Frobenius norm of every stored tile of m, into m.norms.
template <class ExecSpace, class Scalar, class MemorySpace>
void compute_tile_norms(const ExecSpace& exec, const block_sparse_parts<Scalar, MemorySpace>& m) {
  const int n = static_cast<int>(m.cols_idx.extent(0));
  if (n == 0) return;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  const int tt = m.tile * m.tile;
  const auto values = m.values;
  const auto norms = m.norms;
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::tile_norms",
                       team_policy(exec, n, Kokkos::AUTO),
                       tile_norms_kernel<ExecSpace, Scalar, MemorySpace>{values, norms, tt});
}

/// Sum of the squares of the entries of a norm array.
template <class NormView>
struct sum_of_squares_kernel {
  NormView norms;
  KOKKOS_INLINE_FUNCTION void operator()(const int p, double& s) const { s += norms(p) * norms(p); }
};

/// Count of the non-finite (NaN or Inf) entries of a norm array.
template <class NormView>
struct non_finite_count_kernel {
  NormView norms;
  KOKKOS_INLINE_FUNCTION void operator()(const int p, std::int64_t& c) const {
    const double x = norms(p);
    if (!(x - x == 0.0)) ++c;  // NaN and Inf
  }
};

/// Sum of the squares of a norm array and the count of its non-finite entries (waits).
template <class ExecSpace, class NormView>
double sum_of_squares(const ExecSpace& exec, const NormView& norms, std::int64_t& non_finite) {
  const int n = static_cast<int>(norms.extent(0));
  double sum = 0.0;
  std::int64_t bad = 0;
  if (n > 0) {
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::sum_of_squares",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                            sum_of_squares_kernel<NormView>{norms}, sum);
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::count_non_finite",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                            non_finite_count_kernel<NormView>{norms}, bad);
  }
  non_finite = bad;
  return sum;
}

/// Exclusive prefix sums of the kept flags (norm > 0 and norm >= threshold) of the tiles into
/// prefix, the number kept into prefix(n).
template <class MemorySpace>
struct kept_prefix_kernel {
  Kokkos::View<const double*, MemorySpace> norms;
  Kokkos::View<std::int64_t*, MemorySpace> prefix;
  double threshold;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int p, std::int64_t& update,
                                         const bool final) const {
    if (final) prefix(p) = update;
    const double x = norms(p);
    update += (x > 0.0 && x >= threshold) ? 1 : 0;
    if (final && p == n - 1) prefix(n) = update;
  }
};

/// Sum of the squared norms of the tiles the drop rule removes (norm 0 or below threshold).
template <class MemorySpace>
struct dropped_squares_kernel {
  Kokkos::View<const double*, MemorySpace> norms;
  double threshold;
  KOKKOS_INLINE_FUNCTION void operator()(const int p, double& s) const {
    const double x = norms(p);
    if (!(x > 0.0 && x >= threshold)) s += x * x;
  }
};

/// The tile row pointers after compaction: each old pointer mapped through the kept prefix.
template <class MemorySpace>
struct compact_row_map_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> row_map;
  Kokkos::View<const std::int64_t*, MemorySpace> prefix;
  Kokkos::View<std::int64_t*, MemorySpace> new_row_map;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { new_row_map(i) = prefix(row_map(i)); }
};

/// The column index and norm of every kept tile, moved to its position after compaction.
template <class MemorySpace>
struct compact_tiles_kernel {
  Kokkos::View<const double*, MemorySpace> norms;
  Kokkos::View<const int*, MemorySpace> cols_idx;
  Kokkos::View<const std::int64_t*, MemorySpace> prefix;
  Kokkos::View<int*, MemorySpace> new_cols;
  Kokkos::View<double*, MemorySpace> new_norms;
  double threshold;
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const {
    const double x = norms(p);
    if (x > 0.0 && x >= threshold) {
      new_cols(prefix(p)) = cols_idx(p);
      new_norms(prefix(p)) = x;
    }
  }
};

/// The values of every kept tile (one element per index), moved to its position after compaction.
template <class Scalar, class MemorySpace>
struct compact_values_kernel {
  Kokkos::View<const double*, MemorySpace> norms;
  Kokkos::View<const std::int64_t*, MemorySpace> prefix;
  Kokkos::View<const Scalar*, MemorySpace> values;
  Kokkos::View<Scalar*, MemorySpace> new_values;
  double threshold;
  std::int64_t tt;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t p = e / tt;
    const double x = norms(p);
    if (x > 0.0 && x >= threshold) new_values(prefix(p) * tt + e % tt) = values(e);
  }
};

/// The drop rule: removes the stored tiles of m whose norm is 0 or below `threshold` (a tile is
/// kept when norm > 0 and norm >= threshold). Returns the sum of the squared norms of the tiles
/// dropped; `dropped` receives their count. With `function`, the compacted copy, made beside m,
/// is first checked against the free device memory (require_fits, naming `function` and 'C').
template <class ExecSpace, class Scalar, class MemorySpace>
double compact(const ExecSpace& exec, block_sparse_parts<Scalar, MemorySpace>& m, double threshold,
               std::int64_t& dropped, const char* function = nullptr) {
  const int n = static_cast<int>(m.cols_idx.extent(0));
  dropped = 0;
  if (n == 0) return 0.0;
  const auto norms = m.norms;
  const auto cols_idx = m.cols_idx;
  const auto values = m.values;
  const auto row_map = m.row_map;
  auto prefix = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::compact_prefix", std::size_t(n) + 1);
  Kokkos::parallel_scan("nearsparse::spamm::block_sparse::compact_scan",
                        Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                        kept_prefix_kernel<MemorySpace>{norms, prefix, threshold, n});
  const std::int64_t kept = read_back(exec, prefix, std::size_t(n));
  if (kept == n) return 0.0;
  dropped = n - kept;
  double dropped_sq = 0.0;
  Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::dropped_norm",
                          Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                          dropped_squares_kernel<MemorySpace>{norms, threshold}, dropped_sq);
  const int tile_rows = m.tile_rows();
  const std::int64_t tt = std::int64_t(m.tile) * m.tile;
  if (function)
    nearsparse::detail::require_fits<MemorySpace>(
        exec, function, "C",
        nearsparse::detail::concat("(", m.rows, " x ", m.cols, ", tile ", m.tile, ") keeps ", kept,
                                   " of its ", n,
                                   " tiles after its drop rule; their compacted "
                                   "copy beside them with indices and norms"),
        std::size_t(kept) * (std::size_t(tt) * sizeof(Scalar) + sizeof(int) + sizeof(double)),
        "; raise tau or the drop tolerance");
  auto new_row_map = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(tile_rows) + 1);
  auto new_cols = bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols",
                                                 std::size_t(kept));
  auto new_norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                                     std::size_t(kept));
  auto new_values = bs_alloc_raw<Scalar, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::values", std::size_t(kept * tt));
  Kokkos::parallel_for("nearsparse::spamm::block_sparse::compact_row_map",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, tile_rows + 1),
                       compact_row_map_kernel<MemorySpace>{row_map, prefix, new_row_map});
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::compact_tiles", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
      compact_tiles_kernel<MemorySpace>{norms, cols_idx, prefix, new_cols, new_norms, threshold});
  if (kept > 0) {
    Kokkos::parallel_for(
        "nearsparse::spamm::block_sparse::compact_values",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, n * tt),
        compact_values_kernel<Scalar, MemorySpace>{norms, prefix, values, new_values, threshold,
                                                   tt});
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

}  // namespace nearsparse::spamm::detail
