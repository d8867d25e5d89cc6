#pragma once
// The refresh of one operand as a plan queues it: packing (pack.hpp) and the norm map
// (norms.hpp). On CUDA one kernel does both (src/spamm/cuda_pack.cpp, pack_norms_cuda): each
// thread block packs one tile of the destination and sums the squares of the values it writes,
// so the packed copy is not read again for its norms. It writes the same bits as the packing
// and the CUDA get-norm kernel run one after the other.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nearsparse::spamm::detail {

/// Where the fused CUDA kernel writes the norm map of the operand it packs (see operand).
struct tile_norm_job {
  double* norms = nullptr;
  int tile = 0;     ///< 32, 64 or 128
  int tiles_r = 0;  ///< tile rows of the operand (mt for A, nt for B); rows past them are padding
  int kt = 0, nt = 0;
  bool is_a = true;
};

#ifdef KOKKOS_ENABLE_CUDA
/// The CUDA packing of a source of T (float or double) into Format with the norm map of the
/// packed tiles, on exec's stream; job.rows_p and job.cols_p are multiples of out.tile, and the
/// grid's y side (tile rows where the source runs along the destination's rows, tile columns
/// otherwise) holds at most 65535 tiles.
template <class Format, class T>
void pack_norms_cuda(const Kokkos::Cuda& exec, const pack_job& job, const tile_norm_job& out);
#endif

/// Packs src (op(src) = src, or src^T for B) into dst, rows_p x geo.kp, counting non-finite
/// values into the rank-0 View `bad`, and computes the norm map of the packed operand into
/// `norms`, on the code opt.implementation asks for; `function` is the entry point named in
/// errors. Queued on exec: nothing waits.
template <class Format, class ExecSpace, class SrcView, class BadView>
void pack_and_norms_queued(const ExecSpace& exec, const char* function, const options& opt,
                           const SrcView& src, operand which, typename Format::storage* dst,
                           const geometry& geo, const BadView& bad,
                           const norm_map<typename ExecSpace::memory_space>& norms) {
  const bool is_a = which == operand::a;
  const int rows_p = is_a ? geo.mp : geo.np;
#ifdef KOKKOS_ENABLE_CUDA
  using T = typename SrcView::non_const_value_type;
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value &&
                (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
    // The kernel puts the destination's tile rows or tile columns on the grid's y extent (at
    // most 65535).
    if (nearsparse::detail::take_specialized(function, opt.implementation, true, exec.name()) &&
        rows_p % geo.tile == 0 && rows_p / geo.tile <= 65535 && geo.kt <= 65535) {
      const pack_job job = make_pack_job(src, !is_a, dst, rows_p, geo.kp, opt.check_finite, bad);
      tile_norm_job out;
      out.norms = norms.data();
      out.tile = geo.tile;
      out.tiles_r = is_a ? geo.mt : geo.nt;
      out.kt = geo.kt;
      out.nt = geo.nt;
      out.is_a = is_a;
      pack_norms_cuda<Format, T>(exec, job, out);
      return;
    }
  }
#endif
  pack_operand_queued<Format>(exec, opt.implementation, src, !is_a, dst, rows_p, geo.kp,
                              opt.check_finite, bad);
  compute_norms(exec, function, opt, dst, geo, which, norms);
}

}  // namespace nearsparse::spamm::detail
