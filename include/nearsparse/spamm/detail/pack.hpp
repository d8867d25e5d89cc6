#pragma once
// Packing of an operand into the padded, k-contiguous storage the kernels read (see
// geometry.hpp), rounding to the input format on the way and counting non-finite values in the
// same pass.
//
// One team per 32 x 32 block of the destination: the block is read in the source's own order
// into team scratch, then written in the destination's order, so the transposed packing of B
// reads and writes whole rows on every backend. On host spaces (memory space HostSpace) one
// iteration per host_pack_block destination rows with plain loops instead: rows straight across
// where the destination's rows run along the source's contiguous index; otherwise one
// host_pack_block square block at a time, each destination row written whole from one element of
// every source row of the block (the block's source stays in cache after the first destination
// row, and the stores run in order). The same values bit for bit, without the team machinery a
// host pays per element.

#include <nearsparse/core/detail/reduction_result.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace nearsparse::spamm::detail {

inline constexpr int pack_block = 32;

/// Edge of the blocks a host transposes: this many source rows, each read in runs of this many
/// elements (several cache lines), stay in cache while the block's destination rows are written.
inline constexpr int host_pack_block = 64;

/// One iteration of pack_operand_on_host: destination rows (straight) or one square block.
template <class Format, class SrcView>
struct pack_host_kernel {
  using storage = typename Format::storage;
  static constexpr int edge = host_pack_block;
  SrcView src;
  storage* dst;
  std::size_t ld;
  int rows, cols, rows_p, cols_p, blocks_r;
  storage zero;
  bool transpose, count_non_finite, straight;

  KOKKOS_INLINE_FUNCTION void operator()(const int block, std::int64_t& count) const {
    const int r0 = (straight ? block : block % blocks_r) * edge;
    const int r1 = r0 + edge < rows_p ? r0 + edge : rows_p;
    const int c0 = straight ? 0 : (block / blocks_r) * edge;
    const int c1 = straight ? cols_p : (c0 + edge < cols_p ? c0 + edge : cols_p);
    // The part of the block that comes from the source; the rest is zero padding.
    const int r_src = r1 < rows ? r1 : rows;
    const int c_src = c1 < cols ? c1 : cols;
    std::int64_t local = 0;
    if (straight) {
      for (int r = r0; r < r_src; ++r) {
        storage* out = dst + r * ld;
        for (int c = 0; c < c_src; ++c) {
          const double v =
              transpose ? static_cast<double>(src(c, r)) : static_cast<double>(src(r, c));
          local += (count_non_finite && !(v - v == 0.0)) ? 1 : 0;
          out[c] = Format::encode(v);
        }
      }
    } else if (r0 < r_src && c0 < c_src) {
      // Destination rows written whole, each from one element of every source row of the
      // block: the block's part of the source (edge x edge) stays in cache from the first
      // destination row on, so the strided reads hit it, and no copy through a buffer
      // scatters the stores.
      for (int r = r0; r < r_src; ++r) {
        storage* out = dst + r * ld;
        for (int c = c0; c < c_src; ++c) {
          const double v =
              transpose ? static_cast<double>(src(c, r)) : static_cast<double>(src(r, c));
          local += (count_non_finite && !(v - v == 0.0)) ? 1 : 0;
          out[c] = Format::encode(v);
        }
      }
    }
    for (int r = r0; r < r1; ++r)
      for (int c = r < r_src && c0 < c_src ? c_src : c0; c < c1; ++c) dst[r * ld + c] = zero;
    count += local;
  }
};

/// pack_operand_into on a host space (see the file's comment).
template <class Format, class ExecSpace, class SrcView, class Total>
void pack_operand_on_host(const ExecSpace& exec, const SrcView& src, bool transpose,
                          typename Format::storage* dst, int rows_p, int cols_p,
                          bool count_non_finite, Total&& bad) {
  using storage = typename Format::storage;
  constexpr int edge = host_pack_block;
  const int rows = static_cast<int>(transpose ? src.extent(1) : src.extent(0));
  const int cols = static_cast<int>(transpose ? src.extent(0) : src.extent(1));
  const int blocks_r = (rows_p + edge - 1) / edge, blocks_c = (cols_p + edge - 1) / edge;
  if (blocks_r == 0 || blocks_c == 0) {
    nearsparse::detail::set_zero(exec, bad);
    return;
  }
  // The source's contiguous index: its column unless it is LayoutLeft (or a column vector).
  const bool src_rows_contiguous =
      std::is_same<typename SrcView::array_layout, Kokkos::LayoutLeft>::value ||
      (src.extent(0) > 1 && src.stride(0) == 1);
  // Destination rows run along the source's contiguous index: copy them straight across, a
  // block of whole rows per iteration; otherwise transpose edge x edge blocks, consecutive
  // blocks continuing along the same source rows.
  const bool straight = transpose == src_rows_contiguous;
  const std::size_t ld = static_cast<std::size_t>(cols_p);
  const storage zero = Format::encode(0.0);
  Kokkos::parallel_reduce(
      "nearsparse::spamm::pack",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, straight ? blocks_r : blocks_r * blocks_c),
      pack_host_kernel<Format, SrcView>{src, dst, ld, rows, cols, rows_p, cols_p, blocks_r, zero,
                                        transpose, count_non_finite, straight},
      bad);
}

/// One team of pack_operand_teams: its 32 x 32 blocks through team scratch.
template <class Format, class ExecSpace, class SrcView>
struct pack_teams_kernel {
  using storage = typename Format::storage;
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch = Kokkos::View<storage**, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  SrcView src;
  storage* dst;
  std::size_t ld;
  int rows, cols, rows_p, cols_p, blocks_c;
  std::int64_t blocks;
  int teams;
  bool transpose, count_non_finite;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team, std::int64_t& count) const {
    scratch tile(team.team_scratch(0), pack_block, pack_block + 1);
    std::int64_t local = 0;
    for (std::int64_t block = team.league_rank(); block < blocks; block += teams) {
      const int r0 = static_cast<int>(block / blocks_c) * pack_block;
      const int c0 = static_cast<int>(block % blocks_c) * pack_block;
      // Read in the source's order: for the transposed packing the fastest index runs over
      // destination rows, which are source columns.
      std::int64_t block_bad = 0;
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
          block_bad);
      local += block_bad;
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pack_block * pack_block),
                           [&](const int idx) {
                             const int r = idx / pack_block, c = idx % pack_block;
                             if (r0 + r < rows_p && c0 + c < cols_p)
                               dst[(r0 + r) * ld + c0 + c] = tile(r, c);
                           });
      // A team reduction on CUDA (Kokkos 3.4) caps its grid at 32768 blocks and runs the
      // remaining league ranks on the same blocks, one after another, with no barrier in
      // between; this loop does the same past league_max. Without this barrier a fast warp
      // starts filling `tile` for the next block while slower warps still copy this one out
      // (the transposed packing reads entries other threads wrote), and rare elements of the
      // packed operand come out wrong.
      team.team_barrier();
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { count += local; });
  }
};

/// pack_operand_into with one team per 32 x 32 block (see the file's comment). At most
/// `league_max` teams (nearsparse::detail::team_league_max; team_reduce.hpp says why): past that
/// each team packs blocks league_rank, league_rank + league size, ... in turn, so that a large
/// operand (2^22 blocks at N = 65536) does not reach Kokkos' int product of league and team size.
template <class Format, class ExecSpace, class SrcView, class Total>
void pack_operand_teams(const ExecSpace& exec, const SrcView& src, bool transpose,
                        typename Format::storage* dst, int rows_p, int cols_p,
                        bool count_non_finite, Total&& bad,
                        int league_max = nearsparse::detail::team_league_max) {
  using kernel = pack_teams_kernel<Format, ExecSpace, SrcView>;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  const int rows = static_cast<int>(transpose ? src.extent(1) : src.extent(0));
  const int cols = static_cast<int>(transpose ? src.extent(0) : src.extent(1));
  const int blocks_r = (rows_p + pack_block - 1) / pack_block;
  const int blocks_c = (cols_p + pack_block - 1) / pack_block;
  if (blocks_r == 0 || blocks_c == 0) {
    nearsparse::detail::set_zero(exec, bad);
    return;
  }
  const std::size_t ld = static_cast<std::size_t>(cols_p);
  const std::int64_t blocks = std::int64_t(blocks_r) * blocks_c;
  const int teams = blocks < league_max ? static_cast<int>(blocks) : league_max;
  team_policy policy(exec, teams, Kokkos::AUTO);
  policy.set_scratch_size(0,
                          Kokkos::PerTeam(kernel::scratch::shmem_size(pack_block, pack_block + 1)));
  Kokkos::parallel_reduce("nearsparse::spamm::pack", policy,
                          kernel{src, dst, ld, rows, cols, rows_p, cols_p, blocks_c, blocks, teams,
                                 transpose, count_non_finite},
                          bad);
}

/// dst (rows_p x cols_p, row-major) = encode(op(src)), zero outside op(src); op(src) = src, or
/// src^T when `transpose`. Writes the number of non-finite source values (0 unless
/// `count_non_finite`) into `bad`: a host integer (the call waits for it) or a rank-0 View in the
/// space's memory (the call returns at once).
template <class Format, class ExecSpace, class SrcView, class Total>
void pack_operand_into(const ExecSpace& exec, const SrcView& src, bool transpose,
                       typename Format::storage* dst, int rows_p, int cols_p, bool count_non_finite,
                       Total&& bad) {
  if constexpr (std::is_same<typename ExecSpace::memory_space, Kokkos::HostSpace>::value) {
    pack_operand_on_host<Format>(exec, src, transpose, dst, rows_p, cols_p, count_non_finite, bad);
  } else {
    pack_operand_teams<Format>(exec, src, transpose, dst, rows_p, cols_p, count_non_finite, bad);
  }
}

/// A packing in raw form, for the CUDA kernel (src/spamm/cuda_pack.cpp): the source's element
/// (i, j) at src[i * s0 + j * s1], src_rows x src_cols; dst as pack_operand_into writes it; the
/// number of non-finite source values (0 unless count_non_finite) written to the device word
/// `bad`.
struct pack_job {
  const void* src = nullptr;
  std::size_t s0 = 0, s1 = 0;
  int src_rows = 0, src_cols = 0;
  bool transpose = false;
  void* dst = nullptr;
  int rows_p = 0, cols_p = 0;
  bool count_non_finite = false;
  std::int64_t* bad = nullptr;
};

/// The raw form of packing `src` (op(src) = src, or src^T when `transpose`) into dst.
template <class SrcView, class BadView>
pack_job make_pack_job(const SrcView& src, bool transpose, void* dst, int rows_p, int cols_p,
                       bool count_non_finite, const BadView& bad) {
  pack_job job;
  job.src = src.data();
  job.s0 = src.stride(0);
  job.s1 = src.stride(1);
  job.src_rows = static_cast<int>(src.extent(0));
  job.src_cols = static_cast<int>(src.extent(1));
  job.transpose = transpose;
  job.dst = dst;
  job.rows_p = rows_p;
  job.cols_p = cols_p;
  job.count_non_finite = count_non_finite;
  job.bad = bad.data();
  return job;
}

#ifdef KOKKOS_ENABLE_CUDA
/// The CUDA packing of a source of T (float or double) into Format, on exec's stream.
template <class Format, class T>
void pack_cuda(const Kokkos::Cuda& exec, const pack_job& job);
#endif

/// pack_operand_into as a plan queues it, the count into the rank-0 View `bad` in the space's
/// memory: on CUDA the kernel of src/spamm/cuda_pack.cpp for float and double sources of up to
/// 65535 x 32 destination rows unless `choice` is implementation::portable (the same bits either
/// way), the portable kernels otherwise.
template <class Format, class ExecSpace, class SrcView, class BadView>
void pack_operand_queued(const ExecSpace& exec, nearsparse::implementation choice,
                         const SrcView& src, bool transpose, typename Format::storage* dst,
                         int rows_p, int cols_p, bool count_non_finite, const BadView& bad) {
#ifdef KOKKOS_ENABLE_CUDA
  using T = typename SrcView::non_const_value_type;
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value &&
                (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
    // The kernel puts the destination's row tiles on the grid's y extent (at most 65535).
    if (choice != nearsparse::implementation::portable && rows_p <= 65535 * 32) {
      pack_cuda<Format, T>(
          exec, make_pack_job(src, transpose, dst, rows_p, cols_p, count_non_finite, bad));
      return;
    }
  }
#endif
  (void)choice;
  pack_operand_into<Format>(exec, src, transpose, dst, rows_p, cols_p, count_non_finite, bad);
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
