#pragma once
// Options and reports of the sparse approximate matrix multiply (SpAMM).
//
// SpAMM cuts A (M x K) and B (K x N) into tiles of `tile` x `tile` elements, computes the
// Frobenius norm of every tile (the norm maps), and forms C = alpha * A * B + beta * C keeping
// only the tile products A[i,k] B[k,j] whose norm product ||A[i,k]||_F ||B[k,j]||_F is at least
// tau. The valid ratio is the fraction of the MT * KT * NT tile products that are kept.
//
// Error bound. For output tile (i, j), the dropped products give an error of Frobenius norm at
// most d_ij = sum over dropped k of ||A[i,k]||_F ||B[k,j]||_F, so ||E||_F <= sqrt(sum_ij d_ij^2)
// (plan::error_bound). options::target_error and plan::search_error state an error target
// relative to ||A||_F ||B||_F (from the norm maps: the square root of the sum of squared tile
// norms), which bounds ||A B||_F and is known before the product; the bound covers the dropped
// products only, not the rounding of the inputs to the input format nor that of the
// accumulation (see rounding_floor).

#include <nearsparse/core/implementation.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace nearsparse::spamm {

/// Arithmetic of a SpAMM product. Inputs are rounded to the input format once, when the plan
/// is built; products accumulate in the accumulation format.
enum class precision {
  fp64,  ///< double inputs, double accumulation (DMMA tensor cores on CUDA)
  fp32,  ///< float inputs, float accumulation with plain FMA
  tf32,  ///< inputs rounded to TF32 (10-bit mantissa), float accumulation (tensor cores)
  fp16,  ///< inputs rounded to IEEE binary16, float accumulation (tensor cores)
  bf16   ///< inputs rounded to bfloat16, float accumulation (tensor cores)
};

/// "fp64", "fp32", "tf32", "fp16", "bf16".
const char* to_string(precision p);

/// Unit roundoff of the input format of `p`: 2^-53 (fp64), 2^-24 (fp32), 2^-11 (tf32, fp16),
/// 2^-8 (bf16).
double unit_roundoff(precision p);

/// The smallest error target (options::target_error, plan::search_error) accepted for `p`,
/// relative to ||A||_F ||B||_F: 4 * unit_roundoff(p). Rounding A and B to the input format alone
/// changes the product by up to (2u + u^2) ||A||_F ||B||_F; the floor leaves as much again for the
/// accumulation's rounding, which grows with K (about sqrt(K) * u in practice, up to K * u). The
/// error bound does not include rounding: a measured error may exceed it by about this floor,
/// and a target below it could not be met, so it is refused.
double rounding_floor(precision p);

/// Parses the names above (case-insensitive); throws nearsparse::invalid_argument naming
/// `argument` and listing the accepted names otherwise.
precision parse_precision(const std::string& name, const char* argument = "precision");

/// How a tau search for a valid ratio counts the kept products of each step. `one_launch`: the
/// whole bisection in one launch of one team, with no wait between its steps (on a GPU);
/// `launch_per_count`: every count with the whole device, a launch and a wait per step. `automatic`
/// takes one_launch on a device the host cannot reach for up to 2^19 norm products (MT * NT * KT:
/// through N = 4096 with tiles of 64), where a count costs one team less than a launch and a wait,
/// and launch_per_count otherwise. Both give the same tau. A distributed plan counts over all
/// processes, one reduction per step, always.
enum class search_launch { automatic, one_launch, launch_per_count };

/// How the host path (Kokkos::OpenMP and Kokkos::Serial with a host BLAS) groups the kept tile
/// products into gemms. `merged`: rectangles of C tiles that keep the same k become one gemm per
/// run of consecutive kept k, and a tile row whose tiles keep different k is swept k by k, within
/// blocks of C sized so that every thread has several: fewer, larger gemms, each of which packs
/// its operands once for more multiply-adds. `per_tile`: every C tile is a unit of the schedule
/// with one gemm per run of its kept k: the finest load balance. Both compute exactly the kept
/// products in the same order of k. `automatic` is `merged`: its larger gemms matter most where
/// many products are kept, while on sparse products per_tile's finer balance can match it on
/// many threads (perf/RESULTS.md times both). No effect on other paths.
enum class host_grouping { automatic, merged, per_tile };

/// "automatic", "merged" or "per_tile".
const char* to_string(host_grouping g);

/// Parses the names above (case-insensitive); throws nearsparse::invalid_argument naming
/// `argument` and listing the accepted names otherwise.
host_grouping parse_host_grouping(const std::string& name, const char* argument = "host_grouping");

/// Binary search for the tau that gives a target valid ratio (section 3.5.2 of the cuSpAMM
/// paper): the search interval is [0, k * average norm product], k = 1, 2, ... widened until
/// the upper end gives a ratio at or below the target, then bisected.
///
/// A search for an error target (options::target_error, plan::search_error) uses max_iterations
/// only: it bisects over the norm products themselves and ends on the exact answer, in at most
/// about 64 steps and usually far fewer (with the default 60 it may stop a few steps short:
/// converged = false, tau still meeting the target; 64 reaches the answer always); tolerance,
/// max_widenings and launch do not apply to it.
struct search_options {
  int max_iterations = 60;   ///< bisection steps after the interval is found
  int max_widenings = 1000;  ///< most times the upper end is widened
  double tolerance = 0.002;  ///< stop when |achieved - target| <= tolerance (absolute)
  search_launch launch = search_launch::automatic;
  /// For an error search (options::target_error, plan::search_error): accept a target below
  /// rounding_floor(precision). The bound then still holds for the dropped products, but the
  /// rounding of the inputs and of the accumulation may exceed it; a caller that sets this
  /// accounts for that rounding itself (the matrix functions add it to their error estimates).
  bool below_rounding_floor = false;
};

struct options {
  spamm::precision precision = spamm::precision::fp32;
  /// Tile edge (LoNum): 32, 64 or 128. Norm maps and kept tile products are per tile.
  int tile = 64;
  /// Threshold on the norm product of a tile pair; 0 keeps every pair (the dense product).
  double tau = 0.0;
  /// When > 0, tau is searched for so that this fraction of tile products (0, 1] is kept, and
  /// `tau` is ignored.
  double target_valid_ratio = 0.0;
  /// When > 0, tau is the largest threshold whose error bound (plan::error_bound) is at most
  /// target_error * ||A||_F ||B||_F (see plan::search_error), and `tau` is ignored. 0 is off.
  /// Not together with target_valid_ratio; at least rounding_floor(precision).
  double target_error = 0.0;
  search_options search{};
  /// Load balance (section 3.5.1): each thread block computes s x s output blocks at equal
  /// strides, so blocks near the diagonal (heavy) and far from it (light) share the work.
  int load_balance_stride = 1;
  /// Which code packs the operands and computes the norm maps and the product. `specialized` is
  /// the CUDA packing (float and double operands), get-norm and multiplication kernels on
  /// Kokkos::Cuda, and on Kokkos::OpenMP and Kokkos::Serial the host
  /// path: norms by tile rows, the kept tile products through the host BLAS (OpenBLAS) on the
  /// packed panels, one gemm per run of consecutive kept k (it needs a build with OpenBLAS;
  /// nearsparse::unsupported without it and on other backends); `automatic` takes them where
  /// they exist and the portable team-policy kernels elsewhere; `portable` runs the portable
  /// kernels on every backend, to check the kernels against each other or to compare their
  /// speed.
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  /// Within the CUDA kernels: on a compute capability 9.0 GPU, take the wgmma kernel for tf32,
  /// fp16 and bf16 with tiles of 64 and 128 (the mma.sync and FMA kernels run everything else).
  /// false keeps the mma.sync kernels there too, to compare the two. No effect elsewhere.
  bool wgmma = true;
  /// Within the host path: how kept tile products are grouped into gemms (see host_grouping).
  spamm::host_grouping host_grouping = spamm::host_grouping::automatic;
  /// Check A and B for NaN and Inf while packing them (one reduction, no extra pass).
  bool check_finite = true;
};

/// What a tau search found.
struct search_report {
  double tau = 0.0;
  double valid_ratio = 0.0;  ///< achieved at tau
  /// The target valid ratio (search_tau), or the valid ratio found (search_error).
  double target = 0.0;
  /// Evaluations: counts (search_tau, widening included) or error bounds (search_error).
  int iterations = 0;
  /// search_tau: |valid_ratio - target| <= tolerance. search_error: tau is the largest threshold
  /// meeting the target (false only when max_iterations ran out first; tau then still meets it).
  bool converged = false;
  /// The error bound at tau relative to ||A||_F ||B||_F (plan::error_bound), the measure of
  /// target_error. Filled by search_error (search_tau leaves 0: plan::error_bound gives it).
  double error_bound = 0.0;
  /// The error target of search_error (0 for search_tau).
  double target_error = 0.0;
};

/// What one nearsparse::spamm::multiply call used.
struct multiply_report {
  double tau = 0.0;
  double valid_ratio = 0.0;
  /// The error bound of the dropped products relative to ||A||_F ||B||_F (plan::error_bound)
  /// when options::target_error chose tau (the search leaves it known, at no cost); NaN
  /// otherwise, where it would cost the call a reduction and a wait for the device: keep a plan
  /// and call plan::error_bound for it then.
  double error_bound = std::numeric_limits<double>::quiet_NaN();
};

/// The bound on the error of the dropped products at a plan's tau (plan::error_bound).
struct error_bound_report {
  /// sqrt(sum_ij d_ij^2), d_ij = sum over dropped k of ||A[i,k]||_F ||B[k,j]||_F: bounds
  /// ||A B - C||_F for the exact product of the rounded inputs, C = A B over the kept products.
  double bound = 0.0;
  /// ||A||_F ||B||_F from the norm maps (of the inputs rounded to the input format).
  double norm_product = 0.0;
  /// bound / norm_product (0 when norm_product is 0: then A or B is 0 and so is the bound).
  double relative() const { return norm_product > 0 ? bound / norm_product : 0.0; }
};

/// Frobenius norms for judging an approximate product: ||C_exact - C||_F and ||C_exact||_F.
struct error_report {
  double error_norm = 0.0;
  double reference_norm = 0.0;
  /// error_norm / reference_norm (error_norm itself when the reference is 0).
  double relative() const { return reference_norm > 0 ? error_norm / reference_norm : error_norm; }
  /// error_norm / scale (error_norm itself when scale is 0): with scale ||A||_F ||B||_F
  /// (error_bound_report::norm_product), the measure of target_error and of the error bound.
  double relative_to(double scale) const { return scale > 0 ? error_norm / scale : error_norm; }
};

}  // namespace nearsparse::spamm
