#pragma once
// The symbolic HM product (detail/hm_symbolic.hpp) where the kernels read it, and the kernel
// that writes its pairs on the device. The host finds C's diagonals and how many pairs meet on
// each (small arrays, uploaded once); the pairs themselves, 32 bytes each and up to dgA x dgB of
// them, are made where they are used instead of being built on the host and copied over.

#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::diagonal::detail {

/// One allocation holds every array (a product that also builds its plan pays for one allocation
/// and one copy, not six).
template <class Mem>
struct hm_device_pairs {
  template <class T>
  using array = Kokkos::View<T*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<index_type*, Mem> storage;
  array<hm_pair> pairs;        // grouped by C diagonal
  array<index_type> pair_ptr;  // C diagonals + 1
  array<index_type> chunk_ptr;
  array<index_type> c_starts;
  array<int> c_offsets;  // C's offsets, as uploaded
  array<int> c_index;    // C offset + rows - 1 -> C diagonal; set only at C's offsets
  array<int> chunk_diagonal;  // the C diagonal of each chunk of the output-stationary kernel
  index_type chunks = 0;
  int rows = 0, inner = 0, cols = 0;  // of op(A) op(B): M, K, N
  bool a_transposed = false, b_transposed = false;
};

static_assert(sizeof(hm_pair) == 4 * sizeof(index_type), "hm_pair packs into four words");

/// Logical offset and start of the i-th diagonal of op(X) in ascending logical order (a transposed
/// operand's stored offsets negated, so read from the back).
template <class Offsets, class Starts>
KOKKOS_INLINE_FUNCTION int logical_diagonal(const Offsets& offsets, const Starts& starts,
                                            bool transposed, int count, int i,
                                            index_type& start) {
  const int t = transposed ? count - 1 - i : i;
  start = starts(t);
  return transposed ? -offsets(t) : offsets(t);
}

/// Writes the pairs of every C diagonal (one thread each, walking A's diagonals up and B's down
/// for the one partner that completes the offset), C's offsets into `c_offsets_out`,
/// plan.c_index and plan.chunk_diagonal.
template <class ExecSpace, class Mem>
void hm_fill_pairs_device(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                          const Kokkos::View<int*, Mem>& c_offsets_out,
                          const Kokkos::View<int*, Mem>& a_offsets,
                          const Kokkos::View<index_type*, Mem>& a_starts,
                          const Kokkos::View<int*, Mem>& b_offsets,
                          const Kokkos::View<index_type*, Mem>& b_starts) {
  const auto pairs = plan.pairs;
  const auto pair_ptr = plan.pair_ptr;
  const auto c_starts = plan.c_starts;
  const auto c_offsets = plan.c_offsets;
  const auto c_index = plan.c_index;
  const auto chunk_ptr = plan.chunk_ptr;
  const auto chunk_diagonal = plan.chunk_diagonal;
  const int m = plan.rows, k = plan.inner, n = plan.cols;
  const bool at = plan.a_transposed, bt = plan.b_transposed;
  const int na = int(a_offsets.extent(0)), nb = int(b_offsets.extent(0));
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_symbolic_pairs",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, c_offsets.extent(0)), KOKKOS_LAMBDA(const int ci) {
        const int c = c_offsets(ci);
        c_offsets_out(ci) = c;
        c_index(c + m - 1) = ci;
        for (index_type t = chunk_ptr(ci); t < chunk_ptr(ci + 1); ++t) chunk_diagonal(t) = ci;
        const index_type c_start = c_starts(ci);
        index_type out = pair_ptr(ci);
        int ib = nb - 1;
        index_type b_start = 0;
        int db = nb > 0 ? logical_diagonal(b_offsets, b_starts, bt, nb, ib, b_start) : 0;
        for (int ia = 0; ia < na && ib >= 0; ++ia) {
          index_type a_start;
          const int da = logical_diagonal(a_offsets, a_starts, at, na, ia, a_start);
          while (db > c - da && --ib >= 0) db = logical_diagonal(b_offsets, b_starts, bt, nb, ib, b_start);
          if (ib < 0 || db != c - da) continue;
          hm_pair p;
          if (!hm_make_pair(m, k, n, da, a_start, db, b_start, p)) continue;
          p.c_start = c_start;
          pairs(out++) = p;
        }
      });
}

}  // namespace nearsparse::diagonal::detail
