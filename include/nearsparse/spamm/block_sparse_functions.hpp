#pragma once
// Matrix functions of block-sparse symmetric matrices by iterations of block-sparse SpAMM
// products (spamm/block_sparse.hpp, spamm/block_sparse_algebra.hpp), without a dense N x N
// array: the density matrix by SP2 purification (sp2), the inverse square root by coupled
// Newton-Schulz (inverse_sqrt) and the sign function by Newton-Schulz (sign). All three take
// block_sparse_function_options and return a block_sparse_function_report.
//
// Products and their filtering. Every product of an iteration is a block-sparse multiply that
// keeps the tile products with norm product >= options.tau and then removes the tiles of the
// result below options.drop_tolerance times the result's ||.||_F (the relative drop rule); the
// sums (2X - X^2 in sp2, T = (3I - P)/2 in inverse_sqrt and sign) apply the same relative drop
// rule. options.implementation chooses the kernels of the products as for multiply
// (block_sparse_multiply_options::implementation: on the host spaces the host BLAS where the
// build has it, on CUDA its kernel; `specialized` where the space has none is refused when the
// function starts, with nearsparse::unsupported naming the function); the sums, traces and norms
// have one (portable) implementation. Each report step records the product's error
// bound (block_sparse_report::error_bound: >= ||A B - (A B)_kept||_F) and the norm of the tiles
// the drop rules removed (dropped_norm); the report sums them (error_bound_sum,
// dropped_norm_sum), and the result's dropped_norm() is set to that sum (scaled by sqrt(c) for
// inverse_sqrt, below) as the iteration's own account of what it left out. With tau = 0 and
// drop_tolerance = 0 the iterations are exact up to rounding.
//
// Stopping. Each function has its residual, listed below, and stops when it is at most
// options.residual_tolerance times the norm given there (converged), when it stagnates
// (stagnated, not converged: it did not fall against the step two before once in the regime of
// quadratic convergence, the rounding floor; or on two steps in a row it was at most what the
// filtering of the step's products changed, error_bound plus dropped_norm, the filtering floor),
// or after options.max_iterations steps (not converged). inverse_sqrt and sign also end, not
// converged and not stagnated, when the residual exceeds 2 sqrt(N), which an iteration that
// converges never reaches (an S that is not positive definite, too coarse a filtering).
//
// sp2(exec, H, occupied, D, opts) writes into D the density matrix D = theta(mu I - H) of the
// real symmetric H, the projector onto its `occupied` lowest eigenstates, with mu in the gap
// between the occupied-th and the next eigenvalue.
//   Algorithm: trace-correcting SP2 (Niklasson, Phys. Rev. B 66, 155115 (2002)). With [e_min,
//   e_max] the Gershgorin bounds of H (gershgorin_bounds), X0 = (e_max I - H) / (e_max - e_min)
//   has its spectrum in [0, 1], the occupied states highest. Each step forms X2 = X X, the
//   residual ||X2 - X||_F (add into a scratch matrix, no drop), and then
//     X <- X2          when |tr(X2) - occupied| <= |2 tr(X) - tr(X2) - occupied|,
//     X <- 2X - X2     otherwise,
//   both of which map [0, 1] into itself: X^2 moves every eigenvalue toward 0, 2X - X^2 toward
//   1, and the choice steers the trace toward `occupied`, so that the eigenvalues split into
//   those tending to 1 and those tending to 0. Converged when residual / max(1, sqrt(occupied))
//   <= residual_tolerance (||D||_F = sqrt(occupied)). Stagnation is checked once the residual
//   is below 0.09 (every eigenvalue within 0.1 of 0 or 1), the rounding floor across two steps
//   of different branches (a branch taken twice may raise the residual legitimately). The
//   number of steps grows as log2(1 / g) for a relative gap g = gap / (e_max - e_min), about
//   2 log2(1 / g) + 10. occupied == 0 and occupied == N give D = 0 and D = I exactly, without
//   steps. When e_max == e_min (H = c I) no split is possible for 0 < occupied < N: refused.
//   Error: at convergence ||D - P||_F <= 3 ||X2 - X||_F of the last step (the last step moves
//   an eigenvalue lambda by at most lambda (1 - lambda), and lambda lies within
//   2 lambda (1 - lambda) of 0 or 1), P the projector of the iterate onto its eigenvalues above
//   1/2, the exact density matrix as long as the gap is larger than the errors. Rounding adds
//   about u sqrt(N) / g (u the unit roundoff of Scalar). Later steps purify errors in the
//   eigenvalues away but not the rotation of the occupied subspace they cause, at most about
//   sqrt(2) E / g for an error E (Davis-Kahan): ||D - D_exact||_F <~ 3 residual + sqrt(2)
//   (error_bound_sum + dropped_norm_sum) / g, to first order. The report does not know g; the
//   model generators give it in closed form (spamm::dimerized_chain_gap, cubic_lattice_gap).
//   Cost: one multiply and two adds a step; four block-sparse matrices (X, X2, the residual
//   scratch and the new X).
//
// inverse_sqrt(exec, S, Z, opts) writes into Z the inverse square root S^(-1/2) of the symmetric
// positive definite S.
//   Algorithm: coupled Newton-Schulz (Higham, Functions of Matrices, 6.3), as the dense
//   inverse_sqrt of spamm/matrix_functions.hpp: with c = 1 / (the Gershgorin upper bound of S),
//   which puts the spectrum of c S in (0, 1], Y0 = c S, Z0 = I, and each step
//     P = Z Y ("zy"),  T = (3I - P) / 2,  Y <- Y T ("yt"),  Z <- T Z ("tz");
//   Y tends to (c S)^(1/2), Z to (c S)^(-1/2), and Z = sqrt(c) Z_k at the end. An eigenvalue p
//   of Z Y in (0, 1] moves to p (3 - p)^2 / 4, toward 1, quadratically near it; the smallest
//   eigenvalue of c S, 1 / kappa at worst (kappa <= the ratio of the Gershgorin upper bound to
//   the smallest eigenvalue), needs about log_(9/4)(kappa) steps to reach 1/2, then a few
//   more. Residual ||I - Z Y||_F, measured on the P of each step (before T), converged when
//   residual / sqrt(N) <= residual_tolerance (||I||_F = sqrt(N)). Stagnation is checked once the
//   residual is below 0.1 sqrt(N) (the dense version's rule). S is refused when its Gershgorin
//   upper bound is not positive (as the dense version: S is then not positive definite); an S
//   with a negative eigenvalue and a positive upper bound is not refused, since the iteration
//   cannot tell it in advance: its eigenvalue p < 0 of Z Y moves away from 1, and the iteration
//   ends unconverged (a residual above 2 sqrt(N), or stagnation, or max_iterations).
//   Error: at convergence Z_k = Z* (I + E) with Z Y = I + 2E to first order, so that
//   ||Z - S^(-1/2)||_F <= ||S^(-1/2)||_2 residual / 2. The iteration is stable: errors of a
//   product carry forward unamplified to first order, but an error in Y reaches Z amplified by
//   up to about kappa(S). The error sums are in the units of the scaled iterates (of c S):
//   ||Z - S^(-1/2)||_F <~ ||S^(-1/2)||_2 residual / 2 + sqrt(c) kappa(S) (error_bound_sum +
//   dropped_norm_sum), to first order. Rounding adds an error of about u sqrt(N) sqrt(kappa(S))
//   ||S^(-1/2)||_2 where measured (u the unit roundoff of Scalar); Newton-Schulz does not
//   correct the roundings of earlier steps, so that it may grow with the steps and kappa(S). Cost:
//   three multiplies and two adds a step; six block-sparse matrices (Y, Z, P, T, the residual
//   scratch and a product).
//
// sign(exec, A, X, opts) writes into X the sign function sign(A) of the real symmetric A without
// an eigenvalue at 0 (for a Hamiltonian, sign(mu I - H) = 2 D - I).
//   Algorithm: Newton-Schulz, as the dense sign: with b = max(|lower|, |upper|) of the Gershgorin
//   bounds of A, X0 = A / b has its spectrum in [-1, 1], and each step forms
//     X2 = X X ("x^2"),  T = (3I - X2) / 2,  X <- X T ("xt"),
//   which maps [-1, 1] into itself and moves every eigenvalue x != 0 toward sign(x), as x (3 -
//   x^2) / 2. Residual ||X^2 - I||_F of the X the step started from, converged when residual /
//   sqrt(N) <= residual_tolerance (||sign(A)||_F = sqrt(N)), X then being that X. Stagnation is
//   checked once the residual is below 0.1 sqrt(N). An eigenvalue at 0 stays at 0 (A = 0 gives
//   X = 0): the residual stays at least 1 and the iteration ends unconverged. The number of
//   steps grows as log_(3/2)(1 / g) for g = min |eigenvalue| / b, then a few more.
//   Error: |x - sign(x)| <= |x^2 - 1|, so ||X - sign(X)||_F <= residual. An error E of the
//   iterate rotates the invariant subspaces of the positive and negative eigenvalues by at most
//   about sqrt(2) E / g (Davis-Kahan), and a product's error reaches X through T at most doubled:
//   ||X - sign(A)||_F <~ residual + 2 sqrt(2) (error_bound_sum + dropped_norm_sum) / g, to first
//   order, and rounding adds about u sqrt(N) / g. Cost: two multiplies and two adds a step; five
//   block-sparse matrices (X, X2, T, the residual scratch and the new X).
//
// Complexity and memory. A multiply costs O(kept products * tile^3) and an add O(tiles * tile^2);
// memory is that of the block-sparse matrices above, O(tile rows + stored tiles * tile^2) each.
// No dense N x N array anywhere: with a decaying result and positive tau and drop tolerance the
// tiles kept stay O(N), and so the cost per step.
//
//   nearsparse::spamm::block_sparse_options bopt;
//   bopt.tile = 32;
//   auto H = nearsparse::spamm::from_crs(exec, hamiltonian_crs, bopt);
//   auto S = nearsparse::spamm::from_crs(exec, overlap_crs, bopt);
//   nearsparse::spamm::block_sparse_matrix<double, Exec> D(exec, H.rows(), H.cols(), bopt.tile);
//   nearsparse::spamm::block_sparse_function_options opt;
//   opt.tau = 1e-8;                      // drop tile products with norm product < 1e-8
//   opt.drop_tolerance = 1e-9;           // drop tiles below 1e-9 ||result||_F
//   auto report = nearsparse::spamm::sp2(exec, H, H.rows() / 2, D, opt);
//   report.converged, report.iterations, report.error_bound_sum + report.dropped_norm_sum
//   nearsparse::spamm::block_sparse_matrix<double, Exec> Z(exec, S.rows(), S.cols(), bopt.tile);
//   nearsparse::spamm::inverse_sqrt(exec, S, Z, opt);   // Z = S^(-1/2)
//   nearsparse::spamm::block_sparse_matrix<double, Exec> X(exec, H.rows(), H.cols(), bopt.tile);
//   nearsparse::spamm::sign(exec, H, X, opt);            // X = sign(H)
//
// Arguments are checked on entry: nearsparse::invalid_argument names the function, the argument
// and the extents or values involved. The result must have the input's extents and tile (a zero
// matrix from the (exec, rows, cols, tile) constructor); it receives new arrays at the end, and
// keeps its old ones when an argument is refused. The input may be the result. All kernels and
// allocations run on the given execution space instance; each function waits for it before
// returning.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_algebra.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace nearsparse::spamm {

/// Options of the block-sparse matrix functions (sp2, inverse_sqrt, sign).
struct block_sparse_function_options {
  /// A tile product is kept when its norm product is >= tau; 0 keeps every product.
  double tau = 0.0;
  /// Tiles of a product or sum below drop_tolerance times that matrix's ||.||_F are dropped
  /// (the relative drop rule); 0 drops only exactly zero tiles.
  double drop_tolerance = 0.0;
  /// Stop when the function's residual is at most this times its norm: sp2 ||X^2 - X||_F /
  /// max(1, sqrt(occupied)), inverse_sqrt ||I - Z Y||_F / sqrt(N), sign ||X^2 - I||_F / sqrt(N).
  double residual_tolerance = 1e-6;
  /// Most steps; the report says converged = false when they run out.
  int max_iterations = 100;
  /// Which kernels run the products (see block_sparse_multiply_options::implementation).
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
};

/// One step (sp2) or one product (inverse_sqrt, sign) of an iteration.
struct block_sparse_function_step {
  /// The step of the iteration, from 0.
  int iteration = 0;
  /// "x^2" or "2x-x^2" (sp2), "zy", "yt" or "tz" (inverse_sqrt), "x^2" or "xt" (sign).
  const char* step = "";
  /// Stored tiles of the step's result: X after the step (sp2), the product otherwise.
  std::int64_t tiles = 0;
  /// The product: tile products kept at tau, and candidate products of stored tiles.
  std::int64_t kept_products = 0;
  std::int64_t candidate_products = 0;
  /// The product's error bound (block_sparse_report::error_bound): >= ||A B - (A B)_kept||_F
  /// before its drop rule.
  double error_bound = 0.0;
  /// Norm of the tiles the drop rules removed: from the product and from the sum formed from it
  /// (2X - X^2 in sp2, T = (3I - P)/2 for "zy" and "x^2").
  double dropped_norm = 0.0;
  /// Trace of the step's result: X after the step (sp2), the product otherwise.
  double trace = 0.0;
  /// The residual of the iterate the step started from: ||X^2 - X||_F (sp2), ||I - Z Y||_F
  /// (inverse_sqrt), ||X^2 - I||_F (sign).
  double residual = 0.0;
  /// sp2: whether the step took X <- X^2 (true) or X <- 2X - X^2 (false); true otherwise.
  bool square = true;
};

/// What a block-sparse matrix function did.
struct block_sparse_function_report {
  /// Every step (sp2) or product (inverse_sqrt, sign), in order.
  std::vector<block_sparse_function_step> steps;
  /// Steps of the iteration taken (a step of inverse_sqrt is up to three products, of sign two).
  int iterations = 0;
  /// The residual met options.residual_tolerance (also: an empty input, D = 0 or I in sp2).
  bool converged = false;
  /// The residual stopped decreasing before meeting the tolerance (see the header's comment).
  bool stagnated = false;
  /// The last residual, as in block_sparse_function_step (0 without steps).
  double residual = 0.0;
  /// Trace of the result.
  double trace = 0.0;
  /// Sums over the steps of error_bound and of dropped_norm (in the units of the iterates).
  double error_bound_sum = 0.0;
  double dropped_norm_sum = 0.0;
  /// The Gershgorin bounds of the input.
  spectral_bounds bounds;
};

namespace detail {

inline void check_function_options(const char* fn, const block_sparse_function_options& options) {
  require_nonnegative(fn, "options.tau", options.tau);
  require_nonnegative(fn, "options.drop_tolerance", options.drop_tolerance);
  require_nonnegative(fn, "options.residual_tolerance", options.residual_tolerance);
  require(options.max_iterations >= 1, fn, "options.max_iterations",
          nearsparse::detail::concat("is ", options.max_iterations, "; it must be at least 1"));
}

/// The products of an iteration: filtered at options.tau, then options.drop_tolerance relative
/// to the product's norm, on the kernels options.implementation chooses.
inline block_sparse_multiply_options function_product_options(
    const block_sparse_function_options& options) {
  block_sparse_multiply_options m;
  m.tau = options.tau;
  m.drop_tolerance = options.drop_tolerance;
  m.rule = drop_rule::relative;
  m.implementation = options.implementation;
  return m;
}

/// The sums of an iteration (2X - X^2, T = (3I - P) / 2): the same relative drop rule.
inline block_sparse_add_options function_sum_options(const block_sparse_function_options& options) {
  block_sparse_add_options a;
  a.drop_tolerance = options.drop_tolerance;
  a.rule = drop_rule::relative;
  return a;
}

/// The input `in` must be square and finite, the result `out` of its extents and tile.
template <class Scalar, class ExecSpace>
void check_function_operands(const char* fn, const char* in_name,
                             const block_sparse_matrix<Scalar, ExecSpace>& in, const char* out_name,
                             const block_sparse_matrix<Scalar, ExecSpace>& out) {
  in.check_structure(fn, in_name);
  out.check_structure(fn, out_name);
  require_square(fn, in_name, in);
  require(out.rows() == in.rows() && out.cols() == in.cols(), fn, out_name,
          nearsparse::detail::concat("has extents ", out.rows(), " x ", out.cols(), ", expected ",
                                     in.rows(), " x ", in.cols(), " (those of ", in_name, ")"));
  require(out.tile() == in.tile(), fn, out_name,
          nearsparse::detail::concat("(", describe(out), ") has tile ", out.tile(), ", but ",
                                     in_name, " (", describe(in), ") has tile ", in.tile()));
}

template <class Scalar, class ExecSpace>
void check_function_input_finite(const ExecSpace& exec, const char* fn, const char* name,
                                 const block_sparse_matrix<Scalar, ExecSpace>& in) {
  std::int64_t bad = 0;
  sum_of_squares(exec, in.norms(), bad);
  require_non_finite_free(fn, name, bad, describe(in));
}

/// The stagnation and divergence rules of inverse_sqrt and sign (see the top of this header).
struct newton_schulz_watch {
  double sqrt_n = 0.0;
  double history[2] = {-1.0, -1.0};  // residuals of the two steps before
  bool filtered_before = false;      // the step before lay within its filtering

  /// Whether the residual exceeds what a converging iteration reaches (or is not finite).
  bool diverged(double residual) const { return !(residual <= 2.0 * sqrt_n); }

  /// Whether the residual stagnates, given the filtering (error bounds plus dropped norms) of
  /// the products that made it since the last residual.
  bool stagnated(double residual, double filtered) {
    const bool within = filtered > 0 && residual <= filtered;
    const bool stuck = residual < 0.1 * sqrt_n &&
                       ((history[0] >= 0 && residual >= history[0]) || (within && filtered_before));
    filtered_before = within;
    history[0] = history[1];
    history[1] = residual;
    return stuck;
  }

  /// The end test after a step's residual: records the iteration count and the residual in the
  /// report, sets converged (residual <= tolerance sqrt(N)) or stagnated (not when diverged),
  /// and returns whether the iteration ends.
  bool ends(block_sparse_function_report& report, int k, double residual, double filtered,
            double tolerance) {
    report.iterations = k + 1;
    report.residual = residual;
    if (residual <= tolerance * sqrt_n) {
      report.converged = true;
      return true;
    }
    if (diverged(residual) || stagnated(residual, filtered)) {
      report.stagnated = !diverged(residual);
      return true;
    }
    return false;
  }
};

/// Appends a product's step to the report: its counts, the stored tiles of its result, their
/// trace, and the residual of the step.
inline void record_product(block_sparse_function_report& report, const block_sparse_report& product,
                           std::int64_t tiles, double trace_value, int iteration, const char* name,
                           double residual) {
  block_sparse_function_step step;
  step.iteration = iteration;
  step.step = name;
  step.tiles = tiles;
  step.kept_products = product.kept_products;
  step.candidate_products = product.candidate_products;
  step.error_bound = product.error_bound;
  step.dropped_norm = product.dropped_norm;
  step.trace = trace_value;
  step.residual = residual;
  report.error_bound_sum += step.error_bound;
  report.dropped_norm_sum += step.dropped_norm;
  report.steps.push_back(step);
}

/// The block-sparse operations of the matrix functions' iterations on one process's whole
/// matrices. The iterations (sp2_iteration, inverse_sqrt_iteration, sign_iteration) are written
/// once over such an object; the MPI driver (spamm/distributed_block_sparse.hpp) gives the same
/// operations on row blocks, with traces and norms over all processes.
template <class Scalar, class ExecSpace>
struct whole_matrices {
  using scalar = Scalar;
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  ExecSpace exec;

  /// The zero matrix and the identity of like's extents and tile.
  matrix zero(const matrix& like) { return matrix(exec, like.rows(), like.cols(), like.tile()); }
  matrix identity(const matrix& like) {
    return spamm::identity<Scalar>(exec, like.rows(), like.tile());
  }
  /// c = a * b.
  block_sparse_report multiply(const matrix& a, const matrix& b, matrix& c,
                               const block_sparse_multiply_options& o) {
    return spamm::multiply(exec, Scalar(1), a, b, Scalar(0), c, o);
  }
  /// c = alpha * a + beta * b.
  block_sparse_add_report add(Scalar alpha, const matrix& a, Scalar beta, const matrix& b,
                              matrix& c, const block_sparse_add_options& o) {
    return spamm::add(exec, alpha, a, beta, b, c, o);
  }
  double trace(const matrix& m) { return spamm::trace(exec, m); }
  std::int64_t tiles(const matrix& m) { return m.kept_tiles(); }
  double frobenius_norm(const matrix& m) { return spamm::frobenius_norm(exec, m); }
  spectral_bounds bounds(const matrix& m) { return gershgorin_bounds(exec, m); }
  void fence() { exec.fence(); }
};

/// sp2 from its checked arguments (H not empty) over the operations `ops` (whole_matrices, or
/// the row blocks of the MPI driver): the bounds, the shortcuts for occupied 0 and N, the
/// iteration, D.
template <class Ops>
block_sparse_function_report sp2_iteration(Ops& ops, const typename Ops::matrix& h,
                                           std::int64_t occupied, typename Ops::matrix& d,
                                           const block_sparse_function_options& options,
                                           const char* fn) {
  using matrix = typename Ops::matrix;
  using Scalar = typename Ops::scalar;
  const int n = h.cols();
  block_sparse_function_report report;
  report.bounds = ops.bounds(h);
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
    matrix exact = occupied == 0 ? ops.zero(h) : ops.identity(h);
    d.assign(exact.parts(), fn, "D");
    report.converged = true;
    report.trace = double(occupied);
    return report;
  }

  const double occ = static_cast<double>(occupied);
  const double norm_d = std::max(1.0, std::sqrt(occ));
  const block_sparse_multiply_options mopt = detail::function_product_options(options);
  const block_sparse_add_options aopt = detail::function_sum_options(options);
  block_sparse_add_options exact_add;  // the residual: no drop beyond exact zeros

  // X0 = (e_max I - H) / (e_max - e_min).
  matrix x;
  {
    const matrix id = ops.identity(h);
    ops.add(Scalar(e_max / width), id, Scalar(-1.0 / width), h, x, exact_add);
  }
  double tr_x = ops.trace(x);
  matrix x2 = ops.zero(h);
  matrix diff;
  double history[2] = {-1.0, -1.0};  // residuals of the two steps before
  bool filtered_before = false;      // the step before lay within its filtering
  for (int k = 0; k < options.max_iterations; ++k) {
    const block_sparse_report product = ops.multiply(x, x, x2, mopt);
    const double tr_x2 = ops.trace(x2);
    ops.add(Scalar(1), x2, Scalar(-1), x, diff, exact_add);
    const double residual = ops.frobenius_norm(diff);
    block_sparse_function_step step;
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
      const block_sparse_add_report r = ops.add(Scalar(2), x, Scalar(-1), x2, x, aopt);
      step.dropped_norm += r.dropped_norm;
    }
    tr_x = step.square ? tr_x2 : ops.trace(x);
    step.trace = tr_x;
    step.tiles = ops.tiles(x);
    report.error_bound_sum += step.error_bound;
    report.dropped_norm_sum += step.dropped_norm;
    report.steps.push_back(step);
    report.iterations = k + 1;
    report.residual = residual;
    if (residual <= options.residual_tolerance * norm_d) {
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
  ops.fence();
  return report;
}

}  // namespace detail

/// The density matrix of the real symmetric block-sparse H with `occupied` occupied states
/// (0 <= occupied <= N) by trace-correcting SP2 (see the top of this header). D must have H's
/// extents and tile (a zero matrix from the (exec, rows, cols, tile) constructor); it receives
/// new arrays, and keeps its old ones when an argument is refused. H is assumed symmetric (not
/// checked: only its stored tiles are read).
template <class Scalar, class ExecSpace>
block_sparse_function_report sp2(const ExecSpace& exec,
                                 const block_sparse_matrix<Scalar, ExecSpace>& h,
                                 std::int64_t occupied, block_sparse_matrix<Scalar, ExecSpace>& d,
                                 const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::sp2";
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  detail::check_function_operands(fn, "H", h, "D", d);
  const int n = h.rows();
  require(occupied >= 0 && occupied <= std::int64_t(n), fn, "occupied",
          nearsparse::detail::concat("is ", occupied, "; it must lie in [0, ", n, "] for H of ",
                                     detail::describe(h)));
  detail::check_function_options(fn, options);
  detail::require_block_sparse_implementation(exec, fn, "options.implementation",
                                              options.implementation);
  detail::check_function_input_finite(exec, fn, "H", h);

  if (n == 0) {
    matrix empty(exec, 0, 0, h.tile());
    d.assign(empty.parts(), fn, "D");
    block_sparse_function_report report;
    report.converged = true;
    return report;
  }
  detail::whole_matrices<Scalar, ExecSpace> ops{exec};
  return detail::sp2_iteration(ops, h, occupied, d, options, fn);
}

namespace detail {

/// inverse_sqrt from its checked arguments (S not empty) over the operations `ops` (whole_matrices,
/// or the row blocks of the MPI driver).
template <class Ops>
block_sparse_function_report inverse_sqrt_iteration(Ops& ops, const typename Ops::matrix& s,
                                                    typename Ops::matrix& z_out,
                                                    const block_sparse_function_options& options,
                                                    const char* fn) {
  using matrix = typename Ops::matrix;
  using Scalar = typename Ops::scalar;
  const int n = s.cols();
  block_sparse_function_report report;
  report.bounds = ops.bounds(s);
  require(report.bounds.upper > 0, fn, "S",
          nearsparse::detail::concat("(", detail::describe(s), ") has the Gershgorin upper bound ",
                                     report.bounds.upper, "; it is not positive definite"));
  const double c = 1.0 / report.bounds.upper;
  const block_sparse_multiply_options mopt = detail::function_product_options(options);
  const block_sparse_add_options aopt = detail::function_sum_options(options);
  block_sparse_add_options exact_add;  // the residual and the scalings: no drop

  const matrix id = ops.identity(s);
  matrix y, z = id, t, diff;
  ops.add(Scalar(c), s, Scalar(0), s, y, exact_add);  // Y0 = c S
  matrix p = ops.zero(s), next = ops.zero(s);
  detail::newton_schulz_watch watch;
  watch.sqrt_n = std::sqrt(double(n));
  double filtered = 0.0;  // filtering of the products since the last residual
  for (int k = 0; k < options.max_iterations; ++k) {
    const block_sparse_report zy = ops.multiply(z, y, p, mopt);
    ops.add(Scalar(1), id, Scalar(-1), p, diff, exact_add);
    const double residual = ops.frobenius_norm(diff);
    detail::record_product(report, zy, ops.tiles(p), ops.trace(p), k, "zy", residual);
    filtered += zy.error_bound + zy.dropped_norm;
    if (watch.ends(report, k, residual, filtered, options.residual_tolerance)) break;
    // T = (3I - Z Y) / 2, Y <- Y T, Z <- T Z.
    const block_sparse_add_report made_t = ops.add(Scalar(1.5), id, Scalar(-0.5), p, t, aopt);
    report.steps.back().dropped_norm += made_t.dropped_norm;
    report.dropped_norm_sum += made_t.dropped_norm;
    const block_sparse_report yt = ops.multiply(y, t, next, mopt);
    detail::record_product(report, yt, ops.tiles(next), ops.trace(next), k, "yt", residual);
    std::swap(y, next);
    const block_sparse_report tz = ops.multiply(t, z, next, mopt);
    detail::record_product(report, tz, ops.tiles(next), ops.trace(next), k, "tz", residual);
    std::swap(z, next);
    filtered =
        made_t.dropped_norm + yt.error_bound + yt.dropped_norm + tz.error_bound + tz.dropped_norm;
  }
  // Z = sqrt(c) Z_k; its dropped norm: what the steps' filtering left out, in the units of the
  // result (see the top of this header for how it reaches the error).
  const double root_c = std::sqrt(c);
  matrix result;
  ops.add(Scalar(root_c), z, Scalar(0), z, result, exact_add);
  report.trace = ops.trace(result);
  auto parts = result.parts();
  parts.dropped_norm = root_c * (report.error_bound_sum + report.dropped_norm_sum);
  z_out.assign(parts, fn, "Z");
  ops.fence();
  return report;
}

}  // namespace detail

/// The inverse square root S^(-1/2) of the symmetric positive definite block-sparse S by coupled
/// Newton-Schulz (see the top of this header). Z must have S's extents and tile; it receives new
/// arrays, and keeps its old ones when an argument is refused. Throws
/// nearsparse::invalid_argument when the Gershgorin upper bound of S is not positive. S is
/// assumed symmetric (not checked).
template <class Scalar, class ExecSpace>
block_sparse_function_report inverse_sqrt(const ExecSpace& exec,
                                          const block_sparse_matrix<Scalar, ExecSpace>& s,
                                          block_sparse_matrix<Scalar, ExecSpace>& z_out,
                                          const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::inverse_sqrt";
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  detail::check_function_operands(fn, "S", s, "Z", z_out);
  detail::check_function_options(fn, options);
  detail::require_block_sparse_implementation(exec, fn, "options.implementation",
                                              options.implementation);
  detail::check_function_input_finite(exec, fn, "S", s);
  const int n = s.rows(), tile = s.tile();
  if (n == 0) {
    block_sparse_function_report report;
    matrix empty(exec, 0, 0, tile);
    z_out.assign(empty.parts(), fn, "Z");
    report.converged = true;
    return report;
  }
  detail::whole_matrices<Scalar, ExecSpace> ops{exec};
  return detail::inverse_sqrt_iteration(ops, s, z_out, options, fn);
}

namespace detail {

/// sign from its checked arguments (A not empty) over the operations `ops` (whole_matrices, or
/// the row blocks of the MPI driver).
template <class Ops>
block_sparse_function_report sign_iteration(Ops& ops, const typename Ops::matrix& a,
                                            typename Ops::matrix& x_out,
                                            const block_sparse_function_options& options,
                                            const char* fn) {
  using matrix = typename Ops::matrix;
  using Scalar = typename Ops::scalar;
  const int n = a.cols();
  block_sparse_function_report report;
  report.bounds = ops.bounds(a);
  double bound = std::max(std::abs(report.bounds.lower), std::abs(report.bounds.upper));
  if (!(bound > 0)) bound = 1.0;  // A = 0: sign(0) is undefined; the iteration ends unconverged
  const block_sparse_multiply_options mopt = detail::function_product_options(options);
  const block_sparse_add_options aopt = detail::function_sum_options(options);
  block_sparse_add_options exact_add;  // the residual and the scaling: no drop

  const matrix id = ops.identity(a);
  matrix x, t, diff;
  ops.add(Scalar(1.0 / bound), a, Scalar(0), a, x, exact_add);  // X0 = A / b
  matrix x2 = ops.zero(a), next = ops.zero(a);
  detail::newton_schulz_watch watch;
  watch.sqrt_n = std::sqrt(double(n));
  double filtered = 0.0;  // filtering of the products since the last residual
  for (int k = 0; k < options.max_iterations; ++k) {
    const block_sparse_report sq = ops.multiply(x, x, x2, mopt);
    ops.add(Scalar(1), x2, Scalar(-1), id, diff, exact_add);
    const double residual = ops.frobenius_norm(diff);
    detail::record_product(report, sq, ops.tiles(x2), ops.trace(x2), k, "x^2", residual);
    filtered += sq.error_bound + sq.dropped_norm;
    if (watch.ends(report, k, residual, filtered, options.residual_tolerance)) break;
    // T = (3I - X^2) / 2, X <- X T.
    const block_sparse_add_report made_t = ops.add(Scalar(1.5), id, Scalar(-0.5), x2, t, aopt);
    report.steps.back().dropped_norm += made_t.dropped_norm;
    report.dropped_norm_sum += made_t.dropped_norm;
    const block_sparse_report xt = ops.multiply(x, t, next, mopt);
    detail::record_product(report, xt, ops.tiles(next), ops.trace(next), k, "xt", residual);
    std::swap(x, next);
    filtered = made_t.dropped_norm + xt.error_bound + xt.dropped_norm;
  }
  report.trace = ops.trace(x);
  auto parts = x.parts();
  parts.dropped_norm = report.error_bound_sum + report.dropped_norm_sum;
  x_out.assign(parts, fn, "X");
  ops.fence();
  return report;
}

}  // namespace detail

/// The sign function sign(A) of the real symmetric block-sparse A without an eigenvalue at 0 by
/// Newton-Schulz (see the top of this header). X must have A's extents and tile; it receives new
/// arrays, and keeps its old ones when an argument is refused. A is assumed symmetric (not
/// checked).
template <class Scalar, class ExecSpace>
block_sparse_function_report sign(const ExecSpace& exec,
                                  const block_sparse_matrix<Scalar, ExecSpace>& a,
                                  block_sparse_matrix<Scalar, ExecSpace>& x_out,
                                  const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::sign";
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  detail::check_function_operands(fn, "A", a, "X", x_out);
  detail::check_function_options(fn, options);
  detail::require_block_sparse_implementation(exec, fn, "options.implementation",
                                              options.implementation);
  detail::check_function_input_finite(exec, fn, "A", a);
  const int n = a.rows(), tile = a.tile();
  if (n == 0) {
    block_sparse_function_report report;
    matrix empty(exec, 0, 0, tile);
    x_out.assign(empty.parts(), fn, "X");
    report.converged = true;
    return report;
  }
  detail::whole_matrices<Scalar, ExecSpace> ops{exec};
  return detail::sign_iteration(ops, a, x_out, options, fn);
}

}  // namespace nearsparse::spamm
