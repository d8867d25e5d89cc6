#pragma once
// The host specialization of the augmented SpMMV (src/kpm/host_aug_spmmv.cpp) on Kokkos::OpenMP
// and Kokkos::Serial. The vector blocks are row-major (leading dimension R) and read as arrays of
// doubles, complex numbers as (re, im) pairs, so the R columns of a row are one contiguous run of
// D = R (real) or 2 R (complex) doubles. The rows are cut into ranges of consecutive rows
// balanced by stored entries plus rows, several per thread, taken dynamically; for each row a
// thread walks the run in blocks of W
// doubles, and for each block the row's entries, keeping the block's accumulators in registers:
//   p += Re(v) x,   q += Im(v) x,   then  H x = p + (-q_im, +q_re)  pair by pair,
// contiguous loops without shuffles (the one swap of q's pairs is per block, not per entry),
// which the compiler turns into SIMD at its baseline instruction set. The block's results are
// then scaled and shifted
// (alpha, beta, gamma are real, so that is element-wise on the doubles) and the dot products of
// the step accumulate in per-range arrays while the row is in registers; the ranges' partial
// sums are added to eta in row order (deterministic for a given thread count). SELL-C-sigma
// rows are walked with stride C over their true lengths, the padding skipped. On x86-64
// processors with AVX2 and FMA, a copy of the same kernel compiled for them (per function, chosen
// at run time) runs instead unless aug_settings::host_wide_vectors is false.
//
// The overloads of aug_spmmv() here are the host branch of the dispatch in detail/aug_spmmv.hpp.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/kpm/detail/aug_kernel.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace nearsparse::kpm::detail {

struct host_aug_args {
  const char* label = "nearsparse::kpm::aug_spmmv";  ///< the kernel's name for Kokkos' tools
  // Matrix: CRS when chunk_offsets is null, SELL-C-sigma otherwise (row_lengths: each row's
  // entries before padding).
  const int* row_map = nullptr;
  const std::int64_t* chunk_offsets = nullptr;
  const int* chunk_lengths = nullptr;
  const int* row_lengths = nullptr;
  int chunk_height = 1;
  const int* columns = nullptr;
  const double* values = nullptr;  ///< (re, im) pairs when complex_values
  bool complex_values = true;
  // Blocks: in (rows of H's columns) and out, row-major with R columns.
  const double* in = nullptr;
  double* out = nullptr;
  int R = 1;
  int row_begin = 0, row_end = 0;
  double alpha = 1, beta = 0, gamma = 0;
  // Dot products: eta rows 2 step and 2 step + 1, leading dimension eta_ld; null: none.
  double* eta = nullptr;
  int eta_ld = 0;
  int step = 0;
  bool wide_vectors = true;  ///< aug_settings::host_wide_vectors
};

#ifdef KOKKOS_ENABLE_OPENMP
void host_aug_spmmv(const Kokkos::OpenMP& exec, const host_aug_args& args);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
void host_aug_spmmv(const Kokkos::Serial& exec, const host_aug_args& args);
#endif

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
/// The host branch of the dispatch on Exec (Kokkos::OpenMP or Kokkos::Serial): the host kernel
/// where it serves the call (int indices, row-major blocks and eta) and settings.implementation
/// allows, the portable kernel otherwise; throws nearsparse::unsupported for
/// implementation::specialized where it cannot serve.
template <class Exec, class Rows, class In, class Out, class Eta>
void host_aug_dispatch(const Exec& exec, const char* label, const Rows& rows, int row_begin,
                       int row_end, const In& in, const Out& out, aug_coefficients c, bool dots,
                       const Eta& eta, int step, const aug_settings& settings) {
  using scalar = typename Rows::scalar_type;
  static_assert(std::is_same_v<std::remove_const_t<typename In::value_type>, scalar> &&
                    std::is_same_v<typename Out::value_type, scalar>,
                "nearsparse::kpm: the vector blocks must hold the matrix's scalar type");
  const int R = int(in.extent(1));
  const char* reason = nullptr;
  if constexpr (!Rows::int_indices) {
    reason = "the host kernel takes int row offsets and column indices";
  } else {
    const bool row_major =
        (in.extent(0) <= 1 || in.stride(0) == std::size_t(R)) && in.stride(1) == 1 &&
        (out.extent(0) <= 1 || out.stride(0) == std::size_t(R)) && out.stride(1) == 1;
    if (!row_major)
      reason = "the host kernel takes row-major vector blocks";
    else if (dots && eta.stride(1) != 1)
      reason = "the host kernel takes a row-major eta";
  }
  if (!nearsparse::detail::take_specialized(settings.function, settings.implementation,
                                            reason == nullptr, Exec::name(), reason)) {
    portable_aug_spmmv(exec, label, rows, row_begin, row_end, in, out, c, dots, eta, step);
    return;
  }
  if constexpr (Rows::int_indices) {
    if (row_end <= row_begin || R == 0) return;
    host_aug_args a;
    a.label = label;
    if constexpr (Rows::is_sell) {
      a.chunk_offsets = rows.chunk_offsets.data();
      a.chunk_lengths = rows.chunk_lengths.data();
      a.row_lengths = rows.row_lengths.data();
      a.chunk_height = rows.chunk_height;
    } else {
      a.row_map = reinterpret_cast<const int*>(rows.row_map.data());
    }
    a.columns = reinterpret_cast<const int*>(rows.columns_data());
    a.values = reinterpret_cast<const double*>(rows.values.data());
    a.complex_values = !std::is_same_v<scalar, double>;
    a.in = reinterpret_cast<const double*>(in.data());
    a.out = reinterpret_cast<double*>(out.data());
    a.R = R;
    a.row_begin = row_begin;
    a.row_end = row_end;
    a.alpha = c.alpha;
    a.beta = c.beta;
    a.gamma = c.gamma;
    a.eta = dots ? eta.data() : nullptr;
    a.eta_ld = dots ? int(eta.stride(0)) : 0;
    a.step = step;
    a.wide_vectors = settings.host_wide_vectors;
    host_aug_spmmv(exec, a);
  }
}
#endif

#ifdef KOKKOS_ENABLE_OPENMP
template <class Rows, class In, class Out, class Eta>
void aug_spmmv(const Kokkos::OpenMP& exec, const char* label, const Rows& rows, int row_begin,
               int row_end, const In& in, const Out& out, aug_coefficients c, bool dots,
               const Eta& eta, int step, const aug_settings& settings = {}) {
  host_aug_dispatch(exec, label, rows, row_begin, row_end, in, out, c, dots, eta, step, settings);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
template <class Rows, class In, class Out, class Eta>
void aug_spmmv(const Kokkos::Serial& exec, const char* label, const Rows& rows, int row_begin,
               int row_end, const In& in, const Out& out, aug_coefficients c, bool dots,
               const Eta& eta, int step, const aug_settings& settings = {}) {
  host_aug_dispatch(exec, label, rows, row_begin, row_end, in, out, c, dots, eta, step, settings);
}
#endif

}  // namespace nearsparse::kpm::detail
