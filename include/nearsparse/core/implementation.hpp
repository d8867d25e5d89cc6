#pragma once
// The implementation choice every family's options carry: which code runs an operation.
//
// Each operation has one portable implementation (Kokkos team policies, on every backend) and,
// on some backends, a specialized one (CUDA kernels on tensor cores or with warp shuffles,
// cuBLAS or cuSOLVER, vectorized host kernels). `automatic` takes the specialized path where
// this build and the execution space have one that serves the request, and the portable path
// elsewhere; `portable` always takes the portable path (to check the two against each other,
// or to compare their speed); `specialized` takes the specialized path and throws
// nearsparse::unsupported, naming the function and the execution space, where there is none.

#include <string>

namespace nearsparse {

enum class implementation {
  automatic,   ///< the specialized path where it exists and serves the request, else portable
  portable,    ///< the portable Kokkos kernels, on every backend
  specialized  ///< the specialized path; nearsparse::unsupported where there is none
};

/// "automatic", "portable", "specialized".
const char* to_string(implementation choice);

/// Parses the names above (case-insensitive); throws nearsparse::invalid_argument naming
/// `function` and `argument` and listing the accepted names otherwise.
implementation parse_implementation(const std::string& name,
                                    const char* function = "nearsparse::parse_implementation",
                                    const char* argument = "implementation");

}  // namespace nearsparse
