#pragma once
// Row-major vector blocks whose data starts on a 512-byte boundary.
//
// Kokkos places a View's data behind a 128-byte allocation header, so a plain View's rows start
// 128 bytes past the GPU's 256-byte allocation grain. With R = 32 complex columns a vector row is
// 512 bytes, and every row the augmented SpMMV gathers then straddles one more 128-byte cache
// line than it needs to (perf/RESULTS.md measures what that costs). The block here allocates a
// little more and starts its rows on the boundary.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nearsparse::kpm::detail {

inline constexpr std::size_t block_alignment = 512;

/// An n x R row-major block: `view` (unmanaged) into `storage`, which owns the memory. Copies
/// share it, like Views.
template <class Scalar, class Mem>
struct aligned_block {
  using view_type =
      Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<Scalar*, Mem> storage;
  view_type view;

  aligned_block() = default;
  aligned_block(const std::string& label, std::size_t rows, std::size_t cols) {
    constexpr std::size_t pad = block_alignment / sizeof(Scalar);
    storage = Kokkos::View<Scalar*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
                                         rows * cols + pad);
    const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    const std::size_t gap = (block_alignment - address % block_alignment) % block_alignment;
    // An allocation that is not even Scalar-aligned keeps Kokkos' placement.
    const std::size_t skip = gap % sizeof(Scalar) == 0 ? gap / sizeof(Scalar) : 0;
    view = view_type(storage.data() + skip, rows, cols);
  }
};

}  // namespace nearsparse::kpm::detail
