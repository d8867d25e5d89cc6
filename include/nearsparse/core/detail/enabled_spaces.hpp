#pragma once
// The execution spaces of this build, one type list per backend (empty when it is not compiled
// in); core/execution_spaces.hpp joins them.

#include <Kokkos_Core.hpp>

#include <tuple>

namespace nearsparse::detail {

#ifdef KOKKOS_ENABLE_SERIAL
using serial_spaces = std::tuple<Kokkos::Serial>;
#else
using serial_spaces = std::tuple<>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
using openmp_spaces = std::tuple<Kokkos::OpenMP>;
#else
using openmp_spaces = std::tuple<>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
using cuda_spaces = std::tuple<Kokkos::Cuda>;
#else
using cuda_spaces = std::tuple<>;
#endif

}  // namespace nearsparse::detail
