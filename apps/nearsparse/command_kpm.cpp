// `nearsparse kpm`: the density of states of a topological insulator (equation 1 of the KPM
// paper) by the Kernel Polynomial Method, written as CSV and as an SVG plot, with the time of the
// moments and the bandwidth they achieved.
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "matrix_files.hpp"
#include "svg_chart.hpp"

#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/kpm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

namespace nearsparse::app {

namespace {

namespace nk = nearsparse::kpm;

constexpr const char* command_name = "nearsparse kpm";

enum class matrix_format { crs, sell };
constexpr nearsparse::detail::enum_name<matrix_format> format_names[] = {
    {matrix_format::crs, "crs"}, {matrix_format::sell, "sell"}};

enum class bounds_method { lanczos, gershgorin };
constexpr nearsparse::detail::enum_name<bounds_method> bounds_names[] = {
    {bounds_method::lanczos, "lanczos"}, {bounds_method::gershgorin, "gershgorin"}};

struct kpm_settings {
  nk::topological_insulator ti;
  nk::moments_options moments;
  matrix_format format = matrix_format::crs;
  nk::sell_options sell;
  bounds_method bounds = bounds_method::lanczos;
  double margin = 0.01;
  nk::dos_options dos;
  std::string csv = "kpm_dos.csv", plot = "kpm_dos.svg";
  std::string matrix_file;  ///< --matrix: the Hamiltonian from a Matrix Market file
  bool split = false;
  double weight = -1;
};

/// Prints a line at every tenth of the steps.
std::function<void(int, int)> progress_printer() {
  auto last = std::make_shared<int>(-1);
  return [last](int done, int total) {
    const int tenth = total > 0 ? 10 * done / total : 10;
    if (tenth != *last) {
      *last = tenth;
      std::printf("  moments: %3d %% (%d of %d steps)\n", 10 * tenth, done, total);
      std::fflush(stdout);
    }
  };
}

int report(const kpm_settings& s, const nk::chebyshev_moments& m, const char* where,
           bool spectrum_ok) {
  const auto cost = nk::step_cost_of(m.method, m.rows, m.nonzeros, m.num_vectors);
  const double flops = cost.flops * m.steps, bytes_per_step = cost.min_bytes;
  const double t_step = m.seconds / m.steps;
  std::printf(
      "  moments (%s, %s): %d moments x %d vectors in %.3f s: %.3f ms per step, "
      "%.3f ms per step and vector\n",
      nk::to_string(m.method), where, m.num_moments, m.num_vectors, m.seconds, 1e3 * t_step,
      1e3 * t_step / m.num_vectors);
  std::printf("  rates: %.1f GFLOP/s, %.1f GB/s of minimum traffic (equation 4)\n",
              flops / m.seconds * 1e-9, bytes_per_step / t_step * 1e-9);
  const auto dos = nk::density_of_states(m, s.dos);
  // The integral is N mu_0 = N by construction of the quadrature: shown, not checked.
  std::printf("  density of states: %zu points, %s kernel, integral %.6f (N = %lld)\n",
              dos.energies.size(), nk::to_string(s.dos.damping), dos.integral(), (long long)m.rows);
  const auto mc = nk::check_moments(m);
  std::printf("  check: moments |mu_n| <= 1 (tolerance %.0e): largest %.6f at n = %d: %s\n",
              mc.tolerance, mc.largest, mc.at_moment, mc.bounded ? "OK" : "FAILED");
  const auto dc = nk::check_density(dos, s.dos.damping);
  if (dc.applies) {
    std::printf(
        "  check: density of states >= 0 (%s kernel, tolerance %.0e of the largest): lowest "
        "%.3g at E = %.4f, largest %.4g: %s\n",
        nk::to_string(s.dos.damping), dc.tolerance, dc.lowest, dc.lowest_energy, dc.highest,
        dc.non_negative ? "OK" : "FAILED");
  } else {
    std::printf("  density of states >= 0: not checked (the %s kernel is not positive)\n",
                nk::to_string(s.dos.damping));
  }
  const bool ok = spectrum_ok && mc.bounded && dc.non_negative;
  if (!s.csv.empty()) {
    nk::write_csv(dos, s.csv);
    std::printf("  wrote %s\n", s.csv.c_str());
  }
  if (!s.plot.empty()) {
    chart_panel panel;
    panel.y_label = "states per unit energy";
    panel.series.push_back(
        {"KPM " + std::string(nk::to_string(s.dos.damping)), dos.energies, dos.density});
    write_svg_chart(s.plot,
                    (s.matrix_file.empty()
                         ? "Density of states, topological insulator " + std::to_string(s.ti.nx) +
                               " x " + std::to_string(s.ti.ny) + " x " + std::to_string(s.ti.nz)
                         : "Density of states, " + s.matrix_file) +
                        ", M = " + std::to_string(m.num_moments) +
                        ", R = " + std::to_string(m.num_vectors),
                    "energy", false, {panel});
    std::printf("  wrote %s\n", s.plot.c_str());
  }
  return ok ? 0 : 1;
}

template <class Exec, class Matrix>
nk::spectral_interval bounds_of(const Exec& exec, const Matrix& h, bounds_method kind) {
  return kind == bounds_method::gershgorin ? nk::gershgorin_bounds(exec, h)
                                           : nk::lanczos_bounds(exec, h);
}

template <class Exec, class Crs>
int run_matrix(const Exec& exec, kpm_settings s, const Crs& h);

template <class Exec>
int run_on(const Exec& exec, kpm_settings s) {
  std::printf("kpm on %s: topological insulator %d x %d x %d (%lld rows, complex double)\n",
              Exec::name(), s.ti.nx, s.ti.ny, s.ti.nz, (long long)s.ti.rows());
  return run_matrix(exec, s, nk::make_topological_insulator(exec, s.ti));
}

/// Bounds, moments and the density of states of the Hermitian CRS matrix h (double or complex).
template <class Exec, class Crs>
int run_matrix(const Exec& exec, kpm_settings s, const Crs& h) {
  std::printf("  matrix: %lld nonzeros (%.2f per row)\n", (long long)h.nnz(),
              double(h.nnz()) / double(std::max<std::int64_t>(1, h.numRows())));
  const auto interval = bounds_of(exec, h, s.bounds);
  const auto map = nk::scaling_for(interval, s.margin);
  std::printf("  spectrum (%s): [%.6f, %.6f]; scaling a = %.6f, b = %.6f\n",
              nearsparse::detail::enum_to_string(bounds_names, s.bounds), interval.lower,
              interval.upper, map.a, map.b);
  // The bounds against Lanczos Ritz values of their own (inside the spectrum's hull): a scaled
  // Ritz value beyond +-1 proves the scaling wrong.
  const auto sc = nk::check_spectrum(exec, h, map);
  std::printf(
      "  check: scaled spectrum inside [-1, 1]: extreme Ritz values map to [%.6f, %.6f] "
      "(residuals %.1e, %.1e; %d Lanczos steps): %s\n",
      sc.scaled_lowest, sc.scaled_highest, sc.scaled_lowest_residual, sc.scaled_highest_residual,
      sc.ritz.steps, sc.inside ? "OK" : "FAILED");
  s.moments.progress = progress_printer();
  if (s.split) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP)
    nk::split_options so;
    so.weight = s.weight;
    const auto r = nk::split_moments(Kokkos::Cuda(), Kokkos::OpenMP(), h, map, s.moments, so);
    std::printf(
        "  split: %.4f of the rows on Cuda (%lld rows), %lld on OpenMP; halo %d and %d "
        "rows%s\n",
        r.weight, (long long)r.rows_first, (long long)r.rows_second, r.halo_first, r.halo_second,
        r.rate_first > 0 ? ", weight from measured rates" : "");
    if (r.rate_first > 0)
      std::printf("  calibration: Cuda %.3g, OpenMP %.3g row-vectors per second\n", r.rate_first,
                  r.rate_second);
    return report(s, r.moments, "Cuda + OpenMP", sc.inside);
#else
    throw nearsparse::unsupported(
        "nearsparse kpm: --split needs the CUDA and OpenMP backends in one build; this build has " +
        std::string(Kokkos::DefaultExecutionSpace::name()) + " as its default space");
#endif
  }
  if (s.format == matrix_format::sell) {
    const auto sell = nk::make_sell(exec, h, s.sell);
    std::printf("  SELL-%d-%d: %.1f %% of the stored entries are nonzeros\n", s.sell.chunk_height,
                s.sell.sigma, 100 * sell.fill_efficiency());
    return report(s, nk::moments(exec, sell, map, s.moments), Exec::name(), sc.inside);
  }
  return report(s, nk::moments(exec, h, map, s.moments), Exec::name(), sc.inside);
}

/// The Hamiltonian read from a Matrix Market file: real symmetric (double) or complex Hermitian,
/// by its banner or, for a general file, by its entries; anything else is refused.
template <class Scalar, class Exec>
int run_file_as(const Exec& exec, const kpm_settings& s, const char* kind) {
  const auto host =
      nearsparse::io::read_host_crs<Scalar>(s.matrix_file, read_options_for(s.matrix_file));
  using nearsparse::detail::concat;
  if (host.rows != host.cols)
    throw nearsparse::invalid_argument(concat(command_name, ": '--matrix' file '", s.matrix_file,
                                              "' is ", host.rows, " x ", host.cols,
                                              "; a Hamiltonian must be square"));
  if (const auto bad = nearsparse::io::hermitian_mismatch(host))
    throw nearsparse::invalid_argument(concat(
        command_name, ": '--matrix' file '", s.matrix_file, "' (", host.rows, " x ", host.cols,
        ", ", nearsparse::io::to_string(host.file.symmetry), ") is not ", kind, ": element (",
        bad->first + 1, ", ", bad->second + 1, ") does not match element (", bad->second + 1, ", ",
        bad->first + 1, ")", std::is_same_v<Scalar, double> ? "" : " conjugated"));
  std::printf("kpm on %s: %s (%lld rows, %s)\n", Exec::name(), s.matrix_file.c_str(),
              (long long)host.rows, kind);
  return run_matrix(exec, s, nearsparse::io::to_crs(exec, host));
}

template <class Exec>
int run_file(const Exec& exec, const kpm_settings& s) {
  const auto h = nearsparse::io::read_header(s.matrix_file);
  if (h.field == nearsparse::io::field::complex)
    return run_file_as<nk::complex_double>(exec, s, "complex Hermitian");
  return run_file_as<double>(exec, s, "real symmetric");
}

}  // namespace

int run_kpm(arguments& args) {
  kpm_settings s;
  s.ti.nx = int(args.integer("nx", 40, 1, 1 << 16));
  s.ti.ny = int(args.integer("ny", 40, 1, 1 << 16));
  s.ti.nz = int(args.integer("nz", 10, 1, 1 << 16));
  s.ti.t = args.number("t", 1.0, -1e6, 1e6);
  s.ti.disorder = args.number("disorder", 0.0, 0, 1e6);
  s.ti.dot_potential = args.number("dot-potential", 0.1, -1e6, 1e6);
  s.ti.dot_period = int(args.integer("dot-period", 10, 0, 1 << 16));
  s.ti.dot_radius = args.number("dot-radius", 3.0, 0, 1e6);
  s.ti.dot_layers = int(args.integer("dot-layers", 0, 0, 1 << 16));
  s.moments.num_moments = int(args.integer("moments", 512, 2, 1 << 24));
  s.moments.num_vectors = int(args.integer("vectors", 16, 1, 1 << 16));
  s.moments.seed = std::uint64_t(args.integer("seed", 1, 0, 1LL << 62));
  s.moments.method =
      nk::parse_algorithm(args.text("algorithm", "aug_spmmv"), command_name, "--algorithm");
  s.moments.implementation =
      nearsparse::parse_implementation(args.text("kernel", "automatic"), command_name, "--kernel");
  s.ti.seed = s.moments.seed;
  s.format = nearsparse::detail::enum_from_string(format_names, args.text("format", "crs"),
                                                  command_name, "--format");
  s.sell.chunk_height = int(args.integer("chunk", 32, 1, 1024));
  s.sell.sigma = int(args.integer("sigma", 1, 1, 1 << 24));
  s.bounds = nearsparse::detail::enum_from_string(bounds_names, args.text("bounds", "lanczos"),
                                                  command_name, "--bounds");
  s.margin = args.number("margin", 0.01, 0, 0.5);
  s.dos.damping = nk::parse_damping(args.text("damping", "jackson"), command_name, "--damping");
  s.dos.lorentz_lambda = args.number("lambda", 4.0, 1e-6, 1e3);
  s.dos.points = int(args.integer("points", 0, 0, 1 << 24));
  s.csv = args.text("csv", "kpm_dos.csv");
  s.plot = args.text("plot", "kpm_dos.svg");
  s.split = args.flag("split");
  s.weight = args.number("weight", -1, -1, 1);
  s.matrix_file = args.text("matrix", "");
  const std::string backend = args.text("backend", "");
  args.finish();
  require(!s.split || s.matrix_file.empty(), command_name, "--split",
          "runs on the topological insulator; leave out --matrix");
  require(!s.split || (s.format == matrix_format::crs && backend.empty()), command_name, "--split",
          "runs CRS on Cuda + OpenMP; leave out --format sell and --backend");
  if (s.split) return run_on(Kokkos::DefaultExecutionSpace(), s);
  if (!s.matrix_file.empty())
    return with_backend(backend, [&](auto exec) { return run_file(exec, s); });
  return with_backend(backend, [&](auto exec) { return run_on(exec, s); });
}

}  // namespace nearsparse::app
