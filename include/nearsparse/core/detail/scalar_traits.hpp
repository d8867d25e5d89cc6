#pragma once
// Traits of the scalar types nearsparse kernels accept, shared by the core helpers.

#include <Kokkos_Complex.hpp>

#include <type_traits>

namespace nearsparse::detail {

/// True for Kokkos::complex<T>: complex values get real and imaginary parts handled separately.
template <class T>
struct is_kokkos_complex : std::false_type {};
template <class T>
struct is_kokkos_complex<Kokkos::complex<T>> : std::true_type {};

}  // namespace nearsparse::detail
