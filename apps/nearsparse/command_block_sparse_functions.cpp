// `nearsparse sp2 | invsqrt | sign --storage block-sparse`: the matrix functions on block-sparse
// storage (spamm/block_sparse_functions.hpp) from a Matrix Market file or a generated model
// (spamm/sparse_models.hpp), without a dense N x N array, so N can be far beyond what dense
// storage holds. Prints the input's tiles and memory, every step (stored tiles, kept products,
// error bound, dropped norm, residual, trace), the time and the result's memory against dense
// storage; optionally writes the result as a Matrix Market file and the steps as CSV and SVG. At
// small N it checks the result against the dense LAPACK eigendecomposition (a failed check or an
// unconverged iteration is an exit status of 1).
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "dense_reference.hpp"
#include "matrix_files.hpp"
#include "svg_chart.hpp"
#include "timing.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/io.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_algebra.hpp>
#include <nearsparse/spamm/block_sparse_functions.hpp>
#include <nearsparse/spamm/model_matrices.hpp>
#include <nearsparse/spamm/sparse_models.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace nearsparse::app {

namespace {

namespace spamm = nearsparse::spamm;
using nearsparse::detail::concat;

struct block_sparse_settings {
  matrix_function kind;
  const char* name;
  long n;
  std::string model, matrix_file, output, csv, svg, precision;
  double delta, disorder, alpha, mu, cutoff;
  std::uint64_t seed;
  long occupied;  ///< -1: N / 2
  int tile;
  spamm::block_sparse_function_options opt;
  long check_max;
  double check_tolerance;
};

const char* function_label(matrix_function k) {
  return k == matrix_function::sp2 ? "sp2" : (k == matrix_function::invsqrt ? "invsqrt" : "sign");
}

/// The input as CRS on exec: the file, or the model of the command (a Hamiltonian for sp2 and
/// sign, an overlap matrix for invsqrt). `what` describes it; `gap` is the closed-form gap of a
/// disorder-free model around its split (0 when unknown).
template <class Scalar, class Exec>
nearsparse::crs_matrix<Scalar, Exec> make_input(const Exec& exec, const block_sparse_settings& s,
                                                std::string& what, double& gap) {
  gap = 0;
  if (!s.matrix_file.empty()) {
    const auto host =
        nearsparse::io::read_host_crs<Scalar>(s.matrix_file, read_options_for(s.matrix_file));
    if (host.rows != host.cols)
      throw nearsparse::invalid_argument(concat(s.name, ": '--matrix' file '", s.matrix_file,
                                                "' is ", host.rows, " x ", host.cols,
                                                "; the input must be square"));
    if (const auto bad = nearsparse::io::hermitian_mismatch(host))
      throw nearsparse::invalid_argument(
          concat(s.name, ": '--matrix' file '", s.matrix_file, "' (", host.rows, " x ", host.cols,
                 ", ", nearsparse::io::to_string(host.file.symmetry),
                 ") is not real symmetric: element (", bad->first + 1, ", ", bad->second + 1,
                 ") does not match element (", bad->second + 1, ", ", bad->first + 1, ")"));
    what = "'" + s.matrix_file + "'";
    return nearsparse::io::to_crs(exec, host);
  }
  const bool lattice = s.model == "3d";
  const int side = lattice ? std::max(1, int(std::lround(std::cbrt(double(s.n))))) : 0;
  if (s.kind == matrix_function::invsqrt) {
    what = concat(lattice ? "3-D overlap exp(-" : "overlap exp(-", s.alpha,
                  lattice ? " (|dx|+|dy|+|dz|))" : " |i-j|)", " kept where >= ", s.cutoff);
    return lattice ? spamm::overlap_lattice_crs<Scalar>(exec, side, side, side, s.alpha, s.cutoff)
                   : spamm::overlap_chain_crs<Scalar>(exec, s.n, s.alpha, s.cutoff);
  }
  if (lattice) {
    spamm::cubic_model m;
    m.nx = m.ny = m.nz = side;
    m.delta = s.delta;
    m.disorder = s.disorder;
    m.seed = s.seed;
    // The closed form enumerates every hopping eigenvalue: only where that is cheap.
    if (double(side) * side * side <= 1e6)
      gap = std::max(spamm::cubic_lattice_gap(m) - s.disorder, 0.0);
    what = concat("cubic lattice ", side, "^3");
    return spamm::cubic_lattice_crs<Scalar>(exec, m);
  }
  spamm::chain_model m;
  m.delta = s.delta;
  m.disorder = s.disorder;
  m.seed = s.seed;
  gap = std::max(spamm::dimerized_chain_gap(m) - s.disorder, 0.0);
  what = "dimerized chain";
  return spamm::dimerized_chain_crs<Scalar>(exec, s.n, m);
}

double gib(double bytes) {
  return bytes / double(std::uint64_t(1) << 30);
}

template <class Scalar, class Exec>
int run_with(const Exec& exec, const block_sparse_settings& s) {
  using matrix = spamm::block_sparse_matrix<Scalar, Exec>;
  std::string what;
  double gap = 0;
  double t_input = 0;
  nearsparse::crs_matrix<Scalar, Exec> crs;
  t_input += seconds(exec, [&] { crs = make_input<Scalar>(exec, s, what, gap); });
  const long n = crs.numRows();
  spamm::block_sparse_options bopt;
  bopt.tile = s.tile;
  matrix a;
  t_input += seconds(exec, [&] { a = spamm::from_crs(exec, crs, bopt); });
  crs = {};  // only the block-sparse form from here on
  if (s.kind == matrix_function::sign && s.mu != 0) {
    spamm::add(exec, Scalar(1), a, Scalar(-s.mu), spamm::identity<Scalar>(exec, int(n), s.tile), a);
    gap = std::max(gap - 2 * std::abs(s.mu), 0.0);
  }
  const double dense_bytes = double(n) * double(n) * sizeof(Scalar);
  std::printf("%s (block-sparse) on %s: %s, N = %ld, %s, tile %d\n", s.name, Exec::name(),
              what.c_str(), n, s.precision.c_str(), s.tile);
  std::printf(
      "  input: %lld tiles (%.2f per tile row), %.3f GiB (dense storage: %.3f GiB), built in "
      "%.3f s\n",
      (long long)a.kept_tiles(), a.tile_rows() > 0 ? double(a.kept_tiles()) / a.tile_rows() : 0.0,
      gib(double(a.memory_bytes())), gib(dense_bytes), t_input);
  std::printf("  tau %.3g, drop tolerance %.3g (relative), residual tolerance %.3g, %s products\n",
              s.opt.tau, s.opt.drop_tolerance, s.opt.residual_tolerance,
              nearsparse::to_string(s.opt.implementation));
  if (gap > 0) std::printf("  gap of the input (closed form) %.4g\n", gap);

  long occupied = s.occupied < 0 ? n / 2 : s.occupied;
  require(occupied <= n, s.name, "--occupied",
          concat("is ", occupied, "; the input has N = ", n, " states"));
  matrix f(exec, int(n), int(n), s.tile);
  spamm::block_sparse_function_report r;
  const double t = seconds(exec, [&] {
    if (s.kind == matrix_function::sp2) r = spamm::sp2(exec, a, occupied, f, s.opt);
    if (s.kind == matrix_function::invsqrt) r = spamm::inverse_sqrt(exec, a, f, s.opt);
    if (s.kind == matrix_function::sign) r = spamm::sign(exec, a, f, s.opt);
  });
  std::printf("  Gershgorin bounds [%.4g, %.4g]\n", r.bounds.lower, r.bounds.upper);
  std::printf(
      "    iter  step     tiles       kept products  error bound  dropped    residual   trace\n");
  for (const auto& st : r.steps)
    std::printf("    %-4d  %-7s  %-10lld  %-13lld  %-11.3g  %-9.3g  %-9.3g  %.8g\n", st.iteration,
                st.step, (long long)st.tiles, (long long)st.kept_products, st.error_bound,
                st.dropped_norm, st.residual, st.trace);
  std::printf("  %d iterations in %.3f s; %s, residual %.3g\n", r.iterations, t,
              r.converged ? "converged"
                          : (r.stagnated ? "stagnated (the residual stopped falling above the "
                                           "tolerance: rounding or filtering floor)"
                                         : "NOT CONVERGED (--max-iterations ran out)"),
              r.residual);
  std::printf(
      "  result: %lld tiles (%.2f per tile row), %.3f GiB (dense storage: %.3f GiB), dropped "
      "(error bounds + dropped tiles) %.3g\n",
      (long long)f.kept_tiles(), f.tile_rows() > 0 ? double(f.kept_tiles()) / f.tile_rows() : 0.0,
      gib(double(f.memory_bytes())), gib(dense_bytes), r.error_bound_sum + r.dropped_norm_sum);
  bool ok = r.converged || r.stagnated;

  if (!s.output.empty()) {
    nearsparse::io::write_crs(exec, s.output, spamm::to_crs(exec, f), write_options_for(s.output));
    std::printf("  wrote %s (%ld x %ld)\n", s.output.c_str(), n, n);
  }
  if (!s.csv.empty()) {
    std::ofstream out(s.csv);
    out << "iteration,step,tiles,kept_products,candidate_products,error_bound,dropped_norm,"
           "residual,trace\n";
    for (const auto& st : r.steps)
      out << st.iteration << "," << st.step << "," << st.tiles << "," << st.kept_products << ","
          << st.candidate_products << "," << st.error_bound << "," << st.dropped_norm << ","
          << st.residual << "," << st.trace << "\n";
    if (!out) throw nearsparse::runtime_error(concat(s.name, ": cannot write '", s.csv, "'"));
    std::cout << "  wrote " << s.csv << "\n";
  }
  if (!s.svg.empty()) {
    chart_series bound{"error bound", {}, {}}, residual{"residual", {}, {}},
        tiles{"stored tiles", {}, {}};
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      const double x = double(i + 1);
      if (r.steps[i].error_bound > 0) {
        bound.x.push_back(x);
        bound.y.push_back(r.steps[i].error_bound);
      }
      if (r.steps[i].residual > 0) {
        residual.x.push_back(x);
        residual.y.push_back(r.steps[i].residual);
      }
      tiles.x.push_back(x);
      tiles.y.push_back(double(r.steps[i].tiles));
    }
    write_svg_chart(s.svg,
                    concat(function_label(s.kind), " block-sparse ", s.precision, ", N = ", n, ", ",
                           Exec::name()),
                    "step", false,
                    {chart_panel{"error bound, residual", true, {bound, residual}},
                     chart_panel{"stored tiles", false, {tiles}}});
    std::cout << "  wrote " << s.svg << "\n";
  }

  if (n > s.check_max || n == 0) {
    std::printf("  check against the dense eigendecomposition: skipped (N > %ld)\n", s.check_max);
  } else if (!nearsparse::detail::host_blas::available()) {
    std::printf(
        "  check against the dense eigendecomposition: skipped (no LAPACK in this build)\n");
  } else {
    using view = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Exec::memory_space>;
    view ad("A", n, n), fd("f(A)", n, n);
    spamm::to_dense(exec, a, ad);
    spamm::to_dense(exec, f, fd);
    std::vector<double> ref;
    if (s.kind == matrix_function::sp2) {
      ref = dense_function(to_vector(ad), int(n),
                           [&](double, int j) { return j < occupied ? 1.0 : 0.0; });
    } else if (s.kind == matrix_function::invsqrt) {
      ref = dense_function(to_vector(ad), int(n), [](double l, int) { return 1.0 / std::sqrt(l); });
    } else {
      ref = dense_function(to_vector(ad), int(n), [](double l, int) { return l < 0 ? -1.0 : 1.0; });
    }
    const double rel = relative_distance(to_vector(fd), ref);
    const bool check_ok = rel <= s.check_tolerance;
    std::printf(
        "  check against the dense eigendecomposition (LAPACK syevd): relative error %.3g, "
        "tolerance %.3g: %s\n",
        rel, s.check_tolerance, check_ok ? "OK" : "FAILED");
    ok = ok && check_ok;
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_block_sparse_function(arguments& args, matrix_function kind, const char* name) {
  block_sparse_settings s;
  s.kind = kind;
  s.name = name;
  s.n = args.integer("n", 1000, 0, (1L << 31) - 257);
  s.model = args.text("model", "1d");
  s.matrix_file = args.text("matrix", "");
  s.precision = args.text("precision", "fp64");
  s.tile = static_cast<int>(args.integer("tile", 32, 8, 128));
  s.delta = args.number("delta", 0.5, 0, 1e6);
  s.disorder = args.number("disorder", 0.0, 0, 1e6);
  s.alpha = args.number("alpha", 0.5, 1e-6, 1e6);
  s.cutoff = args.number("cutoff", 1e-12, 1e-300, 1);
  s.mu = args.number("mu", 0.0, -1e6, 1e6);
  s.seed = static_cast<std::uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
  s.occupied = args.integer("occupied", -1, -1, (1L << 31) - 257);
  s.opt.tau = args.number("tau", 1e-12, 0, 1e300);
  s.opt.drop_tolerance = args.number("drop", 1e-12, 0, 1);
  // fp32 reaches residuals of about 1e-6 sqrt(N) / gap: its defaults sit above that.
  const bool fp64 = s.precision == "fp64";
  s.opt.residual_tolerance = args.number("tolerance", fp64 ? 1e-8 : 1e-4, 0, 1e300);
  s.opt.max_iterations = static_cast<int>(args.integer("max-iterations", 100, 1, 10000));
  s.opt.implementation =
      nearsparse::parse_implementation(args.text("kernel", "automatic"), name, "--kernel");
  s.output = args.text("output", "");
  s.csv = args.text("csv", "");
  s.svg = args.text("svg", "");
  s.check_max = args.integer("check-max", 2000, 0, 1L << 17);
  s.check_tolerance = args.number("check-tolerance", fp64 ? 1e-6 : 1e-3, 0, 1e300);
  const std::string backend = args.text("backend", "");
  args.finish();
  require(s.model == "1d" || s.model == "3d", name, "--model",
          "is '" + s.model + "'; expected 1d or 3d");
  require(s.precision == "fp64" || s.precision == "fp32", name, "--precision",
          "is '" + s.precision + "'; block-sparse storage takes fp64 or fp32");
  require(s.occupied < 0 || kind == matrix_function::sp2, name, "--occupied",
          "applies to sp2 only");
  return with_backend(backend, [&](auto exec) {
    return s.precision == "fp64" ? run_with<double>(exec, s) : run_with<float>(exec, s);
  });
}

}  // namespace nearsparse::app
