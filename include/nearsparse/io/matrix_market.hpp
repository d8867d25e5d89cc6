#pragma once
// Matrix Market input and output (https://math.nist.gov/MatrixMarket/formats.html).
//
//   auto A = nearsparse::io::read_dense<Kokkos::View<double**, Kokkos::LayoutLeft>>(exec, "A.mtx");
//   auto H = nearsparse::io::read_crs<double>(exec, "H.mtx.gz");
//   nearsparse::io::write_dense(exec, "C.mtx", C);
//
// Files: the coordinate (sparse) and array (dense, column-major) formats; real, integer, pattern
// and complex fields; general, symmetric, skew-symmetric and Hermitian symmetry. Symmetric files
// store the lower triangle (for array files too) and are expanded on read; writers store the
// lower triangle when write_options::symmetry asks for it (after checking the matrix has that
// symmetry). Files whose name ends in .gz (or that start with the gzip magic bytes) go through
// zlib when the build has it (NEARSPARSE_ENABLE_ZLIB), else they get nearsparse::unsupported.
//
// Reading streams: the text is parsed in blocks of read_options::block_bytes, each split at line
// ends over several threads; the whole text is never held. Peak memory of a sparse read is the
// file's entries (rows, columns and values) plus the final matrix; a dense read needs the dense
// matrix and one block.
//
// Rules a file must follow (anything else is a nearsparse::invalid_argument naming the file, the
// line and the problem): a valid banner; a size line whose counts agree with the entries that
// follow (neither fewer nor more); 1-based indices inside the matrix; numeric tokens only, each
// entry on its own line with exactly the fields its field type needs; finite values; symmetric,
// skew-symmetric and Hermitian files square, with no entry above the diagonal, no nonzero
// diagonal in a skew-symmetric file and real diagonals in a Hermitian one. Blank lines and lines
// starting with '%' are skipped anywhere; spaces, tabs and carriage returns separate tokens.
// Entries naming the same element are summed (the assembly convention).
//
// Which files fit which destination scalar: a real destination (double, float) takes real,
// integer and pattern files (pattern entries are 1) and refuses complex and Hermitian files; a
// complex destination (Kokkos::complex<double>, Kokkos::complex<float>) takes every field, real
// values getting a zero imaginary part. Values beyond the destination's range (1e300 into float)
// are refused like Inf.

#include <nearsparse/core/crs_matrix.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/io/detail/matrix_market_core.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace nearsparse::io {

/// The scalars the readers and writers take: double, float and their Kokkos::complex.
template <class Scalar>
inline constexpr bool is_io_scalar_v = detail::is_io_scalar_v<Scalar>;

/// A matrix read into host memory as compressed rows: row i's entries are
/// columns[row_offsets[i] .. row_offsets[i+1]) with their values, columns ascending, each
/// element once (duplicates summed), symmetric files expanded. `file` is the file's header.
using detail::host_crs;

namespace detail {

template <class Scalar, class ExecSpace, class MemorySpace>
crs_matrix<Scalar, ExecSpace, MemorySpace> crs_from_host(const ExecSpace& exec,
                                                         const host_crs<Scalar>& h,
                                                         const char* function) {
  using crs = crs_matrix<Scalar, ExecSpace, MemorySpace>;
  const std::int64_t nnz = h.row_offsets.empty() ? 0 : h.row_offsets.back();
  require(nnz <= std::numeric_limits<int>::max(), function, "file",
          nearsparse::detail::concat("'", h.path, "' (", h.rows, " x ", h.cols, ") has ", nnz,
                                     " entries; the CRS type counts them with int"));
  typename crs::row_map_type::non_const_type row_map(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::io::row_map")),
      std::size_t(h.rows) + 1);
  typename crs::index_type::non_const_type entries(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::io::entries")),
      std::size_t(nnz));
  typename crs::values_type::non_const_type values(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("nearsparse::io::values")),
      std::size_t(nnz));
  auto host_map = Kokkos::create_mirror_view(row_map);
  auto host_entries = Kokkos::create_mirror_view(entries);
  auto host_values = Kokkos::create_mirror_view(values);
  exec.fence();  // a host mirror may alias the allocations above
  for (std::size_t i = 0; i < host_map.extent(0); ++i)
    host_map(i) = h.row_offsets.empty() ? 0 : int(h.row_offsets[i]);
  if (nnz > 0) {
    std::memcpy(host_entries.data(), h.columns.data(), std::size_t(nnz) * sizeof(int));
    std::memcpy(static_cast<void*>(host_values.data()), h.values.data(),
                std::size_t(nnz) * sizeof(Scalar));
  }
  Kokkos::deep_copy(exec, row_map, host_map);
  Kokkos::deep_copy(exec, entries, host_entries);
  Kokkos::deep_copy(exec, values, host_values);
  exec.fence();  // the host mirrors die here
  return crs("nearsparse::io::crs", int(h.rows), int(h.cols), int(nnz), values, row_map, entries);
}

}  // namespace detail

/// Reads the banner and the size line of a Matrix Market file.
inline header read_header(const std::string& path) {
  return detail::read_header(path);
}

/// Reads a Matrix Market file (either format) into host compressed rows of Scalar.
template <class Scalar>
host_crs<Scalar> read_host_crs(const std::string& path, const read_options& options = {}) {
  static_assert(is_io_scalar_v<Scalar>,
                "nearsparse::io::read_host_crs: Scalar must be double, float or their "
                "Kokkos::complex");
  return detail::read_host_crs<Scalar>(path, options);
}

/// The first element (row, column; 0-based) of a square matrix that breaks a(j, i) = conj(a(i, j))
/// (a(j, i) = a(i, j) for real scalars), or nothing when the matrix is Hermitian (symmetric). A
/// rectangular matrix gives (0, 0).
template <class Scalar>
std::optional<std::pair<std::int64_t, std::int64_t>> hermitian_mismatch(const host_crs<Scalar>& m) {
  return detail::hermitian_mismatch<Scalar>(m);
}

/// Copies host compressed rows into the library's CRS type on exec (core/crs_matrix.hpp).
template <class ExecSpace, class Scalar>
crs_matrix<Scalar, ExecSpace> to_crs(const ExecSpace& exec, const host_crs<Scalar>& h) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::to_crs: the first argument must be an execution space instance");
  return detail::crs_from_host<Scalar, ExecSpace, typename ExecSpace::memory_space>(
      exec, h, "nearsparse::io::to_crs");
}

/// Reads a Matrix Market file (either format) into the library's CRS type (Kokkos Kernels'
/// CrsMatrix with int offsets) in MemorySpace: columns ascending in each row, duplicates summed,
/// symmetric files expanded. An array file stores every value (zeros included).
template <class Scalar, class ExecSpace, class MemorySpace = typename ExecSpace::memory_space>
crs_matrix<Scalar, ExecSpace, MemorySpace> read_crs(const ExecSpace& exec, const std::string& path,
                                                    const read_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::read_crs: the first argument must be an execution space instance");
  static_assert(is_io_scalar_v<Scalar>,
                "nearsparse::io::read_crs: Scalar must be double, float or their Kokkos::complex");
  const auto h = detail::read_host_crs<Scalar>(path, options);
  return detail::crs_from_host<Scalar, ExecSpace, MemorySpace>(exec, h, "nearsparse::io::read_crs");
}

/// Reads a Matrix Market file (either format) into a new dense View of type View (rank 2,
/// LayoutLeft or LayoutRight, any memory space exec can reach), through a host mirror. Coordinate
/// entries are summed into a zero matrix.
template <class View, class ExecSpace>
View read_dense(const ExecSpace& exec, const std::string& path, const read_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::read_dense: the first argument must be an execution space "
                "instance");
  static_assert(Kokkos::is_view<View>::value && View::rank == 2,
                "nearsparse::io::read_dense: View must be a rank-2 Kokkos::View");
  using scalar = typename View::non_const_value_type;
  static_assert(is_io_scalar_v<scalar>,
                "nearsparse::io::read_dense: the View must hold double, float or their "
                "Kokkos::complex");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft> ||
                    std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "nearsparse::io::read_dense: the View must be LayoutLeft or LayoutRight");
  const header h = detail::read_header(path);
  detail::check_dense_size(path, h, sizeof(scalar));
  View out(Kokkos::view_alloc(exec, std::string("nearsparse::io::dense")), std::size_t(h.rows),
           std::size_t(h.cols));
  auto host = Kokkos::create_mirror_view(out);
  exec.fence();  // zero-filled before the host writes
  // The entries are summed into the host matrix, which must start at zero.
  if (host.data() != out.data()) Kokkos::deep_copy(host, scalar(0));
  const bool left = std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>;
  const std::ptrdiff_t rs = left ? 1 : std::ptrdiff_t(h.cols);
  const std::ptrdiff_t cs = left ? std::ptrdiff_t(h.rows) : 1;
  detail::read_host_dense<scalar>(path, options, h, host.data(), rs, cs);
  Kokkos::deep_copy(exec, out, host);
  exec.fence();
  return out;
}

/// Writes a dense rank-2 View (any layout, any memory space exec can reach) as Matrix Market:
/// the array format by default (write_options::format), or the coordinate format with the
/// nonzero elements.
template <class ExecSpace, class View>
void write_dense(const ExecSpace& exec, const std::string& path, const View& a,
                 const write_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::write_dense: the first argument must be an execution space "
                "instance");
  static_assert(Kokkos::is_view<View>::value && View::rank == 2,
                "nearsparse::io::write_dense: A must be a rank-2 Kokkos::View");
  using scalar = typename View::non_const_value_type;
  static_assert(is_io_scalar_v<scalar>,
                "nearsparse::io::write_dense: A must hold double, float or their Kokkos::complex");
  // A contiguous LayoutLeft host copy: the writer walks it column by column.
  Kokkos::View<scalar**, Kokkos::LayoutLeft, Kokkos::HostSpace> host(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::io::write_dense")),
      a.extent(0), a.extent(1));
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft> &&
                Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename View::memory_space>::accessible) {
    Kokkos::deep_copy(exec, host, a);
  } else {
    auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    for (std::size_t j = 0; j < a.extent(1); ++j)
      for (std::size_t i = 0; i < a.extent(0); ++i) host(i, j) = mirror(i, j);
  }
  exec.fence();
  detail::write_host_dense<scalar>(path, std::int64_t(a.extent(0)), std::int64_t(a.extent(1)),
                                   host.data(), options);
}

/// Writes host compressed rows as a coordinate Matrix Market file.
template <class Scalar>
void write_host_crs(const std::string& path, const host_crs<Scalar>& m,
                    const write_options& options = {}) {
  detail::write_host_crs<Scalar>(path, m, options);
}

/// Writes a CRS matrix (Kokkos Kernels CrsMatrix, any memory space exec can reach) as a
/// coordinate Matrix Market file, row by row in stored order.
template <class ExecSpace, class Crs>
void write_crs(const ExecSpace& exec, const std::string& path, const Crs& a,
               const write_options& options = {}) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "nearsparse::io::write_crs: the first argument must be an execution space "
                "instance");
  using scalar = typename Crs::non_const_value_type;
  static_assert(is_io_scalar_v<scalar>,
                "nearsparse::io::write_crs: the matrix must hold double, float or their "
                "Kokkos::complex");
  exec.fence();
  auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.row_map);
  auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.graph.entries);
  auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values);
  host_crs<scalar> h;
  h.path = path;
  h.rows = a.numRows();
  h.cols = a.numCols();
  const std::size_t nnz = vals.extent(0);
  require(
      a.numRows() == 0 || map.extent(0) == std::size_t(a.numRows()) + 1,
      "nearsparse::io::write_crs", "A",
      nearsparse::detail::concat("has ", map.extent(0), " row offsets for ", a.numRows(), " rows"));
  h.row_offsets.assign(std::size_t(h.rows) + 1, 0);
  for (std::size_t i = 0; i < map.extent(0) && i <= std::size_t(h.rows); ++i)
    h.row_offsets[i] = std::int64_t(map(i));
  h.columns.assign(cols.data(), cols.data() + cols.extent(0));
  h.values.assign(vals.data(), vals.data() + nnz);
  detail::write_host_crs<scalar>(path, h, options);
}

}  // namespace nearsparse::io
