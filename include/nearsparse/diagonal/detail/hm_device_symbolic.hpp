#pragma once
// The symbolic phase of an HM product on the device (detail/hm_symbolic.hpp has the host's).
//
// For scattered diagonals the host visits every pair of diagonals of A and B; on the GPU
// machine's virtual host that cost 8-16 ns a pair (0.07 ms for 89 x 75 diagonals, 1.4 ms for
// 500 x 500), and a plan then copied C's arrays back up for its kernels (perf/RESULTS.md). Here
// two kernels find C's structure where the kernels read it:
//  1. one thread per offset c that C can have merges A's logical offsets (upwards) with B's
//     (downwards) and counts the pairs meeting on c and their multiply-adds: every entry is
//     written once, so nothing needs clearing first and no atomics are needed;
//  2. one team compacts that range: scans of the counts give each diagonal of C its index, its
//     first pair, value and chunk, written to device memory for the plan and to memory the host
//     reads (pinned on CUDA) for C's host arrays.
// The host waits once, then copies C's arrays out. The result equals the host pass's exactly
// (unit_tests/diagonal/test_hm_product.cpp compares every array).

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace nearsparse::diagonal::detail {

/// The device pass runs for scattered diagonals (not two full bands, whose host pass is closed
/// form) from this many pairs on: below it the host pass, a few microseconds, costs less than two
/// launches and a wait.
inline constexpr double hm_device_symbolic_min_pairs = 2048;
/// Most diagonals A and B may have together: the counting kernel keeps their offsets in team
/// scratch (4 bytes each, 32 KB).
inline constexpr int hm_device_symbolic_max_diagonals = 8192;

/// Whether a product of operands with these structures finds C's structure on the device.
inline bool hm_symbolic_on_device_pays(const hm_operand_structure& a,
                                       const hm_operand_structure& b) {
  const std::size_t na = a.offsets->size(), nb = b.offsets->size();
  const bool bands =
      hm_band_range_of(*a.offsets, false).whole() && hm_band_range_of(*b.offsets, false).whole();
  return !bands && double(na) * double(nb) >= hm_device_symbolic_min_pairs &&
         na + nb <= std::size_t(hm_device_symbolic_max_diagonals);
}

/// Where the device pass leaves C's arrays: one allocation of 8-byte words (a plan keeps it),
/// each array sized for every offset of C's range (`range`), of which the first nc (+ 1) hold C's.
template <class Mem>
struct hm_device_symbolic {
  template <class T>
  using array = Kokkos::View<T*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<index_type*, Mem> storage;
  int range = 0;

  std::size_t capacity() const { return std::size_t(range) + 1; }
  static std::size_t words_for(int range) {
    const std::size_t r = std::size_t(range), cap = r + 1;
    return 3 * cap + 2 * ((r + 1) / 2) + r;
  }
  array<index_type> pair_ptr() const { return words(0, capacity()); }
  array<index_type> chunk_ptr() const { return words(capacity(), capacity()); }
  /// Offset of c_starts in `storage` (C's starts are a View into it).
  std::size_t c_starts_at() const { return 2 * capacity(); }
  array<index_type> c_starts() const { return words(c_starts_at(), capacity()); }
  array<int> c_offsets() const { return ints(3 * capacity(), 0); }
  // Working arrays of the counting kernel, by offset - c_lo.
  array<int> pairs_by_offset() const { return ints(3 * capacity(), half_words()); }
  array<index_type> multiply_adds_by_offset() const {
    return words(3 * capacity() + 2 * half_words(), std::size_t(range));
  }

 private:
  std::size_t half_words() const { return (std::size_t(range) + 1) / 2; }  // range ints
  array<index_type> words(std::size_t at, std::size_t count) const {
    return array<index_type>(storage.data() + at, count);
  }
  // `range` ints from word `at`, `skip` words further on
  array<int> ints(std::size_t at, std::size_t skip) const {
    return array<int>(reinterpret_cast<int*>(storage.data() + at + skip), std::size_t(range));
  }
};

/// Memory the device writes and the host reads without a copy: pinned host memory on CUDA, host
/// memory for host backends; other backends copy from their own memory.
template <class ExecSpace>
struct hm_host_readable {
  using type = std::conditional_t<
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible, Kokkos::HostSpace,
      typename ExecSpace::memory_space>;
};
#ifdef KOKKOS_ENABLE_CUDA
template <>
struct hm_host_readable<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif

/// First position among the n ascending values get(0), ..., get(n - 1) whose value is at least
/// `value` (n when none is).
template <class Get>
KOKKOS_INLINE_FUNCTION int first_not_below(int n, index_type value, const Get& get) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (index_type(get(mid)) < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The symbolic phase of op(A) op(B) on `exec`: returns what hm_symbolic returns (host arrays)
/// and leaves C's device arrays in `out`. a_offsets and b_offsets are the operands' stored
/// offsets in device memory (those of the structures a and b).
template <class ExecSpace, class Mem>
hm_symbolic_product hm_symbolic_device(const ExecSpace& exec, const char* function,
                                       const hm_operand_structure& a,
                                       const Kokkos::View<int*, Mem>& a_offsets,
                                       const hm_operand_structure& b,
                                       const Kokkos::View<int*, Mem>& b_offsets,
                                       hm_device_symbolic<Mem>& out) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "hm_symbolic_device: the execution space cannot reach the offsets' memory");
  hm_symbolic_product s = hm_symbolic_frame(function, a, b);
  const int m = s.rows, k = s.inner, n = s.cols, c_lo = s.c_lo, range = s.c_range;
  const int na = int(a_offsets.extent(0)), nb = int(b_offsets.extent(0));
  const bool ta = a.operation == op::transpose, tb = b.operation == op::transpose;
  constexpr bool host = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

  // C's device arrays and the host-readable copy: C's arrays behind five totals (C's diagonals,
  // pairs, values, chunks, multiply-adds). The host buffer's size is rounded up to a power of two
  // so that products of similar size reuse one pinned allocation.
  using readable_space = typename hm_host_readable<ExecSpace>::type;
  using readable_view = Kokkos::View<index_type*, readable_space>;
  constexpr std::size_t totals = 8;
  const std::size_t cap = std::size_t(range) + 1;
  std::size_t readable_words = 1024;
  while (readable_words < totals + 4 * cap) readable_words *= 2;
  bool wait = false;
  out.range = range;
  out.storage = nearsparse::detail::cached_view_taken<Kokkos::View<index_type*, Mem>>(
      wait, "nearsparse::hm_plan.symbolic", hm_device_symbolic<Mem>::words_for(range));
  readable_view readable;
  if constexpr (std::is_same_v<readable_space, Kokkos::HostSpace>)
    readable = readable_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::hm_symbolic.host"), readable_words);
  else  // pinned allocations are slow: kept like device ones
    readable = nearsparse::detail::view_cache<readable_view>::instance().take(
        wait, "nearsparse::hm_symbolic.host", readable_words);
  nearsparse::detail::fence_cached_views<Mem>(wait);

  const auto pairs_by = out.pairs_by_offset();
  const auto adds_by = out.multiply_adds_by_offset();
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  if (range > 0) {
    // Pass 1: the pairs on each offset of C's range and their multiply-adds.
    using scratch_ints =
        Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
    constexpr int per_team = 256;  // offsets of C
    const std::size_t shared = scratch_ints::shmem_size(std::size_t(na)) +
                               scratch_ints::shmem_size(std::size_t(nb));
    Kokkos::parallel_for(
        "nearsparse::diagonal::hm_symbolic_count",
        policy(exec, (range + per_team - 1) / per_team, host ? 1 : per_team)
            .set_scratch_size(0, Kokkos::PerTeam(shared)),
        KOKKOS_LAMBDA(const member& t) {
          const scratch_ints la(t.team_scratch(0), na), lb(t.team_scratch(0), nb);
          // Logical offsets, ascending (a transposed operand's stored ones negated, from the back).
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, na), [&](const int i) {
            la(i) = ta ? -a_offsets(na - 1 - i) : a_offsets(i);
          });
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nb), [&](const int j) {
            lb(j) = tb ? -b_offsets(nb - 1 - j) : b_offsets(j);
          });
          t.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, per_team), [&](const int u) {
            const int at = t.league_rank() * per_team + u;
            if (at >= range) return;
            const index_type c = index_type(c_lo) + at;
            // Only A's offsets da with c - da inside B's range can meet a partner.
            int i = first_not_below(na, c - lb(nb - 1), [&](const int x) { return la(x); });
            const int i_end = first_not_below(na, c - lb(0) + 1, [&](const int x) { return la(x); });
            int j = nb - 1;
            int count = 0;
            index_type adds = 0;
            while (i < i_end && j >= 0) {
              const index_type sum = index_type(la(i)) + lb(j);
              if (sum < c) {
                ++i;
              } else if (sum > c) {
                --j;
              } else {
                hm_pair p;
                if (hm_make_pair(m, k, n, la(i), 0, lb(j), 0, p)) {
                  ++count;
                  adds += p.qhi - p.qlo;
                }
                ++i;
                --j;
              }
            }
            pairs_by(at) = count;
            adds_by(at) = adds;
          });
        });
  }

  // Pass 2, one team: each thread takes a run of the range, the team scans the runs' counts, and
  // each thread writes its diagonals of C at their places.
  const auto pair_ptr = out.pair_ptr();
  const auto chunk_ptr = out.chunk_ptr();
  const auto c_starts = out.c_starts();
  const auto c_offsets = out.c_offsets();
  const auto r_offsets = Kokkos::subview(readable, std::make_pair(totals, totals + cap));
  const auto r_pair_ptr = Kokkos::subview(readable, std::make_pair(totals + cap, totals + 2 * cap));
  const auto r_starts =
      Kokkos::subview(readable, std::make_pair(totals + 2 * cap, totals + 3 * cap));
  const auto r_chunk_ptr =
      Kokkos::subview(readable, std::make_pair(totals + 3 * cap, totals + 4 * cap));
  // A power of two (the CUDA team scan needs one); 512 threads take about 40 offsets each of the
  // widest ranges (m + n - 1 at n = 10000).
  const int threads = host ? 1 : 512;
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_symbolic_compact", policy(exec, 1, threads),
      KOKKOS_LAMBDA(const member& t) {
        const int per = (range + t.team_size() - 1) / t.team_size();
        const int lo = per * t.team_rank() < range ? per * t.team_rank() : range;
        const int hi = lo + per < range ? lo + per : range;
        index_type found = 0, pairs = 0, values = 0, chunks = 0, adds = 0;
        for (int at = lo; at < hi; ++at) {
          if (pairs_by(at) == 0) continue;
          const index_type len = diagonal_length(m, n, index_type(c_lo) + at);
          ++found;
          pairs += pairs_by(at);
          values += len;
          chunks += (len + hm_chunk - 1) / hm_chunk;
          adds += adds_by(at);
        }
        // Exclusive prefixes in team-rank order: where this thread's run starts.
        index_type at_c = t.team_scan(found), at_pair = t.team_scan(pairs),
                   at_value = t.team_scan(values), at_chunk = t.team_scan(chunks),
                   all_adds = t.team_scan(adds) + adds;
        for (int at = lo; at < hi; ++at) {
          if (pairs_by(at) == 0) continue;
          const index_type len = diagonal_length(m, n, index_type(c_lo) + at);
          c_offsets(at_c) = c_lo + at;
          pair_ptr(at_c) = at_pair;
          c_starts(at_c) = at_value;
          chunk_ptr(at_c) = at_chunk;
          ++at_c;
          at_pair += pairs_by(at);
          at_value += len;
          at_chunk += (len + hm_chunk - 1) / hm_chunk;
        }
        if (t.team_rank() == t.team_size() - 1) {
          // The last run ends C's arrays: their closing entries and the totals.
          pair_ptr(at_c) = at_pair;
          c_starts(at_c) = at_value;
          chunk_ptr(at_c) = at_chunk;
          readable(0) = at_c;
          readable(1) = at_pair;
          readable(2) = at_value;
          readable(3) = at_chunk;
          readable(4) = all_adds;
        }
        index_type nc = at_c;
        t.team_broadcast(nc, t.team_size() - 1);
        t.team_barrier();
        // The host's copy, written by consecutive threads to consecutive places: scattered 8-byte
        // writes to pinned memory cross the bus one by one (they made this pass 4x slower).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nc + 1), [&](const index_type i) {
          if (i < nc) r_offsets(i) = c_offsets(i);
          r_pair_ptr(i) = pair_ptr(i);
          r_starts(i) = c_starts(i);
          r_chunk_ptr(i) = chunk_ptr(i);
        });
      });

  // The one wait; then C's host arrays from the readable copy.
  const index_type* host_words = nullptr;
  typename readable_view::HostMirror mirror;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, readable_space>::accessible) {
    exec.fence();
    host_words = readable.data();
  } else {
    mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), readable);
    host_words = mirror.data();
  }
  const std::size_t nc = std::size_t(host_words[0]);
  s.c_offsets.assign(host_words + totals, host_words + totals + nc);
  s.pair_ptr.assign(host_words + totals + cap, host_words + totals + cap + nc + 1);
  s.c_starts.assign(host_words + totals + 2 * cap, host_words + totals + 2 * cap + nc + 1);
  s.chunk_ptr.assign(host_words + totals + 3 * cap, host_words + totals + 3 * cap + nc + 1);
  s.multiply_adds = double(host_words[4]);
  return s;
}

}  // namespace nearsparse::diagonal::detail
