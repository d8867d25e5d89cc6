// `nearsparse diag`: a banded product in CDM storage and a structured-sparse product in HM
// storage on random matrices, timed against Kokkos Kernels' spgemm on the same matrices in CSR,
// and checked against an independent host computation on a sample of rows.
#include "backend_dispatch.hpp"
#include "commands.hpp"
#include "matrix_files.hpp"
#include "timing.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/diagonal.hpp>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace nearsparse::app {

namespace {

namespace nd = nearsparse::diagonal;

struct diag_settings {
  int n_banded;
  int half_band;
  int n_structured;
  int dg_a, dg_b;
  nd::op op_a, op_b;
  nd::product_options options;  // the implementation and the HM algorithm
  std::uint64_t seed;
  int sample_rows;
  std::string a_file, b_file;  ///< --a and --b: Matrix Market operands (HM) instead of random ones
  std::string output;          ///< --output: C as Matrix Market
};

/// An HM matrix copied to the host, with element lookup.
struct host_hm {
  int rows = 0, cols = 0;
  std::vector<int> offsets;
  std::vector<std::int64_t> starts;
  std::vector<double> values;
  template <class Scalar, class Mem>
  explicit host_hm(const nd::hm_matrix<Scalar, Mem>& m)
      : rows(m.rows()), cols(m.cols()), offsets(m.host_offsets()), starts(m.host_starts()) {
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.values());
    values.assign(v.data(), v.data() + v.extent(0));
  }
  /// Element (i, j) of op(this).
  double at(long i, long j, nd::op o) const {
    if (o == nd::op::transpose) std::swap(i, j);
    const auto it = std::lower_bound(offsets.begin(), offsets.end(), int(j - i));
    if (it == offsets.end() || *it != j - i) return 0;
    return values[std::size_t(starts[std::size_t(it - offsets.begin())] + std::min(i, j))];
  }
  /// Nonzero columns of row i of op(this), with values.
  std::vector<std::pair<long, double>> row(long i, nd::op o) const {
    std::vector<std::pair<long, double>> out;
    const long ncols = o == nd::op::none ? cols : rows;
    for (int d : offsets) {
      const long j = i + (o == nd::op::none ? d : -d);
      if (j >= 0 && j < ncols) out.emplace_back(j, at(i, j, o));
    }
    return out;
  }
};

/// Largest |C - op(A) op(B)| over sampled rows, relative to the error bound of the sum.
double sampled_check(const host_hm& a, nd::op op_a, const host_hm& b, nd::op op_b, const host_hm& c,
                     int sample_rows, double roundoff, int inner) {
  double worst = 0;
  const int rows = c.rows;
  for (int s = 0; s < std::min(sample_rows, rows); ++s) {
    const long i = sample_rows >= rows ? s : long(double(s) * (rows - 1) / (sample_rows - 1));
    std::map<long, std::pair<double, double>> expected;  // column -> (sum, sum of magnitudes)
    for (const auto& [l, av] : a.row(i, op_a))
      for (const auto& [j, bv] : b.row(l, op_b)) {
        expected[j].first += av * bv;
        expected[j].second += std::abs(av * bv);
      }
    for (const auto& [j, cv] : c.row(i, nd::op::none))
      if (!expected.count(j)) expected[j] = {0.0, 0.0};
    for (const auto& [j, e] : expected) {
      const double bound = 4.0 * (inner + 2) * roundoff * e.second + 1e-300;
      worst = std::max(worst, std::abs(c.at(i, j, nd::op::none) - e.first) / bound);
    }
  }
  return worst;
}

/// Kokkos Kernels' spgemm on CSR copies (symbolic and numeric), the library baseline.
template <class Exec, class Scalar>
double time_kk_spgemm(const Exec& exec, const nd::hm_matrix<Scalar, typename Exec::memory_space>& a,
                      const nd::hm_matrix<Scalar, typename Exec::memory_space>& b) {
  using crs = nd::crs_matrix<Scalar, Exec>;
  const crs ca = nd::to_crs(exec, a), cb = nd::to_crs(exec, b);
  return median_seconds(exec, [&] {
    using handle_t = KokkosKernels::Experimental::KokkosKernelsHandle<
        int, int, Scalar, Exec, typename Exec::memory_space, typename Exec::memory_space>;
    handle_t kh;
    kh.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
    crs c;
    KokkosSparse::spgemm_symbolic(kh, ca, false, cb, false, c);
    KokkosSparse::spgemm_numeric(kh, ca, false, cb, false, c);
  });
}

template <class Exec>
bool report_check(const char* what, double worst) {
  const bool ok = worst <= 1.0;
  std::printf("  check (%s): largest error / bound %.3g over the sampled rows: %s\n", what, worst,
              ok ? "OK" : "FAILED");
  return ok;
}

template <class Exec>
int run_on(const Exec& exec, const diag_settings& s) {
  using mem = typename Exec::memory_space;
  using scalar = double;
  constexpr double roundoff = 0x1p-53;
  bool ok = true;

  // Banded: A and B with half-band w, multiplied in CDM storage.
  {
    const int n = s.n_banded, w = s.half_band;
    std::printf(
        "diag on %s: banded product, n = %d, half-band %d (%d diagonals each), fp64, "
        "op(A) %s, op(B) %s, %s implementation\n",
        Exec::name(), n, w, std::min(2 * w + 1, 2 * n - 1), nd::to_string(s.op_a),
        nd::to_string(s.op_b), nearsparse::to_string(s.options.implementation));
    const auto a = nd::random_hm<scalar>(exec, n, n, nd::banded_offsets(n, n, w, w), s.seed);
    const auto b = nd::random_hm<scalar>(exec, n, n, nd::banded_offsets(n, n, w, w), s.seed + 1);
    const auto ca = nd::cdm_from_hm(exec, a), cb = nd::cdm_from_hm(exec, b);
    nd::cdm_matrix<scalar, mem> cc;
    const double t_whole =
        median_seconds(exec, [&] { cc = nd::multiply(exec, ca, cb, s.op_a, s.op_b, s.options); });
    const nd::cdm_product_plan<scalar, mem> plan(exec, ca, cb, s.op_a, s.op_b);
    auto c2 = plan.make_c(exec);
    const double t_kernel =
        median_seconds(exec, [&] { nd::multiply(exec, plan, 1.0, ca, cb, 0.0, c2, s.options); });
    const double t_hm =
        median_seconds(exec, [&] { nd::multiply(exec, a, b, s.op_a, s.op_b, s.options); });
    std::printf(
        "  C: %d compact diagonals of %d; CDM product %.3f ms (whole call), %.3f ms "
        "(plan reused); HM product %.3f ms\n",
        cc.diagonal_count(), n, 1e3 * t_whole, 1e3 * t_kernel, 1e3 * t_hm);
    if (s.op_a == nd::op::none && s.op_b == nd::op::none) {
      const double t_kk = time_kk_spgemm(exec, a, b);
      std::printf("  Kokkos Kernels spgemm (CSR) %.3f ms: CDM is %s\n", 1e3 * t_kk,
                  speed_ratio(t_kk, t_whole).c_str());
    }
    ok &= report_check<Exec>(
        "banded", sampled_check(host_hm(a), s.op_a, host_hm(b), s.op_b,
                                host_hm(nd::hm_from_cdm(exec, cc)), s.sample_rows, roundoff, n));
  }

  // Structured sparse: randomly placed diagonals, multiplied in HM storage.
  {
    const int n = s.n_structured;
    std::printf(
        "diag on %s: structured-sparse product, n = %d, %d x %d random diagonals, fp64, "
        "%s algorithm, %s implementation\n",
        Exec::name(), n, s.dg_a, s.dg_b, nd::to_string(s.options.algorithm),
        nearsparse::to_string(s.options.implementation));
    const auto a =
        nd::random_hm<scalar>(exec, n, n, nd::random_offsets(n, n, s.dg_a, s.seed), s.seed + 2);
    const auto b =
        nd::random_hm<scalar>(exec, n, n, nd::random_offsets(n, n, s.dg_b, s.seed + 1), s.seed + 3);
    nd::hm_matrix<scalar, mem> c;
    const double t_whole =
        median_seconds(exec, [&] { c = nd::multiply(exec, a, b, s.op_a, s.op_b, s.options); });
    const nd::hm_product_plan<scalar, mem> plan(exec, a, b, s.op_a, s.op_b);
    auto c2 = plan.make_c(exec);
    const double t_kernel =
        median_seconds(exec, [&] { nd::multiply(exec, plan, 1.0, a, b, 0.0, c2, s.options); });
    std::printf(
        "  A: %lld stored, B: %lld stored; C: %d diagonals, %lld stored (%.1f %% of "
        "dense), %lld diagonal pairs\n",
        (long long)a.stored_count(), (long long)b.stored_count(), c.diagonal_count(),
        (long long)c.stored_count(), 100.0 * double(c.stored_count()) / (double(n) * n),
        (long long)plan.pair_count());
    std::printf("  HM product %.3f ms (whole call), %.3f ms (plan reused), %.2f GFLOP/s\n",
                1e3 * t_whole, 1e3 * t_kernel, plan.flops() / t_kernel * 1e-9);
    if (s.op_a == nd::op::none && s.op_b == nd::op::none) {
      const double t_kk = time_kk_spgemm(exec, a, b);
      std::printf("  Kokkos Kernels spgemm (CSR) %.3f ms: HM is %s\n", 1e3 * t_kk,
                  speed_ratio(t_kk, t_whole).c_str());
    }
    ok &= report_check<Exec>("structured", sampled_check(host_hm(a), s.op_a, host_hm(b), s.op_b,
                                                         host_hm(c), s.sample_rows, roundoff, n));
    if (!s.output.empty()) {
      nearsparse::io::write_hm(exec, s.output, c, write_options_for(s.output));
      std::printf("  wrote the structured-sparse C (%d x %d) to %s\n", c.rows(), c.cols(),
                  s.output.c_str());
    }
  }
  return ok ? 0 : 1;
}

/// The HM product of operands read from Matrix Market files, checked on sampled rows.
template <class Exec>
int run_files(const Exec& exec, const diag_settings& s) {
  using mem = typename Exec::memory_space;
  const std::string b_file = s.b_file.empty() ? s.a_file : s.b_file;
  const auto a = nearsparse::io::read_hm<double>(exec, s.a_file, read_options_for(s.a_file));
  const auto b = b_file == s.a_file
                     ? a
                     : nearsparse::io::read_hm<double>(exec, b_file, read_options_for(b_file));
  // Extents of op(A) and op(B).
  const bool ta = s.op_a == nd::op::transpose, tb = s.op_b == nd::op::transpose;
  const int m = ta ? a.cols() : a.rows(), k = ta ? a.rows() : a.cols();
  const int kb = tb ? b.cols() : b.rows(), n = tb ? b.rows() : b.cols();
  require_product_extents("nearsparse diag", s.a_file + (ta ? " transposed" : ""), m, k,
                          b_file + (tb ? " transposed" : ""), kb, n);
  std::printf(
      "diag on %s: A = %s (%d x %d, %d diagonals, %lld stored), B = %s (%d x %d, %d diagonals), "
      "op(A) %s, op(B) %s, %s algorithm, %s implementation\n",
      Exec::name(), s.a_file.c_str(), a.rows(), a.cols(), a.diagonal_count(),
      (long long)a.stored_count(), b_file.c_str(), b.rows(), b.cols(), b.diagonal_count(),
      nd::to_string(s.op_a), nd::to_string(s.op_b), nd::to_string(s.options.algorithm),
      nearsparse::to_string(s.options.implementation));
  nd::hm_matrix<double, mem> c;
  const double t =
      median_seconds(exec, [&] { c = nd::multiply(exec, a, b, s.op_a, s.op_b, s.options); });
  std::printf("  C: %d x %d, %d diagonals, %lld stored; HM product %.3f ms (whole call)\n",
              c.rows(), c.cols(), c.diagonal_count(), (long long)c.stored_count(), 1e3 * t);
  const bool ok = report_check<Exec>("files", sampled_check(host_hm(a), s.op_a, host_hm(b), s.op_b,
                                                            host_hm(c), s.sample_rows, 0x1p-53, k));
  if (!s.output.empty()) {
    nearsparse::io::write_hm(exec, s.output, c, write_options_for(s.output));
    std::printf("  wrote C (%d x %d) to %s\n", c.rows(), c.cols(), s.output.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_diag(arguments& args) {
  diag_settings s;
  s.n_banded = int(args.integer("n", 10240, 1, 1 << 24));
  s.half_band = int(args.integer("half-band", 10, 0, 1 << 24));
  s.n_structured = int(args.integer("structured-n", 4000, 1, 1 << 20));
  s.dg_a = int(args.integer("dg-a", 29, 0, 1 << 21));
  s.dg_b = int(args.integer("dg-b", 35, 0, 1 << 21));
  s.op_a = nd::parse_op(args.text("op-a", "none"), "nearsparse diag", "--op-a");
  s.op_b = nd::parse_op(args.text("op-b", "none"), "nearsparse diag", "--op-b");
  const std::string algorithm = args.text("algorithm", "output_stationary");
  const std::string kernel = args.text("kernel", "automatic");
  s.seed = std::uint64_t(args.integer("seed", 2024, 0, 1LL << 62));
  s.sample_rows = int(args.integer("check-rows", 64, 1, 1 << 20));
  s.a_file = args.text("a", "");
  s.b_file = args.text("b", "");
  s.output = args.text("output", "");
  const std::string backend = args.text("backend", "");
  args.finish();
  require(s.b_file.empty() || !s.a_file.empty(), "nearsparse diag", "--b",
          "needs --a (B defaults to A)");
  s.options.algorithm = nd::parse_hm_algorithm(algorithm, "nearsparse diag", "--algorithm");
  s.options.implementation =
      nearsparse::parse_implementation(kernel, "nearsparse diag", "--kernel");
  if (!s.a_file.empty())
    return with_backend(backend, [&](auto exec) { return run_files(exec, s); });
  return with_backend(backend, [&](auto exec) { return run_on(exec, s); });
}

}  // namespace nearsparse::app
