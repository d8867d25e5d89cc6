#pragma once
// Error of an approximate product against the exact one, for tests, benchmarks and the tau
// sweeps of the command-line program.

#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm/options.hpp>

namespace nearsparse::spamm {

/// ||C_exact - C_approx||_F and ||C_exact||_F.
template <class ExecSpace, class ExactView, class ApproxView>
error_report measure_error(const ExecSpace& exec, const ExactView& exact,
                           const ApproxView& approx) {
  error_report e;
  e.error_norm = nearsparse::frobenius_distance(exec, exact, approx);
  e.reference_norm = nearsparse::frobenius_norm(exec, exact);
  return e;
}

}  // namespace nearsparse::spamm
