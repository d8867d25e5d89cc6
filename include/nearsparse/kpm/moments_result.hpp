#pragma once
// Options and results of a Chebyshev moment computation.

#include <nearsparse/kpm/scaling.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nearsparse::kpm {

/// The paper's three optimization stages, all kept: they compute the same moments.
enum class algorithm {
  naive,      ///< Figure 3: SpMV plus the BLAS-1 chain, one vector at a time
  aug_spmv,   ///< Figure 4: one fused kernel per step (SpMV, shifts, dot products), per vector
  aug_spmmv,  ///< Figure 5: the fused kernel over all R vectors at once, in a row-major block
};

const char* to_string(algorithm a);
/// "naive", "aug_spmv" or "aug_spmmv"; throws nearsparse::invalid_argument otherwise.
algorithm algorithm_from_string(const std::string& name);

/// Which kernel applies the matrix: `automatic` takes the CUDA kernel on Kokkos::Cuda (row-major
/// blocks, int indices, 2 <= R <= 128, where it measured faster) and the portable team-policy
/// kernel elsewhere; `portable`
/// forces the portable kernel everywhere (to check the CUDA kernel against it, or to time it).
enum class kernel_choice { automatic, portable };

struct moments_options {
  int num_moments = 1024;  ///< M >= 2: moments mu_0 ... mu_{M-1}
  int num_vectors = 16;    ///< R >= 1 random start vectors (ignored when a start block is given)
  std::uint64_t seed = 1;  ///< start vectors are a function of (seed, row, vector)
  algorithm method = algorithm::aug_spmmv;
  kernel_choice kernel = kernel_choice::automatic;
  /// Called after each recurrence step with (steps done, steps in all), from the calling thread.
  std::function<void(int, int)> progress;
};

struct moments_result {
  /// mu_n = sum_r <v0_r|T_n(H~)|v0_r> / sum_r <v0_r|v0_r>, n < M: the stochastic estimate of
  /// tr T_n(H~) / N (exact for a start block of all unit vectors). mu_0 = 1.
  std::vector<double> mu;
  /// mu_n of each start vector alone, normalized by its own norm: row-major M x R.
  std::vector<double> mu_per_vector;
  int num_moments = 0;
  int num_vectors = 0;
  std::int64_t rows = 0;
  std::int64_t nonzeros = 0;
  scaling map;
  algorithm method = algorithm::aug_spmmv;
  int steps = 0;       ///< recurrence steps: ceil(M / 2) matrix applications per vector
  double seconds = 0;  ///< wall time of the recurrence (start vectors to moments on host)
};

/// Work of one recurrence step for R vectors in the paper's model (Table I and equation 4, with
/// 4-byte indices): flops R [nnz (F_a + F_m) + N (ceil(7 F_a / 2) + ceil(9 F_m / 2))] and the
/// fewest bytes that must cross memory: the matrix once per step and 3 vectors per vector for
/// aug_spmmv, the matrix per vector for aug_spmv, and 13 vectors per vector for naive (its SpMV and
/// BLAS-1 chain). Complex double: S_d = 16, F_a = 2, F_m = 6; double: 8, 1, 1.
struct step_cost {
  double flops = 0;
  double min_bytes = 0;
};
step_cost step_cost_of(algorithm method, std::int64_t rows, std::int64_t nonzeros, int R,
                       bool complex_values = true);

}  // namespace nearsparse::kpm
