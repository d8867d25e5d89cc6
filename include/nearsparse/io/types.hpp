#pragma once
// The vocabulary of nearsparse::io: what a Matrix Market header says, the options of the readers
// and writers, and the host compressed-row form a file is read into.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nearsparse::io {

/// coordinate: one line per stored entry (i j [value]); array: every value, column by column.
enum class format { coordinate, array };
/// What each entry holds: one real, one integer, nothing (pattern: the value is 1), or a real and
/// an imaginary part.
enum class field { real, integer, complex, pattern };
/// general: every entry stored; the others store the lower triangle (i >= j; i > j for
/// skew-symmetric) and imply a(j, i) = a(i, j), -a(i, j) or conj(a(i, j)).
enum class symmetry { general, symmetric, skew_symmetric, hermitian };

/// True when this build reads and writes .gz files (zlib).
bool gzip_supported();

const char* to_string(format f);
const char* to_string(field f);
const char* to_string(symmetry s);

/// The banner and size line of a file.
struct header {
  io::format format = io::format::coordinate;
  io::field field = io::field::real;
  io::symmetry symmetry = io::symmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// Stored entries: the count on the size line of a coordinate file; the values an array file
  /// stores (rows * cols, or a triangle for the symmetric kinds).
  std::int64_t entries = 0;
};

/// Where a long read or write stands; the callback runs after every block.
struct progress {
  std::uint64_t bytes_done = 0;   ///< of the file (compressed bytes for .gz files)
  std::uint64_t bytes_total = 0;  ///< the file's size; 0 where unknown
  std::int64_t entries_done = 0;
  std::int64_t entries_total = 0;
};
using progress_callback = std::function<void(const progress&)>;

struct read_options {
  /// Threads that parse a block: 0 takes the OpenMP thread count (OMP_NUM_THREADS) where the
  /// library is built with OpenMP, else the hardware's.
  int threads = 0;
  /// Text read and parsed at a time (at least 64 bytes; a longer line grows it).
  std::size_t block_bytes = std::size_t(32) << 20;
  /// Called after every block of text parsed.
  progress_callback progress;
};

struct write_options {
  /// Dense matrices: array (every value, column by column) or coordinate (the nonzeros). Sparse
  /// matrices are always written as coordinate files.
  io::format format = io::format::array;
  /// The field written; empty: real for real scalars, complex for complex ones. integer needs
  /// integral values, pattern writes the positions only, real refuses nonzero imaginary parts.
  std::optional<io::field> field;
  /// Anything but general writes the lower triangle, after checking that the matrix has this
  /// symmetry exactly (nearsparse::invalid_argument naming an element that breaks it otherwise).
  io::symmetry symmetry = io::symmetry::general;
  /// Comment lines written after the banner ('%' is put in front of each line).
  std::string comment;
  /// Threads that format the text: 0 as in read_options.
  int threads = 0;
  /// zlib compression level of .gz files, 1 (fast) .. 9 (small).
  int gzip_level = 6;
  /// Called after every block of text written.
  progress_callback progress;
};

namespace detail {

/// Compressed rows in host memory; see nearsparse::io::host_crs.
template <class Scalar>
struct host_crs {
  std::string path;  ///< the file read, or written
  header file;       ///< the file's header (for a read)
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row_offsets;  ///< rows + 1 entries
  std::vector<std::int32_t> columns;      ///< 0-based
  std::vector<Scalar> values;
  std::int64_t nonzeros() const { return std::int64_t(values.size()); }
};

}  // namespace detail

}  // namespace nearsparse::io
