// `nearsparse tlr`: compress a Hilbert or exponential-covariance matrix into TLR form, multiply it
// by itself into a dense C (GEMM-LLD) and into a TLR C (GEMM-LLL), and compare both with the dense
// product in time (OpenBLAS on a host backend, Kokkos Kernels gemm on the device or where the
// build has no OpenBLAS) and in accuracy (against Kokkos Kernels gemm). The errors are checked
// against the bound the compression and recompression errors give. --kernel picks the
// implementation of the dense-C product, the one step with a specialized path on every backend
// (cuBLAS on CUDA, OpenBLAS on the host); compression and the TLR-C product take the automatic
// choice (LAPACK and BLAS per tile on a host backend with OpenBLAS, the portable kernels
// elsewhere).
#include <nearsparse/core/detail/host_blas.hpp>
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "matrix_files.hpp"
#include "timing.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/tlr.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace nearsparse::app {

namespace {

namespace host_blas = nearsparse::detail::host_blas;

namespace nt = nearsparse::tlr;

struct tlr_settings {
  std::size_t n, tile;
  std::string matrix;
  int dimension;
  double length;
  nt::compression_options compression;
  double product_accuracy;
  nearsparse::implementation kernel;
  std::string csv;
  std::string a_file, b_file;  ///< --a and --b: Matrix Market operands instead of the generated one
  std::string output;          ///< --output: the dense C as Matrix Market
};

template <class Exec>
int run_on(const Exec& exec, const tlr_settings& s) {
  using mem = typename Exec::memory_space;
  std::printf(
      "tlr on %s: %s matrix, n = %zu, tiles %zu x %zu, max rank %d, accuracy %.1e (%s), kernel "
      "%s\n",
      Exec::name(), s.matrix.c_str(), s.n, s.tile, s.tile, s.compression.max_rank,
      s.compression.trunc.accuracy, nt::to_string(s.compression.method),
      nearsparse::to_string(s.kernel));
  std::fflush(stdout);
  const auto a = s.matrix == "hilbert"
                     ? nt::hilbert(exec, s.n, s.n)
                     : nt::exponential_covariance(exec, s.n, s.dimension, s.length);
  nt::compression_report report;
  nt::tlr_matrix<mem> at;
  const double t_compress =
      seconds(exec, [&] { at = nt::compress(exec, a, s.tile, s.compression, report); });
  std::printf(
      "  compression %.3f ms: %zu tiles (%zu dense), ranks %d..%d (mean %.1f), %zu at the rank "
      "cap\n",
      1e3 * t_compress, report.tiles, report.dense_tiles, report.min_rank, report.max_rank,
      report.mean_rank, report.tiles_at_cap);
  std::printf(
      "  memory %.2f MB instead of %.2f MB dense (%.1f %% saved), error |A - A_tlr|/|A| = %.2e\n",
      report.compressed_bytes / 1e6, report.dense_bytes / 1e6,
      100.0 * (1.0 - double(report.compressed_bytes) / std::max<double>(1, report.dense_bytes)),
      report.relative_error);
  // The accuracy asked for against the one reached: a rank cap too low for the accuracy leaves
  // tiles above their share of the error budget, which the product checks below cannot see (they
  // are bounded by the error reached, whatever it is).
  if (report.requested_accuracy >= 0) {
    if (report.accuracy_met) {
      std::printf("  accuracy: requested %.1e, reached %.2e: met\n", report.requested_accuracy,
                  report.relative_error);
    } else {
      std::printf(
          "  accuracy: requested %.1e, reached %.2e: MISSED, %zu of %zu low-rank tiles hit the "
          "rank cap %d (raise --rank or the accuracy)\n",
          report.requested_accuracy, report.relative_error, report.tiles_at_cap,
          report.tiles - report.dense_tiles, s.compression.max_rank);
    }
  }
  std::fflush(stdout);

  // The dense product, the reference.
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> ref("tlr::reference", s.n, s.n),
      c("tlr::c", s.n, s.n);
  KokkosBlas::gemm("N", "N", 1.0, a, a, 0.0, ref);  // warm up
  double t_dense = seconds(exec, [&] { KokkosBlas::gemm("N", "N", 1.0, a, a, 0.0, ref); });
  const double norm_ref = frobenius_norm(exec, ref);
  // On a host backend the baseline is OpenBLAS DGEMM on as many threads as the backend has,
  // checked against the reference.
  constexpr bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  std::string baseline = "Kokkos Kernels gemm";
  bool ok_dense = true;
  if constexpr (host) {
    if (host_blas::available()) {
      host_blas::set_threads(exec.concurrency());
      host_blas::gemm(1.0, a, a, 0.0, c);  // warm up
      t_dense = seconds(exec, [&] { host_blas::gemm(1.0, a, a, 0.0, c); });
      const double err_dense = frobenius_distance(exec, c, ref);
      const double rel_dense = norm_ref > 0 ? err_dense / norm_ref : err_dense;
      ok_dense = rel_dense <= 1e-10;
      baseline = "OpenBLAS, " + std::to_string(host_blas::threads()) +
                 (host_blas::threads() == 1 ? " thread" : " threads");
      std::printf("  check: OpenBLAS DGEMM against Kokkos Kernels gemm %.2e: %s\n", rel_dense,
                  ok_dense ? "OK" : "FAILED");
    } else {
      baseline += ", no OpenBLAS found";
    }
  }
  // |A A - At At| <= |A - At| (|A| + |At|): the bound both products are checked against.
  const double norm_a = report.norm;
  const double bound = report.error * (2 * norm_a + report.error);

  nt::gemm_options lld;
  lld.implementation = s.kernel;
  nt::gemm(exec, 1.0, at, at, 0.0, c, lld);  // warm up
  const double t_lld = seconds(exec, [&] { nt::gemm(exec, 1.0, at, at, 0.0, c, lld); });
  const double err_lld = frobenius_distance(exec, c, ref);
  std::printf("  dense product (%s) %.3f ms\n", baseline.c_str(), 1e3 * t_dense);
  std::printf(
      "  TLR-GEMM, dense C (GEMM-LLD) %.3f ms (%s than dense), error |C - AA|/|AA| = %.2e\n",
      1e3 * t_lld, speed_ratio(t_dense, t_lld).c_str(),
      norm_ref > 0 ? err_lld / norm_ref : err_lld);

  nt::gemm_options o;
  o.trunc.accuracy = s.product_accuracy;
  nt::tlr_matrix<mem> ct(exec, s.n, s.n, s.tile, s.compression.max_rank,
                         s.compression.dense_diagonal);
  nt::gemm_report gr;
  const double t_lll = seconds(exec, [&] { gr = nt::gemm(exec, 1.0, at, at, 0.0, ct, o); });
  const double err_lll = frobenius_distance(exec, nt::to_dense(exec, ct), ref);
  std::printf(
      "  TLR-GEMM, TLR C (GEMM-LLL) %.3f ms (%s than dense), C ranks up to %d (mean %.1f), error "
      "%.2e, dropped %.2e\n",
      1e3 * t_lll, speed_ratio(t_dense, t_lll).c_str(), gr.max_rank, gr.mean_rank,
      norm_ref > 0 ? err_lll / norm_ref : err_lll, norm_ref > 0 ? gr.dropped / norm_ref : 0.0);

  const double slack = 1e-12 * (norm_ref + 1);
  const bool ok_lld = err_lld <= 1.01 * bound + slack;
  const bool ok_lll = err_lll <= 1.01 * (bound + gr.dropped) + slack;
  if (gr.tiles_at_cap > 0)
    std::printf(
        "  TLR C: %zu tiles hit the rank cap %d in recompression (product accuracy %.1e missed "
        "there; their loss is in 'dropped')\n",
        gr.tiles_at_cap, s.compression.max_rank, s.product_accuracy);
  std::printf(
      "  check: products against the compression error reached (not the accuracy requested): "
      "dense-C error within the bound %.2e: %s; TLR-C error within the bound plus what "
      "recompression dropped: %s\n",
      norm_ref > 0 ? bound / norm_ref : bound, ok_lld ? "OK" : "FAILED", ok_lll ? "OK" : "FAILED");

  if (!s.output.empty()) {
    nearsparse::io::write_dense(exec, s.output, c, write_options_for(s.output));
    std::printf("  wrote the dense C (GEMM-LLD, %zu x %zu) to %s\n", s.n, s.n, s.output.c_str());
  }
  if (!s.csv.empty()) {
    std::ofstream out(s.csv);
    if (!out)
      throw nearsparse::invalid_argument("nearsparse tlr: cannot write --csv file '" + s.csv + "'");
    const std::vector<int> ra = at.host_ranks(exec), rc = ct.host_ranks(exec);
    out << "tile_row,tile_col,dense,rank_A,rank_C\n";
    for (std::size_t j = 0; j < at.tile_cols(); ++j)
      for (std::size_t i = 0; i < at.tile_rows(); ++i) {
        const std::size_t t = at.tile_index(i, j);
        out << i << ',' << j << ',' << (at.is_dense(t) ? 1 : 0) << ',' << ra[t] << ',' << rc[t]
            << '\n';
      }
    std::printf("  wrote %s (the rank of every tile of A and C)\n", s.csv.c_str());
  }
  return ok_lld && ok_lll && ok_dense ? 0 : 1;
}

/// TLR compression of operands read from Matrix Market files and their product into a dense C,
/// against the dense product.
template <class Exec>
int run_files(const Exec& exec, const tlr_settings& s) {
  using mem = typename Exec::memory_space;
  using view = Kokkos::View<double**, Kokkos::LayoutLeft, mem>;
  const std::string b_file = s.b_file.empty() ? s.a_file : s.b_file;
  const view a = nearsparse::io::read_dense<view>(exec, s.a_file, read_options_for(s.a_file));
  const view b = b_file == s.a_file
                     ? a
                     : nearsparse::io::read_dense<view>(exec, b_file, read_options_for(b_file));
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
  require_product_extents("nearsparse tlr", s.a_file, std::int64_t(m), std::int64_t(k), b_file,
                          std::int64_t(b.extent(0)), std::int64_t(n));
  std::printf(
      "tlr on %s: A = %s (%zu x %zu), B = %s (%zu x %zu), tiles %zu, max rank %d, "
      "accuracy %.1e (%s)\n",
      Exec::name(), s.a_file.c_str(), m, k, b_file.c_str(), k, n, s.tile, s.compression.max_rank,
      s.compression.trunc.accuracy, nt::to_string(s.compression.method));
  nt::compression_report ra, rb;
  nt::tlr_matrix<mem> at, bt;
  const double t_compress = seconds(exec, [&] {
    at = nt::compress(exec, a, s.tile, s.compression, ra);
    bt = b_file == s.a_file ? at : nt::compress(exec, b, s.tile, s.compression, rb);
  });
  if (b_file == s.a_file) rb = ra;
  std::printf("  compression %.3f ms: A ranks %d..%d, error %.2e; B ranks %d..%d, error %.2e\n",
              1e3 * t_compress, ra.min_rank, ra.max_rank, ra.relative_error, rb.min_rank,
              rb.max_rank, rb.relative_error);
  view ref("tlr::reference", m, n), c("tlr::c", m, n);
  const double t_dense = seconds(exec, [&] { KokkosBlas::gemm("N", "N", 1.0, a, b, 0.0, ref); });
  nt::gemm_options lld;
  lld.implementation = s.kernel;
  const double t_lld = seconds(exec, [&] { nt::gemm(exec, 1.0, at, bt, 0.0, c, lld); });
  const double norm_ref = frobenius_norm(exec, ref);
  const double err = frobenius_distance(exec, c, ref);
  // |AB - At Bt| <= |A - At| |B| + |At| |B - Bt|.
  const double bound = ra.error * rb.norm + (ra.norm + ra.error) * rb.error;
  const bool ok = err <= 1.01 * bound + 1e-12 * (norm_ref + 1);
  std::printf(
      "  dense product (Kokkos Kernels gemm) %.3f ms; TLR-GEMM, dense C %.3f ms; error "
      "|C - AB|/|AB| = %.2e\n",
      1e3 * t_dense, 1e3 * t_lld, norm_ref > 0 ? err / norm_ref : err);
  std::printf("  check: dense-C error within the compression bound %.2e: %s\n",
              norm_ref > 0 ? bound / norm_ref : bound, ok ? "OK" : "FAILED");
  if (!s.output.empty()) {
    nearsparse::io::write_dense(exec, s.output, c, write_options_for(s.output));
    std::printf("  wrote C (%zu x %zu) to %s\n", m, n, s.output.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_tlr(arguments& args) {
  tlr_settings s;
  const std::string backend = args.text("backend", "");
  s.n = static_cast<std::size_t>(args.integer("n", 2048, 0, 1 << 17));
  s.tile = static_cast<std::size_t>(args.integer("tile", 256, 1, 1 << 16));
  s.matrix = args.text("matrix", "hilbert");
  if (s.matrix != "hilbert" && s.matrix != "covariance")
    throw nearsparse::invalid_argument(
        "nearsparse tlr: argument '--matrix' must be hilbert or "
        "covariance, got '" +
        s.matrix + "'");
  s.dimension = static_cast<int>(args.integer("dimension", 2, 2, 3));
  s.length = args.number("length", 0.1, 1e-6, 1e6);
  s.compression.max_rank = static_cast<int>(args.integer("rank", 32, 0, 1 << 16));
  s.compression.trunc.accuracy = args.number("accuracy", 1e-8, 0, 1);
  s.compression.method =
      nt::parse_compression_method(args.text("method", "randomized"), "nearsparse tlr", "--method");
  s.compression.dense_diagonal = args.flag("dense-diagonal") || s.matrix == "covariance";
  s.product_accuracy = args.number("product-accuracy", 1e-10, 0, 1);
  s.kernel = nearsparse::parse_implementation(args.text("kernel", "automatic"), "nearsparse tlr",
                                              "--kernel");
  s.csv = args.text("csv", "tlr_ranks.csv");
  s.a_file = args.text("a", "");
  s.b_file = args.text("b", "");
  s.output = args.text("output", "");
  args.finish();
  require(s.b_file.empty() || !s.a_file.empty(), "nearsparse tlr", "--b",
          "needs --a (B defaults to A)");
  if (!s.a_file.empty())
    return with_backend(backend, [&](auto exec) { return run_files(exec, s); });
  return with_backend(backend, [&](auto exec) { return run_on(exec, s); });
}

}  // namespace nearsparse::app
