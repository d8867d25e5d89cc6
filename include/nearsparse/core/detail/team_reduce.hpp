#pragma once
// A team reduction that a later team reduction of the same kernel cannot disturb.
//
// On Kokkos::Cuda, Kokkos 3.4 reduces across the warps of a team through one static __shared__
// array per value type (cuda_inter_warp_reduction in Kokkos_Cuda_ReduceScan.hpp): it writes the
// warps' partial values into it with no barrier before the writes, and every thread reads the
// result from it after the last barrier. Two team reductions in a row without a barrier between
// them therefore race: a fast warp of the second one writes its partial while a slow warp of the
// first still reads the result, and the slow warp takes a wrong total. compute-sanitizer racecheck
// finds these as shared-memory errors, and under its scheduling the totals do differ (a tau search
// that replicates its bisection in every thread then diverges). The same holds for a kernel that
// reduces once per league rank, where one block runs several league ranks in turn. A barrier after
// every thread has its copy of the result closes the window; it costs one __syncthreads.

#include <Kokkos_Core.hpp>

namespace nearsparse::detail {

/// The most league ranks a team policy with a team reduction is given; a kernel with more work
/// has each team take several pieces in turn (league_rank, league_rank + league size, ...).
/// Kokkos 3.4 on CUDA computes league size times team size in int before a team-policy
/// parallel_reduce (ParallelReduce<TeamPolicy>::execute, `nwork`): at 2^31 and above it skips
/// the kernel when the result lives on the host, and at exactly 2^32 it launches the kernel on a
/// single thread, which then walks every league rank alone. 2^20 teams of at most 1024 threads
/// stay below 2^31 and still give every multiprocessor many teams.
inline constexpr int team_league_max = 1 << 20;

/// Kokkos::parallel_reduce(TeamThreadRange(team, n), f, result), then a team barrier: every
/// thread holds the total, and the team may start its next reduction at once. Call it from every
/// thread of the team.
template <class Member, class Closure, class Value>
KOKKOS_INLINE_FUNCTION void team_reduce_fenced(const Member& team, int n, const Closure& f,
                                               Value& result) {
  Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, n), f, result);
  team.team_barrier();
}

}  // namespace nearsparse::detail
