#pragma once
// A tile low-rank (TLR) matrix: rows x cols cut into tile x tile tiles (the last tile row and
// column may be smaller), each tile either dense or low rank, U V^T, with its own rank up to
// max_rank.
//
// Storage is batched and strided so that one kernel launch (or one batched cuBLAS call) can walk
// every tile:
//   u(), v()   tile x max_rank x tile_count, column-major per tile (LayoutLeft): tile t's U is the
//              column-major tile x max_rank matrix at u().data() + t * tile * max_rank, leading
//              dimension tile; likewise V. Tiles are numbered column by column, t = i + j *
//              tile_rows, so the V factors of one tile column follow each other in memory.
//   dense()    tile x tile x dense_count, column-major per tile, for the dense tiles.
//   ranks()    the rank of each tile (0 for a dense tile, whose U and V are unused).
//   dense_slots() the index into dense() of each tile, -1 for a low-rank tile.
// Rows of U and V beyond an edge tile's extents and columns beyond a tile's rank are zero, so a
// kernel may compute with the padded sizes (tile, max_rank) and stay exact. Dense tiles are the
// diagonal tiles when the matrix is built with dense_diagonal (the usual choice for covariance
// matrices, whose diagonal tiles have full rank); every other tile is low rank.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/tile_grid.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nearsparse::tlr {

template <class MemorySpace>
class tlr_matrix {
 public:
  using memory_space = MemorySpace;
  using factor_view = Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>;
  using index_view = Kokkos::View<int*, MemorySpace>;

  tlr_matrix() = default;

  /// A zero matrix: every low-rank tile has rank 0, every dense tile is zero. Throws
  /// nearsparse::invalid_argument for a zero tile, a negative max_rank, or max_rank > tile.
  template <class ExecSpace>
  tlr_matrix(const ExecSpace& exec, std::size_t rows, std::size_t cols, std::size_t tile,
             int max_rank, bool dense_diagonal = false)
      : grid_(checked_grid(rows, cols, tile, max_rank)),
        max_rank_(max_rank),
        dense_diagonal_(dense_diagonal) {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                  "nearsparse::tlr::tlr_matrix: the execution space cannot reach the memory space");
    const std::size_t tiles = grid_.tile_count();
    host_dense_slots_.assign(tiles, -1);
    int dense_count = 0;
    if (dense_diagonal) {
      const std::size_t diagonal =
          grid_.tile_rows() < grid_.tile_cols() ? grid_.tile_rows() : grid_.tile_cols();
      for (std::size_t d = 0; d < diagonal; ++d)
        host_dense_slots_[tile_index(d, d)] = dense_count++;
    }
    const std::string u_label("nearsparse::tlr::U"), v_label("nearsparse::tlr::V"),
        d_label("nearsparse::tlr::dense"), r_label("nearsparse::tlr::ranks"),
        s_label("nearsparse::tlr::dense_slots");
    // view_alloc with the instance: zero-filled on exec's stream, ordered before later work on it.
    u_ = factor_view(Kokkos::view_alloc(exec, u_label), tile, max_rank, tiles);
    v_ = factor_view(Kokkos::view_alloc(exec, v_label), tile, max_rank, tiles);
    dense_ = factor_view(Kokkos::view_alloc(exec, d_label), tile, tile, dense_count);
    ranks_ = index_view(Kokkos::view_alloc(exec, r_label), tiles);
    dense_slots_ = index_view(Kokkos::view_alloc(exec, s_label), tiles);
    auto staged = Kokkos::create_mirror_view(dense_slots_);
    for (std::size_t t = 0; t < tiles; ++t) staged(t) = host_dense_slots_[t];
    Kokkos::deep_copy(exec, dense_slots_, staged);
    exec.fence();  // `staged` may be a host allocation that dies here
  }

  std::size_t rows() const { return grid_.rows(); }
  std::size_t cols() const { return grid_.cols(); }
  std::size_t tile() const { return grid_.tile(); }
  const tile_grid& grid() const { return grid_; }
  int max_rank() const { return max_rank_; }
  bool dense_diagonal() const { return dense_diagonal_; }
  std::size_t tile_rows() const { return grid_.tile_rows(); }
  std::size_t tile_cols() const { return grid_.tile_cols(); }
  std::size_t tile_count() const { return grid_.tile_count(); }
  int dense_count() const { return static_cast<int>(dense_.extent(2)); }

  /// The number of tile (i, j) in the batched arrays (column by column).
  std::size_t tile_index(std::size_t i, std::size_t j) const { return i + j * grid_.tile_rows(); }
  /// True when tile number t is stored dense.
  bool is_dense(std::size_t t) const { return host_dense_slots_[t] >= 0; }
  const std::vector<int>& host_dense_slots() const { return host_dense_slots_; }

  const factor_view& u() const { return u_; }
  const factor_view& v() const { return v_; }
  const factor_view& dense() const { return dense_; }
  const index_view& ranks() const { return ranks_; }
  const index_view& dense_slots() const { return dense_slots_; }

  /// The ranks of all tiles, copied to the host after the work queued on exec.
  template <class ExecSpace>
  std::vector<int> host_ranks(const ExecSpace& exec) const {
    auto mirror = Kokkos::create_mirror_view(ranks_);
    Kokkos::deep_copy(exec, mirror, ranks_);
    exec.fence();
    return std::vector<int>(mirror.data(), mirror.data() + mirror.extent(0));
  }

  /// Bytes the matrix needs when each tile keeps only what it uses: (m + n) * rank values for a
  /// low-rank tile, m * n for a dense one (edge tiles at their own extents).
  template <class ExecSpace>
  std::size_t compressed_bytes(const ExecSpace& exec) const {
    const std::vector<int> r = host_ranks(exec);
    std::size_t values = 0;
    for (std::size_t j = 0; j < tile_cols(); ++j)
      for (std::size_t i = 0; i < tile_rows(); ++i) {
        const std::size_t t = tile_index(i, j), m = grid_.tile_row_extent(i),
                          n = grid_.tile_col_extent(j);
        values += is_dense(t) ? m * n : (m + n) * static_cast<std::size_t>(r[t]);
      }
    return values * sizeof(double);
  }
  /// Bytes of the dense matrix it stands for.
  std::size_t dense_bytes() const { return rows() * cols() * sizeof(double); }
  /// Bytes allocated by the padded batched storage.
  std::size_t allocated_bytes() const {
    return (u_.size() + v_.size() + dense_.size()) * sizeof(double) +
           (ranks_.size() + dense_slots_.size()) * sizeof(int);
  }

 private:
  static tile_grid checked_grid(std::size_t rows, std::size_t cols, std::size_t tile,
                                int max_rank) {
    const char* fn = "nearsparse::tlr::tlr_matrix";
    require(tile > 0, fn, "tile", "must be > 0, got 0");
    require(max_rank >= 0, fn, "max_rank",
            nearsparse::detail::concat("must be >= 0, got ", max_rank));
    require(static_cast<std::size_t>(max_rank) <= tile, fn, "max_rank",
            nearsparse::detail::concat("= ", max_rank, " is larger than the tile size ", tile,
                                       " (a low-rank tile cannot have more columns than rows)"));
    require(tile <= static_cast<std::size_t>(1) << 20, fn, "tile",
            nearsparse::detail::concat("= ", tile, " is larger than 2^20"));
    return tile_grid(rows, cols, tile);
  }

  tile_grid grid_;
  int max_rank_ = 0;
  bool dense_diagonal_ = false;
  std::vector<int> host_dense_slots_;
  factor_view u_, v_, dense_;
  index_view ranks_, dense_slots_;
};

}  // namespace nearsparse::tlr
