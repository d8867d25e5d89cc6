#pragma once
// The tau search of section 3.5.2 of the cuSpAMM paper on any way of counting kept products, so
// that one process (spamm_plan) and many (distributed_spamm_plan, counting over all processes)
// search the same way and land on the same tau.

#include <nearsparse/spamm/options.hpp>

#include <cmath>

namespace nearsparse::detail::spamm {

struct tau_found {
  double tau = 0.0;
  int iterations = 0;  ///< evaluations of ratio_at, widening included
};

/// Searches [0, k * average], k = 1, 2, ... widened until the upper end's valid ratio is at or
/// below `target`, then bisects; returns the tau whose ratio came closest to `target`.
/// `ratio_at(tau)` returns the valid ratio a threshold tau gives.
template <class RatioAt>
tau_found bisect_tau(double target, const spamm_search_options& search, double average,
                     RatioAt&& ratio_at) {
  tau_found found;
  auto evaluate = [&](double tau) {
    ++found.iterations;
    return ratio_at(tau);
  };
  double best_tau = 0.0, best_ratio = 1.0;
  auto consider = [&](double tau, double ratio) {
    if (std::abs(ratio - target) < std::abs(best_ratio - target)) {
      best_tau = tau;
      best_ratio = ratio;
    }
  };
  const double step = average > 0 ? average : 1.0;
  double lo = 0.0, hi = step, r_hi = evaluate(hi);
  consider(hi, r_hi);
  for (int widen = 1; r_hi > target && widen < search.max_widenings; ++widen) {
    lo = hi;
    hi = step * (widen + 1);
    r_hi = evaluate(hi);
    consider(hi, r_hi);
  }
  for (int it = 0;
       it < search.max_iterations && std::abs(best_ratio - target) > search.tolerance && hi > lo;
       ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;  // the interval cannot shrink further
    const double r = evaluate(mid);
    consider(mid, r);
    if (r > target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  found.tau = best_tau;
  return found;
}

}  // namespace nearsparse::detail::spamm
