#pragma once
// Which tile products a threshold keeps: the work matrix V (kept products per output tile),
// their total for the valid ratio, and the tau search of section 3.5.2. Portable on every
// backend: one pass over the MT x NT x KT norm products.

#include <nearsparse/core/detail/reduction_result.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/detail/tau_search.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace nearsparse::spamm::detail {

template <class MemorySpace>
using work_matrix = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>;

/// Where a count takes tau from: a value the host passes (fixed_tau), or the word a search on
/// the device left it in (found_tau), so that counting after such a search needs no wait.
struct fixed_tau {
  double value;
  KOKKOS_INLINE_FUNCTION double operator()() const { return value; }
};

/// Adds the count of kept products of every row of V to `sum()` (a rank-0 View in the space's
/// memory, zero on entry), storing V when `store`. One team per row: its threads count the
/// columns, the team sums them, one thread adds the row's sum atomically.
///
/// Why not a parallel_reduce over the MT x NT entries: on Kokkos::Cuda, Kokkos 3.4 reduces values
/// of at most 16 bytes (this int64 count) with CudaReductionsFunctor<..., UseShfl = false>, whose
/// intra-warp step reads a neighbour lane's shared-memory slot while that lane writes its own,
/// with only a __syncwarp after each step (Kokkos_Cuda_ReduceScan.hpp,
/// scalar_intra_warp_reduction). compute-sanitizer racecheck reported those reads and writes as
/// 36,380 shared-memory hazards in this kernel. They are not from this code, and they give correct
/// sums on current GPUs (the lanes of a warp run each step together), but they are races by the
/// CUDA memory model, and they hide real ones in racecheck's report. A team reduction followed by
/// a barrier (team_reduce_fenced: shuffles within warps, shared memory between barriers) and one
/// atomic per row of V have none.
/// One row of V per team, for add_kept_rows.
template <class Member, class Mem, class Tau, class Sum>
struct count_kept_rows_kernel {
  norm_map<Mem> a_norms, b_norms;
  Tau tau_of;
  work_matrix<Mem> v;
  Sum sum;
  int nt, kt;
  bool store;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int i = team.league_rank();
    const double tau = tau_of();
    std::int64_t row = 0;
    nearsparse::detail::team_reduce_fenced(
        team, nt,
        [&](const int j, std::int64_t& s) {
          // Eight norms of B read before any is compared: independent loads a GPU thread
          // keeps in flight together, where one at a time would wait out each latency.
          int kept = 0, k = 0;
          for (; k + 8 <= kt; k += 8) {
            double b[8];
            for (int u = 0; u < 8; ++u) b[u] = b_norms(k + u, j);
            for (int u = 0; u < 8; ++u) kept += a_norms(i, k + u) * b[u] >= tau ? 1 : 0;
          }
          for (; k < kt; ++k) kept += a_norms(i, k) * b_norms(k, j) >= tau ? 1 : 0;
          if (store) v(i, j) = kept;
          s += kept;
        },
        row);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { Kokkos::atomic_add(&sum(), row); });
  }
};

template <class ExecSpace, class Mem, class Tau, class Sum>
void add_kept_rows(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                   const norm_map<Mem>& b_norms, Tau tau_of, const work_matrix<Mem>& v,
                   const Sum& sum) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  const bool store = v.extent(0) == static_cast<std::size_t>(mt);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  Kokkos::parallel_for("nearsparse::spamm::count_kept", policy(exec, mt, Kokkos::AUTO),
                       count_kept_rows_kernel<member, Mem, Tau, Sum>{a_norms, b_norms, tau_of, v,
                                                                     sum, nt, kt, store});
}

/// V(i, j) = number of k with ||A[i,k]|| ||B[k,j]|| >= tau (stored when v is MT x NT), and their
/// sum into `total`: a host integer (the call waits for it) or a rank-0 View in the space's
/// memory (the call returns at once, as for any kernel). `tau` is a double or a tau source.
template <class ExecSpace, class Mem, class Tau, class Total>
void count_kept_into(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                     const norm_map<Mem>& b_norms, Tau tau_of, const work_matrix<Mem>& v,
                     Total&& total) {
  if constexpr (std::is_arithmetic_v<Tau>) {
    count_kept_into(exec, a_norms, b_norms, fixed_tau{double(tau_of)}, v, total);
  } else {
    const int mt = static_cast<int>(a_norms.extent(0));
    const int nt = static_cast<int>(b_norms.extent(1));
    if (mt == 0 || nt == 0) {
      nearsparse::detail::set_zero(exec, total);
      return;
    }
    if constexpr (Kokkos::is_view<std::decay_t<Total>>::value) {
      nearsparse::detail::set_zero(exec, total);
      add_kept_rows(exec, a_norms, b_norms, tau_of, v, total);
    } else {
      // A word of the space's memory for the atomics (zeroed on exec), read back once.
      const Kokkos::View<std::int64_t, Mem> sum(
          Kokkos::view_alloc(exec, std::string("nearsparse::spamm::count_kept::total")));
      add_kept_rows(exec, a_norms, b_norms, tau_of, v, sum);
      exec.fence();
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sum);
      total = host();
    }
  }
}

/// V as count_kept_into makes it; returns the sum of V (waits for the device).
template <class ExecSpace, class Mem>
std::int64_t count_kept(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                        const norm_map<Mem>& b_norms, double tau, const work_matrix<Mem>& v) {
  std::int64_t total = 0;
  count_kept_into(exec, a_norms, b_norms, tau, v, total);
  return total;
}

/// Column k of A's norm map times row k of B's, for norm_product_sum_into.
template <class Mem>
struct norm_product_sum_kernel {
  norm_map<Mem> a_norms, b_norms;
  int mt, nt;

  KOKKOS_INLINE_FUNCTION void operator()(const int k, double& s) const {
    double sa = 0.0, sb = 0.0;
    for (int i = 0; i < mt; ++i) sa += a_norms(i, k);
    for (int j = 0; j < nt; ++j) sb += b_norms(k, j);
    s += sa * sb;
  }
};

/// sum_k (sum_i A(i,k)) (sum_j B(k,j)), the sum of all MT * KT * NT norm products, into `sum`
/// (a host double, or a rank-0 View in the space's memory).
template <class ExecSpace, class Mem, class Sum>
void norm_product_sum_into(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                           const norm_map<Mem>& b_norms, Sum&& sum) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  if (kt == 0) {
    nearsparse::detail::set_zero(exec, sum);
    return;
  }
  Kokkos::parallel_reduce("nearsparse::spamm::norm_product_sum",
                          Kokkos::RangePolicy<ExecSpace>(exec, 0, kt),
                          norm_product_sum_kernel<Mem>{a_norms, b_norms, mt, nt}, sum);
}

/// Mean of all MT * KT * NT norm products (0 for an empty product; waits for the device).
template <class ExecSpace, class Mem>
double average_norm_product(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                            const norm_map<Mem>& b_norms) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  if (mt == 0 || nt == 0 || kt == 0) return 0.0;
  double sum = 0.0;
  norm_product_sum_into(exec, a_norms, b_norms, sum);
  return sum / (double(mt) * double(nt) * double(kt));
}

/// Where search_tau_in_one_team leaves its results: 64-bit words of a device View. (Enumerators,
/// not static members: device code indexes Views with them, by reference.)
struct search_words {
  enum : int {
    kept = 0,         ///< kept products at the tau found (the sum of V)
    evaluations = 1,  ///< counts made, widening included
    tau = 2,          ///< the tau found, its bits
    norm_sum = 3,     ///< in: norm_product_sum_into's sum, its bits
    count = 4
  };
};

/// The bits of a double in a 64-bit word and back (results that travel in integer Views).
KOKKOS_INLINE_FUNCTION std::int64_t bits_of(double x) {
  std::int64_t w;
  std::memcpy(&w, &x, sizeof w);
  return w;
}
KOKKOS_INLINE_FUNCTION double double_of(std::int64_t w) {
  double x;
  std::memcpy(&x, &w, sizeof x);
  return x;
}

/// The tau a search on the device left in its words, for count_kept_into.
template <class Mem>
struct found_tau {
  Kokkos::View<std::int64_t*, Mem> words;
  KOKKOS_INLINE_FUNCTION double operator()() const { return double_of(words(search_words::tau)); }
};

/// Norm products up to which an automatic search on a device runs in one launch
/// (search_tau_in_one_team) rather than with a launch and a wait per count: 2^19, through
/// N = 4096 with tiles of 64. Below it the launch and the wait that every count of the other
/// search costs outweigh counting with one team; above it one team's counts are slower than the
/// whole device's (see perf/RESULTS.md, spamm_search).
inline constexpr double one_team_search_max_products = 524288.0;

/// One element of B's norm map to its place in its sorted row, for sort_norm_rows.
template <class Mem>
struct sort_norm_rows_kernel {
  norm_map<Mem> b_norms;
  Kokkos::View<double*, Mem> sorted;
  int nt;

  KOKKOS_INLINE_FUNCTION void operator()(const int e) const {
    const int k = e / nt, j = e % nt;
    const double x = b_norms(k, j);
    int place = 0;
    for (int u = 0; u < nt; ++u) {
      const double y = b_norms(k, u);
      place += (y > x || (y == x && u < j)) ? 1 : 0;
    }
    sorted(std::size_t(k) * nt + place) = x;
  }
};

/// sorted(k * NT + p) = the p-th largest of row k of B's norm map (ties in column order), for
/// search_tau_in_one_team. An element's place is the number of elements before it in that
/// order: one thread per element, over the whole device.
template <class ExecSpace, class Mem>
void sort_norm_rows(const ExecSpace& exec, const norm_map<Mem>& b_norms,
                    const Kokkos::View<double*, Mem>& sorted) {
  const int kt = static_cast<int>(b_norms.extent(0)), nt = static_cast<int>(b_norms.extent(1));
  Kokkos::parallel_for("nearsparse::spamm::sort_norm_rows",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, kt * nt),
                       sort_norm_rows_kernel<Mem>{b_norms, sorted, nt});
}

/// The one team of search_tau_in_one_team.
template <class Member, class Mem>
struct search_tau_kernel {
  norm_map<Mem> a_norms;
  Kokkos::View<double*, Mem> sorted_b;
  Kokkos::View<std::int64_t*, Mem> words;
  int nt, kt, rows;
  double total, target;
  int max_iterations, max_widenings;
  double tolerance;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& t) const {
    // Kept products at tau: for each (i, k), the j with A(i,k) * B(k,j) >= tau.
    const auto count_at = [&](const double tau) {
      std::int64_t kept = 0;
      nearsparse::detail::team_reduce_fenced(
          t, rows,
          [&](const int e, std::int64_t& c) {
            const int i = e / kt, k = e % kt;
            const double a = a_norms(i, k);
            const double* row = sorted_b.data() + std::size_t(k) * nt;
            int lo = 0, hi = nt;
            while (lo < hi) {
              const int mid = (lo + hi) / 2;
              if (a * row[mid] >= tau) {
                lo = mid + 1;
              } else {
                hi = mid;
              }
            }
            c += lo;
          },
          kept);
      return kept;
    };
    // The mean exactly as the host-driven search forms it, so both land on the same tau.
    const double average = double_of(words(search_words::norm_sum)) / total;
    tau_bisection s(target, max_iterations, max_widenings, tolerance, average);
    while (!s.done()) s.observe(double(count_at(s.tau())) / total);
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      words(search_words::evaluations) = s.evaluations();
      words(search_words::tau) = bits_of(s.best());
    });
  }
};

/// The bisection of a tau search in one launch of one team, for a device where every count of
/// the host-driven search would cost a launch and a wait (tau_bisection, replicated in every
/// thread: the team's reductions hand each the same count). Reads the sum of norm products from
/// words(search_words::norm_sum), where norm_product_sum_into left it, and B's rows sorted by
/// sort_norm_rows; leaves the tau found and the evaluations in `words` (count_kept_into with a
/// found_tau then makes V). Needs MT, NT, KT > 0.
///
/// A count visits MT * KT * log2(NT) norm products, not all MT * NT * KT: for each (i, k) the kept
/// j are a prefix of sorted row k, found by a binary search on the very comparison the kernels
/// make, A(i,k) * B(k,j) >= tau (monotone in B(k,j): norms are not negative and rounding is
/// monotone), so the count equals the one of count_kept_into exactly.
template <class ExecSpace, class Mem>
void search_tau_in_one_team(const ExecSpace& exec, const norm_map<Mem>& a_norms, int nt,
                            const Kokkos::View<double*, Mem>& sorted_b, double target,
                            const search_options& search,
                            const Kokkos::View<std::int64_t*, Mem>& words) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int rows = mt * kt;
  const double total = double(mt) * double(nt) * double(kt);
  const int max_iterations = search.max_iterations, max_widenings = search.max_widenings;
  const double tolerance = search.tolerance;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const search_tau_kernel<member, Mem> body{
      a_norms, sorted_b,       words,         nt,       kt, rows, total,
      target,  max_iterations, max_widenings, tolerance};
  // One thread per (i, k) of a count, in whole warps, up to what the kernel allows: a team
  // reduction over idle threads costs as much as over busy ones.
  const int most = policy(exec, 1, 1).team_size_max(body, Kokkos::ParallelForTag());
  const int wanted = ((rows > 64 ? rows : 64) + 31) / 32 * 32;
  Kokkos::parallel_for("nearsparse::spamm::search_tau",
                       policy(exec, 1, wanted < most ? wanted : most), body);
}

/// Kept products of every output tile as lists: for output tile t = i * nt + j the kept k are
/// ks(offsets(t)) ... ks(offsets(t + 1) - 1), ascending.
template <class Mem>
struct kept_list {
  Kokkos::View<std::int64_t*, Mem> offsets;
  Kokkos::View<int*, Mem> ks;
};

/// Offsets of the kept lists: an exclusive scan of the kept count of each output tile, the
/// total into offsets(tiles).
template <class Mem>
struct kept_offsets_kernel {
  norm_map<Mem> a_norms, b_norms;
  Kokkos::View<std::int64_t*, Mem> offsets;
  double tau;
  std::int64_t tiles;
  int nt, kt;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx, std::int64_t& running,
                                         const bool final) const {
    const int i = static_cast<int>(idx / nt), j = static_cast<int>(idx % nt);
    int kept = 0;
    for (int k = 0; k < kt; ++k) kept += a_norms(i, k) * b_norms(k, j) >= tau ? 1 : 0;
    if (final) offsets(idx) = running;
    running += kept;
    if (final && idx == tiles - 1) offsets(tiles) = running;
  }
};

/// The kept k of one output tile, ascending, from its offset on.
template <class Mem>
struct kept_fill_kernel {
  norm_map<Mem> a_norms, b_norms;
  Kokkos::View<std::int64_t*, Mem> offsets;
  Kokkos::View<int*, Mem> ks;
  double tau;
  int nt, kt;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t idx) const {
    const int i = static_cast<int>(idx / nt), j = static_cast<int>(idx % nt);
    std::int64_t at = offsets(idx);
    for (int k = 0; k < kt; ++k)
      if (a_norms(i, k) * b_norms(k, j) >= tau) ks(at++) = k;
  }
};

template <class ExecSpace, class Mem>
kept_list<Mem> list_kept(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                         const norm_map<Mem>& b_norms, double tau) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  const std::int64_t tiles = static_cast<std::int64_t>(mt) * nt;
  kept_list<Mem> out;
  out.offsets = Kokkos::View<std::int64_t*, Mem>(
      Kokkos::view_alloc(exec, "nearsparse::spamm::kept_offsets"), tiles + 1);
  auto offsets = out.offsets;
  Kokkos::parallel_scan("nearsparse::spamm::kept_offsets",
                        Kokkos::RangePolicy<ExecSpace>(exec, 0, tiles),
                        kept_offsets_kernel<Mem>{a_norms, b_norms, offsets, tau, tiles, nt, kt});
  std::int64_t total = 0;
  if (tiles > 0) {
    Kokkos::deep_copy(exec, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&total),
                      Kokkos::subview(offsets, tiles));
    exec.fence();
  }
  out.ks = Kokkos::View<int*, Mem>(Kokkos::view_alloc(exec, "nearsparse::spamm::kept_ks"), total);
  auto ks = out.ks;
  Kokkos::parallel_for("nearsparse::spamm::kept_fill",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, tiles),
                       kept_fill_kernel<Mem>{a_norms, b_norms, offsets, ks, tau, nt, kt});
  return out;
}

}  // namespace nearsparse::spamm::detail
