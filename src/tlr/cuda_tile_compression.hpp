#pragma once
// The truncated SVD of a batch of dense tiles on Kokkos::Cuda, shared by the compression of a
// dense matrix (cuda_compression.cpp) and the recompression of a TLR C in products
// (cuda_lll.cpp). The method is the portable kernel's randomized SVD
// (compression_kernels.hpp, randomized_compression), batched over all tiles: the products with
// the tiles are cuBLAS strided-batched DGEMMs, the orthonormalizations are Householder QRs of one
// block per tile, the SVD of B^T goes through its QR to a Jacobi SVD of its ell x ell R (one team
// per tile), and the residual T - Q B is formed by one more batched DGEMM.
//
// The tiles are packed: tile g (0 <= g < count) is nb x nb, column-major (leading dimension nb),
// at packed + g * nb * nb, zero beyond its extents. The factors go to the TLR storage of the
// destination tile number tiles[g]: U and V at u + t * nb * kmax (nb x kmax, leading dimension
// nb; rows beyond the extents and columns beyond the rank zero), ranks[t], errors[t].

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace nearsparse::tlr::detail::cuda_tiles {

/// The packed tiles and the geometry of the matrix they belong to (the extents of tile t).
struct packed_tiles {
  double* packed = nullptr;  // count * nb * nb doubles, overwritten
  int count = 0, nb = 0;
  const int* tiles = nullptr;  // device array of count destination tile numbers
  int tile_rows = 0, rows = 0, cols = 0;
};

/// Where the factors go (device arrays indexed by tile number).
struct tile_factors {
  double* u = nullptr;
  double* v = nullptr;
  int kmax = 0;
  int* ranks = nullptr;
  double* errors = nullptr;      // the Frobenius error of each tile's truncation
  double* tolerances = nullptr;  // optional: the absolute tolerance each tile was held to
};

/// How ranks are chosen (choose_rank in team_linalg.hpp) and the sampling.
struct sampling_rule {
  int fixed_rank = -1;
  /// >= 0: each tile's absolute Frobenius tolerance; < 0: -tolerance times the tile's own
  /// Frobenius norm (the recompression of products).
  double tolerance = 0;
  int ell = 0;  // samples, at most nb
  int power_iterations = 1;
  std::uint64_t seed = 0;  // Omega of tile t from omega_stream(seed, t) (team_linalg.hpp)
};

/// Doubles of workspace per tile beside the packed tile itself.
std::size_t workspace_doubles_per_tile(int nb, int ell);

/// Compresses the packed tiles, queued on exec's stream without a host synchronization; `work`
/// holds count * workspace_doubles_per_tile(nb, ell) doubles of device memory and stays in use
/// until the queued work has run. Throws nearsparse::runtime_error naming `function` when CUDA
/// or cuBLAS fails.
void compress_packed(const Kokkos::Cuda& exec, const char* function, const packed_tiles& in,
                     const tile_factors& out, const sampling_rule& rule, double* work);

}  // namespace nearsparse::tlr::detail::cuda_tiles
