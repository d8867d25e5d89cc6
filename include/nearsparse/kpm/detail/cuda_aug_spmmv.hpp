#pragma once
// The CUDA specialization of the augmented SpMMV (src/kpm/cuda_aug_spmmv.cpp), the paper's
// Figure 6: a group of G lanes per row (a power of two), each lane owning the columns r = g,
// g + G, ..., CPL of them (2 for 2 <= R <= 64, 4 up to 128, so G = R / CPL rounded up;
// cuda_tuning's lanes_per_row and columns_per_lane override the choice); for CRS with G >= 4, and
// for G = 32 in both formats, a row's column indices and values are loaded G at a time by the
// group's lanes and broadcast with warp shuffles; R = G * CPL runs a kernel compiled for that R
// (cuda_tuning::compiled_width); the dot products stay in registers across all the rows a lane
// visits, are reduced across the groups of a warp with shuffles and across the warps of a block
// in shared memory, and reach eta with one atomic per block and column. Row-major blocks with
// leading dimension R; CRS with int offsets or SELL-C-sigma. Each block walks chunks of
// consecutive rows whose length divides `period` (row_period.hpp; cuda_tuning::chunk_rows
// overrides the length).
//
// The overloads of aug_spmmv() and aug_period() on Kokkos::Cuda here are the CUDA branch of the
// dispatch in detail/aug_spmmv.hpp.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/detail/aug_kernel.hpp>
#include <nearsparse/kpm/detail/row_period.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace nearsparse::kpm::detail {

struct cuda_aug_args {
  const char* function = "nearsparse::kpm::aug_spmmv";  ///< the entry point, for errors
  // Matrix: CRS when chunk_offsets is null, SELL-C-sigma otherwise.
  const int* row_map = nullptr;
  const std::int64_t* chunk_offsets = nullptr;
  const int* chunk_lengths = nullptr;
  int chunk_height = 1;
  const int* columns = nullptr;
  const void* values = nullptr;
  bool complex_values = true;
  // Blocks: in (rows of H's columns) and out, row-major with R columns.
  const void* in = nullptr;
  void* out = nullptr;
  int R = 1;
  int row_begin = 0, row_end = 0;
  double alpha = 1, beta = 0, gamma = 0;
  // Dot products: eta rows 2 step and 2 step + 1, leading dimension eta_ld; null: none.
  double* eta = nullptr;
  int eta_ld = 0;
  int step = 0;
  // The matrix's stencil period (row_period.hpp; 0: none): each block walks chunks of
  // consecutive rows whose length divides it, else chunks of one window of rows.
  int period = 0;
};

/// Largest R the CUDA kernel takes (4 columns per lane); wider blocks use the portable kernel.
inline constexpr int cuda_aug_max_columns = 128;

#ifdef KOKKOS_ENABLE_CUDA
/// Launches on exec's stream with the launch shape `tuning` asks for. R in
/// [1, cuda_aug_max_columns].
void cuda_aug_spmmv(const Kokkos::Cuda& exec, const cuda_aug_args& args, const cuda_tuning& tuning);

/// The CUDA branch of the dispatch: the CUDA kernel where it serves the call (row-major blocks,
/// int indices, R <= cuda_aug_max_columns) and settings.implementation allows, the portable
/// kernel otherwise; throws nearsparse::unsupported for implementation::specialized where it
/// cannot serve.
template <class Rows, class In, class Out, class Eta>
void aug_spmmv(const Kokkos::Cuda& exec, const char* label, const Rows& rows, int row_begin,
               int row_end, const In& in, const Out& out, aug_coefficients c, bool dots,
               const Eta& eta, int step, const aug_settings& settings = {}) {
  const int R = int(in.extent(1));
  const char* reason = nullptr;
  if constexpr (!Rows::int_indices) {
    reason = "the CUDA kernel takes int row offsets and column indices";
  } else {
    const bool row_major =
        (in.extent(0) <= 1 || in.stride(0) == std::size_t(R)) && in.stride(1) == 1 &&
        (out.extent(0) <= 1 || out.stride(0) == std::size_t(R)) && out.stride(1) == 1;
    if (!row_major)
      reason = "the CUDA kernel takes row-major vector blocks";
    else if (dots && eta.stride(1) != 1)
      reason = "the CUDA kernel takes a row-major eta";
    else if (R > cuda_aug_max_columns)
      reason = "the CUDA kernel takes at most 128 vectors";
  }
  if (!nearsparse::detail::take_specialized(settings.function, settings.implementation,
                                            reason == nullptr, Kokkos::Cuda::name(), reason)) {
    portable_aug_spmmv(exec, label, rows, row_begin, row_end, in, out, c, dots, eta, step);
    return;
  }
  if constexpr (Rows::int_indices) {
    if (row_end <= row_begin || R == 0) return;
    using scalar = typename Rows::scalar_type;
    cuda_aug_args a;
    a.function = settings.function;
    if constexpr (Rows::is_sell) {
      a.chunk_offsets = rows.chunk_offsets.data();
      a.chunk_lengths = rows.chunk_lengths.data();
      a.chunk_height = rows.chunk_height;
    } else {
      a.row_map = reinterpret_cast<const int*>(rows.row_map.data());
    }
    a.columns = reinterpret_cast<const int*>(rows.columns_data());
    a.values = rows.values.data();
    a.complex_values = !std::is_same_v<scalar, double>;
    a.in = in.data();
    a.out = out.data();
    a.R = R;
    a.row_begin = row_begin;
    a.row_end = row_end;
    a.alpha = c.alpha;
    a.beta = c.beta;
    a.gamma = c.gamma;
    a.eta = dots ? eta.data() : nullptr;
    a.eta_ld = dots ? int(eta.stride(0)) : 0;
    a.step = step;
    a.period = settings.period;
    cuda_aug_spmmv(exec, a, settings.tuning);
  }
}

/// The CUDA kernel orders its rows by the matrix's stencil period: a host scan of the first rows,
/// done once per run, unless the portable kernel was asked for.
template <class Rows>
aug_settings aug_period(const Kokkos::Cuda&, const Rows& rows, aug_settings settings) {
  if (settings.implementation != nearsparse::implementation::portable)
    settings.period = stencil_period_of(rows);
  return settings;
}
#endif

}  // namespace nearsparse::kpm::detail
