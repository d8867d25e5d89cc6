#pragma once
// The symbolic HM product (detail/hm_symbolic.hpp) where the kernels read it, and the kernel
// that writes its pairs on the device. The host finds C's diagonals and how many pairs meet on
// each (small arrays, uploaded once); the pairs themselves, 32 bytes each and up to dgA x dgB of
// them, are made where they are used instead of being built on the host and copied over.

#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

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
  array<int> c_offsets;       // C's offsets, as uploaded
  array<int> c_index;         // C offset - c_lo -> C diagonal; set only at C's offsets
  array<int> chunk_diagonal;  // the C diagonal of each chunk of the output-stationary kernel
  index_type chunks = 0;
  int rows = 0, inner = 0, cols = 0;  // of op(A) op(B): M, K, N
  int c_lo = 0;                       // the lowest offset C can have
  bool a_transposed = false, b_transposed = false;
};

/// Plans of at most this many 8-byte words are built on the host and copied in one transfer: a
/// small pageable copy costs less host time than a kernel launch, and the host writes a few
/// hundred pairs in less than the difference (perf/RESULTS.md, diag/structured, hm_plan_build).
inline constexpr std::size_t hm_small_plan_words = 2048;

static_assert(sizeof(hm_pair) == 4 * sizeof(index_type), "hm_pair packs into four words");

/// Logical offset and start of the i-th diagonal of op(X) in ascending logical order (a transposed
/// operand's stored offsets negated, so read from the back).
template <class Offsets, class Starts>
KOKKOS_INLINE_FUNCTION int logical_diagonal(const Offsets& offsets, const Starts& starts,
                                            bool transposed, int count, int i, index_type& start) {
  const int t = transposed ? count - 1 - i : i;
  start = starts(t);
  return transposed ? -offsets(t) : offsets(t);
}

/// Position of `value` among the n ascending logical offsets of op(X), or -1; when found,
/// `start` is that diagonal's start.
template <class Offsets, class Starts>
KOKKOS_INLINE_FUNCTION int find_logical(const Offsets& offsets, const Starts& starts,
                                        bool transposed, int n, int value, index_type& start) {
  const int i = find_ascending(
      n, value, [&](const int t) { return transposed ? -offsets(n - 1 - t) : offsets(t); });
  if (i >= 0) logical_diagonal(offsets, starts, transposed, n, i, start);
  return i;
}

/// The pairs of one C diagonal (one team per C diagonal, a team scan placing them in the order
/// of A's diagonals), its offset into c_offsets_out and c_index, and its chunks' diagonal.
template <class ExecSpace, class Mem>
struct hm_fill_pairs_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  template <class T>
  using array = typename hm_device_pairs<Mem>::template array<T>;

  array<hm_pair> pairs;
  array<index_type> pair_ptr;
  array<index_type> c_starts;
  array<int> c_offsets;
  array<int> c_index;
  array<index_type> chunk_ptr;
  array<int> chunk_diagonal;
  Kokkos::View<int*, Mem> c_offsets_out;
  Kokkos::View<int*, Mem> a_offsets;
  Kokkos::View<index_type*, Mem> a_starts;
  Kokkos::View<int*, Mem> b_offsets;
  Kokkos::View<index_type*, Mem> b_starts;
  int m, k, n, c_lo;
  bool at, bt;
  int na, nb;

  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const int ci = t.league_rank();
    const int c = c_offsets(ci);
    Kokkos::single(Kokkos::PerTeam(t), [&] {
      c_offsets_out(ci) = c;
      c_index(c - c_lo) = ci;
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, chunk_ptr(ci), chunk_ptr(ci + 1)),
                         [&](const index_type u) { chunk_diagonal(u) = ci; });
    const index_type first = pair_ptr(ci), c_start = c_starts(ci);
    Kokkos::parallel_scan(
        Kokkos::TeamThreadRange(t, na), [&](const int ia, int& placed, const bool final) {
          index_type a_start, b_start = 0;
          const int da = logical_diagonal(a_offsets, a_starts, at, na, ia, a_start);
          hm_pair p;
          const bool meets = find_logical(b_offsets, b_starts, bt, nb, c - da, b_start) >= 0 &&
                             hm_make_pair(m, k, n, da, a_start, c - da, b_start, p);
          if (meets && final) {
            p.c_start = c_start;
            pairs(first + placed) = p;
          }
          placed += meets ? 1 : 0;
        });
  }
};

/// Writes the pairs of every C diagonal, C's offsets into `c_offsets_out`, plan.c_index and
/// plan.chunk_diagonal. One team per C diagonal: its threads take A's diagonals in turn, look up
/// the one partner in B that completes the offset (a binary search), and a team scan places the
/// pairs in the order of A's diagonals. Threads search independently, so the lookups overlap
/// instead of forming one long chain of dependent loads.
template <class ExecSpace, class Mem>
void hm_fill_pairs_device(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                          const Kokkos::View<int*, Mem>& c_offsets_out,
                          const Kokkos::View<int*, Mem>& a_offsets,
                          const Kokkos::View<index_type*, Mem>& a_starts,
                          const Kokkos::View<int*, Mem>& b_offsets,
                          const Kokkos::View<index_type*, Mem>& b_starts) {
  const int m = plan.rows, k = plan.inner, n = plan.cols, c_lo = plan.c_lo;
  const bool at = plan.a_transposed, bt = plan.b_transposed;
  const int na = int(a_offsets.extent(0)), nb = int(b_offsets.extent(0));
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  const int team = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : 32;
  using kernel = hm_fill_pairs_kernel<ExecSpace, Mem>;
  Kokkos::parallel_for("nearsparse::diagonal::hm_symbolic_pairs",
                       policy(exec, int(plan.c_offsets.extent(0)), team),
                       kernel{plan.pairs,
                              plan.pair_ptr,
                              plan.c_starts,
                              plan.c_offsets,
                              plan.c_index,
                              plan.chunk_ptr,
                              plan.chunk_diagonal,
                              c_offsets_out,
                              a_offsets,
                              a_starts,
                              b_offsets,
                              b_starts,
                              m,
                              k,
                              n,
                              c_lo,
                              at,
                              bt,
                              na,
                              nb});
}

}  // namespace nearsparse::diagonal::detail
