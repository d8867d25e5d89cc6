#pragma once
// Options of the TLR compression, products and batched SVD, the reports they fill, and the checks
// that turn a bad value into an error naming it.

#include <nearsparse/core/implementation.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nearsparse::tlr {

/// How a tile's rank is chosen: a fixed rank (fixed_rank >= 0) or the smallest rank whose
/// truncation error stays within `accuracy` (fixed_rank < 0). Either way the rank never exceeds
/// the matrix's max_rank; a tile that would need more keeps max_rank and reports the error made.
struct truncation {
  /// Relative accuracy: compression keeps |A - A_tlr|_F <= accuracy * |A|_F for the whole
  /// matrix (each tile gets an equal share); recompression in the products keeps each tile
  /// within accuracy times its own Frobenius norm.
  double accuracy = 1e-8;
  /// >= 0: every tile gets this rank (at most max_rank and the tile's extents).
  int fixed_rank = -1;
};

enum class compression_method {
  /// Randomized SVD (range finder with oversampling and power iterations, then one-sided Jacobi on
  /// the small projected matrix): O(tile^2 * (rank + oversampling)) per tile.
  randomized,
  /// Exact one-sided Jacobi SVD of the whole tile: O(tile^3) per sweep, for tiles up to a few
  /// hundred; the reference the randomized method is tested against.
  svd,
};

struct compression_options {
  compression_method method = compression_method::randomized;
  truncation trunc;
  /// The most any tile may have; also the width of the factor storage.
  int max_rank = 32;
  /// Keep the diagonal tiles dense (they have full rank in covariance matrices).
  bool dense_diagonal = false;
  /// Randomized method: extra sample columns beyond max_rank (at most 2^20; the samples are
  /// clamped to the tile), and power iterations (at most 16).
  int oversampling = 10;
  int power_iterations = 1;
  std::uint64_t seed = 20181;
  /// Bound on the workspace of one launch; tiles are compressed in as many launches as it takes.
  /// The batched path on Kokkos::Cuda holds a copy of each tile of a launch (8 MiB for a tile of
  /// 1024): its kernels run one team per tile, so fewer, larger launches keep more of the GPU busy.
  std::size_t workspace_bytes = std::size_t(4) << 30;
  /// automatic: on Kokkos::OpenMP and Kokkos::Serial with OpenBLAS, LAPACK and BLAS on each tile
  /// (one thread per tile); on Kokkos::Cuda with device memory and the randomized method, the
  /// method batched over all tiles (every product with the tiles one cuBLAS strided-batched
  /// DGEMM, the orthonormalizations Householder QRs of one thread block per tile, the small SVDs
  /// in team kernels); both with the same method,
  /// Omega and truncation rule as the portable kernels; the portable kernels elsewhere. portable:
  /// the Kokkos team-policy kernels; specialized: the path above, nearsparse::unsupported where it
  /// is not there (other backends, no OpenBLAS, or the exact method on Kokkos::Cuda).
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
};

/// What a compression made.
struct compression_report {
  std::size_t tiles = 0, dense_tiles = 0;
  int min_rank = 0, max_rank = 0;
  double mean_rank = 0;
  /// Low-rank tiles that needed more than max_rank for the requested accuracy.
  std::size_t tiles_at_cap = 0;
  /// Estimated |A - A_tlr|_F (exact for the svd method), and relative to |A|_F.
  double error = 0, relative_error = 0;
  double norm = 0;
  std::size_t compressed_bytes = 0, dense_bytes = 0;
  /// The accuracy asked for (options.trunc.accuracy), or -1 for a fixed rank (no accuracy asked).
  double requested_accuracy = -1;
  /// Whether relative_error is within requested_accuracy (always true for a fixed rank). False
  /// when the rank cap kept tiles from their share of the error budget (tiles_at_cap > 0) by
  /// more than the other tiles made up for: the compression is then less accurate than asked.
  bool accuracy_met = true;
};

struct gemm_options {
  /// Truncation of the recompression in products with a TLR C.
  truncation trunc{1e-10, -1};
  /// automatic: the specialized path where there is one, the portable kernels elsewhere; portable:
  /// the Kokkos team-policy kernels; specialized: the specialized path, nearsparse::unsupported
  /// where it is not there. Specialized paths: on Kokkos::Cuda with device memory, cuBLAS batched
  /// GEMMs; for a dense C they gather the outer products, for a TLR C each C tile's products are
  /// summed into a dense tile and the tiles are recompressed once, in batches within
  /// workspace_bytes, by the batched randomized SVD of the compression (oversampling 10 beyond
  /// C's max_rank, one power iteration, the error measured). On Kokkos::OpenMP and Kokkos::Serial
  /// with OpenBLAS, one thread per C tile: its outer products gathered into BLAS-3 GEMMs (dense
  /// C), or summed into the dense tile and recompressed once by the same randomized SVD with
  /// LAPACK (TLR C).
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  /// Outer products gathered into one batched call (cuBLAS) or one GEMM per C tile (host) by the
  /// specialized path of the dense-C product: 1 is one call per outer product (nt calls); 0
  /// chooses the most that workspace_bytes allows, which reads and writes C fewer times.
  int outer_products_per_call = 0;
  /// Bound on the workspace of one launch, or on Kokkos::Cuda of one batch of C tiles (the
  /// recompression of a TLR C there holds each C tile of a batch dense; the memory is released
  /// when the call returns, except the dense-C path's product blocks, kept per stream).
  std::size_t workspace_bytes = std::size_t(4) << 30;
};

/// What a product with a TLR C made.
struct gemm_report {
  int max_rank = 0;
  double mean_rank = 0;
  /// Tiles of C whose recompression needed more than C's max_rank at some step.
  std::size_t tiles_at_cap = 0;
  /// Estimated Frobenius norm of everything the recompressions dropped.
  double dropped = 0;
};

/// Options of the batched SVD (batched_svd.hpp).
struct batched_svd_options {
  /// automatic: cuSOLVER gesvdjBatched on Kokkos::Cuda with device memory for shapes where it
  /// pays (m, n <= 32 and min(m, n) >= 24), LAPACK's gesvd on each matrix (one thread per matrix)
  /// on Kokkos::OpenMP and Kokkos::Serial with OpenBLAS, the portable kernel otherwise; portable:
  /// the portable kernel; specialized: cuSOLVER for every shape it takes (m, n <= 32) or LAPACK,
  /// nearsparse::unsupported where neither is there or the shape does not fit cuSOLVER.
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  /// Jacobi sweeps before a matrix counts as not converged.
  int max_sweeps = 100;
  /// Bound on the workspace of one launch of the portable kernel.
  std::size_t workspace_bytes = std::size_t(1) << 30;
};

/// What a batched SVD did.
struct batched_svd_report {
  /// The path taken: "portable", "cusolver gesvdjBatched" or "lapack gesvd".
  std::string kernel;
  /// Matrices whose Jacobi iteration stopped at max_sweeps (their results are still returned).
  std::size_t not_converged = 0;
  /// The most sweeps any matrix took (portable path; cuSOLVER and LAPACK do not report it: -1).
  int max_sweeps_used = -1;
};

/// "randomized", "svd".
const char* to_string(compression_method method);

/// Parses the names above (case-insensitive); throws nearsparse::invalid_argument naming
/// `function` and `argument` and listing the accepted names otherwise.
compression_method parse_compression_method(
    const std::string& name, const char* function = "nearsparse::tlr::parse_compression_method",
    const char* argument = "method");

namespace detail {
/// Throws nearsparse::invalid_argument naming the field unless the options are valid for a matrix
/// with the given tile size.
void validate(const char* function, const compression_options& options, std::size_t tile);
void validate(const char* function, const truncation& trunc, int max_rank);
void validate(const char* function, const gemm_options& options);
}  // namespace detail

}  // namespace nearsparse::tlr
