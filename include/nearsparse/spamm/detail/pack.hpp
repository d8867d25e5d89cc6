#pragma once
// Packing of an operand into the padded, k-contiguous storage the kernels read (see
// geometry.hpp), rounding to the input format on the way and counting non-finite values in the
// same pass.
//
// One team per 32 x 32 block of the destination: the block is read in the source's own order
// into team scratch, then written in the destination's order, so the transposed packing of B
// reads and writes whole rows on every backend.

#include <nearsparse/core/detail/reduction_result.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace nearsparse::spamm::detail {

inline constexpr int pack_block = 32;

/// dst (rows_p x cols_p, row-major) = encode(op(src)), zero outside op(src); op(src) = src, or
/// src^T when `transpose`. Writes the number of non-finite source values (0 unless
/// `count_non_finite`) into `bad`: a host integer (the call waits for it) or a rank-0 View in the
/// space's memory (the call returns at once).
template <class Format, class ExecSpace, class SrcView, class Total>
void pack_operand_into(const ExecSpace& exec, const SrcView& src, bool transpose,
                       typename Format::storage* dst, int rows_p, int cols_p, bool count_non_finite,
                       Total&& bad) {
  using storage = typename Format::storage;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  using scratch = Kokkos::View<storage**, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int rows = static_cast<int>(transpose ? src.extent(1) : src.extent(0));
  const int cols = static_cast<int>(transpose ? src.extent(0) : src.extent(1));
  const int blocks_r = (rows_p + pack_block - 1) / pack_block;
  const int blocks_c = (cols_p + pack_block - 1) / pack_block;
  if (blocks_r == 0 || blocks_c == 0) {
    nearsparse::detail::set_zero(exec, bad);
    return;
  }
  const std::size_t ld = static_cast<std::size_t>(cols_p);
  team_policy policy(exec, blocks_r * blocks_c, Kokkos::AUTO);
  policy.set_scratch_size(0, Kokkos::PerTeam(scratch::shmem_size(pack_block, pack_block + 1)));
  Kokkos::parallel_reduce(
      "nearsparse::spamm::pack", policy,
      KOKKOS_LAMBDA(const member& team, std::int64_t& count) {
        const int r0 = (team.league_rank() / blocks_c) * pack_block;
        const int c0 = (team.league_rank() % blocks_c) * pack_block;
        scratch tile(team.team_scratch(0), pack_block, pack_block + 1);
        std::int64_t local = 0;
        // Read in the source's order: for the transposed packing the fastest index runs over
        // destination rows, which are source columns.
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, pack_block * pack_block),
            [&](const int idx, std::int64_t& partial) {
              const int slow = idx / pack_block, fast = idx % pack_block;
              const int r = transpose ? fast : slow, c = transpose ? slow : fast;
              double v = 0.0;
              if (r0 + r < rows && c0 + c < cols) {
                v = transpose ? static_cast<double>(src(c0 + c, r0 + r))
                              : static_cast<double>(src(r0 + r, c0 + c));
                if (count_non_finite && !(v - v == 0.0)) ++partial;
              }
              tile(r, c) = Format::encode(v);
            },
            local);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pack_block * pack_block),
                             [&](const int idx) {
                               const int r = idx / pack_block, c = idx % pack_block;
                               if (r0 + r < rows_p && c0 + c < cols_p)
                                 dst[(r0 + r) * ld + c0 + c] = tile(r, c);
                             });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { count += local; });
        // A team reduction on CUDA (Kokkos 3.4) caps its grid at 32768 blocks and runs the
        // remaining league ranks on the same blocks, one after another, with no barrier in
        // between: without this one, a fast warp starts filling `tile` for the next block while
        // slower warps still copy this one out (the transposed packing reads entries other
        // threads wrote), and rare elements of the packed operand come out wrong.
        team.team_barrier();
      },
      bad);
}

/// pack_operand_into, returning the number of non-finite source values (waits for the device).
template <class Format, class ExecSpace, class SrcView>
std::size_t pack_operand(const ExecSpace& exec, const SrcView& src, bool transpose,
                         typename Format::storage* dst, int rows_p, int cols_p,
                         bool count_non_finite) {
  std::int64_t bad = 0;
  pack_operand_into<Format>(exec, src, transpose, dst, rows_p, cols_p, count_non_finite, bad);
  return static_cast<std::size_t>(bad);
}

}  // namespace nearsparse::spamm::detail
