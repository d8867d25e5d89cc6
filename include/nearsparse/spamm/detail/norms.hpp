#pragma once
// The get-norm kernel (section 3.2 of the cuSpAMM paper): the Frobenius norm of every tile of a
// packed operand, one team per tile with a team reduction. The CUDA kernel (warp shuffles)
// overloads the dispatch, compute_norms, on Kokkos::Cuda; the host path
// (a plain loop per tile that the compiler vectorizes) on Kokkos::OpenMP and Kokkos::Serial.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/host_path.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace nearsparse::spamm::detail {

template <class MemorySpace>
using norm_map = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;

/// Which operand a norm map belongs to, and so how its tiles are laid out: A's packing is
/// mp x kp with tile (i, k) at rows i*L, columns k*L, stored as norms(i, k); B's packing is
/// B^T, np x kp, with tile (k, j) of B at rows j*L, columns k*L, stored as norms(k, j).
enum class operand { a, b };

/// One tile of compute_norms_impl per team: the rows' sums of squares reduced over the team.
template <class Format, class Member, class Mem>
struct portable_get_norm_kernel {
  using storage = typename Format::storage;
  const storage* data;
  norm_map<Mem> norms;
  int tile, kp, kt, k, rows;
  bool is_a;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int tr = team.league_rank() / kt, tk = team.league_rank() % kt;
    const int r_end = (tr + 1) * tile < rows ? tile : rows - tr * tile;
    const int c_end = (tk + 1) * tile < k ? tile : k - tk * tile;
    double sum = 0.0;
    // Fenced: a block runs several league ranks in turn where the grid is capped.
    nearsparse::detail::team_reduce_fenced(
        team, r_end,
        [&](const int r, double& row_sum) {
          const storage* row = data + static_cast<std::size_t>(tr * tile + r) * kp +
                               static_cast<std::size_t>(tk) * tile;
          double inner = 0.0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, c_end),
              [&](const int c, double& partial) {
                const double v = Format::decode(row[c]);
                partial += v * v;
              },
              inner);
          row_sum += inner;
        },
        sum);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const double norm = ::sqrt(sum);
      if (is_a) {
        norms(tr, tk) = norm;
      } else {
        norms(tk, tr) = norm;
      }
    });
  }
};

/// Norms of every tile of one packed operand in format Format.
template <class Format, class ExecSpace>
void compute_norms_impl(const ExecSpace& exec, const void* packed, const geometry& geo,
                        operand which, const norm_map<typename ExecSpace::memory_space>& norms) {
  using storage = typename Format::storage;
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename team_policy::member_type;
  const int tile = geo.tile, kp = geo.kp, kt = geo.kt, k = geo.k;
  const bool is_a = which == operand::a;
  const int rows = is_a ? geo.m : geo.n;
  const int tiles_r = is_a ? geo.mt : geo.nt;
  if (tiles_r == 0 || kt == 0) return;
  const storage* data = static_cast<const storage*>(packed);
  Kokkos::parallel_for("nearsparse::spamm::get_norm", team_policy(exec, tiles_r * kt, Kokkos::AUTO),
                       portable_get_norm_kernel<Format, member, typename ExecSpace::memory_space>{
                           data, norms, tile, kp, kt, k, rows, is_a});
}

/// Norms of every tile of one packed operand with the portable kernel, on any backend.
template <class ExecSpace>
void compute_norms_portable(const ExecSpace& exec, spamm::precision precision, const void* packed,
                            const geometry& geo, operand which,
                            const norm_map<typename ExecSpace::memory_space>& norms) {
  with_format(precision, [&](auto fmt) {
    compute_norms_impl<decltype(fmt)>(exec, packed, geo, which, norms);
  });
}

/// The get-norm dispatch: norms of every tile of one packed operand in opt.precision, on the
/// code opt.implementation asks for. This template runs the portable kernel (and
/// refuses implementation::specialized); a backend with kernels of its own overloads it on its
/// execution space. `function` is the public entry point named in errors.
template <class ExecSpace>
void compute_norms(const ExecSpace& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<typename ExecSpace::memory_space>& norms) {
  nearsparse::detail::take_specialized_none<ExecSpace>(function, opt.implementation);
  compute_norms_portable(exec, opt.precision, packed, geo, which, norms);
}

#ifdef KOKKOS_ENABLE_CUDA
/// On CUDA (src/spamm/cuda_norms.cpp): one block per tile, 16-byte loads, warp-shuffle
/// reduction, the same sums as the packing that computes norm maps on the way (pack_norms.hpp).
/// implementation::portable takes the portable kernel.
void compute_norms(const Kokkos::Cuda& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::CudaSpace>& norms);
#endif

#ifdef KOKKOS_ENABLE_OPENMP
/// On OpenMP (src/spamm/host_norms.cpp): one tile per iteration, its rows summed by contiguous
/// loops; implementation::portable, and automatic where host_spamm_available() is false, take
/// the portable kernel.
void compute_norms(const Kokkos::OpenMP& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::OpenMP::memory_space>& norms);
#endif

#ifdef KOKKOS_ENABLE_SERIAL
/// On Serial: as on OpenMP.
void compute_norms(const Kokkos::Serial& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::Serial::memory_space>& norms);
#endif

}  // namespace nearsparse::spamm::detail
