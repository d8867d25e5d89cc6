#pragma once
// Matrix functions of near-sparse symmetric matrices by iterations of SpAMM products, one plan
// reused by every product (plan::update with the step's operands, plan::search_error with the
// step's error target, plan::multiply):
//
//   sp2           the density matrix D = theta(mu I - H) of a real symmetric H with a given number
//                 of occupied states, by trace-correcting SP2 purification (Niklasson, Phys. Rev.
//                 B 66, 155115 (2002)): X0 = (e_max I - H) / (e_max - e_min) from Gershgorin
//                 bounds, then X <- X^2 when that brings trace(X) closer to the occupation and
//                 X <- 2X - X^2 otherwise, until X is idempotent.
//   inverse_sqrt  S^(-1/2) of a symmetric positive definite S by the coupled Newton-Schulz
//                 iteration (Higham, Functions of Matrices, 6.3): Y0 = c S, Z0 = I with
//                 c = 1 / (Gershgorin upper bound), T = (3I - Z Y)/2, Y <- Y T, Z <- T Z; Z tends
//                 to (c S)^(-1/2), and S^(-1/2) = sqrt(c) Z. Three products a step.
//   sign          sign(A) of a real symmetric A without eigenvalues at 0 (for a Hamiltonian,
//                 sign(H - mu I) = I - 2 D) by Newton-Schulz: X0 = A / (Gershgorin bound of |A|),
//                 X <- X (3I - X^2) / 2. Two products a step.
//
// Error target and schedule. target_error bounds the relative Frobenius error of the result,
// ||F - f(A)||_F / ||f(A)||_F (||D||_F = sqrt(occupation), ||sign(A)||_F = sqrt(N)). Half of it
// (product_share) goes to the dropped SpAMM products, the rest to stopping the iteration. Step k
// of an expected K (schedule_iterations; automatic: 2 log2(1/g0) + 10 for sp2 and sign, 25 for
// inverse_sqrt) may drop products of absolute error (plan::error_bound times ||A||_F ||B||_F)
//     e_k = product_share * target_error * ||f||_F * w_k * g_k / (products per step * a),
//     w_k = 1 / (2K) for k < K and 2^-(k - K + 2) after, so that sum_k w_k <= 1 whatever the
//     number of steps taken,
// where g_k is what the step's error is amplified by and a its constant. A product error E
// moves the result of sp2 and sign by the rotation of the invariant subspace it causes, at most
// sqrt(2) ||E||_F / g (Davis-Kahan), g the spectral gap of the iterate around the split point:
// g_k = max(g0, 1 - 2 eta_k) for sp2, eta_k (1 - eta_k) = ||X^2 - X||_F (every eigenvalue within
// eta_k of 0 or 1; rigorous once eta_k < 1/2), and g_k = max(g0, 2 sqrt(1 - ||X^2 - I||_F)) for
// sign, with g0 = options.gap / (spectral width) from the gap of the input around the split (the
// model generators give it in closed form; when it is 0, g0 = 0.1 is assumed, and a smaller
// true gap makes the error estimate optimistic). Errors in the eigenvalues alone are damped by
// the later steps (purification and Newton-Schulz converge quadratically to the same limit).
// Newton-Schulz for the inverse square root is stable (errors of a step carry forward, first
// order, unamplified): g_k = 1 there. The step's target for plan::search_error is e_k over
// ||A||_F ||B||_F, searched even where it lies below rounding_floor(precision)
// (search_options::below_rounding_floor: the rounding is counted apart, below; the report counts
// those steps). The iteration stops
// when its own residual bounds the rest of the error budget, (1 - product_share) target_error:
//   sp2           3 ||X^2 - X||_F / ||D||_F (the last step moves an eigenvalue lambda by at most
//                 lambda (1 - lambda), and lambda lies within 2 lambda (1 - lambda) of 0 or 1),
//   inverse_sqrt  ||I - Z Y||_F / 2 (Z = Z* (I + E), Z Y = I + 2E to first order),
//   sign          ||X^2 - I||_F / sqrt(N) (|lambda - sign(lambda)| <= |lambda^2 - 1|),
// or when the residual stagnates (it grew against two steps before, once below a tenth of
// ||f||_F: Kruchinina, Rudberg, Rubensson, JCTC 12, 5788 (2016); for sp2 once below 0.09, so
// that every eigenvalue lies within 0.1 of 0 or 1, and across two steps of different branches,
// since a branch taken twice may raise the residual legitimately).
//
// The report's error_estimate sums the amplified bounds of the dropped products, the residual
// term, and the rounding of the inputs u (unit_roundoff, or float's where the result is float):
// of the last product for sp2 (2u ||X||_F / ||D||_F, as ||X||_2 <= 1) and sign, whose later steps
// correct earlier roundings, and of every step for inverse_sqrt (2u (3/2 + ||T||_F) a step),
// which does not. target_met says whether the estimate is within target_error. A target below
// the accuracy floor of the precision (function_error_floor) is refused with
// nearsparse::invalid_argument; a target the iteration did not reach (max_iterations, a
// stagnating residual, a too small gap, the rounding of the 16-bit formats in inverse_sqrt) is
// reported as target_met = false, never silently missed within the estimate's assumptions.
// Measured errors against a dense eigendecomposition (unit_tests/spamm/test_matrix_functions.cpp)
// lie below the estimate.
//
// The estimate is first order and rests on assumptions it does not check. sp2: that the gap of
// every iterate around the split stays at least g0, which holds near half filling (the split near
// 1/2); an X -> X^2 step narrows the gap of a split below 1/2, 2X - X^2 one above. inverse_sqrt:
// that S is well conditioned; an error in Y reaches Z amplified by up to about kappa(S). The
// 16-bit formats: that the roundings of earlier steps rotate the invariant subspace less than the
// last step's. Where these fail the estimate may be optimistic: check a tight target against an
// eigendecomposition at a small N first (the commands' self-check does).
//
//   nearsparse::spamm::function_options opt;
//   opt.precision = nearsparse::spamm::precision::fp32;
//   opt.target_error = 1e-4;
//   auto report = nearsparse::spamm::sp2(exec, H, n / 2, D, opt);   // D: the density matrix

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/model_matrices.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace nearsparse::spamm {

/// The smallest target_error the matrix functions accept for a precision, relative to
/// ||f(A)||_F: the rounding of every iterate to the input format (unit roundoff u) leaves an
/// error of about u sqrt(N) / g in the result that no threshold removes. fp64 1e-10, fp32 1e-5,
/// tf32 and fp16 2e-3, bf16 2e-2; with float outputs (the iterates are held in the output's type)
/// at least the fp32 floor.
inline double function_error_floor(precision p) {
  switch (p) {
    case precision::fp64:
      return 1e-10;
    case precision::fp32:
      return 1e-5;
    case precision::tf32:
    case precision::fp16:
      return 2e-3;
    default:
      return 2e-2;
  }
}

struct function_options {
  /// Input format of the SpAMM products (see spamm::precision).
  spamm::precision precision = spamm::precision::fp32;
  /// Tile edge of the products: 32, 64 or 128.
  int tile = 64;
  /// Relative Frobenius error of the result (at least function_error_floor(precision)).
  double target_error = 1e-4;
  /// Most steps; the report says converged = false when they run out.
  int max_iterations = 100;
  /// Fraction of target_error given to the dropped products (the rest to stopping), in (0, 1).
  double product_share = 0.5;
  /// Expected number of steps K of the schedule; 0: automatic (see the header's comment).
  int schedule_iterations = 0;
  /// The spectral gap of the input around the split point (sp2: between the highest occupied and
  /// the lowest unoccupied eigenvalue; sign: around 0), in the input's units; 0: unknown.
  double gap = 0.0;
  /// Which SpAMM kernels run the products (see spamm::options::implementation).
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
};

/// One product (or one step) of an iteration.
struct function_step {
  int iteration = 0;
  /// "x^2" or "2x-x^2" (sp2), "zy", "yt", "tz" (inverse_sqrt), "x^2", "xt" (sign).
  const char* step = "";
  double valid_ratio = 0.0;
  /// The target given to plan::search_error and the bound it reached, both relative to
  /// ||A||_F ||B||_F.
  double product_target = 0.0;
  double product_error_bound = 0.0;
  /// The step's contribution to the error estimate (relative to ||f(A)||_F).
  double error_contribution = 0.0;
  /// The residual of the iterate the product was taken from: ||X^2 - X||_F (sp2),
  /// ||I - Z Y||_F (inverse_sqrt), ||X^2 - I||_F (sign).
  double residual = 0.0;
  /// trace(X) after the step (sp2); trace of the product otherwise.
  double trace = 0.0;
};

/// What a matrix function did.
struct function_report {
  std::vector<function_step> steps;
  int iterations = 0;
  /// The residual met the stopping test (false: max_iterations ran out or it stagnated).
  bool converged = false;
  /// The residual stopped decreasing at the rounding floor of the precision.
  bool stagnated = false;
  /// error_estimate <= target_error.
  bool target_met = false;
  double target_error = 0.0;
  /// Estimated relative Frobenius error of the result (see the header's comment).
  double error_estimate = 0.0;
  /// The last residual (as in function_step).
  double residual = 0.0;
  /// Mean valid ratio over the products.
  double mean_valid_ratio = 0.0;
  /// Products whose error target lay below the precision's rounding floor (their dropped
  /// products within it all the same; the rounding is in error_estimate).
  int targets_at_floor = 0;
  /// The Gershgorin bounds of the input.
  spectral_bounds bounds;
};

}  // namespace nearsparse::spamm

// The iterations, which take the options and report above.
#include <nearsparse/spamm/detail/matrix_functions.hpp>

namespace nearsparse::spamm {

namespace detail {
template <class ExecSpace, class AView, class FView>
void check_function_arguments(const char* fn, const AView& a, const FView& f,
                              const function_options& opt) {
  static_assert_matrix<ExecSpace, AView>();
  static_assert_matrix<ExecSpace, FView>();
  using f_value = typename FView::non_const_value_type;
  static_assert(std::is_same<f_value, float>::value || std::is_same<f_value, double>::value,
                "nearsparse::spamm: the result of a matrix function must hold float or double");
  static_assert(!std::is_const<typename FView::value_type>::value,
                "nearsparse::spamm: the result of a matrix function must be writable");
  require(a.extent(0) == a.extent(1), fn, "A",
          nearsparse::detail::concat("has extents ", nearsparse::detail::extents_string(a),
                                     "; it must be square"));
  require_extents(fn, "result", f, a.extent(0), a.extent(1));
  require(opt.tile == 32 || opt.tile == 64 || opt.tile == 128, fn, "options.tile",
          nearsparse::detail::concat("is ", opt.tile, "; expected 32, 64 or 128"));
  double floor = function_error_floor(opt.precision);
  if (std::is_same<f_value, float>::value)
    floor = std::max(floor, function_error_floor(precision::fp32));
  require(
      std::isfinite(opt.target_error) && opt.target_error >= floor && opt.target_error < 1, fn,
      "options.target_error",
      nearsparse::detail::concat("is ", opt.target_error, "; it must lie in [", floor,
                                 ", 1): the accuracy floor of ", to_string(opt.precision),
                                 std::is_same<f_value, float>::value ? " with a float result" : "",
                                 " (function_error_floor)"));
  require(opt.max_iterations >= 1, fn, "options.max_iterations",
          nearsparse::detail::concat("is ", opt.max_iterations, "; it must be at least 1"));
  require(opt.product_share > 0 && opt.product_share < 1, fn, "options.product_share",
          nearsparse::detail::concat("is ", opt.product_share, "; it must lie in (0, 1)"));
  require(opt.schedule_iterations >= 0, fn, "options.schedule_iterations",
          nearsparse::detail::concat("is ", opt.schedule_iterations, "; it must not be negative"));
  require_nonnegative(fn, "options.gap", opt.gap);
}
}  // namespace detail

/// The density matrix D of the real symmetric h with `occupied` occupied states (0 <= occupied
/// <= N) by SP2 purification with SpAMM products; d (N x N, float or double) receives D.
template <class ExecSpace, class HView, class DView>
function_report sp2(const ExecSpace& exec, const HView& h, std::int64_t occupied, const DView& d,
                    const function_options& opt = function_options{}) {
  constexpr const char* fn = "nearsparse::spamm::sp2";
  detail::check_function_arguments<ExecSpace>(fn, h, d, opt);
  require_finite(exec, fn, "H", h);
  require(occupied >= 0 && std::uint64_t(occupied) <= h.extent(0), fn, "occupied",
          nearsparse::detail::concat("is ", occupied, "; it must lie in [0, ", h.extent(0),
                                     "] for H of extents ", nearsparse::detail::extents_string(h)));
  return detail::sp2_impl(exec, h, occupied, d, opt);
}

/// S^(-1/2) of the symmetric positive definite s by coupled Newton-Schulz with SpAMM products;
/// z (N x N, float or double) receives it. Throws nearsparse::invalid_argument when the
/// Gershgorin upper bound of s is not positive (s is not positive definite).
template <class ExecSpace, class SView, class ZView>
function_report inverse_sqrt(const ExecSpace& exec, const SView& s, const ZView& z,
                             const function_options& opt = function_options{}) {
  constexpr const char* fn = "nearsparse::spamm::inverse_sqrt";
  detail::check_function_arguments<ExecSpace>(fn, s, z, opt);
  require_finite(exec, fn, "S", s);
  return detail::inverse_sqrt_impl(exec, s, z, opt);
}

/// sign(A) of the real symmetric a by Newton-Schulz with SpAMM products; x (N x N, float or
/// double) receives it.
template <class ExecSpace, class AView, class XView>
function_report sign(const ExecSpace& exec, const AView& a, const XView& x,
                     const function_options& opt = function_options{}) {
  constexpr const char* fn = "nearsparse::spamm::sign";
  detail::check_function_arguments<ExecSpace>(fn, a, x, opt);
  require_finite(exec, fn, "A", a);
  return detail::sign_impl(exec, a, x, opt);
}

}  // namespace nearsparse::spamm
