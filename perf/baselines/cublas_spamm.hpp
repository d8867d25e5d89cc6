#pragma once
// What a cuBLAS baseline of a SpAMM product needs (CUDA builds): the cuBLAS precision of each
// SpAMM precision, and the operand in cuBLAS's 16-bit input formats, converted once outside the
// timing as SpAMM's plan converts its inputs once.

#include "baselines/cublas.hpp"

#ifdef KOKKOS_ENABLE_CUDA

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::perf::cublas {

inline precision vendor_precision(nearsparse::spamm::precision p) {
  return nearsparse::spamm::detail::precision_as<precision>(p);
}

inline bool is_16bit(nearsparse::spamm::precision p) {
  return nearsparse::spamm::detail::storage_bytes(p) == 2;
}

/// out = `a` as fp16 (p = fp16) or bf16 bit patterns, row-major like `a`; queued on exec. A
/// team per row (core/detail/elementwise.hpp), so that the conversion runs at the memory's speed
/// when a user's timing includes it.
template <class In>
void to_16bit_into(
    const Kokkos::Cuda& exec, nearsparse::spamm::precision p,
    const Kokkos::View<In**, Kokkos::LayoutRight, Kokkos::CudaSpace>& a,
    const Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, Kokkos::CudaSpace>& out) {
  const bool half = p == nearsparse::spamm::precision::fp16;
  nearsparse::detail::for_each_element(
      exec, "nearsparse::perf::to_16bit", int(a.extent(0)), int(a.extent(1)), true,
      KOKKOS_LAMBDA(const int i, const int j) {
        const float x = static_cast<float>(a(i, j));
        out(i, j) = half ? nearsparse::spamm::detail::float_to_half_bits(x)
                         : nearsparse::spamm::detail::float_to_bf16_bits(x);
      });
}

/// `a` as fp16 (p = fp16) or bf16 bit patterns, row-major like `a`.
template <class In>
Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, Kokkos::CudaSpace> to_16bit(
    const Kokkos::Cuda& exec, nearsparse::spamm::precision p,
    const Kokkos::View<In**, Kokkos::LayoutRight, Kokkos::CudaSpace>& a) {
  Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, Kokkos::CudaSpace> out("A16", a.extent(0),
                                                                            a.extent(1));
  to_16bit_into(exec, p, a, out);
  return out;
}

}  // namespace nearsparse::perf::cublas

#endif
