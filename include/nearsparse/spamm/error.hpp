#pragma once
// Error of an approximate product against the exact one, for tests, benchmarks and the tau
// sweeps of the command-line program.

#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm/options.hpp>

namespace nearsparse {

/// ||C_exact - C_approx||_F and ||C_exact||_F.
template <class ExecSpace, class ExactView, class ApproxView>
spamm_error measure_spamm_error(const ExecSpace& exec, const ExactView& exact,
                                const ApproxView& approx) {
  spamm_error e;
  e.error_norm = frobenius_distance(exec, exact, approx);
  e.reference_norm = frobenius_norm(exec, exact);
  return e;
}

}  // namespace nearsparse
