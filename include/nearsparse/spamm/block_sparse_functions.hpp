#pragma once
// The density matrix of a block-sparse Hamiltonian by SP2 purification with block-sparse SpAMM
// products (spamm/block_sparse.hpp, spamm/block_sparse_algebra.hpp): from H to D without a
// dense N x N array.
//
// What. sp2(exec, H, occupied, D, opts) writes into D the density matrix D = theta(mu I - H) of
// the real symmetric block-sparse H, the projector onto its `occupied` lowest eigenstates, with
// mu in the gap between the occupied-th and the next eigenvalue.
//
// Algorithm: trace-correcting SP2 (Niklasson, Phys. Rev. B 66, 155115 (2002)). With [e_min,
// e_max] the Gershgorin bounds of H (gershgorin_bounds), X0 = (e_max I - H) / (e_max - e_min)
// has its spectrum in [0, 1], the occupied states highest. Each step forms X2 = X X with the
// block-sparse multiply (norm-product filtering at options.tau, then the drop rule at
// options.drop_tolerance relative to ||X2||_F), the residual ||X2 - X||_F (add into a scratch
// matrix, no drop), and then
//   X <- X2          when |tr(X2) - occupied| <= |2 tr(X) - tr(X2) - occupied|,
//   X <- 2X - X2     otherwise (add, with the same relative drop rule),
// both of which map [0, 1] into itself: X^2 moves every eigenvalue toward 0, 2X - X^2 toward
// 1, and the choice steers the trace toward `occupied`, so that the eigenvalues split into
// those tending to 1 and those tending to 0. The iteration stops when residual /
// max(1, sqrt(occupied)) <= options.idempotency_tolerance (converged; ||D||_F = sqrt(occupied)),
// when the residual stagnates (stagnated, not converged: once below 0.09, so every eigenvalue
// lies within 0.1 of 0 or 1, it did not fall against the step two before across two steps of
// different branches, the rounding floor; or on two steps in a row it was at most what the
// step's product filtering changed, error_bound plus dropped_norm, the filtering floor), or
// after options.max_iterations steps (not converged). The number of steps grows as log2(1 / g) for
// a relative gap g = gap / (e_max - e_min), about 2 log2(1 / g) + 10. occupied == 0 and occupied ==
// N give D = 0 and D = I exactly, without steps. When e_max == e_min (H = c I, a single point
// spectrum) no split is possible for 0 < occupied < N: refused.
//
// Error. With tau = 0 and drop_tolerance = 0 the steps are exact up to rounding, and at
// convergence ||D - P||_F <= 3 ||X2 - X||_F of the last step (the last step moves an eigenvalue
// lambda by at most lambda (1 - lambda), and lambda lies within 2 lambda (1 - lambda) of 0 or 1),
// P the projector of the iterate onto its eigenvalues above 1/2, which is the exact density
// matrix as long as P's rank is `occupied` (the gap is larger than the errors). Rounding adds
// about u sqrt(N) / g (u the unit roundoff of Scalar). With tau > 0 or drop_tolerance > 0 each
// step adds an error of at most report.steps[k].error_bound (the products dropped by tau) plus
// its dropped_norm (the tiles the drop rule removed); the report sums them
// (error_bound_sum, dropped_norm_sum). Later steps purify errors in the eigenvalues away but not
// the rotation of the occupied subspace they cause, at most about sqrt(2) E / g for an error E
// (Davis-Kahan): ||D - D_exact||_F <~ 3 residual + sqrt(2) (error_bound_sum + dropped_norm_sum)
// / g, to first order. The report does not know g; the model generators give it in closed form
// (spamm::dimerized_chain_gap, cubic_lattice_gap). D.dropped_norm() is set to error_bound_sum +
// dropped_norm_sum.
//
// Complexity and memory. A step costs one block-sparse multiply (O(kept products * tile^3)) and
// two adds (O(tiles * tile^2)); memory is that of four block-sparse matrices (X, X2, the
// residual scratch and the new X), O(tile rows + tiles of X2 * tile^2). No dense N x N array
// anywhere: with a decaying density matrix and positive tau and drop tolerance the tiles kept
// stay O(N), and so the cost per step.
//
//   nearsparse::spamm::block_sparse_options bopt;
//   bopt.tile = 32;
//   auto H = nearsparse::spamm::from_crs(exec, hamiltonian_crs, bopt);
//   nearsparse::spamm::block_sparse_matrix<double, Exec> D(exec, H.rows(), H.cols(), bopt.tile);
//   nearsparse::spamm::block_sparse_sp2_options opt;
//   opt.tau = 1e-8;                      // drop tile products with norm product < 1e-8
//   opt.drop_tolerance = 1e-9;           // drop tiles below 1e-9 ||X||_F
//   auto report = nearsparse::spamm::sp2(exec, H, H.rows() / 2, D, opt);
//   report.converged, report.iterations, report.error_bound_sum + report.dropped_norm_sum
//
// Arguments are checked on entry: nearsparse::invalid_argument names the function, the argument
// and the extents involved. All kernels and allocations run on the given execution space
// instance; sp2 waits for it before returning.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_algebra.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nearsparse::spamm {

/// Options of sp2 on block-sparse matrices.
struct block_sparse_sp2_options {
  /// A tile product of X X is kept when its norm product is >= tau; 0 keeps every product.
  double tau = 0.0;
  /// Tiles of X^2 and of 2X - X^2 below drop_tolerance times their matrix's ||.||_F are dropped
  /// (the relative drop rule); 0 drops only exactly zero tiles.
  double drop_tolerance = 0.0;
  /// Stop when ||X^2 - X||_F / max(1, sqrt(occupied)) is at most this.
  double idempotency_tolerance = 1e-6;
  /// Most steps; the report says converged = false when they run out.
  int max_iterations = 100;
};

/// One SP2 step.
struct block_sparse_sp2_step {
  int iteration = 0;
  /// Whether the step took X <- X^2 (true) or X <- 2X - X^2 (false).
  bool square = true;
  /// "x^2" or "2x-x^2".
  const char* step = "";
  /// Stored tiles of X after the step.
  std::int64_t tiles = 0;
  /// The product X X: products kept at tau and candidate products of stored tiles.
  std::int64_t kept_products = 0;
  std::int64_t candidate_products = 0;
  /// The product's error bound (block_sparse_report::error_bound): >= ||X X - X2||_F before
  /// its drop rule.
  double error_bound = 0.0;
  /// Norm of the tiles the drop rule removed in the step (from X2 and, for 2X - X^2, from it).
  double dropped_norm = 0.0;
  /// trace(X) after the step.
  double trace = 0.0;
  /// ||X^2 - X||_F of the X the step started from.
  double residual = 0.0;
};

/// What sp2 did.
struct block_sparse_sp2_report {
  std::vector<block_sparse_sp2_step> steps;
  int iterations = 0;
  /// The residual met options.idempotency_tolerance (D = 0 or I exactly, or an empty H, too).
  bool converged = false;
  /// The residual stopped decreasing before meeting the tolerance (see the header's comment).
  bool stagnated = false;
  /// The last step's residual ||X^2 - X||_F (0 without steps).
  double residual = 0.0;
  /// trace(D).
  double trace = 0.0;
  /// Sums over the steps of error_bound and dropped_norm.
  double error_bound_sum = 0.0;
  double dropped_norm_sum = 0.0;
  /// The Gershgorin bounds of H.
  spectral_bounds bounds;
};

/// The density matrix of the real symmetric block-sparse H with `occupied` occupied states
/// (0 <= occupied <= N) by trace-correcting SP2 (see the top of this header). D must have H's
/// extents and tile (a zero matrix from the (exec, rows, cols, tile) constructor); it receives
/// new arrays, and keeps its old ones when an argument is refused. H is assumed symmetric (not
/// checked: only its stored tiles are read).
template <class Scalar, class ExecSpace>
block_sparse_sp2_report sp2(const ExecSpace& exec, const block_sparse_matrix<Scalar, ExecSpace>& h,
                            std::int64_t occupied, block_sparse_matrix<Scalar, ExecSpace>& d,
                            const block_sparse_sp2_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::sp2";
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  h.check_structure(fn, "H");
  d.check_structure(fn, "D");
  detail::require_square(fn, "H", h);
  require(d.rows() == h.rows() && d.cols() == h.cols(), fn, "D",
          nearsparse::detail::concat("has extents ", d.rows(), " x ", d.cols(), ", expected ",
                                     h.rows(), " x ", h.cols(), " (those of H)"));
  require(d.tile() == h.tile(), fn, "D",
          nearsparse::detail::concat("(", detail::describe(d), ") has tile ", d.tile(), ", but H (",
                                     detail::describe(h), ") has tile ", h.tile()));
  const int n = h.rows();
  require(occupied >= 0 && occupied <= std::int64_t(n), fn, "occupied",
          nearsparse::detail::concat("is ", occupied, "; it must lie in [0, ", n, "] for H of ",
                                     detail::describe(h)));
  require(std::isfinite(options.tau) && options.tau >= 0, fn, "options.tau",
          nearsparse::detail::concat("is ", options.tau, "; it must be finite and >= 0"));
  require(
      std::isfinite(options.drop_tolerance) && options.drop_tolerance >= 0, fn,
      "options.drop_tolerance",
      nearsparse::detail::concat("is ", options.drop_tolerance, "; it must be finite and >= 0"));
  require(std::isfinite(options.idempotency_tolerance) && options.idempotency_tolerance >= 0, fn,
          "options.idempotency_tolerance",
          nearsparse::detail::concat("is ", options.idempotency_tolerance,
                                     "; it must be finite and >= 0"));
  require(options.max_iterations >= 1, fn, "options.max_iterations",
          nearsparse::detail::concat("is ", options.max_iterations, "; it must be at least 1"));
  {
    std::int64_t bad = 0;
    detail::sum_of_squares(exec, h.norms(), bad);
    detail::require_non_finite_free(fn, "H", bad, detail::describe(h));
  }

  block_sparse_sp2_report report;
  if (n == 0) {
    matrix empty(exec, 0, 0, h.tile());
    d.assign(empty.parts(), fn, "D");
    report.converged = true;
    return report;
  }
  report.bounds = gershgorin_bounds(exec, h);
  const double e_min = report.bounds.lower, e_max = report.bounds.upper;
  const double width = e_max - e_min;
  require(width > 0 || occupied == 0 || occupied == std::int64_t(n), fn, "H",
          nearsparse::detail::concat("(", detail::describe(h),
                                     ") has Gershgorin bounds e_min = e_max = ", e_max,
                                     ": its spectrum is the single point ", e_max,
                                     ", so the density matrix is 0 or I and no split into ",
                                     occupied, " of ", n, " occupied states exists"));
  if (occupied == 0 || occupied == std::int64_t(n)) {
    // D = 0 or D = I exactly.
    matrix exact =
        occupied == 0 ? matrix(exec, n, n, h.tile()) : identity<Scalar>(exec, n, h.tile());
    d.assign(exact.parts(), fn, "D");
    report.converged = true;
    report.trace = double(occupied);
    return report;
  }

  const double occ = static_cast<double>(occupied);
  const double norm_d = std::max(1.0, std::sqrt(occ));
  block_sparse_multiply_options mopt;
  mopt.tau = options.tau;
  mopt.drop_tolerance = options.drop_tolerance;
  mopt.rule = drop_rule::relative;
  block_sparse_add_options aopt;
  aopt.drop_tolerance = options.drop_tolerance;
  aopt.rule = drop_rule::relative;
  block_sparse_add_options exact_add;  // the residual: no drop beyond exact zeros

  // X0 = (e_max I - H) / (e_max - e_min).
  matrix x;
  {
    const matrix id = identity<Scalar>(exec, n, h.tile());
    add(exec, Scalar(e_max / width), id, Scalar(-1.0 / width), h, x, exact_add);
  }
  double tr_x = trace(exec, x);
  matrix x2(exec, n, n, h.tile());
  matrix diff;
  double history[2] = {-1.0, -1.0};  // residuals of the two steps before
  bool filtered_before = false;      // the step before lay within its filtering
  for (int k = 0; k < options.max_iterations; ++k) {
    const block_sparse_report product = multiply(exec, Scalar(1), x, x, Scalar(0), x2, mopt);
    const double tr_x2 = trace(exec, x2);
    add(exec, Scalar(1), x2, Scalar(-1), x, diff, exact_add);
    const double residual = frobenius_norm(exec, diff);
    block_sparse_sp2_step step;
    step.iteration = k;
    step.square = std::abs(tr_x2 - occ) <= std::abs(2.0 * tr_x - tr_x2 - occ);
    step.step = step.square ? "x^2" : "2x-x^2";
    step.kept_products = product.kept_products;
    step.candidate_products = product.candidate_products;
    step.error_bound = product.error_bound;
    step.dropped_norm = product.dropped_norm;
    step.residual = residual;
    if (step.square) {
      x = x2;
    } else {
      const block_sparse_add_report r = add(exec, Scalar(2), x, Scalar(-1), x2, x, aopt);
      step.dropped_norm += r.dropped_norm;
    }
    tr_x = step.square ? tr_x2 : trace(exec, x);
    step.trace = tr_x;
    step.tiles = x.kept_tiles();
    report.error_bound_sum += step.error_bound;
    report.dropped_norm_sum += step.dropped_norm;
    report.steps.push_back(step);
    report.iterations = k + 1;
    report.residual = residual;
    if (residual <= options.idempotency_tolerance * norm_d) {
      report.converged = true;
      break;
    }
    // Stagnation, checked only in the quadratic regime: residual < 0.09 puts every eigenvalue
    // within 0.1 of 0 or 1 (lambda (1 - lambda) <= ||X^2 - X||_2 <= residual). There, two steps
    // of different branches square every eigenvalue's distance to 0 or 1 (times 4), so the
    // residual must fall against two steps before; where it does not, rounding or the product
    // filtering hold it (Kruchinina, Rudberg, Rubensson, JCTC 12, 5788 (2016)). Steps of the
    // same branch may raise it legitimately (the side the branch moves away from), and so may
    // the middle of the iteration, where eigenvalues near the split still drift. Also stagnated:
    // two steps in a row whose residual lies within what their product filtering changed (error
    // bound plus dropped norm), below which further steps cannot bring it.
    const double filtered = product.error_bound + product.dropped_norm;
    const bool alternated = k >= 1 && report.steps[std::size_t(k) - 1].square != step.square;
    const bool within_filtering = filtered > 0 && residual <= filtered;
    if (residual < 0.09 && ((alternated && history[0] >= 0 && residual >= history[0]) ||
                            (within_filtering && filtered_before))) {
      report.stagnated = true;
      break;
    }
    filtered_before = within_filtering;
    history[0] = history[1];
    history[1] = residual;
  }
  report.trace = tr_x;
  // D's dropped norm: what the steps' filtering left out, summed (report.error_bound_sum +
  // dropped_norm_sum), as the iteration's own account; the error it causes in D is that
  // amplified by up to about sqrt(2) / g (see the top of this header).
  auto parts = x.parts();
  parts.dropped_norm = report.error_bound_sum + report.dropped_norm_sum;
  d.assign(parts, fn, "D");
  exec.fence();
  return report;
}

}  // namespace nearsparse::spamm
