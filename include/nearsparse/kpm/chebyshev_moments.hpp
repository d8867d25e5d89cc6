#pragma once
// Options and output of a Chebyshev moment computation.

#include <nearsparse/core/implementation.hpp>
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

/// "naive", "aug_spmv" or "aug_spmmv".
const char* to_string(algorithm a);
/// The names above (case-insensitive); throws nearsparse::invalid_argument naming `function` and
/// `argument` and listing the accepted names otherwise.
algorithm parse_algorithm(const std::string& name,
                          const char* function = "nearsparse::kpm::parse_algorithm",
                          const char* argument = "name");

/// Launch shape of the CUDA kernel of the augmented SpMMV (the specialized path on Kokkos::Cuda),
/// for tuning it on another GPU. The defaults (0 or true) are the automatic choices; the portable
/// kernel ignores these fields. Checked by every moment entry point.
struct cuda_tuning {
  /// Rows in each chunk a thread block walks (rounded to whole windows of the block's rows); 0:
  /// the most windows, up to 512 rows, whose rows divide the matrix's stencil period.
  int chunk_rows = 0;
  /// Lanes of a warp per row (1, 2, 4, 8, 16 or 32) and block columns per lane (1, 2 or 4):
  /// both 0 (automatic: 2 columns per lane up to R = 64, 4 up to 128) or both set, with
  /// lanes_per_row * columns_per_lane >= R.
  int lanes_per_row = 0;
  int columns_per_lane = 0;
  /// Run the kernel compiled for R where R fills every lane (R = lanes * columns); false runs the
  /// kernel that takes R at run time, for comparison.
  bool compiled_width = true;
  /// With 16 lanes per row and chunks of one stencil period, walk two periods together so that
  /// they share the neighbours one period apart; false walks one.
  bool pair_periods = true;
};

struct moments_options {
  int num_moments = 1024;  ///< M >= 2: moments mu_0 ... mu_{M-1}
  int num_vectors = 16;    ///< R >= 1 random start vectors (ignored when a start block is given)
  std::uint64_t seed = 1;  ///< start vectors are a function of (seed, row, vector)
  algorithm method = algorithm::aug_spmmv;
  /// Which kernel applies the matrix: automatic takes the specialized kernel where it serves the
  /// call and the portable team-policy kernel elsewhere; portable always takes the portable
  /// kernel; specialized takes the specialized kernel and throws nearsparse::unsupported where it
  /// cannot run. The specialized kernels: on Kokkos::Cuda the CUDA kernel (row-major blocks, int
  /// indices, R <= 128); on Kokkos::OpenMP and Kokkos::Serial the host kernel, vectorized over
  /// the R vectors of a row (row-major blocks, int indices, any R; AVX2 where the processor has
  /// it, chosen at run time). A split or distributed run applies it to every part.
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  cuda_tuning tuning;  ///< the CUDA kernel's launch shape (automatic by default)
  /// Called after each recurrence step with (steps done, steps in all), from the calling thread.
  std::function<void(int, int)> progress;
};

/// The Chebyshev moments of a run and what they came from.
struct chebyshev_moments {
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
