#include <nearsparse/tlr/detail/product_checks.hpp>

#include <cmath>
#include <string>

namespace nearsparse::tlr::detail {

using nearsparse::detail::concat;

namespace {
std::string describe(const operand_shape& s) {
  return concat(s.name, " is ", s.grid.rows(), " x ", s.grid.cols(), " in ", s.grid.tile(), " x ",
                s.grid.tile(), " tiles");
}
bool dense_tile(const operand_shape& s, std::size_t t) {
  return s.dense_slots == nullptr || (*s.dense_slots)[t] >= 0;
}
std::size_t row_extent(const tile_grid& g, std::size_t t) {
  return g.tile_row_extent(t % g.tile_rows());
}
std::size_t col_extent(const tile_grid& g, std::size_t t) {
  return g.tile_col_extent(t / g.tile_rows());
}
// A failed check in a loop over tiles: its message is built only then (building it for every
// tile that passes costs more than a product of small tiles).
[[noreturn]] void fail(const char* function, const char* argument, const std::string& problem) {
  nearsparse::detail::throw_invalid_argument(function, argument, problem);
}
}  // namespace

void check_product_shapes(const char* function, const operand_shape& a, const operand_shape& b,
                          const operand_shape& c) {
  require(a.grid.cols() == b.grid.rows(), function, b.name,
          concat("has ", b.grid.rows(), " rows, but ", a.name, " has ", a.grid.cols(), " columns (",
                 describe(a), ", ", describe(b), ")"));
  require(c.grid.rows() == a.grid.rows() && c.grid.cols() == b.grid.cols(), function, c.name,
          concat("is ", c.grid.rows(), " x ", c.grid.cols(), ", expected ", a.grid.rows(), " x ",
                 b.grid.cols(), " (", describe(a), ", ", describe(b), ")"));
  require(b.grid.tile() == a.grid.tile(), function, b.name,
          concat("has tile size ", b.grid.tile(), ", but ", a.name, " has ", a.grid.tile(),
                 " (the tilings must match)"));
  require(c.grid.tile() == a.grid.tile(), function, c.name,
          concat("has tile size ", c.grid.tile(), ", but ", a.name, " has ", a.grid.tile(),
                 " (the tilings must match)"));
}

void check_batch(const char* function, const operand_shape& a, const operand_shape& b,
                 const operand_shape& c, const std::vector<tile_triple>& batch) {
  require(b.grid.tile() == a.grid.tile() && c.grid.tile() == a.grid.tile(), function, "batch",
          concat("operands have tile sizes ", a.grid.tile(), ", ", b.grid.tile(), ", ",
                 c.grid.tile(), "; they must be equal"));
  std::vector<char> seen(c.grid.tile_count(), 0);
  for (std::size_t e = 0; e < batch.size(); ++e) {
    const tile_triple& t = batch[e];
    auto in_range = [&](int index, const operand_shape& s, const char* which) {
      if (index < 0 || static_cast<std::size_t>(index) >= s.grid.tile_count())
        fail(function, "batch",
             concat("entry ", e, " names tile ", index, " of ", which, ", which has ",
                    s.grid.tile_count(), " tiles (", describe(s), ")"));
    };
    in_range(t.a, a, a.name);
    in_range(t.b, b, b.name);
    in_range(t.c, c, c.name);
    const std::size_t am = row_extent(a.grid, t.a), ak = col_extent(a.grid, t.a);
    const std::size_t bk = row_extent(b.grid, t.b), bn = col_extent(b.grid, t.b);
    const std::size_t cm = row_extent(c.grid, t.c), cn = col_extent(c.grid, t.c);
    if (ak != bk || am != cm || bn != cn)
      fail(function, "batch",
           concat("entry ", e, " multiplies a ", am, " x ", ak, " tile of ", a.name, " by a ", bk,
                  " x ", bn, " tile of ", b.name, " into a ", cm, " x ", cn, " tile of ", c.name,
                  "; the extents do not conform"));
    if (seen[t.c])
      fail(function, "batch",
           concat("entry ", e, " updates tile ", t.c, " of ", c.name,
                  " again; a batch updates each C tile at most once"));
    seen[t.c] = 1;
    if (!dense_tile(c, t.c) && dense_tile(a, t.a) && dense_tile(b, t.b))
      fail(function, "batch",
           concat("entry ", e, " adds the product of two dense tiles (", a.name, " tile ", t.a,
                  ", ", b.name, " tile ", t.b, ") to low-rank tile ", t.c, " of ", c.name,
                  "; that product has full rank"));
  }
}

void check_lowrank_targets(const char* function, const operand_shape& a, const operand_shape& b,
                           const operand_shape& c) {
  const std::size_t mt = c.grid.tile_rows(), nt = c.grid.tile_cols(), kt = a.grid.tile_cols();
  for (std::size_t j = 0; j < nt; ++j)
    for (std::size_t i = 0; i < mt; ++i) {
      if (dense_tile(c, i + j * mt)) continue;
      for (std::size_t k = 0; k < kt; ++k)
        if (dense_tile(a, i + k * a.grid.tile_rows()) && dense_tile(b, k + j * b.grid.tile_rows()))
          fail(function, c.name,
               concat("tile (", i, ", ", j, ") is low rank, but ", a.name, " tile (", i, ", ", k,
                      ") and ", b.name, " tile (", k, ", ", j,
                      ") are both dense and their product has full rank; build ", c.name,
                      " with dense_diagonal"));
    }
}

}  // namespace nearsparse::tlr::detail

namespace nearsparse::tlr::detail {

using nearsparse::detail::concat;

void require_finite_scalars(const char* function, double alpha, double beta) {
  require(std::isfinite(alpha), function, "alpha", concat("must be finite, got ", alpha));
  require(std::isfinite(beta), function, "beta", concat("must be finite, got ", beta));
}

}  // namespace nearsparse::tlr::detail
