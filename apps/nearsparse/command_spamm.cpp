// `nearsparse spamm`: builds a decay matrix, multiplies it by itself with SpAMM, and reports the
// time, the valid ratio and the error against the fp64 dense product, with the dense product of
// the same precision as the baseline: OpenBLAS on a host backend (Kokkos Kernels gemm where the
// build has no OpenBLAS), Kokkos Kernels gemm on the device. --sweep walks the valid ratio from
// 100 % down to 1 %, reusing one plan, and writes error and speedup against tau as CSV and SVG.
// --error E searches tau for an error target instead (relative to ||A||_F ||B||_F) and checks
// the measured error against the plan's error bound.
#include <nearsparse/core/detail/host_blas.hpp>
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "matrix_files.hpp"
#include "svg_chart.hpp"
#include "timing.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace nearsparse::app {

namespace {

namespace host_blas = nearsparse::detail::host_blas;

struct spamm_settings {
  long n;
  spamm::precision precision;
  int tile;
  double tau;
  double valid_ratio;
  double error;  ///< --error: the error target (relative to ||A||_F ||B||_F); < 0 when not given
  std::string matrix;
  int stride;
  nearsparse::implementation kernel;
  bool wgmma;
  spamm::host_grouping grouping;
  bool sweep;
  std::string csv, plot;
  std::string a_file, b_file;  ///< --a and --b: Matrix Market operands instead of the decay matrix
  std::string output;          ///< --output: C as Matrix Market
};

template <class Exec, class F>
double median_seconds(const Exec& exec, F&& f, int runs = 3) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(seconds(exec, f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// The SpAMM options the settings ask for (validated before any work starts).
spamm::options options_of(const spamm_settings& s) {
  spamm::options opt;
  opt.precision = s.precision;
  opt.tile = s.tile;
  opt.load_balance_stride = s.stride;
  opt.implementation = s.kernel;
  opt.wgmma = s.wgmma;
  opt.host_grouping = s.grouping;
  if (s.error >= 0) {
    opt.target_error = s.error;
  } else if (s.tau >= 0) {
    opt.tau = s.tau;
  } else {
    opt.target_valid_ratio = s.valid_ratio;
  }
  return opt;
}

/// With --error: prints the plan's error bound and the measured error (both relative to
/// ||A||_F ||B||_F), and checks that the measured error is within the bound plus rounding (the
/// bound covers the dropped products only): the rounding floor of the inputs' format and
/// gamma_K = K u of a K-term accumulation (u of double for fp64, of float otherwise); and that
/// the bound meets the target. Returns whether both hold (true without --error).
template <class Exec, class Plan>
bool check_error_target(const Exec& exec, const spamm_settings& s, const Plan& plan,
                        const spamm::error_report& err) {
  if (s.error < 0) return true;
  const auto bound = plan.error_bound(exec);
  const double measured = err.relative_to(bound.norm_product);
  const double floor =
      spamm::rounding_floor(s.precision) +
      double(plan.inner()) * (s.precision == spamm::precision::fp64 ? 0x1p-53 : 0x1p-24);
  std::printf(
      "  error target %.3g (relative to ||A||_F ||B||_F = %.4g): bound %.3g, measured "
      "%.3g (%.3g relative to ||A B||_F)\n",
      s.error, bound.norm_product, bound.relative(), measured, err.relative());
  const bool within = measured <= bound.relative() + floor;
  const bool meets = bound.relative() <= s.error;
  std::printf(
      "  check: measured %.3g <= bound %.3g + rounding %.2g (%s, K = %d): %s; bound <= "
      "target %.3g: %s\n",
      measured, bound.relative(), floor, spamm::to_string(s.precision), plan.inner(),
      within ? "OK" : "FAILED", s.error, meets ? "OK" : "FAILED");
  return within && meets;
}

struct sweep_row {
  double target, tau, valid_ratio, t_multiply, speedup, rel_error;
};

template <class Exec>
int run_on(const Exec& exec, const spamm_settings& s) {
  using mem = typename Exec::memory_space;
  const long n = s.n;
  std::cout << "spamm on " << Exec::name() << ": " << s.matrix << "-decay matrix, N = " << n << ", "
            << spamm::to_string(s.precision) << ", tile " << s.tile << "\n";
  Kokkos::View<double**, Kokkos::LayoutRight, mem> a("A", n, n), exact("C_exact", n, n);
  if (s.matrix == "algebraic") {
    spamm::fill_algebraic_decay(exec, a);
  } else {
    spamm::fill_exponential_decay(exec, a, 1.0, 0.99);
  }
  std::cout << "  dense fp64 reference (Kokkos Kernels gemm) ..." << std::flush;
  const double t_exact = seconds(exec, [&] { KokkosBlas::gemm("N", "N", 1.0, a, a, 0.0, exact); });
  std::printf(" %.3f ms\n", 1e3 * t_exact);

  // The baseline: the dense product in the precision's storage type; on a host backend OpenBLAS
  // on as many threads as the backend has, checked against the reference.
  constexpr bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  const bool openblas = host && host_blas::available();
  if (openblas) host_blas::set_threads(exec.concurrency());
  const bool fp64 = s.precision == spamm::precision::fp64;
  double t_dense = 0, dense_error = 0;
  if (!fp64) {
    Kokkos::View<float**, Kokkos::LayoutRight, mem> af("A_fp32", n, n), cf("C_fp32", n, n);
    Kokkos::deep_copy(exec, af, a);
    auto product = [&] {
      if constexpr (host) {
        if (openblas) return host_blas::gemm(1.0f, af, af, 0.0f, cf);
      }
      KokkosBlas::gemm("N", "N", 1.0f, af, af, 0.0f, cf);
    };
    product();  // warm-up
    t_dense = median_seconds(exec, product);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> cd("C_dense", n, n);
    Kokkos::deep_copy(exec, cd, cf);
    dense_error = spamm::measure_error(exec, exact, cd).relative();
  } else {
    Kokkos::View<double**, Kokkos::LayoutRight, mem> cd("C_dense", n, n);
    auto product = [&] {
      if constexpr (host) {
        if (openblas) return host_blas::gemm(1.0, a, a, 0.0, cd);
      }
      KokkosBlas::gemm("N", "N", 1.0, a, a, 0.0, cd);
    };
    product();  // warm-up
    t_dense = median_seconds(exec, product);
    dense_error = spamm::measure_error(exec, exact, cd).relative();
  }
  std::string baseline = "Kokkos Kernels gemm";
  if (openblas) {
    baseline = std::string("OpenBLAS, ") + std::to_string(host_blas::threads()) +
               (host_blas::threads() == 1 ? " thread" : " threads");
  } else if (host) {
    baseline += ", no OpenBLAS found";
  }
  std::printf("  dense %s product (%s): %.3f ms\n", fp64 ? "fp64" : "fp32", baseline.c_str(),
              1e3 * t_dense);
  // The baseline differs from the fp64 reference by rounding only (of A to fp32, and the order
  // of the sums); a wrong product is off by order one.
  const double dense_tolerance = fp64 ? 1e-10 : 1e-4;
  const bool dense_ok = dense_error <= dense_tolerance;
  std::printf("  check: dense product against the fp64 reference %.2e (limit %.0e): %s\n",
              dense_error, dense_tolerance, dense_ok ? "OK" : "FAILED");

  const spamm::options opt = options_of(s);
  std::cout << "  building the plan (packing, norm maps, "
            << (s.error >= 0 ? "tau search for the error target"
                : s.tau >= 0 ? "tau given"
                             : "tau search")
            << ") ..." << std::flush;
  std::unique_ptr<spamm::plan<Exec>> plan;
  const double t_plan = seconds(exec, [&] { plan.reset(new spamm::plan<Exec>(exec, a, a, opt)); });
  std::printf(" %.3f ms\n", 1e3 * t_plan);

  Kokkos::View<double**, Kokkos::LayoutRight, mem> c("C", n, n);
  auto multiply = [&] { plan->multiply(exec, 1.0, 0.0, c); };
  multiply();
  const double t_mult = median_seconds(exec, multiply);
  const auto err = spamm::measure_error(exec, exact, c);
  std::printf("  tau %.6g, valid ratio %.2f %%, kept tile products %lld of %.0f\n", plan->tau(),
              100 * plan->valid_ratio(), static_cast<long long>(plan->kept_count()),
              double(plan->tiles_m()) * plan->tiles_n() * plan->tiles_k());
  std::printf("  multiply %.3f ms (plan reused), %.3f ms with the plan built; dense %.3f ms\n",
              1e3 * t_mult, 1e3 * (t_mult + t_plan), 1e3 * t_dense);
  std::printf("  against the dense product: SpAMM %s (plan reused), %s (plan built)\n",
              speed_ratio(t_dense, t_mult).c_str(), speed_ratio(t_dense, t_mult + t_plan).c_str());
  std::printf("  ||E||_F = %.4g, ||C||_F = %.4g, ||E||_F / ||C||_F = %.3g\n", err.error_norm,
              err.reference_norm, err.relative());
  const bool error_ok = check_error_target(exec, s, *plan, err);

  if (!s.output.empty()) {
    nearsparse::io::write_dense(exec, s.output, c, write_options_for(s.output));
    std::printf("  wrote C (%ld x %ld) to %s\n", n, n, s.output.c_str());
  }
  if (!s.sweep) return dense_ok && error_ok ? 0 : 1;
  std::vector<sweep_row> rows;
  std::cout << "  sweep over the valid ratio (the plan's norm maps are reused):\n"
            << "    target     tau          valid     multiply(ms)  speedup  rel_error\n";
  for (double target : {1.0, 0.7, 0.5, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01}) {
    spamm::search_options search;
    search.tolerance = 0.002;
    plan->search_tau(exec, target, search);
    multiply();
    const double t = median_seconds(exec, multiply);
    const double rel = spamm::measure_error(exec, exact, c).relative();
    rows.push_back({target, plan->tau(), plan->valid_ratio(), t, t_dense / t, rel});
    std::printf("    %-9.3f  %-11.5g  %-8.4f  %-12.4f  %-7.2f  %.3g\n", target, plan->tau(),
                plan->valid_ratio(), 1e3 * t, t_dense / t, rel);
  }
  const std::string csv = s.csv.empty() ? "spamm_sweep.csv" : s.csv;
  std::ofstream out(csv);
  out << "target_valid_ratio,tau,valid_ratio,multiply_seconds,dense_seconds,speedup,"
         "relative_error\n";
  for (const auto& r : rows)
    out << r.target << "," << r.tau << "," << r.valid_ratio << "," << r.t_multiply << "," << t_dense
        << "," << r.speedup << "," << r.rel_error << "\n";
  if (!out) throw nearsparse::runtime_error("nearsparse spamm: cannot write '" + csv + "'");
  std::cout << "  wrote " << csv << "\n";
  const std::string svg = s.plot.empty() ? "spamm_sweep.svg" : s.plot;
  chart_series err_series{"||E||/||C||", {}, {}}, speed_series{"speedup", {}, {}};
  for (const auto& r : rows) {
    err_series.x.push_back(r.tau);
    err_series.y.push_back(r.rel_error);
    speed_series.x.push_back(r.tau);
    speed_series.y.push_back(r.speedup);
  }
  write_svg_chart(svg,
                  "SpAMM " + std::string(spamm::to_string(s.precision)) +
                      ", N = " + std::to_string(n) + ", " + s.matrix + " decay, " + Exec::name(),
                  "tau", false,
                  {chart_panel{"relative error", true, {err_series}},
                   chart_panel{"speedup over dense", false, {speed_series}}});
  std::cout << "  wrote " << svg << "\n";
  return dense_ok && error_ok ? 0 : 1;
}

/// SpAMM on operands read from Matrix Market files (dense Views), against the fp64 dense product.
template <class Exec>
int run_files(const Exec& exec, const spamm_settings& s) {
  using view = Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space>;
  const std::string b_file = s.b_file.empty() ? s.a_file : s.b_file;
  const view a = nearsparse::io::read_dense<view>(exec, s.a_file, read_options_for(s.a_file));
  const view b = b_file == s.a_file
                     ? a
                     : nearsparse::io::read_dense<view>(exec, b_file, read_options_for(b_file));
  const long m = long(a.extent(0)), k = long(a.extent(1)), n = long(b.extent(1));
  require_product_extents("nearsparse spamm", s.a_file, m, k, b_file, long(b.extent(0)), n);
  std::printf("spamm on %s: A = %s (%ld x %ld), B = %s (%ld x %ld), %s, tile %d\n", Exec::name(),
              s.a_file.c_str(), m, k, b_file.c_str(), k, n, spamm::to_string(s.precision), s.tile);
  view exact("C_exact", m, n), c("C", m, n);
  const double t_exact = seconds(exec, [&] { KokkosBlas::gemm("N", "N", 1.0, a, b, 0.0, exact); });
  std::unique_ptr<spamm::plan<Exec>> plan;
  const double t_plan =
      seconds(exec, [&] { plan.reset(new spamm::plan<Exec>(exec, a, b, options_of(s))); });
  auto multiply = [&] { plan->multiply(exec, 1.0, 0.0, c); };
  multiply();
  const double t_mult = median_seconds(exec, multiply);
  const auto err = spamm::measure_error(exec, exact, c);
  std::printf(
      "  tau %.6g, valid ratio %.2f %%; multiply %.3f ms (plan reused), plan %.3f ms, "
      "dense fp64 (Kokkos Kernels gemm) %.3f ms\n",
      plan->tau(), 100 * plan->valid_ratio(), 1e3 * t_mult, 1e3 * t_plan, 1e3 * t_exact);
  std::printf("  ||E||_F = %.4g, ||C||_F = %.4g, ||E||_F / ||C||_F = %.3g\n", err.error_norm,
              err.reference_norm, err.relative());
  const bool error_ok = check_error_target(exec, s, *plan, err);
  if (!s.output.empty()) {
    nearsparse::io::write_dense(exec, s.output, c, write_options_for(s.output));
    std::printf("  wrote C (%ld x %ld) to %s\n", m, n, s.output.c_str());
  }
  return error_ok ? 0 : 1;
}

}  // namespace

int run_spamm(arguments& args) {
  spamm_settings s;
  s.n = args.integer("n", 1024, 0, 1L << 20);
  s.precision = spamm::parse_precision(args.text("precision", "fp32"), "--precision");
  s.tile = static_cast<int>(args.integer("tile", 64, 32, 128));
  s.tau = args.number("tau", -1, 0, std::numeric_limits<double>::infinity());
  s.valid_ratio = args.number("valid-ratio", -1, 1e-6, 1);
  s.error = args.number("error", -1, 0, std::numeric_limits<double>::infinity());
  s.matrix = args.text("matrix", "algebraic");
  s.stride = static_cast<int>(args.integer("stride", 1, 1, 64));
  s.kernel = parse_implementation(args.text("kernel", "automatic"), "nearsparse spamm", "--kernel");
  s.wgmma = !args.flag("no-wgmma");
  s.grouping =
      spamm::parse_host_grouping(args.text("host-grouping", "automatic"), "--host-grouping");
  s.sweep = args.flag("sweep");
  s.csv = args.text("csv", "");
  s.plot = args.text("plot", "");
  s.a_file = args.text("a", "");
  s.b_file = args.text("b", "");
  s.output = args.text("output", "");
  const std::string backend = args.text("backend", "");
  args.finish();
  require(s.matrix == "algebraic" || s.matrix == "exponential", "nearsparse spamm", "--matrix",
          "is '" + s.matrix + "'; expected algebraic or exponential");
  require(s.b_file.empty() || !s.a_file.empty(), "nearsparse spamm", "--b",
          "needs --a (B defaults to A)");
  require(s.a_file.empty() || (!s.sweep && s.csv.empty() && s.plot.empty()), "nearsparse spamm",
          "--a",
          "reads the operands from files; --sweep, --csv and --plot run on the generated "
          "decay matrix only");
  require(s.error != 0, "nearsparse spamm", "--error",
          "is 0; give an error target > 0 (relative to ||A||_F ||B||_F)");
  require(s.error < 0 || (s.tau < 0 && s.valid_ratio < 0), "nearsparse spamm", "--error",
          "sets tau by an error target; give one of --error, --tau and --valid-ratio");
  if (s.valid_ratio < 0) s.valid_ratio = 0.1;
  if (!s.csv.empty() || !s.plot.empty()) s.sweep = true;
  // Every option is checked before the dense reference runs (a tile of 48 is refused here).
  spamm::detail::validate_options("nearsparse spamm", options_of(s));
  if (!s.a_file.empty())
    return with_backend(backend, [&](auto exec) { return run_files(exec, s); });
  return with_backend(backend, [&](auto exec) { return run_on(exec, s); });
}

}  // namespace nearsparse::app
