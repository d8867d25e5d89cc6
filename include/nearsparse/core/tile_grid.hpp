#pragma once
// A rows x cols matrix cut into square tiles of side `tile`. The last tile row and column may be
// smaller (edge tiles); algorithms that want full tiles pad to padded_rows() x padded_cols().
// Shared by the tiled families (SpAMM norm maps, tile low-rank storage).

#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace nearsparse {

class tile_grid {
 public:
  using size_type = std::size_t;

  KOKKOS_DEFAULTED_FUNCTION tile_grid() = default;

  /// Throws nearsparse::invalid_argument when tile is zero.
  tile_grid(size_type rows, size_type cols, size_type tile)
      : rows_(rows), cols_(cols), tile_(tile) {
    require(tile > 0, "nearsparse::tile_grid", "tile", "must be > 0, got 0");
  }

  KOKKOS_INLINE_FUNCTION size_type rows() const { return rows_; }
  KOKKOS_INLINE_FUNCTION size_type cols() const { return cols_; }
  KOKKOS_INLINE_FUNCTION size_type tile() const { return tile_; }

  /// Number of tile rows and columns, edge tiles included (zero for an empty matrix).
  KOKKOS_INLINE_FUNCTION size_type tile_rows() const { return ceil_div(rows_); }
  KOKKOS_INLINE_FUNCTION size_type tile_cols() const { return ceil_div(cols_); }
  KOKKOS_INLINE_FUNCTION size_type tile_count() const { return tile_rows() * tile_cols(); }

  /// Extents rounded up to whole tiles.
  KOKKOS_INLINE_FUNCTION size_type padded_rows() const { return tile_rows() * tile_; }
  KOKKOS_INLINE_FUNCTION size_type padded_cols() const { return tile_cols() * tile_; }

  /// Rows in tile row `ti` and columns in tile column `tj`: `tile` except at the edge.
  KOKKOS_INLINE_FUNCTION size_type tile_row_extent(size_type ti) const {
    KOKKOS_ASSERT(ti < tile_rows());
    return edge_extent(rows_, ti);
  }
  KOKKOS_INLINE_FUNCTION size_type tile_col_extent(size_type tj) const {
    KOKKOS_ASSERT(tj < tile_cols());
    return edge_extent(cols_, tj);
  }

 private:
  KOKKOS_INLINE_FUNCTION size_type ceil_div(size_type n) const { return (n + tile_ - 1) / tile_; }
  KOKKOS_INLINE_FUNCTION size_type edge_extent(size_type n, size_type t) const {
    const size_type begin = t * tile_;
    return n - begin < tile_ ? n - begin : tile_;
  }

  size_type rows_ = 0;
  size_type cols_ = 0;
  size_type tile_ = 1;
};

}  // namespace nearsparse
