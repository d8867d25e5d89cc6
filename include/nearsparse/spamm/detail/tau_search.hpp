#pragma once
// The tau search of section 3.5.2 of the cuSpAMM paper as a state machine over any way of
// counting kept products: one process on the host (a launch per count), one team on the device
// (detail/kept_products.hpp: search_tau_in_one_team), and many processes (distributed_plan,
// counting over all of them) step through the same arithmetic, so the same counts give the same
// tau.

#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::spamm::detail {

/// Searches [0, k * average], k = 1, 2, ... widened until the upper end's valid ratio is at or
/// below the target, then bisects; the result is the tau whose ratio came closest to the target
/// among those evaluated (kept through the whole search, not the last one). It stops at the first
/// ratio within `tolerance`, after max_iterations bisections, or when the interval cannot shrink.
/// Use: while (!s.done()) s.observe(ratio at s.tau()); then s.best().
class tau_bisection {
 public:
  KOKKOS_INLINE_FUNCTION tau_bisection(double target, int max_iterations, int max_widenings,
                                       double tolerance, double average)
      : target_(target),
        tolerance_(tolerance),
        max_iterations_(max_iterations),
        max_widenings_(max_widenings),
        step_(average > 0 ? average : 1.0),
        hi_(step_),
        next_(step_) {}

  tau_bisection(double target, const search_options& search, double average)
      : tau_bisection(target, search.max_iterations, search.max_widenings, search.tolerance,
                      average) {}

  KOKKOS_INLINE_FUNCTION bool done() const { return done_; }
  /// The threshold whose valid ratio the search needs next.
  KOKKOS_INLINE_FUNCTION double tau() const { return next_; }
  /// Takes the valid ratio that tau() gives.
  KOKKOS_INLINE_FUNCTION void observe(double ratio) {
    ++evaluations_;
    if (distance(ratio) < distance(best_ratio_)) {
      best_tau_ = next_;
      best_ratio_ = ratio;
    }
    if (widening_) {
      if (ratio > target_ && widenings_ < max_widenings_) {
        lo_ = hi_;
        hi_ = step_ * (widenings_ + 1);
        ++widenings_;
        next_ = hi_;
        return;
      }
      widening_ = false;
    } else {
      if (ratio > target_) {
        lo_ = next_;
      } else {
        hi_ = next_;
      }
      ++bisections_;
    }
    plan_bisection();
  }
  /// The tau whose ratio came closest to the target so far.
  KOKKOS_INLINE_FUNCTION double best() const { return best_tau_; }
  /// Ratios observed, widening included.
  KOKKOS_INLINE_FUNCTION int evaluations() const { return evaluations_; }

 private:
  KOKKOS_INLINE_FUNCTION double distance(double ratio) const {
    return ratio > target_ ? ratio - target_ : target_ - ratio;
  }
  // The next midpoint, or done: out of iterations, within tolerance, or an interval that cannot
  // shrink further.
  KOKKOS_INLINE_FUNCTION void plan_bisection() {
    if (bisections_ >= max_iterations_ || distance(best_ratio_) <= tolerance_ || !(hi_ > lo_)) {
      done_ = true;
      return;
    }
    const double mid = 0.5 * (lo_ + hi_);
    if (mid <= lo_ || mid >= hi_) {
      done_ = true;
      return;
    }
    next_ = mid;
  }

  double target_, tolerance_;
  int max_iterations_, max_widenings_;
  double step_, lo_ = 0.0, hi_, next_;
  double best_tau_ = 0.0, best_ratio_ = 1.0;
  int widenings_ = 1, bisections_ = 0, evaluations_ = 0;
  bool widening_ = true, done_ = false;
};

struct tau_found {
  double tau = 0.0;
  int iterations = 0;  ///< evaluations of ratio_at, widening included
};

/// The search on the host: `ratio_at(tau)` returns the valid ratio a threshold tau gives.
template <class RatioAt>
tau_found bisect_tau(double target, const search_options& search, double average,
                     RatioAt&& ratio_at) {
  tau_bisection s(target, search, average);
  while (!s.done()) s.observe(ratio_at(s.tau()));
  return {s.best(), s.evaluations()};
}

}  // namespace nearsparse::spamm::detail
