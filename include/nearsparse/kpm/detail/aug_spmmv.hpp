#pragma once
// The dispatch of the augmented SpMMV, the one sparse kernel of the KPM family: the generic
// functions here run the portable kernel (aug_kernel.hpp) on any execution space; a backend with
// a specialized kernel overloads them for its execution space (Kokkos::Cuda:
// cuda_aug_spmmv.hpp; Kokkos::OpenMP and Kokkos::Serial: host_aug_spmmv.hpp).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/detail/aug_kernel.hpp>
#include <nearsparse/kpm/detail/cuda_aug_spmmv.hpp>
#include <nearsparse/kpm/detail/host_aug_spmmv.hpp>

namespace nearsparse::kpm::detail {

/// out = alpha H in + beta in + gamma out over rows [row_begin, row_end), with the step's dot
/// products added to eta when `dots` (aug_kernel.hpp). Throws nearsparse::unsupported for
/// implementation::specialized, which this execution space does not have.
template <class Exec, class Rows, class In, class Out, class Eta>
void aug_spmmv(const Exec& exec, const char* label, const Rows& rows, int row_begin, int row_end,
               const In& in, const Out& out, aug_coefficients c, bool dots, const Eta& eta,
               int step, const aug_settings& settings = {}) {
  nearsparse::detail::take_specialized_none<Exec>(settings.function, settings.implementation);
  portable_aug_spmmv(exec, label, rows, row_begin, row_end, in, out, c, dots, eta, step);
}

/// `settings` with the stencil period filled in where the kernel the dispatch takes on `exec`
/// uses it; the portable kernel does not.
template <class Exec, class Rows>
aug_settings aug_period(const Exec&, const Rows&, aug_settings settings) {
  return settings;
}

/// Throws nearsparse::invalid_argument naming `function` and the field for a tuning the CUDA
/// kernel cannot take for R vectors (src/kpm/moments.cpp).
void check_tuning(const cuda_tuning& tuning, int R, const char* function);

}  // namespace nearsparse::kpm::detail
