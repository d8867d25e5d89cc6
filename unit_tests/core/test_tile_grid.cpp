#include <nearsparse/core/tile_grid.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

TEST_CASE("tile_grid counts whole and edge tiles", "[core][tile_grid]") {
  const std::size_t tile = GENERATE(1, 7, 32, 64);
  const std::size_t rows = GENERATE(0, 1, 31, 32, 33, 100, 1000);
  const std::size_t cols = GENERATE(0, 5, 64, 65);
  const nearsparse::tile_grid grid(rows, cols, tile);
  INFO(rows << " x " << cols << " in tiles of " << tile);

  CHECK(grid.tile_rows() * tile >= rows);
  CHECK(grid.tile_rows() * tile < rows + tile);
  CHECK(grid.tile_cols() * tile >= cols);
  CHECK(grid.tile_cols() * tile < cols + tile);
  CHECK(grid.tile_count() == grid.tile_rows() * grid.tile_cols());
  CHECK(grid.padded_rows() == grid.tile_rows() * tile);
  CHECK(grid.padded_cols() == grid.tile_cols() * tile);

  std::size_t covered_rows = 0;
  for (std::size_t t = 0; t < grid.tile_rows(); ++t) {
    const std::size_t e = grid.tile_row_extent(t);
    CHECK(e >= 1);
    CHECK(e <= tile);
    if (t + 1 < grid.tile_rows()) CHECK(e == tile);
    covered_rows += e;
  }
  CHECK(covered_rows == rows);
  std::size_t covered_cols = 0;
  for (std::size_t t = 0; t < grid.tile_cols(); ++t) covered_cols += grid.tile_col_extent(t);
  CHECK(covered_cols == cols);
}

TEST_CASE("tile_grid matches hand-counted examples", "[core][tile_grid]") {
  const nearsparse::tile_grid g(100, 33, 32);
  CHECK(g.tile_rows() == 4);
  CHECK(g.tile_cols() == 2);
  CHECK(g.tile_row_extent(3) == 4);
  CHECK(g.tile_col_extent(1) == 1);
  CHECK(g.padded_rows() == 128);
}

TEST_CASE("tile_grid rejects a zero tile", "[core][tile_grid]") {
  CHECK_THROWS_AS(nearsparse::tile_grid(10, 10, 0), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(nearsparse::tile_grid(10, 10, 0),
                    "nearsparse::tile_grid: argument 'tile' must be > 0, got 0");
}
