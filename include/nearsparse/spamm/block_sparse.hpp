#pragma once
// Block-sparse SpAMM: matrices stored as their kept tiles only (block CSR), and
// C = alpha * A * B + beta * C on them with SpAMM's norm-product filtering.
//
// What. A block_sparse_matrix<Scalar, ExecSpace> (Scalar float or double) cuts a rows x cols
// matrix into square tiles of `tile` x `tile` elements (8, 16, 32, 64 or 128; SpAMM's dense plan
// takes 32, 64 and 128) and stores only the tiles kept by a drop rule. It is built from a dense
// rank-2 View (from_dense) or from the library's CRS type (from_crs, so a Matrix Market file
// goes nearsparse::io::read_crs -> from_crs), and converts back (to_dense, to_crs).
// spamm::multiply(exec, alpha, A, B, beta, C, opts) multiplies block-sparse operands.
//
//   nearsparse::spamm::block_sparse_options opt;   // tile 64, relative drop rule
//   opt.drop_tolerance = 1e-8;                    // drop tiles with ||T||_F < 1e-8 ||A||_F
//   auto A = nearsparse::spamm::from_crs(exec, nearsparse::io::read_crs<double>(exec, path), opt);
//   nearsparse::spamm::block_sparse_matrix<double, Exec> C(exec, A.rows(), A.cols(), opt.tile);
//   nearsparse::spamm::block_sparse_multiply_options mopt;
//   mopt.tau = 1e-10;                              // drop tile products with norm product < tau
//   auto report = nearsparse::spamm::multiply(exec, 1.0, A, A, 0.0, C, mopt);
//   report.error_bound;  // >= ||A A - C||_F for the stored A, up to rounding, before the drop rule
//
// Storage layout (all in ExecSpace's memory space):
//   row_map        int64, tile_rows + 1: the stored tiles of tile row i are row_map(i) ..
//                  row_map(i+1) - 1 (int64 so that huge matrices cannot overflow the offsets)
//   column_indices int, one per stored tile: its tile column, ascending within a tile row
//   values         Scalar, tile * tile per stored tile, tile p at p * tile * tile, row-major
//                  within the tile; the parts of edge tiles outside the matrix hold zeros
//   norms          double, one per stored tile: its Frobenius norm
//   dropped_norm   double on the host: sqrt of the sum of the squared norms of the tiles the
//                  drop rule removed when the matrix was built (after a multiply, see there)
//
// Drop rule. A tile is kept when its Frobenius norm is > 0 and >= threshold, and dropped
// otherwise: dropped when norm < threshold, a strict comparison, so a norm exactly at the
// threshold is kept (as SpAMM keeps a product whose norm product is exactly tau). threshold =
// drop_tolerance (drop_rule::absolute) or drop_tolerance * ||A||_F (drop_rule::relative, ||A||_F
// over all tiles before dropping). Tiles that are exactly zero are never stored, even with
// drop_tolerance 0. The dropped part E has ||E||_F = dropped_norm(). Tile norms are sums of
// squares in double without scaling: a tile whose entries all lie below about 1e-162 has norm 0
// and counts as zero, and an entry above about 1e154 overflows the norm (refused as non-finite).
//
// Memory. O(rows / tile + kept tiles * tile^2): no array of all tile_rows x tile_cols tiles,
// and no dense rows x cols array, anywhere but in from_dense/to_dense (whose input or output is
// dense already; from_dense keeps one norm per tile of the dense matrix while it runs). The
// symbolic steps keep two bitmaps of tile_cols bits per running team (team scratch).
//
// Multiply. For A (M x K), B (K x N), C (M x N) with the same tile: the product A[i,k] B[k,j]
// is kept when ||A[i,k]||_F ||B[k,j]||_F >= tau (tau = 0 keeps every product of stored tiles,
// the exact product of the stored matrices). C's new tiles are those with a kept product, and
// C's own tiles when beta != 0 (beta == 0 ignores C's values, NaN included). Then the drop rule
// of the multiply options removes tiles of the result (relative to the result's ||C||_F).
// Error bound (block_sparse_report::error_bound): with d_ij = the sum of the norm products
// dropped for output tile (i, j), ||alpha (A B) - alpha (A B)_kept||_F <= |alpha| sqrt(sum_ij
// d_ij^2), over every output tile with a candidate product (tiles where all were dropped
// included). The report gives sqrt(sum_ij d_ij^2) (without |alpha|); like the dense plan's bound,
// it covers the dropped products, not the floating-point rounding of the kept ones, nor the
// drop rule applied afterwards (report.dropped_norm, the norm of the tiles it removed).
// After a multiply C.dropped_norm() = report.dropped_norm + |beta| * (C's previous dropped
// norm) (beta != 0) or report.dropped_norm (beta == 0): by the triangle inequality it bounds the
// norm of everything dropped from C, at its construction and since.
//
// Complexity. from_dense: O(rows * cols). from_crs: O(nnz + kept tiles * tile^2 + tile_rows *
// tile_cols / 32) (the last term clears and scans bitmaps, one word per 32 tiles). to_crs:
// O(kept tiles * tile^2). multiply: symbolic O(candidate products + tile_rows * tile_cols / 32),
// numeric O(kept products * tile^3 + tiles of C * tiles of A's row * log), and for the error
// bound O(tiles whose products were all dropped * tiles of A's row * log) (with a large tau
// this approaches the symbolic cost of a dense product); memory O(tiles of C * tile^2) plus
// one int per output tile whose products were all dropped. The kernels are the portable
// TeamPolicy ones on every backend; the tile products run on a CUDA kernel of their own, and on
// the host spaces through the host BLAS where the build has it
// (block_sparse_multiply_options::implementation).
//
// Copies of a block_sparse_matrix share its arrays, as copies of a Kokkos::View do. multiply
// gives C new arrays (it never writes into C's old ones), so other copies of C keep the old
// matrix.
//
// Limits: extents up to 2^31 - 257 per dimension, and fewer than 2^31 stored tiles per matrix
// (and tiles of a dense input to from_dense); CRS matrices count entries with int.
//
// Every function takes the execution space instance first and runs all its kernels and
// allocations on it; each waits for it before returning (the host needs the counts).
// Arguments are checked on entry: nearsparse::invalid_argument names the function, the argument
// and the extents involved.

#include <nearsparse/core/crs_matrix.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/detail/block_sparse_conversions.hpp>
#include <nearsparse/spamm/detail/block_sparse_multiply.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace nearsparse::spamm {

/// How the drop threshold is measured.
enum class drop_rule {
  absolute,  ///< threshold = drop_tolerance
  relative   ///< threshold = drop_tolerance * ||A||_F (of the whole matrix before dropping)
};

/// Options of from_dense and from_crs.
struct block_sparse_options {
  /// Tile edge: 8, 16, 32, 64 or 128.
  int tile = 64;
  /// Tiles with Frobenius norm < threshold are dropped (0: only exactly zero tiles).
  double drop_tolerance = 0.0;
  drop_rule rule = drop_rule::relative;
};

/// Options of multiply on block-sparse matrices.
struct block_sparse_multiply_options {
  /// A tile product is kept when ||A[i,k]||_F ||B[k,j]||_F >= tau; 0 keeps every product.
  double tau = 0.0;
  /// The drop rule applied to the result's tiles (relative: to the result's ||C||_F).
  double drop_tolerance = 0.0;
  drop_rule rule = drop_rule::relative;
  /// Which code runs the tile products: `automatic` and `specialized` take, on CUDA, a kernel
  /// with one thread block per tile of C accumulating its kept products in registers, and on
  /// the host spaces (OpenMP, Serial) the host BLAS (one gemm per kept product, threads over C's
  /// tiles) where the build has OpenBLAS; `portable` (and every other backend) the TeamPolicy
  /// kernel.
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
};

/// What one block-sparse multiply did.
struct block_sparse_report {
  std::int64_t kept_products = 0;       ///< tile products with norm product >= tau
  std::int64_t candidate_products = 0;  ///< products of stored tiles A[i,k], B[k,j] in all
  std::int64_t tiles_kept = 0;          ///< tiles of C after the drop rule
  std::int64_t tiles_dropped = 0;       ///< tiles of C the drop rule removed
  /// sqrt(sum over output tiles of d_ij^2), d_ij the sum of the dropped products' norm
  /// products: bounds ||A B - (A B)_kept||_F (times |alpha| for the scaled product).
  double error_bound = 0.0;
  /// Frobenius norm of the tiles the drop rule removed from the result.
  double dropped_norm = 0.0;
  /// kept_products / candidate_products (1 when there is no candidate).
  double valid_ratio() const {
    return candidate_products > 0 ? double(kept_products) / double(candidate_products) : 1.0;
  }
};

namespace detail {

inline bool valid_block_sparse_tile(int t) {
  return t == 8 || t == 16 || t == 32 || t == 64 || t == 128;
}

inline void require_block_sparse_tile(const char* fn, const char* argument, int tile) {
  require(valid_block_sparse_tile(tile), fn, argument,
          nearsparse::detail::concat("is ", tile, "; the tile edge must be 8, 16, 32, 64 or 128"));
}

inline void require_block_sparse_extent(const char* fn, const char* argument, std::size_t rows,
                                        std::size_t cols) {
  constexpr std::size_t limit = std::size_t(std::numeric_limits<int>::max()) - 256;
  require(rows <= limit && cols <= limit, fn, argument,
          nearsparse::detail::concat("has extents ", rows, " x ", cols,
                                     ", beyond the supported extent ", limit));
}

/// Scalar, or the element type of AView when Scalar is void and that is float or double, or
/// double.
template <class Scalar, class AView>
using block_sparse_scalar_t = std::conditional_t<
    std::is_void<Scalar>::value,
    std::conditional_t<std::is_same<typename AView::non_const_value_type, float>::value ||
                           std::is_same<typename AView::non_const_value_type, double>::value,
                       typename AView::non_const_value_type, double>,
    Scalar>;

inline void require_drop_rule(const char* fn, const char* argument, drop_rule rule) {
  require(rule == drop_rule::absolute || rule == drop_rule::relative, fn, argument,
          "is not a drop_rule (absolute or relative)");
}

}  // namespace detail

/// A matrix stored as its kept square tiles in block-CSR form (see the top of this header).
template <class Scalar, class ExecSpace>
class block_sparse_matrix {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "nearsparse::spamm::block_sparse_matrix: Scalar must be float or double");
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::spamm::block_sparse_matrix: ExecSpace must be an execution space");

 public:
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using row_map_type = Kokkos::View<std::int64_t*, memory_space>;
  using column_indices_type = Kokkos::View<int*, memory_space>;
  using values_type = Kokkos::View<Scalar*, memory_space>;
  using norms_type = Kokkos::View<double*, memory_space>;
  using parts_type = detail::block_sparse_parts<Scalar, memory_space>;

  /// No arrays: a placeholder to assign to. Every function refuses it as an argument.
  block_sparse_matrix() = default;

  /// The rows x cols zero matrix (no stored tile) with tiles of `tile`.
  block_sparse_matrix(const ExecSpace& exec, int rows, int cols, int tile = 64) {
    constexpr const char* fn = "nearsparse::spamm::block_sparse_matrix";
    require(rows >= 0 && cols >= 0, fn, "rows",
            nearsparse::detail::concat("and cols must be >= 0, got ", rows, " x ", cols));
    detail::require_block_sparse_extent(fn, "rows", std::size_t(rows), std::size_t(cols));
    detail::require_block_sparse_tile(fn, "tile", tile);
    parts_.rows = rows;
    parts_.cols = cols;
    parts_.tile = tile;
    parts_.row_map = detail::bs_alloc<std::int64_t, memory_space>(
        exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(parts_.tile_rows()) + 1);
    parts_.cols_idx =
        detail::bs_alloc<int, memory_space>(exec, "nearsparse::spamm::block_sparse::cols", 0);
    parts_.values =
        detail::bs_alloc<Scalar, memory_space>(exec, "nearsparse::spamm::block_sparse::values", 0);
    parts_.norms =
        detail::bs_alloc<double, memory_space>(exec, "nearsparse::spamm::block_sparse::norms", 0);
    exec.fence();
  }

  /// From the arrays themselves (layout at the top of this header). Their extents are checked;
  /// their contents (ascending columns, norms matching the values, zero padding) are the
  /// caller's promise.
  block_sparse_matrix(int rows, int cols, int tile, const row_map_type& row_map,
                      const column_indices_type& column_indices, const values_type& values,
                      const norms_type& norms, double dropped_norm = 0.0) {
    constexpr const char* fn = "nearsparse::spamm::block_sparse_matrix";
    require(rows >= 0 && cols >= 0, fn, "rows",
            nearsparse::detail::concat("and cols must be >= 0, got ", rows, " x ", cols));
    detail::require_block_sparse_extent(fn, "rows", std::size_t(rows), std::size_t(cols));
    detail::require_block_sparse_tile(fn, "tile", tile);
    require_nonnegative(fn, "dropped_norm", dropped_norm);
    parts_.rows = rows;
    parts_.cols = cols;
    parts_.tile = tile;
    parts_.row_map = row_map;
    parts_.cols_idx = column_indices;
    parts_.values = values;
    parts_.norms = norms;
    parts_.dropped_norm = dropped_norm;
    check_structure(fn, "this");
  }

  int rows() const { return parts_.rows; }
  int cols() const { return parts_.cols; }
  int tile() const { return parts_.tile; }
  int tile_rows() const { return parts_.tile_rows(); }
  int tile_cols() const { return parts_.tile_cols(); }
  /// Stored (kept) tiles.
  std::int64_t kept_tiles() const { return std::int64_t(parts_.cols_idx.extent(0)); }
  /// kept_tiles() / (tile_rows() * tile_cols()), 0 for an empty matrix.
  double tile_density() const {
    const double all = double(tile_rows()) * double(tile_cols());
    return all > 0 ? double(kept_tiles()) / all : 0.0;
  }
  const row_map_type& row_map() const { return parts_.row_map; }
  const column_indices_type& column_indices() const { return parts_.cols_idx; }
  const values_type& values() const { return parts_.values; }
  const norms_type& norms() const { return parts_.norms; }
  /// Norm of what the drop rule removed (see the top of this header).
  double dropped_norm() const { return parts_.dropped_norm; }
  /// Bytes of the four arrays.
  std::size_t memory_bytes() const {
    return parts_.row_map.extent(0) * sizeof(std::int64_t) +
           parts_.cols_idx.extent(0) * sizeof(int) + parts_.values.extent(0) * sizeof(Scalar) +
           parts_.norms.extent(0) * sizeof(double);
  }
  /// Whether the arrays exist (false only for a default-constructed matrix).
  bool is_allocated() const { return parts_.row_map.extent(0) > 0; }

  /// The arrays and extents (the functions of this header work on them).
  const parts_type& parts() const { return parts_; }
  /// Replaces the arrays and extents (after checking their extents).
  void assign(const parts_type& parts, const char* function, const char* argument) {
    parts_type old = parts_;
    parts_ = parts;
    try {
      check_structure(function, argument);
    } catch (...) {
      parts_ = old;
      throw;
    }
  }

  /// Throws nearsparse::invalid_argument naming function and argument unless the extents of
  /// the arrays agree with each other and with the matrix's extents and tile.
  void check_structure(const char* function, const char* argument) const {
    require(is_allocated(), function, argument,
            "is a default-constructed block_sparse_matrix (no arrays): build it with from_dense, "
            "from_crs or the (exec, rows, cols, tile) constructor");
    const std::size_t n = parts_.cols_idx.extent(0);
    const std::size_t tt = std::size_t(parts_.tile) * std::size_t(parts_.tile);
    require(parts_.row_map.extent(0) == std::size_t(tile_rows()) + 1, function, argument,
            nearsparse::detail::concat("(", rows(), " x ", cols(), ", tile ", tile(),
                                       ") has a row_map of extent ", parts_.row_map.extent(0),
                                       ", expected tile_rows + 1 = ", tile_rows() + 1));
    require(parts_.norms.extent(0) == n && parts_.values.extent(0) == n * tt, function, argument,
            nearsparse::detail::concat("(", rows(), " x ", cols(), ", tile ", tile(), ") has ", n,
                                       " column indices, ", parts_.norms.extent(0), " norms and ",
                                       parts_.values.extent(0), " values; expected ", n, ", ", n,
                                       " and ", n * tt));
  }

 private:
  parts_type parts_;
};

namespace detail {

template <class ExecSpace, class Scalar>
std::string describe(const block_sparse_matrix<Scalar, ExecSpace>& m) {
  return nearsparse::detail::concat(m.rows(), " x ", m.cols(), " with tile ", m.tile());
}

inline void require_block_sparse_options(const char* fn, const block_sparse_options& opt) {
  require_block_sparse_tile(fn, "options.tile", opt.tile);
  require_nonnegative(fn, "options.drop_tolerance", opt.drop_tolerance);
  require_drop_rule(fn, "options.rule", opt.rule);
}

inline void require_non_finite_free(const char* fn, const char* argument, std::int64_t bad,
                                    const std::string& extents) {
  require(bad == 0, fn, argument,
          nearsparse::detail::concat("(", extents,
                                     ") holds non-finite values (NaN or Inf, or "
                                     "values whose squares overflow) in ",
                                     bad, " tiles"));
}

/// The operands of C = alpha * A * B + beta * C hold finite values (C only when beta != 0):
/// nearsparse::invalid_argument naming `fn` and the first that does not.
template <class Scalar, class ExecSpace>
void require_product_operands_finite(const ExecSpace& exec, const char* fn,
                                     const block_sparse_matrix<Scalar, ExecSpace>& a,
                                     const block_sparse_matrix<Scalar, ExecSpace>& b, bool with_c,
                                     const block_sparse_matrix<Scalar, ExecSpace>& c) {
  std::int64_t bad = 0;
  sum_of_squares(exec, a.norms(), bad);
  require_non_finite_free(fn, "A", bad, describe(a));
  sum_of_squares(exec, b.norms(), bad);
  require_non_finite_free(fn, "B", bad, describe(b));
  if (with_c) {
    sum_of_squares(exec, c.norms(), bad);
    require_non_finite_free(fn, "C", bad, describe(c));
  }
}

}  // namespace detail

/// The block-sparse form of the dense rank-2 View `a` (LayoutLeft, LayoutRight or strided,
/// any real element type), with the tiles that fail the drop rule of `options` removed. The
/// matrix holds Scalar: by default the View's type when float or double, double otherwise
/// (from_dense<float>(exec, a) converts).
template <class Scalar = void, class ExecSpace, class AView>
block_sparse_matrix<detail::block_sparse_scalar_t<Scalar, AView>, ExecSpace> from_dense(
    const ExecSpace& exec, const AView& a, const block_sparse_options& options = {}) {
  using scalar = detail::block_sparse_scalar_t<Scalar, AView>;
  constexpr const char* fn = "nearsparse::spamm::from_dense";
  static_assert_matrix<ExecSpace, AView>();
  static_assert(std::is_constructible<double, typename AView::non_const_value_type>::value,
                "nearsparse::spamm::from_dense: A must hold real values");
  detail::require_block_sparse_options(fn, options);
  detail::require_block_sparse_extent(fn, "A", a.extent(0), a.extent(1));
  const int rows = static_cast<int>(a.extent(0)), cols = static_cast<int>(a.extent(1));
  const std::size_t tiles = std::size_t((rows + options.tile - 1) / options.tile) *
                            std::size_t((cols + options.tile - 1) / options.tile);
  require(tiles <= std::size_t(std::numeric_limits<int>::max()), fn, "A",
          nearsparse::detail::concat("(", nearsparse::detail::extents_string(a), ") has ", tiles,
                                     " tiles of ", options.tile, ", more than the supported ",
                                     std::numeric_limits<int>::max()));
  typename block_sparse_matrix<scalar, ExecSpace>::parts_type parts;
  parts.rows = rows;
  parts.cols = cols;
  parts.tile = options.tile;
  const std::int64_t bad = detail::from_dense_impl(exec, a, options.drop_tolerance,
                                                   options.rule == drop_rule::relative, parts);
  detail::require_non_finite_free(fn, "A", bad, nearsparse::detail::extents_string(a));
  block_sparse_matrix<scalar, ExecSpace> m;
  m.assign(parts, fn, "A");
  return m;
}

/// Writes m into the dense rank-2 View `a` (m.rows() x m.cols(), float or double, any layout):
/// every element, zeros where m stores no tile.
template <class Scalar, class ExecSpace, class AView>
void to_dense(const ExecSpace& exec, const block_sparse_matrix<Scalar, ExecSpace>& m,
              const AView& a) {
  constexpr const char* fn = "nearsparse::spamm::to_dense";
  static_assert_matrix<ExecSpace, AView>();
  static_assert(!std::is_const<typename AView::value_type>::value,
                "nearsparse::spamm::to_dense: the output must be writable");
  m.check_structure(fn, "m");
  require_extents(fn, "A", a, std::size_t(m.rows()), std::size_t(m.cols()));
  detail::to_dense_impl(exec, m.parts(), a);
  exec.fence();
}

namespace detail {
/// Entry e of a CRS matrix's column indices: adds 1 to c when it lies outside [0, cols).
template <class Entries>
struct crs_column_check_kernel {
  Entries entries;
  int cols;

  KOKKOS_INLINE_FUNCTION void operator()(const int e, std::int64_t& c) const {
    if (entries(e) < 0 || entries(e) >= cols) ++c;
  }
};
}  // namespace detail

/// The block-sparse form of a CRS matrix (the library's crs_matrix, in any memory space exec
/// can reach): the tiles holding a nonzero, duplicates summed, then the drop rule of `options`.
/// Explicitly stored zeros are ignored.
template <class Scalar, class ExecSpace, class MemorySpace>
block_sparse_matrix<Scalar, ExecSpace> from_crs(const ExecSpace& exec,
                                                const crs_matrix<Scalar, ExecSpace, MemorySpace>& a,
                                                const block_sparse_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::from_crs";
  static_assert(
      is_accessible_from_v<ExecSpace,
                           typename crs_matrix<Scalar, ExecSpace, MemorySpace>::values_type>,
      "nearsparse::spamm::from_crs: the execution space cannot reach the matrix");
  detail::require_block_sparse_options(fn, options);
  const int rows = a.numRows(), cols = a.numCols();
  require(rows >= 0 && cols >= 0, fn, "A",
          nearsparse::detail::concat("has extents ", rows, " x ", cols));
  detail::require_block_sparse_extent(fn, "A", std::size_t(rows), std::size_t(cols));
  const auto row_map = a.graph.row_map;
  const auto entries = a.graph.entries;
  const auto values = a.values;
  const std::string extents = nearsparse::detail::concat(rows, " x ", cols);
  require(row_map.extent(0) == std::size_t(rows) + 1 || (rows == 0 && row_map.extent(0) == 0), fn,
          "A.graph.row_map",
          nearsparse::detail::concat("has extent ", row_map.extent(0), " for a matrix of ", extents,
                                     ", expected ", rows + 1));
  require(entries.extent(0) == values.extent(0), fn, "A.graph.entries",
          nearsparse::detail::concat("has extent ", entries.extent(0), " but A.values has ",
                                     values.extent(0)));
  // Column indices out of range would index the bitmaps out of bounds: count them first.
  std::int64_t bad_columns = 0;
  const int n = static_cast<int>(entries.extent(0));
  if (n > 0) {
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::from_crs_check",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        detail::crs_column_check_kernel<decltype(a.graph.entries)>{entries, cols}, bad_columns);
  }
  require(
      bad_columns == 0, fn, "A.graph.entries",
      nearsparse::detail::concat("holds ", bad_columns,
                                 " column indices outside [0, cols) for a matrix of ", extents));
  typename block_sparse_matrix<Scalar, ExecSpace>::parts_type parts;
  parts.rows = rows;
  parts.cols = cols;
  parts.tile = options.tile;
  std::int64_t bad = 0;
  if (rows > 0 && row_map.extent(0) > 0) {
    bad = detail::from_crs_impl(exec, row_map, entries, values, options.drop_tolerance,
                                options.rule == drop_rule::relative, parts);
  } else {
    parts.row_map = detail::bs_alloc<std::int64_t, typename ExecSpace::memory_space>(
        exec, "nearsparse::spamm::block_sparse::row_map", 1);
    parts.cols_idx = detail::bs_alloc<int, typename ExecSpace::memory_space>(
        exec, "nearsparse::spamm::block_sparse::cols", 0);
    parts.values = detail::bs_alloc<Scalar, typename ExecSpace::memory_space>(
        exec, "nearsparse::spamm::block_sparse::values", 0);
    parts.norms = detail::bs_alloc<double, typename ExecSpace::memory_space>(
        exec, "nearsparse::spamm::block_sparse::norms", 0);
  }
  detail::require_non_finite_free(fn, "A", bad, extents);
  exec.fence();
  block_sparse_matrix<Scalar, ExecSpace> m;
  m.assign(parts, fn, "A");
  return m;
}

/// The CRS form of m (the library's crs_matrix in ExecSpace's memory space): exact zeros
/// (the padding included) skipped, columns ascending in each row.
template <class Scalar, class ExecSpace>
crs_matrix<Scalar, ExecSpace> to_crs(const ExecSpace& exec,
                                     const block_sparse_matrix<Scalar, ExecSpace>& m) {
  constexpr const char* fn = "nearsparse::spamm::to_crs";
  using crs = crs_matrix<Scalar, ExecSpace>;
  using memory_space = typename ExecSpace::memory_space;
  m.check_structure(fn, "m");
  Kokkos::View<std::int64_t*, memory_space> offsets(
      Kokkos::view_alloc(exec, std::string("nearsparse::spamm::block_sparse::to_crs_offsets")),
      std::size_t(m.rows()) + 1);
  const std::int64_t nnz = detail::to_crs_count(exec, m.parts(), offsets);
  require(nnz <= std::numeric_limits<int>::max(), fn, "m",
          nearsparse::detail::concat("(", detail::describe(m), ") has ", nnz,
                                     " nonzeros; the CRS type counts them with int"));
  typename crs::row_map_type::non_const_type row_map(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::spamm::to_crs::row_map")),
      std::size_t(m.rows()) + 1);
  typename crs::index_type::non_const_type entries(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::spamm::to_crs::entries")),
      std::size_t(nnz));
  typename crs::values_type::non_const_type values(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::spamm::to_crs::values")),
      std::size_t(nnz));
  detail::to_crs_fill(exec, m.parts(), offsets, row_map, entries, values);
  exec.fence();
  return crs("nearsparse::spamm::to_crs", m.rows(), m.cols(), static_cast<int>(nnz), values,
             row_map, entries);
}

/// C = alpha * A * B + beta * C on block-sparse matrices by SpAMM: the tile products with
/// ||A[i,k]||_F ||B[k,j]||_F >= options.tau, then the drop rule of the options on C's tiles
/// (see the top of this header). C must be C.rows() = A.rows(), C.cols() = B.cols() with the
/// operands' tile (a zero matrix from the (exec, rows, cols, tile) constructor when beta == 0).
/// C may be A or B. C keeps its old arrays when an argument is refused or the result is not
/// finite. Where C before its drop rule (every tile with a product kept at tau) would need more
/// than the device's free memory, the symbolic phase refuses the product with
/// nearsparse::runtime_error giving its tiles and bytes, and so does the drop rule for the
/// compacted copy it makes beside it (CUDA device memory; on the host spaces an allocation that
/// does not fit fails in Kokkos).
template <class Scalar, class ExecSpace>
block_sparse_report multiply(const ExecSpace& exec,
                             typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type alpha,
                             const block_sparse_matrix<Scalar, ExecSpace>& a,
                             const block_sparse_matrix<Scalar, ExecSpace>& b,
                             typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type beta,
                             block_sparse_matrix<Scalar, ExecSpace>& c,
                             const block_sparse_multiply_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::multiply";
  a.check_structure(fn, "A");
  b.check_structure(fn, "B");
  c.check_structure(fn, "C");
  require(b.tile() == a.tile(), fn, "B",
          nearsparse::detail::concat("(", detail::describe(b), ") has tile ", b.tile(), ", but A (",
                                     detail::describe(a), ") has tile ", a.tile()));
  require(c.tile() == a.tile(), fn, "C",
          nearsparse::detail::concat("(", detail::describe(c), ") has tile ", c.tile(), ", but A (",
                                     detail::describe(a), ") has tile ", a.tile()));
  require(b.rows() == a.cols(), fn, "B",
          nearsparse::detail::concat("has extents ", b.rows(), " x ", b.cols(),
                                     ", but its rows must equal the columns of 'A' = ", a.cols(),
                                     " (A is ", a.rows(), " x ", a.cols(), ")"));
  require(c.rows() == a.rows() && c.cols() == b.cols(), fn, "C",
          nearsparse::detail::concat("has extents ", c.rows(), " x ", c.cols(), ", expected ",
                                     a.rows(), " x ", b.cols(), " (A is ", a.rows(), " x ",
                                     a.cols(), ", B is ", b.rows(), " x ", b.cols(), ")"));
  require(std::isfinite(double(alpha)), fn, "alpha", "must be finite");
  require(std::isfinite(double(beta)), fn, "beta", "must be finite");
  require_nonnegative(fn, "options.tau", options.tau);
  require_nonnegative(fn, "options.drop_tolerance", options.drop_tolerance);
  detail::require_drop_rule(fn, "options.rule", options.rule);
  detail::require_block_sparse_implementation(exec, fn, "options.implementation",
                                              options.implementation);
  detail::require_product_operands_finite(exec, fn, a, b, beta != Scalar(0), c);
  typename block_sparse_matrix<Scalar, ExecSpace>::parts_type result;
  result.rows = c.rows();
  result.cols = c.cols();
  result.tile = c.tile();
  const detail::product_counts counts = detail::multiply_impl(
      exec, alpha, a.parts(), b.parts(), beta, c.parts(), options.tau, options.drop_tolerance,
      options.rule == drop_rule::relative, result, fn, options.implementation);
  exec.fence();
  require(counts.non_finite == 0, fn, "A",
          nearsparse::detail::concat("times B (", detail::describe(a), " times ",
                                     detail::describe(b), ") gives non-finite values in ",
                                     counts.non_finite, " tiles of C (overflow)"));
  const double filtered = std::sqrt(counts.dropped_sq);
  result.dropped_norm =
      filtered + (beta != Scalar(0) ? std::abs(double(beta)) * c.dropped_norm() : 0.0);
  block_sparse_report report;
  report.kept_products = counts.kept_products;
  report.candidate_products = counts.candidate_products;
  report.tiles_dropped = counts.tiles_dropped;
  report.tiles_kept = counts.tiles_before_drop - counts.tiles_dropped;
  report.error_bound = std::sqrt(counts.bound_sq);
  report.dropped_norm = filtered;
  c.assign(result, fn, "C");
  return report;
}

}  // namespace nearsparse::spamm
