#pragma once
// Whether a TLR operation takes its vendor path (cuBLAS, cuSOLVER): only on Kokkos::Cuda with
// CUDA memory, and kernel_choice::vendor anywhere else is an error naming the execution space.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nearsparse::tlr::detail {

template <class ExecSpace>
constexpr bool vendor_path_exists() {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same<ExecSpace, Kokkos::Cuda>::value &&
         std::is_same<typename ExecSpace::memory_space, Kokkos::CudaSpace>::value;
#else
  return false;
#endif
}

template <class ExecSpace>
bool use_vendor(const char* function, kernel_choice choice) {
  if (choice == kernel_choice::vendor && !vendor_path_exists<ExecSpace>())
    throw unsupported(nearsparse::detail::concat(
        function,
        ": kernel_choice::vendor needs the CUDA backend and an execution space of "
        "Kokkos::Cuda; this call runs on ",
        ExecSpace::name()));
  return choice != kernel_choice::portable && vendor_path_exists<ExecSpace>();
}

}  // namespace nearsparse::tlr::detail
