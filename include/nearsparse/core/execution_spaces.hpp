#pragma once
// The Kokkos execution spaces this build holds, as a type list (tests and benchmarks are
// templated over it) and by name (the command-line program chooses a backend by name).

#include <nearsparse/core/detail/enabled_spaces.hpp>
#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace nearsparse {

/// Every execution space compiled into this build, host spaces first.
using enabled_execution_spaces = decltype(std::tuple_cat(std::declval<detail::serial_spaces>(),
                                                         std::declval<detail::openmp_spaces>(),
                                                         std::declval<detail::cuda_spaces>()));

/// Lower-case names of the enabled backends: "serial", "openmp", "cuda".
std::vector<std::string> enabled_backends();

/// True when the backend of that name (case-insensitive) is compiled in.
bool backend_enabled(const std::string& name);

/// Throws nearsparse::unsupported naming the backend and listing the enabled ones unless the
/// backend is compiled in; throws nearsparse::invalid_argument for a name nearsparse does not know.
void require_backend(const std::string& name);

}  // namespace nearsparse
