#pragma once
// The iterations of spamm/matrix_functions.hpp: SP2 purification, coupled Newton-Schulz for the
// inverse square root and Newton-Schulz for the sign function, each product through one SpAMM
// plan refreshed for the step's operands and searched for the step's error target. The iterates
// are held in the result's value type (float or double), LayoutRight, on exec's memory space.
// The error schedule and the stopping tests are documented in spamm/matrix_functions.hpp.

#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm/detail/matrix_functions_kernels.hpp>
#include <nearsparse/spamm/model_matrices.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace nearsparse::spamm::detail {

/// The share w_k of the product budget step k may spend: 1/(2K) for the K expected steps, then
/// halving, so that the shares of any number of steps sum to at most 1.
inline double schedule_weight(int k, int expected) {
  if (k < expected) return 0.5 / expected;
  return std::ldexp(1.0, -(k - expected + 2));
}

/// The products of one matrix function through one plan: the plan is built by the first product
/// and refreshed for every later one.
template <class ExecSpace>
class product_chain {
 public:
  product_chain(const function_options& opt, function_report& report)
      : report_(report), floor_(rounding_floor(opt.precision)) {
    opt_.precision = opt.precision;
    opt_.tile = opt.tile;
    opt_.implementation = opt.implementation;
    opt_.tau = 0.0;
  }

  /// c = a b with dropped products of absolute error bound at most `budget`; returns the step's
  /// entry with the product's target, bound and valid ratio filled. A target below the
  /// precision's rounding floor is searched all the same (search_options::below_rounding_floor):
  /// the bound limits what the dropped products add to the rounding, which the error estimate
  /// counts apart; the report counts those steps.
  template <class AView, class BView, class CView>
  function_step multiply(const ExecSpace& exec, const AView& a, const BView& b, const CView& c,
                         double budget) {
    if (!plan_) {
      plan_ = std::make_unique<plan<ExecSpace>>(exec, a, b, opt_);
    } else {
      plan_->update(exec, a, b);
    }
    // X X (sp2, sign) reads its operand's norm once.
    const double norm_a = frobenius_norm(exec, a);
    const bool same = static_cast<const void*>(a.data()) == static_cast<const void*>(b.data()) &&
                      a.extent(0) == b.extent(0) && a.extent(1) == b.extent(1);
    const double norms = norm_a * (same ? norm_a : frobenius_norm(exec, b));
    const double target = std::min(norms > 0 ? budget / norms : 1.0, 1.0);
    function_step step;
    step.product_target = target;
    search_options search;
    search.below_rounding_floor = true;
    const search_report found = plan_->search_error(exec, target, search);
    step.valid_ratio = found.valid_ratio;
    step.product_error_bound = found.error_bound;
    if (target < floor_) ++report_.targets_at_floor;
    plan_->multiply(exec, 1.0, 0.0, c);
    absolute_bound_ = step.product_error_bound * norms;
    valid_sum_ += step.valid_ratio;
    ++products_;
    return step;
  }

  /// The absolute error bound of the last product.
  double absolute_bound() const { return absolute_bound_; }
  double mean_valid_ratio() const { return products_ > 0 ? valid_sum_ / products_ : 0.0; }

 private:
  function_report& report_;
  options opt_;
  double floor_;
  std::unique_ptr<plan<ExecSpace>> plan_;
  double absolute_bound_ = 0.0;
  double valid_sum_ = 0.0;
  int products_ = 0;
};

template <class T, class ExecSpace>
Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space> iterate_matrix(
    const ExecSpace& exec, const char* label, int n) {
  return Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space>(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), n, n);
}

/// The schedule's expected number of steps: from the options, or 2 log2(1/g0) + 10 (sp2, sign)
/// and 25 (inverse_sqrt).
inline int expected_steps(const function_options& opt, double g0, bool gap_driven) {
  if (opt.schedule_iterations > 0) return opt.schedule_iterations;
  if (!gap_driven) return 25;
  return static_cast<int>(std::ceil(2.0 * std::log2(1.0 / std::max(g0, 1e-12)))) + 10;
}

constexpr double sqrt2 = 1.4142135623730951;

/// The unit roundoff of the products' inputs and of the iterates held in T.
template <class T>
double iterate_roundoff(const function_options& opt) {
  return std::max(unit_roundoff(opt.precision), 0.5 * double(std::numeric_limits<T>::epsilon()));
}

template <class ExecSpace, class HView, class DView>
function_report sp2_impl(const ExecSpace& exec, const HView& h, std::int64_t occupied,
                         const DView& d, const function_options& opt) {
  using T = typename DView::non_const_value_type;
  function_report report;
  report.target_error = opt.target_error;
  const int n = static_cast<int>(h.extent(0));
  if (n == 0 || occupied == 0 || occupied == n) {
    // D = 0 or D = I exactly.
    if (n > 0) scale_shift(exec, d, 0.0, h, occupied == 0 ? 0.0 : 1.0);
    if (n > 0) report.bounds = gershgorin_bounds(exec, h);
    exec.fence();
    report.converged = report.target_met = true;
    return report;
  }
  report.bounds = gershgorin_bounds(exec, h);
  double width = report.bounds.upper - report.bounds.lower;
  if (!(width > 0)) width = 1.0;  // H = c I: no gap, the iteration stagnates and says so
  const double g0 = opt.gap > 0 ? std::min(1.0, opt.gap / width) : 0.1;
  const int expected = expected_steps(opt, g0, true);
  const double occ = static_cast<double>(occupied);
  const double norm_d = std::sqrt(occ);
  const double product_budget = opt.product_share * opt.target_error * norm_d;
  const double stop_budget = (1 - opt.product_share) * opt.target_error * norm_d;

  auto x = iterate_matrix<T>(exec, "nearsparse::spamm::sp2_X", n);
  auto x2 = iterate_matrix<T>(exec, "nearsparse::spamm::sp2_X2", n);
  scale_shift(exec, x, -1.0 / width, h, report.bounds.upper / width);
  product_chain<ExecSpace> chain(opt, report);
  double products_error = 0.0;
  double history[2] = {-1.0, -1.0};  // residuals of the two steps before
  bool last_square = true;           // the branch of the step before
  for (int k = 0; k < opt.max_iterations; ++k) {
    // The residual of X is known only after X^2; the gap factor uses the last step's.
    const double eta_bound = history[1] >= 0 && history[1] < 0.25
                                 ? 0.5 * (1.0 - std::sqrt(1.0 - 4.0 * history[1]))
                                 : 0.5;
    const double g = std::max(g0, 1.0 - 2.0 * eta_bound);
    const double budget = product_budget * schedule_weight(k, expected) * g / sqrt2;
    function_step step = chain.multiply(exec, x, x, x2, budget);
    const double tr_x = trace(exec, x), tr_x2 = trace(exec, x2);
    const double residual = combination_norm(exec, 1.0, x2, -1.0, x, 0.0);
    // X <- X^2 or X <- 2X - X^2, whichever trace is closer to the occupation.
    const bool square = std::abs(tr_x2 - occ) <= std::abs(2.0 * tr_x - tr_x2 - occ);
    if (square) {
      Kokkos::deep_copy(exec, x, x2);
    } else {
      combine(exec, x, 2.0, x, -1.0, x2, 0.0);
    }
    step.iteration = k;
    step.step = square ? "x^2" : "2x-x^2";
    step.residual = residual;
    step.trace = square ? tr_x2 : 2.0 * tr_x - tr_x2;
    step.error_contribution = sqrt2 * chain.absolute_bound() / g / norm_d;
    products_error += step.error_contribution;
    report.steps.push_back(step);
    report.iterations = k + 1;
    report.residual = residual;
    // The step just taken moves an eigenvalue lambda by at most lambda (1 - lambda), and lambda
    // lies within 2 lambda (1 - lambda) of 0 or 1: ||X_(k+1) - P||_F <= 3 ||X^2 - X||_F.
    if (3.0 * residual <= stop_budget) {
      report.converged = true;
      break;
    }
    // Stagnation, checked only in the quadratic regime: residual < 0.09 puts every eigenvalue
    // within 0.1 of 0 or 1 (lambda (1 - lambda) <= ||X^2 - X||_2 <= residual). There two steps
    // of different branches square every eigenvalue's distance to 0 or 1 (times 4), so the
    // residual must fall against two steps before; where it does not, rounding or the dropped
    // products hold it. Two steps of the same branch may raise it legitimately, and so may the
    // middle of the iteration at small gaps or far from half filling.
    const bool alternated = k >= 1 && square != last_square;
    if (alternated && history[0] >= 0 && residual < 0.09 && residual >= history[0]) {
      report.stagnated = true;
      break;
    }
    last_square = square;
    history[0] = history[1];
    history[1] = residual;
  }
  // Rounding the inputs of the last product changes it by at most 2u ||X||_F ||X||_2, and
  // ||X||_2 <= 1 (SP2 maps [0, 1] into itself); earlier roundings are purified away.
  const double rounding = 2.0 * iterate_roundoff<T>(opt) * frobenius_norm(exec, x) / norm_d;
  report.error_estimate = products_error + 3.0 * report.residual / norm_d + rounding;
  report.target_met = report.error_estimate <= opt.target_error;
  report.mean_valid_ratio = chain.mean_valid_ratio();
  scale_shift(exec, d, 1.0, x, 0.0);
  exec.fence();
  return report;
}

template <class ExecSpace, class SView, class ZView>
function_report inverse_sqrt_impl(const ExecSpace& exec, const SView& s, const ZView& z_out,
                                  const function_options& opt) {
  using T = typename ZView::non_const_value_type;
  constexpr const char* fn = "nearsparse::spamm::inverse_sqrt";
  function_report report;
  report.target_error = opt.target_error;
  const int n = static_cast<int>(s.extent(0));
  if (n == 0) {
    report.converged = report.target_met = true;
    return report;
  }
  report.bounds = gershgorin_bounds(exec, s);
  require(report.bounds.upper > 0, fn, "S",
          nearsparse::detail::concat("has the Gershgorin upper bound ", report.bounds.upper,
                                     "; it is not positive definite"));
  const double c = 1.0 / report.bounds.upper;
  const int expected = expected_steps(opt, 1.0, false);
  const double sqrt_n = std::sqrt(static_cast<double>(n));
  const double product_budget = opt.product_share * opt.target_error / 3.0;
  const double stop_budget = (1 - opt.product_share) * opt.target_error;

  auto y = iterate_matrix<T>(exec, "nearsparse::spamm::invsqrt_Y", n);
  auto z = iterate_matrix<T>(exec, "nearsparse::spamm::invsqrt_Z", n);
  auto t = iterate_matrix<T>(exec, "nearsparse::spamm::invsqrt_T", n);
  auto next = iterate_matrix<T>(exec, "nearsparse::spamm::invsqrt_next", n);
  scale_shift(exec, y, c, s, 0.0);
  set_identity(exec, z);
  product_chain<ExecSpace> chain(opt, report);
  double products_error = 0.0;
  double history[2] = {-1.0, -1.0};
  double norm_z = sqrt_n;
  const double u = iterate_roundoff<T>(opt);
  double rounding = 0.0;
  for (int k = 0; k < opt.max_iterations; ++k) {
    const double w = schedule_weight(k, expected);
    function_step zy = chain.multiply(exec, z, y, t, product_budget * w * sqrt_n);
    const double residual = shifted_norm(exec, t, 1.0);
    zy.iteration = k;
    zy.step = "zy";
    zy.residual = residual;
    zy.trace = trace(exec, t);
    zy.error_contribution = chain.absolute_bound() / sqrt_n;
    products_error += zy.error_contribution;
    report.steps.push_back(zy);
    report.iterations = k + 1;
    report.residual = residual;
    // Z = Z* (I + E) with Z Y = I + 2E to first order: ||Z - Z*||_F <= ||Z*||_2 ||E||_F, and
    // ||Z*||_2 <= ||Z*||_F, so ||I - Z Y||_F / 2 bounds the relative Frobenius error of Z.
    if (0.5 * residual <= stop_budget) {
      report.converged = true;
      break;
    }
    if (history[0] >= 0 && residual < 0.1 * sqrt_n && residual >= history[0]) {
      report.stagnated = true;
      break;
    }
    history[0] = history[1];
    history[1] = residual;
    combine(exec, t, -0.5, t, 0.0, t, 1.5);  // T = (3I - Z Y) / 2
    const double norm_y = frobenius_norm(exec, y);
    function_step yt = chain.multiply(exec, y, t, next, product_budget * w * norm_y);
    yt.iteration = k;
    yt.step = "yt";
    yt.residual = residual;
    yt.trace = trace(exec, next);
    yt.error_contribution = chain.absolute_bound() / std::max(norm_y, 1e-300);
    products_error += yt.error_contribution;
    report.steps.push_back(yt);
    std::swap(y, next);
    function_step tz = chain.multiply(exec, t, z, next, product_budget * w * norm_z);
    tz.iteration = k;
    tz.step = "tz";
    tz.residual = residual;
    tz.trace = trace(exec, next);
    tz.error_contribution = chain.absolute_bound() / norm_z;
    products_error += tz.error_contribution;
    report.steps.push_back(tz);
    std::swap(z, next);
    norm_z = frobenius_norm(exec, z);
    // Rounding the inputs of Y T and T Z: u (||Y||_F ||T||_2 + ||Y||_2 ||T||_F) / ||Y||_F with
    // ||T||_2 <= 3/2 and ||Y||_2 <= ||Y||_F, the same for Z. Newton-Schulz for the inverse square
    // root does not correct them: they add up over the steps.
    rounding += 2.0 * u * (1.5 + frobenius_norm(exec, t));
  }
  report.error_estimate = products_error + 0.5 * report.residual + rounding;
  report.target_met = report.error_estimate <= opt.target_error;
  report.mean_valid_ratio = chain.mean_valid_ratio();
  scale_shift(exec, z_out, std::sqrt(c), z, 0.0);
  exec.fence();
  return report;
}

template <class ExecSpace, class AView, class XView>
function_report sign_impl(const ExecSpace& exec, const AView& a, const XView& x_out,
                          const function_options& opt) {
  using T = typename XView::non_const_value_type;
  function_report report;
  report.target_error = opt.target_error;
  const int n = static_cast<int>(a.extent(0));
  if (n == 0) {
    report.converged = report.target_met = true;
    return report;
  }
  report.bounds = gershgorin_bounds(exec, a);
  double bound = std::max(std::abs(report.bounds.lower), std::abs(report.bounds.upper));
  if (!(bound > 0)) bound = 1.0;  // A = 0: sign(0) is undefined; the iteration says so
  const double g0 = opt.gap > 0 ? std::min(1.0, opt.gap / bound) : 0.1;
  const int expected = expected_steps(opt, g0, true);
  const double sqrt_n = std::sqrt(static_cast<double>(n));
  // Two products a step; a product error E moves sign(X) by at most 2 sqrt(2) ||E||_F / g.
  const double product_budget = opt.product_share * opt.target_error * sqrt_n / (2.0 * 2.0 * sqrt2);
  const double stop_budget = (1 - opt.product_share) * opt.target_error * sqrt_n;

  auto x = iterate_matrix<T>(exec, "nearsparse::spamm::sign_X", n);
  auto x2 = iterate_matrix<T>(exec, "nearsparse::spamm::sign_X2", n);
  auto next = iterate_matrix<T>(exec, "nearsparse::spamm::sign_next", n);
  scale_shift(exec, x, 1.0 / bound, a, 0.0);
  product_chain<ExecSpace> chain(opt, report);
  double products_error = 0.0;
  double last_t = 0.0;
  double history[2] = {-1.0, -1.0};
  for (int k = 0; k < opt.max_iterations; ++k) {
    const double r_last = history[1];
    const double g =
        std::max(g0, r_last >= 0 && r_last < 1.0 ? 2.0 * std::sqrt(1.0 - r_last) : 0.0);
    const double w = schedule_weight(k, expected);
    function_step sq = chain.multiply(exec, x, x, x2, product_budget * w * g);
    const double residual = shifted_norm(exec, x2, 1.0);
    sq.iteration = k;
    sq.step = "x^2";
    sq.residual = residual;
    sq.trace = trace(exec, x2);
    // X^2 enters the next iterate through X T, T = (3I - X^2)/2: ||X||_2 <= 1.5 on the way.
    sq.error_contribution = 2.0 * sqrt2 * 0.75 * chain.absolute_bound() / g / sqrt_n;
    products_error += sq.error_contribution;
    report.steps.push_back(sq);
    report.iterations = k + 1;
    report.residual = residual;
    // |lambda - sign(lambda)| <= |lambda^2 - 1|: ||X - sign(X)||_F <= ||X^2 - I||_F.
    if (residual <= stop_budget) {
      report.converged = true;
      break;
    }
    if (history[0] >= 0 && residual < 0.1 * sqrt_n && residual >= history[0]) {
      report.stagnated = true;
      break;
    }
    history[0] = history[1];
    history[1] = residual;
    combine(exec, x2, -0.5, x2, 0.0, x2, 1.5);  // T = (3I - X^2) / 2
    last_t = frobenius_norm(exec, x2);
    function_step xt = chain.multiply(exec, x, x2, next, product_budget * w * g);
    xt.iteration = k;
    xt.step = "xt";
    xt.residual = residual;
    xt.trace = trace(exec, next);
    xt.error_contribution = 2.0 * sqrt2 * chain.absolute_bound() / g / sqrt_n;
    products_error += xt.error_contribution;
    report.steps.push_back(xt);
    std::swap(x, next);
  }
  // Rounding the inputs of the product that made X: u (||X||_F ||T||_2 + ||X||_2 ||T||_F) with
  // ||T||_2 <= 3/2 and ||X||_2 <= 1; earlier roundings are corrected by the later steps.
  const double rounding =
      report.iterations > 1
          ? iterate_roundoff<T>(opt) * (1.5 * frobenius_norm(exec, x) + last_t) / sqrt_n
          : 0.0;
  report.error_estimate = products_error + report.residual / sqrt_n + rounding;
  report.target_met = report.error_estimate <= opt.target_error;
  report.mean_valid_ratio = chain.mean_valid_ratio();
  scale_shift(exec, x_out, 1.0, x, 0.0);
  exec.fence();
  return report;
}

}  // namespace nearsparse::spamm::detail
