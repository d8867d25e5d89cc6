#pragma once
// The compressed-row sparse matrix type every family exchanges: Kokkos Kernels' CrsMatrix with
// int row offsets and int column indices (what cuSPARSE and Kokkos Kernels' spgemm and spmv take).

#include <KokkosSparse_CrsMatrix.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse {

/// CRS matrix of Scalar on ExecSpace, its arrays in MemorySpace.
template <class Scalar, class ExecSpace, class MemorySpace = typename ExecSpace::memory_space>
using crs_matrix =
    KokkosSparse::CrsMatrix<Scalar, int, Kokkos::Device<ExecSpace, MemorySpace>, void, int>;

}  // namespace nearsparse
