#pragma once
// The compiled part of nearsparse::io (src/io/): parsing and formatting on the host, instantiated
// for the four scalars the readers and writers take. The templates in io/*.hpp move data between
// these host buffers and Views.

#include <nearsparse/io/types.hpp>

#include <Kokkos_Complex.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace nearsparse::io::detail {

template <class Scalar>
inline constexpr bool is_io_scalar_v =
    std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float> ||
    std::is_same_v<Scalar, Kokkos::complex<double>> ||
    std::is_same_v<Scalar, Kokkos::complex<float>>;

header read_header(const std::string& path);

/// Throws nearsparse::invalid_argument when a rows x cols matrix of `scalar_bytes` elements
/// cannot be indexed (extents above what an int counts, a byte count beyond size_t).
void check_dense_size(const std::string& path, const header& h, std::size_t scalar_bytes);

template <class Scalar>
host_crs<Scalar> read_host_crs(const std::string& path, const read_options& options);

/// Reads the file into zero-filled host memory: element (i, j) at data[i * rs + j * cs]. Throws
/// when the file's header is not `expected` (it changed since it was read).
template <class Scalar>
void read_host_dense(const std::string& path, const read_options& options, const header& expected,
                     Scalar* data, std::ptrdiff_t rs, std::ptrdiff_t cs);

/// Writes a column-major rows x cols matrix.
template <class Scalar>
void write_host_dense(const std::string& path, std::int64_t rows, std::int64_t cols,
                      const Scalar* data, const write_options& options);

template <class Scalar>
void write_host_crs(const std::string& path, const host_crs<Scalar>& m,
                    const write_options& options);

/// The first element (row, column, 0-based) that breaks a(j, i) = conj(a(i, j)) (for real
/// scalars: a(j, i) = a(i, j)), or nothing when the matrix is Hermitian.
template <class Scalar>
std::optional<std::pair<std::int64_t, std::int64_t>> hermitian_mismatch(const host_crs<Scalar>& m);

#define NEARSPARSE_IO_EXTERN(S)                                                                   \
  extern template host_crs<S> read_host_crs<S>(const std::string&, const read_options&);          \
  extern template void read_host_dense<S>(const std::string&, const read_options&, const header&, \
                                          S*, std::ptrdiff_t, std::ptrdiff_t);                    \
  extern template void write_host_dense<S>(const std::string&, std::int64_t, std::int64_t,        \
                                           const S*, const write_options&);                       \
  extern template void write_host_crs<S>(const std::string&, const host_crs<S>&,                  \
                                         const write_options&);                                   \
  extern template std::optional<std::pair<std::int64_t, std::int64_t>> hermitian_mismatch<S>(     \
      const host_crs<S>&);
NEARSPARSE_IO_EXTERN(double)
NEARSPARSE_IO_EXTERN(float)
NEARSPARSE_IO_EXTERN(Kokkos::complex<double>)
NEARSPARSE_IO_EXTERN(Kokkos::complex<float>)
#undef NEARSPARSE_IO_EXTERN

}  // namespace nearsparse::io::detail
