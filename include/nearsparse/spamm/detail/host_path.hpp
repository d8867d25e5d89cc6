#pragma once
// Whether SpAMM's host path (the Kokkos::OpenMP and Kokkos::Serial overloads of the get-norm and
// multiplication dispatches, src/spamm/host_*.cpp) can run in this build, shared by both
// dispatches so that a plan takes the host path for all of its work or for none of it.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::spamm::detail {

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
/// Whether the host path can run here, and why not: it needs the
/// host BLAS (nearsparse::detail::host_blas). It serves every precision and tile: fp64 through
/// dgemm, fp32 and tf32 (float values) through sgemm, fp16 and bf16 decoded to float once per
/// product and then through sgemm, with float accumulation as on every other path.
bool host_spamm_available();
const char* host_spamm_unavailable_reason();

/// Whether the host path runs: false for implementation::portable and, where the build has no
/// host BLAS, for automatic; true otherwise (specialized without host BLAS throws).
template <class HostExec>
bool host_spamm_taken(const HostExec& exec, const char* function, const options& opt) {
  return nearsparse::detail::take_specialized(function, opt.implementation, host_spamm_available(),
                                              exec.name(), host_spamm_unavailable_reason());
}
#endif

}  // namespace nearsparse::spamm::detail
