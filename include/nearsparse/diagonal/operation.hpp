#pragma once
// How an operand enters a product, which HM product kernel runs, and the options every product
// entry point takes.

#include <nearsparse/core/implementation.hpp>

#include <string>

namespace nearsparse::diagonal {

/// An operand as stored, or transposed. A transposed operand is read through its reversed
/// diagonals (offset d read as -d; compact diagonal k read as n - k): no data moves.
enum class op { none, transpose };

/// Kernels for the HM (structured-sparse) product. Both compute the same C.
enum class hm_algorithm {
  /// One thread per element of C, summing the pairs of diagonals of A and B that meet there.
  /// No atomics; deterministic. The default. Its specialized path on CUDA multiplies operands
  /// that fill most of their diagonal range (bands) in dense tiles of C
  /// (hm_product_plan::band_tiles) and small whole products in one fused kernel; on OpenMP and
  /// Serial it sums several pairs of diagonals per pass over blocks of C, with no plan for a whole
  /// product.
  output_stationary,
  /// One thread per stored element of A, adding its products into C with atomics (the published
  /// algorithm). The order of the additions, hence the last bits of C, may vary between runs.
  /// Portable only.
  atomic
};

/// Options of the HM and CDM products (multiply with or without a plan).
struct product_options {
  /// Which code runs the product (core/implementation.hpp). The specialized paths: on CUDA, for
  /// the HM output-stationary product, the band tiles and for a whole product also the fused
  /// kernel; on OpenMP and Serial with matrices in HostSpace, the host kernels of the HM
  /// output-stationary product and of the CDM product (several pairs of diagonals fused per pass
  /// over blocks of C). `specialized` throws nearsparse::unsupported for the atomic algorithm, for
  /// CDM products on CUDA, on other execution spaces and memory spaces, and where neither CUDA
  /// kernel takes the product.
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  /// The HM product's kernel. CDM products have one kernel and do not read it.
  hm_algorithm algorithm = hm_algorithm::output_stationary;
  /// In double on compute capability 9.0 the band tiles sum on the fp64 tensor cores; false runs
  /// their FMA form there too (the two differ in the order of each 16-term slice's sum).
  bool tensor_cores = true;
};

/// Whether a new matrix's values are set to zero or left unset (to be overwritten).
enum class values_init { zero, uninitialized };

/// "none" or "transpose".
const char* to_string(op operation);
/// "output_stationary" or "atomic".
const char* to_string(hm_algorithm algorithm);

/// Parses the names above (case-insensitive); throws nearsparse::invalid_argument naming
/// `function` and `argument` and listing the accepted names otherwise.
op parse_op(const std::string& name, const char* function = "nearsparse::diagonal::parse_op",
            const char* argument = "operation");
hm_algorithm parse_hm_algorithm(const std::string& name,
                                const char* function = "nearsparse::diagonal::parse_hm_algorithm",
                                const char* argument = "algorithm");

}  // namespace nearsparse::diagonal
