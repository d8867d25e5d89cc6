// Matrix functions by SpAMM iterations (spamm/matrix_functions.hpp) against the same iterations
// with dense GEMMs of the same precision (OpenBLAS on the host, cuBLAS on CUDA) and against the
// dense symmetric eigendecomposition (LAPACK syevd on the host, cuSOLVER syevd on CUDA) followed
// by V f(l) V^T.
//
//   spamm_functions/sp2/<space>/<model>/<precision>/e<target>/N
//       SP2 density matrix at half filling of the dimerized chain (1d) or the staggered cubic
//       lattice (3d, N a cube); counters: iterations (ours), dense_iterations, mean_valid_ratio,
//       final_error (||D - D_eig||_F / ||D_eig||_F against the eigensolver's D of the same
//       precision), error_estimate, target_met, speedup_<baseline>.
//   spamm_functions/invsqrt/... and spamm_functions/sign/...
//       S^(-1/2) of the 1-D overlap matrix and sign(H) of the chain at one size, against the
//       same iteration with dense GEMMs (dense_iterations) and the eigensolver.
#include "support/harness.hpp"

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm/matrix_functions.hpp>
#include <nearsparse/spamm/model_matrices.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include "baselines/cublas.hpp"
#include "baselines/cusolver.hpp"

#include <KokkosBlas3_gemm.hpp>
#endif

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

namespace spamm = nearsparse::spamm;
namespace host_blas = nearsparse::detail::host_blas;
using nearsparse::perf::pick;
using nearsparse::perf::workload;

template <class Exec, class T>
using matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::memory_space>;
template <class Exec, class T>
using column_matrix = Kokkos::View<T**, Kokkos::LayoutLeft, typename Exec::memory_space>;

enum class function_kind { sp2, invsqrt, sign };

template <class Exec>
constexpr bool on_host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;

/// C = A B with the dense GEMM of the precision: OpenBLAS on the host, cuBLAS on CUDA.
template <class Exec, class T>
void dense_gemm(const Exec& exec, spamm::precision p, const matrix<Exec, T>& a,
                const matrix<Exec, T>& b, const matrix<Exec, T>& c) {
  if constexpr (on_host<Exec>) {
    (void)p;
    exec.fence();
    host_blas::gemm(T(1), a, b, T(0), c);
  } else {
#ifdef KOKKOS_ENABLE_CUDA
    namespace cublas = nearsparse::perf::cublas;
    const cublas::precision q = p == spamm::precision::fp64   ? cublas::precision::fp64
                                : p == spamm::precision::tf32 ? cublas::precision::tf32
                                                              : cublas::precision::fp32;
    cublas::gemm(exec, q, 1.0, a, b, 0.0, c);
#endif
  }
}

/// The SP2 iteration of spamm::sp2 with dense products: the same start, step choice and stopping
/// test. Returns the number of steps.
template <class Exec, class T>
int dense_sp2(const Exec& exec, spamm::precision p, const matrix<Exec, T>& h, long occupied,
              const matrix<Exec, T>& x, const matrix<Exec, T>& x2, double target) {
  namespace d = spamm::detail;
  const auto b = spamm::gershgorin_bounds(exec, h);
  const double width = b.upper - b.lower;
  d::scale_shift(exec, x, -1.0 / width, h, b.upper / width);
  const double occ = double(occupied), stop = 0.5 * target * std::sqrt(occ);
  double history[2] = {-1, -1};
  int k = 0;
  for (; k < 100; ++k) {
    dense_gemm(exec, p, x, x, x2);
    const double tr_x = d::trace(exec, x), tr_x2 = d::trace(exec, x2);
    const double residual = d::combination_norm(exec, 1.0, x2, -1.0, x, 0.0);
    if (std::abs(tr_x2 - occ) <= std::abs(2.0 * tr_x - tr_x2 - occ)) {
      Kokkos::deep_copy(exec, x, x2);
    } else {
      d::combine(exec, x, 2.0, x, -1.0, x2, 0.0);
    }
    if (3.0 * residual <= stop) break;
    if (history[0] >= 0 && residual < 0.1 * std::sqrt(occ) && residual >= history[0]) break;
    history[0] = history[1];
    history[1] = residual;
  }
  exec.fence();
  return std::min(k + 1, 100);
}

/// Coupled Newton-Schulz for S^(-1/2) (spamm::inverse_sqrt's iteration) with dense products: the
/// same start (Y = S / g, Z = I, g the Gershgorin upper bound), steps and stopping test
/// (||I - Z Y||_F / 2 at most half the target). Z / sqrt(g) is left in z. Returns the number of
/// steps.
template <class Exec, class T>
int dense_inverse_sqrt(const Exec& exec, spamm::precision p, const matrix<Exec, T>& s,
                       matrix<Exec, T> y, matrix<Exec, T> z, const matrix<Exec, T>& t,
                       matrix<Exec, T> next, double target) {
  namespace d = spamm::detail;
  const double c = 1.0 / spamm::gershgorin_bounds(exec, s).upper;
  const double sqrt_n = std::sqrt(double(s.extent(0))), stop = 0.5 * target;
  d::scale_shift(exec, y, c, s, 0.0);
  d::set_identity(exec, z);
  double history[2] = {-1, -1};
  int k = 0;
  for (; k < 100; ++k) {
    dense_gemm(exec, p, z, y, t);
    const double residual = d::shifted_norm(exec, t, 1.0);
    if (0.5 * residual <= stop) break;
    if (history[0] >= 0 && residual < 0.1 * sqrt_n && residual >= history[0]) break;
    history[0] = history[1];
    history[1] = residual;
    d::combine(exec, t, -0.5, t, 0.0, t, 1.5);  // T = (3I - Z Y) / 2
    dense_gemm(exec, p, y, t, next);
    std::swap(y, next);
    dense_gemm(exec, p, t, z, next);
    std::swap(z, next);
  }
  d::scale_shift(exec, z, std::sqrt(c), z, 0.0);
  exec.fence();
  return std::min(k + 1, 100);
}

/// Newton-Schulz for sign(A) (spamm::sign's iteration) with dense products: X = A / b (b the
/// larger Gershgorin bound in magnitude), X <- X (3I - X^2) / 2 until ||X^2 - I||_F is at most
/// half the target times sqrt(N). Returns the number of steps.
template <class Exec, class T>
int dense_sign(const Exec& exec, spamm::precision p, const matrix<Exec, T>& a, matrix<Exec, T> x,
               const matrix<Exec, T>& x2, matrix<Exec, T> next, double target) {
  namespace d = spamm::detail;
  const auto b = spamm::gershgorin_bounds(exec, a);
  double bound = std::max(std::abs(b.lower), std::abs(b.upper));
  if (!(bound > 0)) bound = 1.0;  // as spamm::sign: A = 0 stagnates and says so
  const double sqrt_n = std::sqrt(double(a.extent(0))), stop = 0.5 * target * sqrt_n;
  d::scale_shift(exec, x, 1.0 / bound, a, 0.0);
  double history[2] = {-1, -1};
  int k = 0;
  for (; k < 100; ++k) {
    dense_gemm(exec, p, x, x, x2);
    const double residual = d::shifted_norm(exec, x2, 1.0);
    if (residual <= stop) break;
    if (history[0] >= 0 && residual < 0.1 * sqrt_n && residual >= history[0]) break;
    history[0] = history[1];
    history[1] = residual;
    d::combine(exec, x2, -0.5, x2, 0.0, x2, 1.5);  // T = (3I - X^2) / 2
    dense_gemm(exec, p, x, x2, next);
    std::swap(x, next);
  }
  exec.fence();
  return std::min(k + 1, 100);
}

/// f(A) = V f(l) V^T by the dense symmetric eigendecomposition: syevd (LAPACK on the host,
/// cuSOLVER on CUDA), the columns of V scaled by f(l), one GEMM.
template <class Exec, class T>
struct eigen_baseline {
  int n;
  column_matrix<Exec, T> v, scaled, out;
  Kokkos::View<T*, typename Exec::memory_space> w;
  std::vector<T> work;
  std::vector<int> iwork;

  eigen_baseline(const Exec& exec, int size)
      : n(size),
        v(Kokkos::view_alloc(exec, std::string("V")), size, size),
        scaled(Kokkos::view_alloc(exec, std::string("V_scaled")), size, size),
        out(Kokkos::view_alloc(exec, std::string("f(A)")), size, size),
        w(Kokkos::view_alloc(exec, std::string("eigenvalues")), size) {
    if constexpr (on_host<Exec>) {
      T work_size = 0;
      int iwork_size = 0;
      host_blas::syevd('V', 'U', n, v.data(), n, w.data(), &work_size, -1, &iwork_size, -1);
      work.resize(std::size_t(work_size) + 1);
      iwork.resize(std::size_t(iwork_size) + 1);
    }
  }

  template <class AView>
  void run(const Exec& exec, const AView& a, function_kind kind, long occupied) {
    Kokkos::deep_copy(exec, v, a);
    exec.fence();
    if constexpr (on_host<Exec>) {
      host_blas::syevd('V', 'U', n, v.data(), n, w.data(), work.data(), int(work.size()),
                       iwork.data(), int(iwork.size()));
    } else {
#ifdef KOKKOS_ENABLE_CUDA
      nearsparse::perf::cusolver::syevd(exec, n, v.data(), n, w.data());
#endif
    }
    const auto vv = v;
    const auto ss = scaled;
    const auto ww = w;
    Kokkos::parallel_for(
        "nearsparse::perf::scale_eigenvectors",
        Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {n, n}),
        KOKKOS_LAMBDA(const int i, const int j) {
          const double l = static_cast<double>(ww(j));
          double f = 0.0;
          if (kind == function_kind::sp2) f = j < occupied ? 1.0 : 0.0;
          if (kind == function_kind::invsqrt) f = 1.0 / ::sqrt(l);
          if (kind == function_kind::sign) f = l < 0 ? -1.0 : 1.0;
          ss(i, j) = static_cast<T>(f * static_cast<double>(vv(i, j)));
        });
    if constexpr (on_host<Exec>) {
      exec.fence();
      host_blas::gemm(host_blas::order::column_major, host_blas::op::none, host_blas::op::transpose,
                      n, n, n, T(1), scaled.data(), n, v.data(), n, T(0), out.data(), n);
    } else {
#ifdef KOKKOS_ENABLE_CUDA
      KokkosBlas::gemm("N", "T", T(1), scaled, v, T(0), out);
#endif
    }
    exec.fence();
  }
};

struct sp2_case {
  spamm::precision precision;
  double target;
  bool cubic;
};

/// The model Hamiltonian of N sites (3d: N must be a cube) and its closed-form gap.
template <class Exec, class T>
double fill_model(const Exec& exec, const matrix<Exec, T>& h, bool cubic) {
  if (cubic) {
    spamm::cubic_model m;
    m.nx = m.ny = m.nz = int(std::lround(std::cbrt(double(h.extent(0)))));
    m.delta = 1.0;
    m.disorder = 0.5;
    spamm::fill_cubic_lattice(exec, h, m);
    return spamm::cubic_lattice_gap(m) - m.disorder;
  }
  spamm::chain_model m;
  m.disorder = 0.2;
  spamm::fill_dimerized_chain(exec, h, m);
  return spamm::dimerized_chain_gap(m) - m.disorder;
}

template <class Exec, class T>
void bench_sp2(benchmark::State& state, sp2_case c) {
  const Exec exec;
  const long n = state.range(0);
  const long occupied = n / 2;
  matrix<Exec, T> h("H", n, n), d("D", n, n), x("X", n, n), x2("X2", n, n);
  spamm::function_options opt;
  opt.precision = c.precision;
  opt.tile = 64;
  opt.target_error = c.target;
  opt.gap = fill_model(exec, h, c.cubic);
  if constexpr (on_host<Exec>) host_blas::set_threads(exec.concurrency());
  spamm::function_report report;
  int dense_steps = 0;
  eigen_baseline<Exec, T> eig(exec, int(n));
  std::vector<nearsparse::perf::contender> baselines{
      {"dense_sp2",
       [&] { dense_steps = dense_sp2(exec, c.precision, h, occupied, x, x2, c.target); }},
      {"eigensolver", [&] { eig.run(exec, h, function_kind::sp2, occupied); }, 1, 0}};
  nearsparse::perf::compare_many(
      state, exec, [&] { report = spamm::sp2(exec, h, occupied, d, opt); }, baselines, workload{},
      1);
  const double reference = nearsparse::frobenius_norm(exec, eig.out);
  state.counters["iterations"] = report.iterations;
  state.counters["dense_iterations"] = dense_steps;
  state.counters["mean_valid_ratio"] = report.mean_valid_ratio;
  state.counters["final_error"] = nearsparse::frobenius_distance(exec, d, eig.out) / reference;
  state.counters["dense_error"] = nearsparse::frobenius_distance(exec, x, eig.out) / reference;
  state.counters["error_estimate"] = report.error_estimate;
  state.counters["target_met"] = report.target_met ? 1 : 0;
}

template <class Exec, class T>
void bench_function(benchmark::State& state, function_kind kind, spamm::precision p,
                    double target) {
  const Exec exec;
  const long n = state.range(0);
  matrix<Exec, T> a("A", n, n), f("f(A)", n, n);
  spamm::function_options opt;
  opt.precision = p;
  opt.tile = 64;
  opt.target_error = target;
  if (kind == function_kind::invsqrt) {
    spamm::fill_overlap_chain(exec, a, 0.5);
  } else {
    opt.gap = fill_model(exec, a, false);
  }
  if constexpr (on_host<Exec>) host_blas::set_threads(exec.concurrency());
  spamm::function_report report;
  eigen_baseline<Exec, T> eig(exec, int(n));
  // The dense iteration's matrices.
  matrix<Exec, T> w[4] = {matrix<Exec, T>("W0", n, n), matrix<Exec, T>("W1", n, n),
                          matrix<Exec, T>("W2", n, n), matrix<Exec, T>("W3", n, n)};
  int dense_steps = 0;
  nearsparse::perf::contender dense{
      "dense_iteration", [&] {
        dense_steps = kind == function_kind::invsqrt
                          ? dense_inverse_sqrt(exec, p, a, w[0], w[1], w[2], w[3], target)
                          : dense_sign(exec, p, a, w[0], w[1], w[2], target);
      }};
  nearsparse::perf::compare_many(
      state, exec,
      [&] {
        report = kind == function_kind::invsqrt ? spamm::inverse_sqrt(exec, a, f, opt)
                                                : spamm::sign(exec, a, f, opt);
      },
      {dense, {"eigensolver", [&] { eig.run(exec, a, kind, 0); }, 1, 0}}, workload{}, 1);
  state.counters["dense_iterations"] = dense_steps;
  state.counters["iterations"] = report.iterations;
  state.counters["products"] = double(report.steps.size());
  state.counters["mean_valid_ratio"] = report.mean_valid_ratio;
  state.counters["final_error"] =
      nearsparse::frobenius_distance(exec, f, eig.out) / nearsparse::frobenius_norm(exec, eig.out);
  state.counters["error_estimate"] = report.error_estimate;
  state.counters["target_met"] = report.target_met ? 1 : 0;
}

template <class F>
void add(const std::string& name, F fn, const std::vector<long>& sizes) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
  for (long n : sizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(pick(2, 1));
}

std::string target_name(double target) {
  char text[16];
  std::snprintf(text, sizeof text, "e%.0e", target);
  return text;
}

template <class Exec>
void register_space() {
  const std::string space = Exec::name();
  const bool host = on_host<Exec>;
  // The host benchmarks run on OpenMP (Serial would take as long for nothing new); without
  // OpenBLAS there is no host baseline.
  if (host && (space != "OpenMP" || !host_blas::available())) return;
  std::vector<sp2_case> cases{{spamm::precision::fp64, 1e-8, false},
                              {spamm::precision::fp32, 1e-3, false},
                              {spamm::precision::fp32, 1e-3, true}};
  if (!host) {
    cases.push_back({spamm::precision::fp32, 1e-5, false});
    cases.push_back({spamm::precision::tf32, 2e-2, false});
  }
  for (const auto& c : cases) {
    std::vector<long> sizes;
    if (c.cubic) {
      sizes = host ? pick<std::vector<long>>({1728, 2744}, {216})
                   : pick<std::vector<long>>({4096, 13824, 32768}, {216});
    } else {
      sizes = host ? pick<std::vector<long>>({1024, 2048}, {300})
                   : pick<std::vector<long>>({4096, 8192, 16384}, {300});
    }
    const std::string name = "spamm_functions/sp2/" + space + "/" + (c.cubic ? "3d" : "1d") + "/" +
                             spamm::to_string(c.precision) + "/" + target_name(c.target);
    if (c.precision == spamm::precision::fp64) {
      add(
          name, [c](benchmark::State& st) { bench_sp2<Exec, double>(st, c); }, sizes);
    } else {
      add(
          name, [c](benchmark::State& st) { bench_sp2<Exec, float>(st, c); }, sizes);
    }
  }
  const std::vector<long> one =
      host ? pick<std::vector<long>>({1536}, {250}) : pick<std::vector<long>>({8192}, {250});
  for (const auto kind : {function_kind::invsqrt, function_kind::sign}) {
    const std::string name = std::string("spamm_functions/") +
                             (kind == function_kind::invsqrt ? "invsqrt" : "sign") + "/" + space +
                             "/1d/fp32/e1e-03";
    add(
        name,
        [kind](benchmark::State& st) {
          bench_function<Exec, float>(st, kind, spamm::precision::fp32, 1e-3);
        },
        one);
  }
}

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_space<Spaces>(), ...);
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
