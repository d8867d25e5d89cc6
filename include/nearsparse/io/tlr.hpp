#pragma once
// Matrix Market files in and out of tile low-rank form: a file is read as a dense matrix and
// compressed (tlr/compression.hpp); a TLR matrix is written as the dense matrix it stands for.

#include <nearsparse/io/matrix_market.hpp>
#include <nearsparse/tlr/compression.hpp>
#include <nearsparse/tlr/options.hpp>
#include <nearsparse/tlr/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace nearsparse::io {

/// Reads a real Matrix Market file (either format) as a dense matrix in exec's memory space and
/// compresses it into tile x tile tiles with `compression` (see nearsparse::tlr::compress, which
/// fills `report`).
template <class ExecSpace>
tlr::tlr_matrix<typename ExecSpace::memory_space> read_tlr(
    const ExecSpace& exec, const std::string& path, std::size_t tile,
    const tlr::compression_options& compression, tlr::compression_report& report,
    const read_options& options = {}) {
  using mem = typename ExecSpace::memory_space;
  const auto dense =
      read_dense<Kokkos::View<double**, Kokkos::LayoutLeft, mem>>(exec, path, options);
  return tlr::compress(exec, dense, tile, compression, report);
}

/// Writes the dense matrix a TLR matrix stands for (write_options::format: array by default).
template <class ExecSpace, class Mem>
void write_tlr(const ExecSpace& exec, const std::string& path, const tlr::tlr_matrix<Mem>& a,
               const write_options& options = {}) {
  write_dense(exec, path, tlr::to_dense(exec, a), options);
}

}  // namespace nearsparse::io
