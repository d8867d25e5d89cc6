#pragma once
// The symbolic phase of an HM product on the device (detail/hm_symbolic.hpp has the host's).
//
// For scattered diagonals the host visits every pair of diagonals of A and B, and a plan then
// copies C's arrays up for its kernels. Here two kernels over the same partition of the offsets
// C can have (its range) find C's structure where the kernels read it:
//  1. counting: one thread per offset c merges A's logical offsets (upwards) with B's
//     (downwards) and counts the pairs meeting on c and their multiply-adds (every entry is
//     written once, so nothing needs clearing and no atomics are needed); each team also leaves
//     its totals (diagonals of C, pairs, values, chunks, multiply-adds);
//  2. compaction: each team sums the totals of the teams before it, then scans its offsets, one
//     per thread in order, and writes each diagonal of C (its offset, first pair, value and
//     chunk) to device memory for the plan and to memory the host reads (pinned on CUDA) for C's
//     host arrays. Neighbouring threads take neighbouring offsets, so the loads and the stores
//     to pinned memory are coalesced (a team whose threads each took a run of offsets would
//     make strided, dependent loads).
// The host waits once, then copies C's arrays out. The result equals the host pass's exactly
// (unit_tests/diagonal/test_hm_product.cpp compares every array).

#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace nearsparse::diagonal::detail {

/// The device pass runs for scattered diagonals (not two full bands, whose host pass is closed
/// form) from this many pairs on. Below it the host pass costs less: the device pass has a fixed
/// cost (two launches, a wait for reused storage, the final wait) whatever the size, the host's
/// grows with the pairs. Near the threshold the device pass also spares a plan the upload of C's
/// arrays. The crossing is measured in perf/RESULTS.md (diag/structured, hm_symbolic and
/// hm_symbolic_device).
inline constexpr double hm_device_symbolic_min_pairs = 4096;
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

/// How the device pass splits C's range among teams: `teams` teams of `threads` threads, each
/// team taking `rounds` consecutive groups of `threads` offsets, one offset per thread. Teams are
/// bounded (the compaction sums the totals of all earlier teams in each team); long ranges take
/// more rounds instead.
struct hm_symbolic_partition {
  int threads = 1, rounds = 1, teams = 1;
  static constexpr int max_teams = 1024;
  static hm_symbolic_partition of(int range, int threads) {
    hm_symbolic_partition p;
    p.threads = threads;
    const long groups = (long(range) + threads - 1) / threads;
    p.rounds = int(std::max(1L, (groups + max_teams - 1) / max_teams));
    p.teams = int(std::max(1L, (groups + p.rounds - 1) / p.rounds));
    return p;
  }
  int per_team() const { return threads * rounds; }
};

/// Where the device pass leaves C's arrays: one allocation of 8-byte words (a plan keeps it),
/// each array sized for every offset of C's range (`range`), of which the first nc (+ 1) hold C's,
/// then the counting kernel's working arrays and its totals per team.
template <class Mem>
struct hm_device_symbolic {
  template <class T>
  using array = Kokkos::View<T*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<index_type*, Mem> storage;
  int range = 0;
  int teams = 1;

  /// Per team: diagonals of C, pairs, values, chunks, multiply-adds.
  static constexpr int team_fields = 5;

  std::size_t capacity() const { return std::size_t(range) + 1; }
  static std::size_t words_for(int range, int teams) {
    const std::size_t r = std::size_t(range), cap = r + 1;
    return 3 * cap + 2 * ((r + 1) / 2) + r + std::size_t(team_fields) * std::size_t(teams);
  }
  array<index_type> pair_ptr() const { return words(0, capacity()); }
  array<index_type> chunk_ptr() const { return words(capacity(), capacity()); }
  /// Offset of c_starts in `storage` (C's starts are a View into it).
  std::size_t c_starts_at() const { return 2 * capacity(); }
  array<index_type> c_starts() const { return words(c_starts_at(), capacity()); }
  array<int> c_offsets() const { return ints(3 * capacity(), 0); }
  // Working arrays of the counting kernel, by offset - c_lo, and its totals by team.
  array<int> pairs_by_offset() const { return ints(3 * capacity(), half_words()); }
  array<index_type> multiply_adds_by_offset() const {
    return words(3 * capacity() + 2 * half_words(), std::size_t(range));
  }
  array<index_type> team_totals() const {
    return words(3 * capacity() + 2 * half_words() + std::size_t(range),
                 std::size_t(team_fields) * std::size_t(teams));
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
  using type =
      std::conditional_t<Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible,
                         Kokkos::HostSpace, typename ExecSpace::memory_space>;
};
#ifdef KOKKOS_ENABLE_CUDA
template <>
struct hm_host_readable<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif

/// What offset c adds to C's arrays when `count` pairs meet on it: a diagonal (0 or 1), its
/// pairs, its values and its chunks. Both kernels of the pass count through it, so the team
/// totals the first leaves are the sums the second scans.
KOKKOS_INLINE_FUNCTION void c_diagonal_share(int m, int n, index_type c, int count,
                                             index_type (&share)[4]) {
  const index_type len = count != 0 ? diagonal_length(m, n, c) : 0;
  share[0] = count != 0 ? 1 : 0;
  share[1] = count;
  share[2] = len;
  share[3] = (len + hm_chunk - 1) / hm_chunk;
}

/// The sum of every thread's `value` over the team (every thread gets it), and in `before` this
/// thread's exclusive prefix in team-rank order. Every thread of the team must call it.
template <class Member>
KOKKOS_INLINE_FUNCTION index_type team_sum(const Member& t, const index_type value,
                                           index_type& before) {
  before = t.team_scan(value);
  index_type total = before + value;
  t.team_broadcast(total, t.team_size() - 1);
  return total;
}

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

/// The pairs meeting on each offset of one team's share of C's range and their multiply-adds
/// (one offset a thread a round, A's and B's logical offsets staged in team scratch), and the
/// team's totals.
template <class ExecSpace, class Mem>
struct hm_symbolic_count_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_ints =
      Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  template <class T>
  using array = typename hm_device_symbolic<Mem>::template array<T>;
  static constexpr int fields = hm_device_symbolic<Mem>::team_fields;

  Kokkos::View<int*, Mem> a_offsets;
  Kokkos::View<int*, Mem> b_offsets;
  array<int> pairs_by;
  array<index_type> adds_by;
  array<index_type> team_totals;
  int m, k, n, c_lo, range;
  int na, nb;
  bool ta, tb;
  int rounds, per_team;

  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const scratch_ints la(t.team_scratch(0), na), lb(t.team_scratch(0), nb);
    // Logical offsets, ascending (a transposed operand's stored ones negated, from the back).
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, na),
                         [&](const int i) { la(i) = ta ? -a_offsets(na - 1 - i) : a_offsets(i); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nb),
                         [&](const int j) { lb(j) = tb ? -b_offsets(nb - 1 - j) : b_offsets(j); });
    t.team_barrier();
    index_type sums[fields] = {0, 0, 0, 0, 0};
    for (int round = 0; round < rounds; ++round) {
      const int at = t.league_rank() * per_team + round * t.team_size() + t.team_rank();
      if (at >= range) break;
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
      index_type share[4];
      c_diagonal_share(m, n, c, count, share);
      for (int f = 0; f < 4; ++f) sums[f] += share[f];
      sums[4] += adds;
    }
    for (int f = 0; f < fields; ++f) {
      index_type before = 0;
      const index_type total = team_sum(t, sums[f], before);
      if (t.team_rank() == 0) team_totals(std::size_t(t.league_rank()) * fields + f) = total;
    }
  }
};

/// C's diagonals among one team's share of C's range (offset, first pair, value and chunk, after
/// the totals of the teams before it), into C's device arrays and the host-readable copy; the
/// last team also writes the closing entries and the totals.
template <class ExecSpace, class Mem, class Readable>
struct hm_symbolic_compact_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  template <class T>
  using array = typename hm_device_symbolic<Mem>::template array<T>;
  using readable_part = Kokkos::Subview<Readable, std::pair<std::size_t, std::size_t>>;
  static constexpr int fields = hm_device_symbolic<Mem>::team_fields;

  array<int> pairs_by;
  array<index_type> team_totals;
  array<index_type> pair_ptr;
  array<index_type> chunk_ptr;
  array<index_type> c_starts;
  array<int> c_offsets;
  Readable readable;
  readable_part r_offsets;
  readable_part r_pair_ptr;
  readable_part r_starts;
  readable_part r_chunk_ptr;
  int m, n, c_lo, range;
  int rounds, per_team;

  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const int team = t.league_rank();
    // Where this team's diagonals, pairs, values and chunks start.
    index_type run[4];
    for (int f = 0; f < 4; ++f) {
      index_type before = 0;
      nearsparse::detail::team_reduce_fenced(
          t, team,
          [&](const int u, index_type& acc) { acc += team_totals(std::size_t(u) * fields + f); },
          before);
      run[f] = before;
    }
    for (int round = 0; round < rounds; ++round) {
      const int at = team * per_team + round * t.team_size() + t.team_rank();
      const int count = at < range ? pairs_by(at) : 0;
      index_type mine[4];
      c_diagonal_share(m, n, index_type(c_lo) + at, count, mine);
      index_type place[4], step[4];
      for (int f = 0; f < 4; ++f) step[f] = team_sum(t, mine[f], place[f]);
      if (count != 0) {
        const index_type d = run[0] + place[0];
        const index_type p = run[1] + place[1], v = run[2] + place[2], q = run[3] + place[3];
        c_offsets(d) = c_lo + at;
        pair_ptr(d) = p;
        c_starts(d) = v;
        chunk_ptr(d) = q;
        r_offsets(d) = c_lo + at;
        r_pair_ptr(d) = p;
        r_starts(d) = v;
        r_chunk_ptr(d) = q;
      }
      for (int f = 0; f < 4; ++f) run[f] += step[f];
    }
    if (team == t.league_size() - 1) {
      // The last team ends C's arrays: their closing entries and the totals.
      index_type all_adds = 0;
      nearsparse::detail::team_reduce_fenced(
          t, t.league_size(),
          [&](const int u, index_type& acc) { acc += team_totals(std::size_t(u) * fields + 4); },
          all_adds);
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        const index_type nc = run[0];
        pair_ptr(nc) = run[1];
        c_starts(nc) = run[2];
        chunk_ptr(nc) = run[3];
        r_pair_ptr(nc) = run[1];
        r_starts(nc) = run[2];
        r_chunk_ptr(nc) = run[3];
        readable(0) = nc;
        readable(1) = run[1];
        readable(2) = run[2];
        readable(3) = run[3];
        readable(4) = all_adds;
      });
    }
  }
};

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
                "nearsparse::diagonal::hm_symbolic_device: the execution space cannot reach the "
                "offsets' memory");
  hm_symbolic_product s = hm_symbolic_frame(function, a, b);
  const int m = s.rows, k = s.inner, n = s.cols, c_lo = s.c_lo, range = s.c_range;
  const int na = int(a_offsets.extent(0)), nb = int(b_offsets.extent(0));
  const bool ta = a.operation == op::transpose, tb = b.operation == op::transpose;
  constexpr bool host = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  // 128 threads a team on a GPU: the ranges of the published structured cases (8000-20000
  // offsets) then spread over 60-160 teams.
  const hm_symbolic_partition part = hm_symbolic_partition::of(range, host ? 1 : 128);
  const int threads = part.threads, rounds = part.rounds, teams = part.teams;
  const int per_team = part.per_team();

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
  out.teams = teams;
  out.storage = nearsparse::detail::cached_view_taken<Kokkos::View<index_type*, Mem>>(
      wait, "nearsparse::hm_plan.symbolic", hm_device_symbolic<Mem>::words_for(range, teams));
  readable_view readable;
  if constexpr (std::is_same_v<readable_space, Kokkos::HostSpace>)
    readable = readable_view(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::hm_symbolic.host"),
        readable_words);
  else  // pinned allocations are slow: kept like device ones
    readable = nearsparse::detail::view_cache<readable_view>::instance().take(
        wait, "nearsparse::hm_symbolic.host", readable_words);
  nearsparse::detail::fence_cached_views<Mem>(wait);

  const auto pairs_by = out.pairs_by_offset();
  const auto adds_by = out.multiply_adds_by_offset();
  const auto team_totals = out.team_totals();
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using count_kernel = hm_symbolic_count_kernel<ExecSpace, Mem>;
  using scratch_ints = typename count_kernel::scratch_ints;

  // Pass 1: the pairs on each offset of C's range and their multiply-adds, and each team's
  // totals. A team with no offset in the range (range 0) leaves zero totals.
  const std::size_t shared =
      scratch_ints::shmem_size(std::size_t(na)) + scratch_ints::shmem_size(std::size_t(nb));
  Kokkos::parallel_for("nearsparse::diagonal::hm_symbolic_count",
                       policy(exec, teams, threads).set_scratch_size(0, Kokkos::PerTeam(shared)),
                       count_kernel{a_offsets, b_offsets, pairs_by, adds_by, team_totals, m, k, n,
                                    c_lo, range, na, nb, ta, tb, rounds, per_team});

  // Pass 2: each team starts where the teams before it end, and scans its offsets in order.
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
  using compact_kernel = hm_symbolic_compact_kernel<ExecSpace, Mem, readable_view>;
  Kokkos::parallel_for("nearsparse::diagonal::hm_symbolic_compact", policy(exec, teams, threads),
                       compact_kernel{pairs_by, team_totals, pair_ptr, chunk_ptr, c_starts,
                                      c_offsets, readable, r_offsets, r_pair_ptr, r_starts,
                                      r_chunk_ptr, m, n, c_lo, range, rounds, per_team});

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
