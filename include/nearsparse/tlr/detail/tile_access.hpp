#pragma once
// Device-side access to a TLR matrix's tiles by number, and the description of a batch of tile
// products (C tile += A tile * B tile): either explicit lists or the outer products k_begin ..
// k_end - 1 of the TLR-GEMM driver.

#include <nearsparse/tlr/tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace nearsparse::tlr::detail {

/// Raw pointers into a tlr_matrix's batched storage: cheap to copy into kernels.
struct tile_access {
  double* u = nullptr;
  double* v = nullptr;
  double* dense = nullptr;
  int* ranks = nullptr;
  const int* slots = nullptr;
  int nb = 0, kmax = 0, tile_rows = 0, rows = 0, cols = 0;

  template <class MemorySpace>
  static tile_access of(const tlr_matrix<MemorySpace>& m) {
    tile_access a;
    a.u = m.u().data();
    a.v = m.v().data();
    a.dense = m.dense().data();
    a.ranks = m.ranks().data();
    a.slots = m.dense_slots().data();
    a.nb = static_cast<int>(m.tile());
    a.kmax = m.max_rank();
    a.tile_rows = static_cast<int>(m.tile_rows());
    a.rows = static_cast<int>(m.rows());
    a.cols = static_cast<int>(m.cols());
    return a;
  }
  KOKKOS_INLINE_FUNCTION double* u_of(int t) const { return u + std::size_t(t) * nb * kmax; }
  KOKKOS_INLINE_FUNCTION double* v_of(int t) const { return v + std::size_t(t) * nb * kmax; }
  KOKKOS_INLINE_FUNCTION int slot(int t) const { return slots[t]; }
  KOKKOS_INLINE_FUNCTION double* dense_of(int t) const {
    return dense + std::size_t(slots[t]) * nb * nb;
  }
  KOKKOS_INLINE_FUNCTION int row_extent(int t) const {
    const int r0 = (t % tile_rows) * nb;
    return rows - r0 < nb ? rows - r0 : nb;
  }
  KOKKOS_INLINE_FUNCTION int col_extent(int t) const {
    const int c0 = (t / tile_rows) * nb;
    return cols - c0 < nb ? cols - c0 : nb;
  }
};

/// The tile products of one launch: group g updates C tile c_tile(g) with pair_count(g) products
/// A tile a_tile(g, p) * B tile b_tile(g, p), in order.
template <class MemorySpace>
struct product_pairs {
  // Explicit lists (a batched call): pair_ptr has one more entry than group_c.
  Kokkos::View<const int*, MemorySpace> group_c, pair_ptr, pair_a, pair_b;
  // Otherwise, outer products k_begin .. k_end - 1 for every tile (i, j) of C.
  bool outer = false;
  int k_begin = 0, k_end = 0, mt_a = 0, mt_b = 0, mt_c = 0, groups_outer = 0;

  int groups() const { return outer ? groups_outer : static_cast<int>(group_c.extent(0)); }
  KOKKOS_INLINE_FUNCTION int c_tile(int g) const { return outer ? g : group_c(g); }
  KOKKOS_INLINE_FUNCTION int pair_count(int g) const {
    return outer ? k_end - k_begin : pair_ptr(g + 1) - pair_ptr(g);
  }
  KOKKOS_INLINE_FUNCTION int a_tile(int g, int p) const {
    return outer ? g % mt_c + (k_begin + p) * mt_a : pair_a(pair_ptr(g) + p);
  }
  KOKKOS_INLINE_FUNCTION int b_tile(int g, int p) const {
    return outer ? (k_begin + p) + (g / mt_c) * mt_b : pair_b(pair_ptr(g) + p);
  }
};

}  // namespace nearsparse::tlr::detail
