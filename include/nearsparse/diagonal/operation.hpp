#pragma once
// How an operand enters a product, and which HM product kernel runs.

namespace nearsparse::diagonal {

/// An operand as stored, or transposed. A transposed operand is read through its reversed
/// diagonals (offset d read as -d; compact diagonal k read as n - k): no data moves.
enum class op { none, transpose };

/// Kernels for the HM (structured-sparse) product. Both compute the same C.
enum class hm_algorithm {
  /// One thread per element of C, summing the pairs of diagonals of A and B that meet there.
  /// No atomics; deterministic. The default. On CUDA, operands that fill most of their diagonal
  /// range (bands) are multiplied in dense tiles of C instead (hm_product_plan::band_tiles).
  output_stationary,
  /// One thread per stored element of A, adding its products into C with atomics (the published
  /// algorithm). The order of the additions, hence the last bits of C, may vary between runs.
  atomic
};

/// Whether a new matrix's values are set to zero or left unset (to be overwritten).
enum class values_init { zero, uninitialized };

/// "none" or "transpose".
const char* to_string(op operation);
/// "output_stationary" or "atomic".
const char* to_string(hm_algorithm algorithm);

}  // namespace nearsparse::diagonal
