// `nearsparse sp2`, `nearsparse invsqrt` and `nearsparse sign`: matrix functions of the model
// matrices (spamm/model_matrices.hpp) by SpAMM iterations with an error target. Each prints the
// steps (product, valid ratio, error bound, residual, trace), the error estimate against the
// target, the time, and at small N checks the result against the dense LAPACK eigendecomposition
// (a failed check or a missed target is an exit status of 1). --csv and --svg write the steps.
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "dense_reference.hpp"
#include "svg_chart.hpp"
#include "timing.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/matrix_functions.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace nearsparse::app {

namespace {

namespace host_blas = nearsparse::detail::host_blas;

struct function_settings {
  matrix_function kind;
  const char* name;
  long n;
  std::string model;
  double delta, disorder, alpha, mu;
  std::uint64_t seed;
  spamm::function_options opt;
  std::string csv, svg;
  long check_max;
};

template <class Exec>
int run_function(const Exec& exec, const function_settings& s) {
  using view = Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space>;
  // The input: a Hamiltonian (sp2, sign) or an overlap matrix (invsqrt), 1-D or 3-D.
  long n = s.n;
  int side = 0;
  if (s.model == "3d") {
    side = std::max(1, int(std::lround(std::cbrt(double(s.n)))));
    n = long(side) * side * side;
  }
  view a("A", n, n), f("f(A)", n, n);
  double gap = 0;
  std::string what;
  if (s.kind == matrix_function::invsqrt) {
    if (side > 0) {
      spamm::fill_overlap_lattice(exec, a, side, side, side, s.alpha);
    } else {
      spamm::fill_overlap_chain(exec, a, s.alpha);
    }
    what = "overlap exp(-" + std::to_string(s.alpha) + " |i-j|)";
  } else if (side > 0) {
    spamm::cubic_model m;
    m.nx = m.ny = m.nz = side;
    m.delta = s.delta;
    m.disorder = s.disorder;
    m.seed = s.seed;
    spamm::fill_cubic_lattice(exec, a, m);
    gap = std::max(spamm::cubic_lattice_gap(m) - s.disorder, 0.0);
    what = "cubic lattice " + std::to_string(side) + "^3";
  } else {
    spamm::chain_model m;
    m.delta = s.delta;
    m.disorder = s.disorder;
    m.seed = s.seed;
    spamm::fill_dimerized_chain(exec, a, m);
    gap = std::max(spamm::dimerized_chain_gap(m) - s.disorder, 0.0);
    what = "dimerized chain";
  }
  if (s.kind == matrix_function::sign && s.mu != 0) {
    spamm::detail::scale_shift(exec, a, 1.0, a, -s.mu);
    gap = std::max(gap - 2 * std::abs(s.mu), 0.0);
  }
  spamm::function_options opt = s.opt;
  if (s.kind != matrix_function::invsqrt) opt.gap = gap;
  std::printf("%s on %s: %s, N = %ld, %s, tile %d, target error %.2g\n", s.name, Exec::name(),
              what.c_str(), n, spamm::to_string(opt.precision), opt.tile, opt.target_error);
  if (gap > 0) std::printf("  gap of the input (closed form) %.4g\n", gap);

  const long occupied = n / 2;
  spamm::function_report r;
  const double t = seconds(exec, [&] {
    if (s.kind == matrix_function::sp2) r = spamm::sp2(exec, a, occupied, f, opt);
    if (s.kind == matrix_function::invsqrt) r = spamm::inverse_sqrt(exec, a, f, opt);
    if (s.kind == matrix_function::sign) r = spamm::sign(exec, a, f, opt);
  });
  std::printf("  Gershgorin bounds [%.4g, %.4g]\n", r.bounds.lower, r.bounds.upper);
  std::printf("    iter  step     valid    target     bound      residual   trace\n");
  for (const auto& st : r.steps)
    std::printf("    %-4d  %-7s  %-7.4f  %-9.3g  %-9.3g  %-9.3g  %.6g\n", st.iteration, st.step,
                st.valid_ratio, st.product_target, st.product_error_bound, st.residual, st.trace);
  std::printf(
      "  %d iterations, %zu products, mean valid ratio %.3f, %d targets at the floor, "
      "%.3f s\n",
      r.iterations, r.steps.size(), r.mean_valid_ratio, r.targets_at_floor, t);
  std::printf("  %s; error estimate %.3g against the target %.3g: %s\n",
              r.converged ? "converged" : (r.stagnated ? "stagnated" : "not converged"),
              r.error_estimate, opt.target_error, r.target_met ? "met" : "MISSED");
  bool ok = r.target_met;

  if (!s.csv.empty()) {
    std::ofstream out(s.csv);
    out << "iteration,step,valid_ratio,product_target,product_error_bound,error_contribution,"
           "residual,trace\n";
    for (const auto& st : r.steps)
      out << st.iteration << "," << st.step << "," << st.valid_ratio << "," << st.product_target
          << "," << st.product_error_bound << "," << st.error_contribution << "," << st.residual
          << "," << st.trace << "\n";
    if (!out)
      throw nearsparse::runtime_error(std::string("nearsparse ") + s.name + ": cannot write '" +
                                      s.csv + "'");
    std::cout << "  wrote " << s.csv << "\n";
  }
  if (!s.svg.empty()) {
    chart_series bound{"product error bound", {}, {}}, residual{"residual", {}, {}},
        valid{"valid ratio", {}, {}};
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      const double x = double(i + 1);
      if (r.steps[i].product_error_bound > 0) {
        bound.x.push_back(x);
        bound.y.push_back(r.steps[i].product_error_bound);
      }
      if (r.steps[i].residual > 0) {
        residual.x.push_back(x);
        residual.y.push_back(r.steps[i].residual);
      }
      valid.x.push_back(x);
      valid.y.push_back(r.steps[i].valid_ratio);
    }
    write_svg_chart(s.svg,
                    std::string(s.name) + " " + spamm::to_string(opt.precision) +
                        ", N = " + std::to_string(n) + ", " + Exec::name(),
                    "product", false,
                    {chart_panel{"error bound, residual", true, {bound, residual}},
                     chart_panel{"valid ratio", false, {valid}}});
    std::cout << "  wrote " << s.svg << "\n";
  }

  if (n > s.check_max || n == 0) {
    std::printf("  check against the dense eigendecomposition: skipped (N > %ld)\n", s.check_max);
  } else if (!host_blas::available()) {
    std::printf(
        "  check against the dense eigendecomposition: skipped (no LAPACK in this build)\n");
  } else {
    const auto av = to_vector(a);
    std::vector<double> ref;
    if (s.kind == matrix_function::sp2) {
      ref = dense_function(av, int(n), [&](double, int j) { return j < occupied ? 1.0 : 0.0; });
    } else if (s.kind == matrix_function::invsqrt) {
      ref = dense_function(av, int(n), [](double l, int) { return 1.0 / std::sqrt(l); });
    } else {
      ref = dense_function(av, int(n), [](double l, int) { return l < 0 ? -1.0 : 1.0; });
    }
    const double rel = relative_distance(to_vector(f), ref);
    const bool check_ok = rel <= opt.target_error;
    std::printf(
        "  check against the dense eigendecomposition (LAPACK syevd): error %.3g, "
        "target %.3g: %s\n",
        rel, opt.target_error, check_ok ? "OK" : "FAILED");
    ok = ok && check_ok;
  }
  return ok ? 0 : 1;
}

int run_kind(arguments& args, matrix_function kind, const char* name) {
  const std::string storage = args.text("storage", "dense");
  require(storage == "dense" || storage == "block-sparse", name, "--storage",
          "is '" + storage + "'; expected dense or block-sparse");
  if (storage == "block-sparse") return run_block_sparse_function(args, kind, name);
  function_settings s;
  s.kind = kind;
  s.name = name;
  s.n = args.integer("n", 1000, 0, 1L << 17);
  s.model = args.text("model", "1d");
  s.delta = args.number("delta", kind == matrix_function::sp2 ? 0.5 : 0.5, 0, 1e6);
  s.disorder = args.number("disorder", 0.0, 0, 1e6);
  s.alpha = args.number("alpha", 0.5, 1e-6, 1e6);
  s.mu = args.number("mu", 0.0, -1e6, 1e6);
  s.seed = static_cast<std::uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
  s.opt.precision = spamm::parse_precision(args.text("precision", "fp32"), "--precision");
  s.opt.tile = static_cast<int>(args.integer("tile", 64, 32, 128));
  s.opt.target_error = args.number("error", 1e-4, 0, 1);
  s.opt.max_iterations = static_cast<int>(args.integer("max-iterations", 100, 1, 10000));
  s.opt.implementation = parse_implementation(args.text("kernel", "automatic"), name, "--kernel");
  s.csv = args.text("csv", "");
  s.svg = args.text("svg", "");
  s.check_max = args.integer("check-max", 2000, 0, 1L << 17);
  const std::string backend = args.text("backend", "");
  args.finish();
  require(s.model == "1d" || s.model == "3d", name, "--model",
          "is '" + s.model + "'; expected 1d or 3d");
  return with_backend(backend, [&](auto exec) { return run_function(exec, s); });
}

}  // namespace

int run_sp2(arguments& args) {
  return run_kind(args, matrix_function::sp2, "nearsparse sp2");
}
int run_invsqrt(arguments& args) {
  return run_kind(args, matrix_function::invsqrt, "nearsparse invsqrt");
}
int run_sign(arguments& args) {
  return run_kind(args, matrix_function::sign, "nearsparse sign");
}

}  // namespace nearsparse::app
