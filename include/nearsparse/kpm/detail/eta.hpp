#pragma once
// From the raw dot products eta of the recurrence to Chebyshev moments (compiled in
// src/kpm/moments.cpp). eta(2m, r) = <v_m|v_m>, eta(2m+1, r) = <v_{m+1}|v_m> for start vector r;
// Chebyshev's doubling identities T_2m = 2 T_m^2 - T_0 and T_2m+1 = 2 T_m+1 T_m - T_1 give
// mu_n(r) = 2 eta(n, r) - eta(n mod 2, r).

#include <nearsparse/kpm/chebyshev_moments.hpp>

#include <cstdint>
#include <vector>

namespace nearsparse::kpm::detail {

/// Fills result.mu and result.mu_per_vector from eta (row-major, (2 * steps) x R). Throws
/// nearsparse::invalid_argument naming `function` and 'scaling' when ||v_m||^2 grew past
/// ||v_0||^2, which happens exactly when the scaled spectrum leaves [-1, 1].
void moments_from_eta(const std::vector<double>& eta, int steps, int R, chebyshev_moments& result,
                      const char* function);

/// What every driver reports: the run's description and the moments from its eta.
struct run_description {
  int num_moments, num_vectors, steps;
  std::int64_t rows, nonzeros;
  scaling map;
  algorithm method;
  double seconds;
};
chebyshev_moments finish_moments(const std::vector<double>& eta, const run_description& run,
                                 const char* function);

}  // namespace nearsparse::kpm::detail
