// SpAMM benchmarks (section 4.1 of the cuSpAMM paper).
//
//   spamm/cuda/<matrix>/<precision>/N/v   a reused plan's product against cuBLAS of the same
//       precision (DGEMM, SGEMM, TF32, FP16/BF16 GemmEx with fp32 accumulation) in the same
//       process. v is the target valid ratio (1 = tau 0, the dense product). Counters:
//       valid_ratio, tau, rel_error = ||C_exact - C||_F / ||C_exact||_F against an fp64 product,
//       t_full / speedup_full for a product that also builds its plan (tau given), and
//       t_refresh / speedup_refresh for a kept plan refreshed in place for new operands
//       (plan::update) and its product; for fp16 and bf16 also baseline_t_converted, cuBLAS with
//       the conversion of the fp32 operand included (what a user with fp32 data pays), and
//       speedup_refresh_converted against it.
//   spamm/openmp/<matrix>/<precision>/N/v   the whole nearsparse::spamm::multiply call (plan,
//       tau search, product) as "t", a reused plan's product (t_reused), a kept plan refreshed in
//       place and its product (t_refresh) and a call with tau given (t_whole_tau) against
//       OpenBLAS's dense product of the same precision on as many threads as the backend (Kokkos
//       Kernels' dense gemm where the build has no OpenBLAS, said in the label); counters as above,
//       speedup against the whole call, speedup_reused.
//   spamm_kernel/cuda/...   the CUDA kernels against the portable team-policy kernels on the
//       GPU: what the specialization buys.
//   spamm_norms/cuda/...    the CUDA get-norm kernels against the portable one.
//   spamm_refresh/cuda/<precision>/N   plan::update timed whole and part by part (packing, norm
//       maps, both at once, V) beside the product.
//   spamm_search/cuda/v<v>/N   the tau search in one launch against a launch per count.
//   spamm_small/cuda/<precision>/v<v>/N   N < 4096: a reused plan's product and whole calls
//       against the floors of a call (an empty kernel; a pass over A and B), and cuBLAS.
//   spamm_error/<space>/exponential/<precision>/e<E>/N   the whole nearsparse::spamm::multiply
//       call with options::target_error = E (plan, search for the largest tau whose error bound
//       meets E, product) against the same call with that tau given (whole_tau: what the search
//       costs) and the dense product (OpenBLAS on the host, Kokkos Kernels gemm elsewhere).
//       Counters: valid_ratio, error_bound (relative to ||A||_F ||B||_F), measured (the error
//       in that measure), rel_error (relative to ||A B||_F), evaluations of the bound.
// Matrices: algebraic decay a_ij = 0.1 / (|i - j|^0.1 + 1) (the paper's), exponential decay
// a_ij = 0.99^|i - j|.
#include "baselines/cublas_spamm.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/detail/host_blas.hpp>

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/spamm.hpp>

#include <benchmark/benchmark.h>
#include <KokkosBlas3_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

using spamm_precision = nearsparse::spamm::precision;
namespace spamm = nearsparse::spamm;
using nearsparse::perf::pick;
using nearsparse::perf::workload;

enum class decay { algebraic, exponential };
const char* name_of(decay d) {
  return d == decay::algebraic ? "algebraic" : "exponential";
}

template <class Exec, class T>
using matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::memory_space>;

template <class Exec, class View>
void fill(const Exec& exec, decay d, const View& a) {
  if (d == decay::algebraic) {
    spamm::fill_algebraic_decay(exec, a, 0.1, 0.1);
  } else {
    spamm::fill_exponential_decay(exec, a, 1.0, 0.99);
  }
}

// The fp64 product A * A of the current (space, matrix, N), kept between benchmarks that share
// it: at N = 16384 it takes 2 GB and a second of DGEMM.
template <class Exec>
struct exact_cache {
  decay d{};
  long n = -1;
  matrix<Exec, double> a, c;
};
template <class Exec>
exact_cache<Exec>& exact_product(const Exec& exec, decay d, long n) {
  static exact_cache<Exec> cache;
  static const bool hooked = [] {
    Kokkos::push_finalize_hook([] { cache = exact_cache<Exec>{}; });  // Views die before Kokkos
    return true;
  }();
  (void)hooked;
  if (cache.n == n && cache.d == d) return cache;
  cache = exact_cache<Exec>{};
  cache.a = matrix<Exec, double>("A_fp64", n, n);
  cache.c = matrix<Exec, double>("C_exact", n, n);
  fill(exec, d, cache.a);
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same<Exec, Kokkos::Cuda>::value) {
    nearsparse::perf::cublas::gemm(exec, nearsparse::perf::cublas::precision::fp64, 1.0, cache.a,
                                   cache.a, 0.0, cache.c);
  } else
#endif
  {
    constexpr bool host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
    bool done = false;
    if constexpr (host) {
      namespace host_blas = nearsparse::detail::host_blas;
      if (host_blas::available()) {
        const host_blas::thread_scope same_threads(exec.concurrency());
        host_blas::gemm(1.0, cache.a, cache.a, 0.0, cache.c);
        done = true;
      }
    }
    if (!done) KokkosBlas::gemm("N", "N", 1.0, cache.a, cache.a, 0.0, cache.c);
  }
  exec.fence();
  cache.d = d;
  cache.n = n;
  return cache;
}

struct case_spec {
  decay d;
  spamm_precision precision;
  double target;
  int tile;
};

// The options of a case (tile, precision, target valid ratio).
spamm::options options_of(const case_spec& spec) {
  spamm::options opt;
  opt.precision = spec.precision;
  opt.tile = spec.tile;
  opt.target_valid_ratio = spec.target;
  return opt;
}

// The case's n x n decay matrix, the operand A = B of every benchmark.
template <class Exec, class In>
matrix<Exec, In> decay_input(const Exec& exec, const case_spec& spec, long n) {
  matrix<Exec, In> a("A", n, n);
  fill(exec, spec.d, a);
  return a;
}

// Fills the counters every SpAMM benchmark reports.
template <class Exec, class Plan, class CView>
void spamm_counters(benchmark::State& state, const Exec& exec, const Plan& plan, const CView& c,
                    const matrix<Exec, double>& exact) {
  const auto e = spamm::measure_error(exec, exact, c);
  state.counters["valid_ratio"] = plan.valid_ratio();
  state.counters["tau"] = plan.tau();
  state.counters["rel_error"] = e.relative();
}

// A call as a loop of such calls sees it: one untimed call first, then the median of five.
template <class Exec, class Run>
double time_in_loop(const Exec& exec, const Run& run) {
  nearsparse::perf::time_call(exec, run);
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) t.push_back(nearsparse::perf::time_call(exec, run));
  return nearsparse::perf::median(t);
}

// A product that builds its plan too (tau given): the cost without reuse.
template <class Exec, class InView, class CView>
double time_full(const Exec& exec, const InView& a, const CView& c, const spamm::options& opt) {
  return time_in_loop(exec, [&] {
    spamm::plan<Exec> plan(exec, a, a, opt);
    plan.multiply(exec, 1, 0, c);
  });
}

// A kept plan refreshed in place for new operands (plan::update) and its product: what an
// iteration that keeps its plan pays each step.
template <class Exec, class InView, class CView>
double time_refresh(const Exec& exec, spamm::plan<Exec>& plan, const InView& a, const CView& c) {
  return time_in_loop(exec, [&] {
    plan.update(exec, a, a);
    plan.multiply(exec, 1, 0, c);
  });
}

// On a host space: the whole nearsparse::spamm::multiply call with its tau search (the plan built:
// packing, norm maps, search; then the product) against OpenBLAS's dense product of the same
// precision on as many threads as the backend has (Kokkos Kernels' dense gemm where the build has
// no OpenBLAS, said in the label). "t" is the whole call; t_reused is a reused plan's product,
// t_refresh a kept plan refreshed in place (plan::update) and its product, t_whole_tau a call
// with tau given (no search). Counters: speedup (OpenBLAS / whole call), speedup_reused
// (OpenBLAS / reused plan), speedup_refresh (OpenBLAS / refresh and product), kernel (1: the host
// BLAS path ran, 0: the portable kernel), valid_ratio, tau, rel_error; t_reused_merged and
// t_reused_per_tile: a reused plan's product with each host_grouping.
template <class Exec, class In, class Out>
void bench_host(benchmark::State& state, case_spec spec) {
  using nearsparse::perf::contender;
  const Exec exec;
  const long n = state.range(0);
  auto& ex = exact_product(exec, spec.d, n);
  const auto a = decay_input<Exec, In>(exec, spec, n);
  matrix<Exec, Out> c("C", n, n), dense("C_dense", n, n);
  const spamm::options opt = options_of(spec);
  auto plan = std::make_shared<spamm::plan<Exec>>(exec, a, a, opt);
  spamm::options fixed = opt;
  fixed.target_valid_ratio = 0;
  fixed.tau = plan->tau();
  const double flops = 2.0 * n * n * double(n);
  namespace host_blas = nearsparse::detail::host_blas;
  // A CUDA build instantiates this for Kokkos::Cuda too: the OpenBLAS branch is compiled only for
  // host memory.
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  const bool openblas = host && host_blas::available();
  std::string baseline = "kokkos_kernels_gemm";
  if (openblas) baseline = std::string("openblas_") + (sizeof(Out) == 4 ? "sgemm" : "dgemm");
  std::vector<contender> others;
  others.push_back({"reused", [=] { plan->multiply(exec, 1, 0, c); }, 0, 1, false});
  // The host path's two groupings of the kept products into gemms (host_grouping), each with a
  // plan of the same tau, timed beside the default.
  if constexpr (host) {
    for (const auto grouping : {spamm::host_grouping::merged, spamm::host_grouping::per_tile}) {
      spamm::options form = fixed;
      form.host_grouping = grouping;
      auto grouped = std::make_shared<spamm::plan<Exec>>(exec, a, a, form);
      others.push_back(
          {grouping == spamm::host_grouping::merged ? "reused_merged" : "reused_per_tile",
           [=] { grouped->multiply(exec, 1, 0, c); }, 0, 1, false});
    }
  }
  others.push_back({"refresh",
                    [=] {
                      plan->update(exec, a, a);
                      plan->multiply(exec, 1, 0, c);
                    },
                    0, 1, false});
  others.push_back({"whole_tau",
                    [=] {
                      spamm::plan<Exec> p(exec, a, a, fixed);
                      p.multiply(exec, 1, 0, c);
                    },
                    0, 1, false});
  // OpenBLAS on the space's threads; the library's calls run with OpenBLAS as the process left
  // it (OMP_NUM_THREADS), as a user who sets nothing has it.
  others.push_back({baseline,
                    [=] {
                      if constexpr (host) {
                        if (openblas) {
                          const host_blas::thread_scope same_threads(exec.concurrency());
                          return host_blas::gemm(Out(1), a, a, Out(0), dense);
                        }
                      }
                      KokkosBlas::gemm("N", "N", Out(1), a, a, Out(0), dense);
                      exec.fence();
                    },
                    0, 1});
  nearsparse::perf::compare_many(
      state, exec, [&] { spamm::multiply(exec, 1, a, a, 0, c, opt); }, others,
      workload{flops * plan->valid_ratio(), 3.0 * n * n * sizeof(In)}, 1,
      nearsparse::perf::call_timing::warm);
  state.counters["speedup"] = state.counters["speedup_" + baseline];
  state.counters["speedup_reused"] = state.counters["t_" + baseline] / state.counters["t_reused"];
  state.counters["speedup_refresh"] = state.counters["t_" + baseline] / state.counters["t_refresh"];
  state.counters["kernel"] =
      host && host_blas::available() && opt.implementation != nearsparse::implementation::portable;
  spamm_counters(state, exec, *plan, c, ex.c);
  state.SetLabel(std::string(Exec::name()) + " vs " + baseline +
                 (openblas ? std::string(" (") + host_blas::name() + ")" : std::string()));
}

// The whole spamm::multiply call with an error target (see the file comment, spamm_error).
template <class Exec, class In, class Out>
void bench_error(benchmark::State& state, decay d, spamm_precision precision, double target) {
  using nearsparse::perf::contender;
  const Exec exec;
  const long n = state.range(0);
  auto& ex = exact_product(exec, d, n);
  matrix<Exec, In> a("A", n, n);
  fill(exec, d, a);
  matrix<Exec, Out> c("C", n, n), dense("C_dense", n, n);
  spamm::options opt;
  opt.precision = precision;
  opt.tile = 64;
  opt.target_error = target;
  auto plan = std::make_shared<spamm::plan<Exec>>(exec, a, a, opt);
  const spamm::search_report found = plan->search_error(exec, target);
  spamm::options fixed = opt;
  fixed.target_error = 0;
  fixed.tau = plan->tau();
  namespace host_blas = nearsparse::detail::host_blas;
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  const bool openblas = host && host_blas::available();
  std::string baseline = "kokkos_kernels_gemm";
  if (openblas) {
    host_blas::set_threads(exec.concurrency());
    baseline = std::string("openblas_") + (sizeof(Out) == 4 ? "sgemm" : "dgemm");
  }
  std::vector<contender> others;
  others.push_back({"whole_tau",
                    [=] {
                      spamm::plan<Exec> p(exec, a, a, fixed);
                      p.multiply(exec, 1, 0, c);
                    },
                    0, 1, false});
  others.push_back({baseline,
                    [=] {
                      if constexpr (host) {
                        if (openblas) return host_blas::gemm(Out(1), a, a, Out(0), dense);
                      }
                      KokkosBlas::gemm("N", "N", Out(1), a, a, Out(0), dense);
                      exec.fence();
                    },
                    0, 1});
  const double flops = 2.0 * n * n * double(n);
  nearsparse::perf::compare_many(
      state, exec, [&] { spamm::multiply(exec, 1, a, a, 0, c, opt); }, others,
      workload{flops * plan->valid_ratio(), 3.0 * n * n * sizeof(In)}, 1,
      nearsparse::perf::call_timing::warm);
  const auto e = spamm::measure_error(exec, ex.c, c);
  const auto bound = plan->error_bound(exec);
  state.counters["valid_ratio"] = plan->valid_ratio();
  state.counters["tau"] = plan->tau();
  state.counters["error_bound"] = bound.relative();
  state.counters["measured"] = e.relative_to(bound.norm_product);
  state.counters["rel_error"] = e.relative();
  state.counters["evaluations"] = found.iterations;
  state.counters["speedup"] = state.counters["speedup_" + baseline];
  state.SetLabel(std::string(Exec::name()) + " vs " + baseline);
}

#ifdef KOKKOS_ENABLE_CUDA
namespace cublas = nearsparse::perf::cublas;

using cublas::to_16bit;
using cublas::vendor_precision;

template <class In, class Out>
void bench_cuda(benchmark::State& state, case_spec spec) {
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  auto& ex = exact_product(exec, spec.d, n);
  const auto a = decay_input<Kokkos::Cuda, In>(exec, spec, n);
  matrix<Kokkos::Cuda, Out> c("C", n, n), dense("C_dense", n, n);
  spamm::options opt = options_of(spec);
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  const cublas::precision vp = vendor_precision(spec.precision);
  matrix<Kokkos::Cuda, std::uint16_t> a16;
  const bool sixteen = cublas::is_16bit(spec.precision);
  if (sixteen) a16 = to_16bit(exec, spec.precision, a);
  auto baseline = [&] {
    if (sixteen) {
      cublas::gemm(exec, vp, 1.0, a16, a16, 0.0, dense);
    } else {
      cublas::gemm(exec, vp, 1.0, a, a, 0.0, dense);
    }
  };
  const double flops = 2.0 * n * n * double(n);
  const int bytes_in = spamm::detail::storage_bytes(spec.precision);
  nearsparse::perf::compare(
      state, exec, [&] { plan.multiply(exec, 1, 0, c); },
      std::string("cuBLAS ") + spamm::to_string(spec.precision), baseline,
      workload{flops * plan.valid_ratio(), double(n) * n * (2.0 * bytes_in + sizeof(Out))});
  spamm_counters(state, exec, plan, c, ex.c);
  spamm::options fixed = opt;
  fixed.target_valid_ratio = 0;
  fixed.tau = plan.tau();
  const double t_full = time_full(exec, a, c, fixed);
  state.counters["t_full"] = t_full;
  state.counters["speedup_full"] = state.counters["baseline_t"] / t_full;
  const double t_refresh = time_refresh(exec, plan, a, c);
  state.counters["t_refresh"] = t_refresh;
  state.counters["speedup_refresh"] = state.counters["baseline_t"] / t_refresh;
  if (sixteen) {
    // What a user with fp32 data pays for the 16-bit cuBLAS product: the conversion of the
    // operand (A = B: once) and the product.
    const double t_converted = time_in_loop(exec, [&] {
      cublas::to_16bit_into(exec, spec.precision, a, a16);
      baseline();
    });
    state.counters["baseline_t_converted"] = t_converted;
    state.counters["speedup_refresh_converted"] = t_converted / t_refresh;
  }
}

// The automatic CUDA kernel against another kernel on the same GPU: the portable kernels
// (implementation::portable), or the mma.sync kernels where the Hopper wgmma kernel runs
// (wgmma = false).
enum class other_kernel { portable, mma_sync };

template <class In, class Out>
void bench_cuda_vs(benchmark::State& state, case_spec spec, other_kernel other) {
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  const auto a = decay_input<Kokkos::Cuda, In>(exec, spec, n);
  matrix<Kokkos::Cuda, Out> c("C", n, n), cp("C_portable", n, n);
  spamm::options opt = options_of(spec);
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  if (other == other_kernel::portable) {
    opt.implementation = nearsparse::implementation::portable;
  } else {
    opt.wgmma = false;
  }
  opt.target_valid_ratio = 0;
  opt.tau = plan.tau();
  spamm::plan<Kokkos::Cuda> portable(exec, a, a, opt);
  nearsparse::perf::compare(
      state, exec, [&] { plan.multiply(exec, 1, 0, c); },
      other == other_kernel::portable ? "portable kernel" : "mma.sync kernel",
      [&] { portable.multiply(exec, 1, 0, cp); },
      workload{2.0 * n * n * double(n) * plan.valid_ratio(), 0}, 1);
  const auto e = spamm::measure_error(exec, cp, c);
  state.counters["valid_ratio"] = plan.valid_ratio();
  state.counters["kernels_differ"] = e.relative();
}

// One empty kernel: with the fence after it, what a single launch costs.
inline void empty_kernel(const Kokkos::Cuda& exec) {
  Kokkos::parallel_for("nearsparse::perf::empty", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, 1),
                       KOKKOS_LAMBDA(const int){});
}

// One pass over x read as two operands would be (x = A = B here): the least a call that reads A
// and B must move.
template <class View>
double read_twice(const Kokkos::Cuda& exec, const View& x) {
  const auto* data = x.data();
  const std::int64_t count = std::int64_t(x.span());
  double sum = 0;
  Kokkos::parallel_reduce(
      "nearsparse::perf::pass", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, count),
      KOKKOS_LAMBDA(const std::int64_t i, double& acc) {
        acc += double(data[i]) + double(data[count - 1 - i]);
      },
      sum);
  return sum;
}

// Products below N = 4096, where a dense product takes tens of microseconds and the fixed costs
// of a call decide: a reused plan's product ("t") and whole calls against the two floors of a
// call, measured beside them in the same process: one fenced empty kernel (launch_floor: what a
// reused plan's single launch cannot go below) and one fenced kernel that reads A and B once
// (pass_floor: what a whole call, which must read both, cannot go below). Contenders: the whole
// nearsparse::spamm::multiply call with its tau search (whole_search), a plan with tau given and
// its product (whole_tau), the search alone on a built plan (search), cuBLAS of the same precision.
// Counters of_launch_floor = t / t_launch_floor, of_pass_floor = t_whole_search / t_pass_floor.
template <class In, class Out>
void bench_cuda_small(benchmark::State& state, case_spec spec) {
  using nearsparse::perf::contender;
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  const auto a = decay_input<Kokkos::Cuda, In>(exec, spec, n);
  matrix<Kokkos::Cuda, Out> c("C", n, n), dense("C_dense", n, n);
  spamm::options opt = options_of(spec);
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  spamm::options fixed = opt;
  fixed.target_valid_ratio = 0;
  fixed.tau = plan.tau();
  const cublas::precision vp = vendor_precision(spec.precision);
  matrix<Kokkos::Cuda, std::uint16_t> a16;
  const bool sixteen = cublas::is_16bit(spec.precision);
  if (sixteen) a16 = to_16bit(exec, spec.precision, a);
  std::vector<contender> others;
  others.push_back(
      {"whole_search", [=] { spamm::multiply(exec, 1, a, a, 0, c, opt); }, 0, 1, false});
  others.push_back({"whole_tau",
                    [=] {
                      spamm::plan<Kokkos::Cuda> p(exec, a, a, fixed);
                      p.multiply(exec, 1, 0, c);
                    },
                    0, 1, false});
  auto searched = std::make_shared<spamm::plan<Kokkos::Cuda>>(exec, a, a, opt);
  others.push_back(
      {"search", [=] { searched->search_tau(exec, spec.target, opt.search); }, 0, 1, false});
  others.push_back({"launch_floor", [=] { empty_kernel(exec); }, 0, 1, false});
  others.push_back(
      {"pass_floor", [=] { benchmark::DoNotOptimize(read_twice(exec, a)); }, 0, 1, false});
  others.push_back({std::string("cublas_") + spamm::to_string(spec.precision),
                    [=] {
                      if (sixteen) {
                        cublas::gemm(exec, vp, 1.0, a16, a16, 0.0, dense);
                      } else {
                        cublas::gemm(exec, vp, 1.0, a, a, 0.0, dense);
                      }
                    },
                    0, 1});
  const double flops = 2.0 * n * n * double(n);
  const int bytes_in = spamm::detail::storage_bytes(spec.precision);
  nearsparse::perf::compare_many(
      state, exec, [&] { plan.multiply(exec, 1, 0, c); }, others,
      workload{flops * plan.valid_ratio(), double(n) * n * (2.0 * bytes_in + sizeof(Out))}, 2,
      nearsparse::perf::call_timing::warm);
  state.counters["valid_ratio"] = plan.valid_ratio();
  state.counters["of_launch_floor"] = state.counters["t"] / state.counters["t_launch_floor"];
  state.counters["of_pass_floor"] =
      state.counters["t_whole_search"] / state.counters["t_pass_floor"];
  state.counters["search_one_launch"] = plan.searches_in_one_launch(opt.search) ? 1 : 0;
}

// The tau search in one launch (search_tau_in_one_team) against a launch and a wait per count,
// on the same plan: where spamm::search_launch::automatic should switch. Counters: evaluations
// (counts made), products (MT * NT * KT).
void bench_search(benchmark::State& state, double target) {
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  matrix<Kokkos::Cuda, float> a("A", n, n);
  fill(exec, decay::algebraic, a);
  spamm::options opt;
  opt.precision = spamm_precision::fp16;
  opt.tile = 64;
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  auto one = opt.search, per = opt.search;
  one.launch = spamm::search_launch::one_launch;
  per.launch = spamm::search_launch::launch_per_count;
  spamm::search_report found;
  nearsparse::perf::compare(
      state, exec, [&] { found = plan.search_tau(exec, target, one); }, "launch per count",
      [&] { plan.search_tau(exec, target, per); }, workload{}, 1);
  state.counters["evaluations"] = found.iterations;
  state.counters["valid_ratio"] = found.valid_ratio;
  state.counters["products"] = double(plan.tiles_m()) * plan.tiles_n() * plan.tiles_k();
  state.counters["automatic_one_launch"] = plan.searches_in_one_launch(opt.search) ? 1 : 0;
}

// The get-norm kernels on one packed operand: CUDA (warp shuffles, implementation::specialized)
// against the portable team reduction (implementation::portable). The parts of a refresh
// (plan::update, fp32 inputs) timed one by one, beside the refresh as a whole: where the cost of
// new operands goes. t is the refresh; t_pack_a and t_pack_b (B transposed) the packing alone with
// its finite check, t_norms both norm maps read from the packed copies, t_pack_norms_a and
// t_pack_norms_b the packing that computes the norm map on the way (what the plan runs), t_count V
// and the kept count at the plan's tau, t_multiply the product; GB/s counts the fewest bytes of a
// refresh (A and B read once as fp32, their packed copies written once) over t, to set beside the
// copy rate.
void bench_refresh_parts(benchmark::State& state, spamm_precision p) {
  namespace d = spamm::detail;
  constexpr const char* fn = "nearsparse::perf::bench_refresh_parts";
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  matrix<Kokkos::Cuda, float> a("A", n, n), c("C", n, n);
  fill(exec, decay::algebraic, a);
  spamm::options opt;
  opt.precision = p;
  opt.tile = 64;
  opt.target_valid_ratio = 0.05;
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  const auto pr = plan.problem();
  const std::size_t packed_bytes = std::size_t(pr.geo.mp) * pr.geo.kp * d::storage_bytes(p);
  Kokkos::View<double*, Kokkos::CudaSpace> dst("packed", (packed_bytes + 7) / 8);
  Kokkos::View<std::int64_t, Kokkos::CudaSpace> bad("bad"), kept("kept");
  d::norm_map<Kokkos::CudaSpace> na("na", pr.geo.mt, pr.geo.kt), nb("nb", pr.geo.kt, pr.geo.nt);
  d::work_matrix<Kokkos::CudaSpace> v("V", pr.geo.mt, pr.geo.nt);
  const auto pack = [&](bool transpose) {
    d::with_format(p, [&](auto fmt) {
      using Format = decltype(fmt);
      d::pack_operand_queued<Format>(exec, opt.implementation, a, transpose,
                                     reinterpret_cast<typename Format::storage*>(dst.data()),
                                     transpose ? pr.geo.np : pr.geo.mp, pr.geo.kp, true, bad);
    });
  };
  const double bytes = 2.0 * (double(n) * n * sizeof(float) + double(packed_bytes));
  nearsparse::perf::measure(
      state, exec, [&] { plan.update(exec, a, a); }, workload{0, bytes});
  state.counters["t_pack_a"] = time_in_loop(exec, [&] { pack(false); });
  state.counters["t_pack_b"] = time_in_loop(exec, [&] { pack(true); });
  state.counters["t_norms"] = time_in_loop(exec, [&] {
    d::compute_norms(exec, fn, opt, pr.a, pr.geo, d::operand::a, na);
    d::compute_norms(exec, fn, opt, pr.b, pr.geo, d::operand::b, nb);
  });
  const auto pack_norms = [&](d::operand which) {
    d::with_format(p, [&](auto fmt) {
      using Format = decltype(fmt);
      d::pack_and_norms_queued<Format>(exec, fn, opt, a, which,
                                       reinterpret_cast<typename Format::storage*>(dst.data()),
                                       pr.geo, bad, which == d::operand::a ? na : nb);
    });
  };
  state.counters["t_pack_norms_a"] = time_in_loop(exec, [&] { pack_norms(d::operand::a); });
  state.counters["t_pack_norms_b"] = time_in_loop(exec, [&] { pack_norms(d::operand::b); });
  state.counters["t_count"] = time_in_loop(
      exec, [&] { d::count_kept_into(exec, plan.a_norms(), plan.b_norms(), plan.tau(), v, kept); });
  state.counters["t_multiply"] = time_in_loop(exec, [&] { plan.multiply(exec, 1.0f, 0.0f, c); });
  state.counters["valid_ratio"] = plan.valid_ratio();
}

void bench_norms(benchmark::State& state, spamm_precision p) {
  namespace d = spamm::detail;
  constexpr const char* fn = "nearsparse::perf::bench_norms";
  const Kokkos::Cuda exec;
  const long n = state.range(0);
  matrix<Kokkos::Cuda, float> a("A", n, n);
  fill(exec, decay::algebraic, a);
  spamm::options opt;
  opt.precision = p;
  opt.tile = 64;
  spamm::plan<Kokkos::Cuda> plan(exec, a, a, opt);
  const auto pr = plan.problem();
  d::norm_map<Kokkos::CudaSpace> ours("ours", pr.geo.mt, pr.geo.kt),
      base("base", pr.geo.mt, pr.geo.kt);
  spamm::options specialized = opt, portable = opt;
  specialized.implementation = nearsparse::implementation::specialized;
  portable.implementation = nearsparse::implementation::portable;
  nearsparse::perf::compare(
      state, exec,
      [&] { d::compute_norms(exec, fn, specialized, pr.a, pr.geo, d::operand::a, ours); },
      "portable get-norm",
      [&] { d::compute_norms(exec, fn, portable, pr.a, pr.geo, d::operand::a, base); },
      workload{2.0 * n * n, double(n) * n * d::storage_bytes(p)});
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), base);
  double worst = 0;
  for (std::size_t i = 0; i < h1.size(); ++i)
    worst = std::max(worst, std::abs(h1.data()[i] - h2.data()[i]) / (h2.data()[i] + 1e-300));
  state.counters["max_rel_diff"] = worst;
}
#endif

template <class F>
void add(const std::string& name, F fn, const std::vector<long>& sizes, int iterations) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
  for (long n : sizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(pick(iterations, 1));
}

std::string label(const char* space, const case_spec& s) {
  char v[16];
  std::snprintf(v, sizeof v, "%.2f", s.target);
  return std::string("spamm/") + space + "/" + name_of(s.d) + "/" + spamm::to_string(s.precision) +
         "/tile" + std::to_string(s.tile) + "/v" + v;
}

template <class Exec>
void register_host() {
  // The host benchmark: the OpenMP CPU path, and Serial (one core, as an MPI rank per core runs
  // it, against one-thread OpenBLAS) at the extremes of the valid ratio. Not a device space
  // (register_cuda has those, against cuBLAS).
  const std::string space = Exec::name();
  if (!Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) return;
  const bool serial = space == "Serial";
  const auto ratios = serial ? pick<std::vector<double>>({1.0, 0.05}, {0.1})
                             : pick<std::vector<double>>({1.0, 0.2, 0.1, 0.05}, {0.1});
  for (double v : ratios) {
    for (auto p : {spamm_precision::fp64, spamm_precision::fp32}) {
      case_spec s{decay::algebraic, p, v, 64};
      const auto sizes = serial ? pick<std::vector<long>>({2048}, {200})
                                : pick<std::vector<long>>({2048, 4096}, {200});
      const char* tag = serial ? "serial" : "openmp";
      if (p == spamm_precision::fp64) {
        add(
            label(tag, s), [s](benchmark::State& st) { bench_host<Exec, double, double>(st, s); },
            sizes, 3);
      } else {
        add(
            label(tag, s), [s](benchmark::State& st) { bench_host<Exec, float, float>(st, s); },
            sizes, 3);
      }
    }
  }
}

#ifdef KOKKOS_ENABLE_CUDA
void register_cuda() {
  const std::vector<double> ratios = pick<std::vector<double>>({1.0, 0.3, 0.1, 0.05}, {0.1});
  const std::vector<long> sizes = pick<std::vector<long>>({1024, 4096, 8192, 16384}, {300});
  for (auto p : {spamm_precision::fp16, spamm_precision::bf16, spamm_precision::tf32,
                 spamm_precision::fp32, spamm_precision::fp64}) {
    for (double v : ratios) {
      for (decay d : {decay::algebraic, decay::exponential}) {
        if (d == decay::exponential && v > 0.2) continue;  // its kept band is narrow already
        case_spec s{d, p, v, 64};
        const auto sz = d == decay::algebraic ? sizes : pick<std::vector<long>>({8192}, {300});
        if (p == spamm_precision::fp64) {
          add(
              label("cuda", s), [s](benchmark::State& st) { bench_cuda<double, double>(st, s); },
              sz, 5);
        } else {
          add(
              label("cuda", s), [s](benchmark::State& st) { bench_cuda<float, float>(st, s); }, sz,
              5);
        }
      }
    }
  }
  // Below N = 4096: the floors of a call beside a reused plan's product and whole calls.
  for (auto p : {spamm_precision::fp16, spamm_precision::bf16, spamm_precision::tf32,
                 spamm_precision::fp32, spamm_precision::fp64}) {
    for (double v : pick<std::vector<double>>({1.0, 0.1, 0.05}, {0.1})) {
      case_spec s{decay::algebraic, p, v, 64};
      char ratio[16];
      std::snprintf(ratio, sizeof ratio, "%.2f", v);
      const std::string name =
          "spamm_small/cuda/" + std::string(spamm::to_string(p)) + "/v" + ratio;
      const auto sizes = pick<std::vector<long>>({1024, 2048, 3000}, {300});
      if (p == spamm_precision::fp64) {
        add(
            name, [s](benchmark::State& st) { bench_cuda_small<double, double>(st, s); }, sizes,
            20);
      } else {
        add(
            name, [s](benchmark::State& st) { bench_cuda_small<float, float>(st, s); }, sizes, 20);
      }
    }
  }
  for (double v : pick<std::vector<double>>({0.1, 0.05}, {0.1})) {
    char ratio[16];
    std::snprintf(ratio, sizeof ratio, "%.2f", v);
    add(
        std::string("spamm_search/cuda/v") + ratio,
        [v](benchmark::State& st) { bench_search(st, v); },
        pick<std::vector<long>>({1024, 2048, 4096, 8192, 16384}, {300}), 5);
  }
  // Tile sizes at one point.
  for (int tile : {32, 128}) {
    for (auto p : {spamm_precision::fp16, spamm_precision::fp32}) {
      case_spec s{decay::algebraic, p, 0.1, tile};
      add(
          label("cuda", s), [s](benchmark::State& st) { bench_cuda<float, float>(st, s); },
          pick<std::vector<long>>({8192}, {300}), 5);
    }
  }
  for (auto p : {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::fp16}) {
    case_spec s{decay::algebraic, p, 0.1, 64};
    const std::string name = "spamm_kernel/cuda/" + std::string(spamm::to_string(p));
    if (p == spamm_precision::fp64) {
      add(
          name,
          [s](benchmark::State& st) {
            bench_cuda_vs<double, double>(st, s, other_kernel::portable);
          },
          pick<std::vector<long>>({2048}, {300}), 3);
    } else {
      add(
          name,
          [s](benchmark::State& st) { bench_cuda_vs<float, float>(st, s, other_kernel::portable); },
          pick<std::vector<long>>({2048}, {300}), 3);
    }
  }
  // The Hopper wgmma kernel against the mma.sync kernel (the same where wgmma cannot run).
  for (auto p : {spamm_precision::fp16, spamm_precision::bf16, spamm_precision::tf32}) {
    for (double v : pick<std::vector<double>>({1.0, 0.1}, {0.1})) {
      case_spec s{decay::algebraic, p, v, 64};
      char ratio[16];
      std::snprintf(ratio, sizeof ratio, "%.2f", v);
      add(
          "spamm_kernel/wgmma/" + std::string(spamm::to_string(p)) + "/v" + ratio,
          [s](benchmark::State& st) { bench_cuda_vs<float, float>(st, s, other_kernel::mma_sync); },
          pick<std::vector<long>>({8192}, {300}), 3);
    }
  }
  for (auto p : {spamm_precision::fp16, spamm_precision::fp32, spamm_precision::fp64}) {
    add(
        std::string("spamm_norms/cuda/") + spamm::to_string(p),
        [p](benchmark::State& st) { bench_norms(st, p); }, pick<std::vector<long>>({8192}, {300}),
        10);
  }
  for (auto p : {spamm_precision::fp16, spamm_precision::fp32}) {
    add(
        std::string("spamm_refresh/cuda/") + spamm::to_string(p),
        [p](benchmark::State& st) { bench_refresh_parts(st, p); },
        pick<std::vector<long>>({4096, 16384}, {300}), 10);
  }
}
#endif

template <class Exec>
void register_error() {
  const std::string space = Exec::name();
  if (space == "Serial") return;
  constexpr bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  const auto sizes = host ? pick<std::vector<long>>({2048, 4096}, {200})
                          : pick<std::vector<long>>({4096, 8192}, {300});
  for (double target : {1e-3, 1e-5}) {
    for (auto p : {spamm_precision::fp64, spamm_precision::fp32}) {
      char e[16];
      std::snprintf(e, sizeof e, "%.0e", target);
      std::string name = "spamm_error/" + space + "/exponential/" + spamm::to_string(p) + "/e" + e;
      for (auto& ch : name) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      if (p == spamm_precision::fp64) {
        add(
            name,
            [p, target](benchmark::State& st) {
              bench_error<Exec, double, double>(st, decay::exponential, p, target);
            },
            sizes, 3);
      } else {
        add(
            name,
            [p, target](benchmark::State& st) {
              bench_error<Exec, float, float>(st, decay::exponential, p, target);
            },
            sizes, 3);
      }
    }
  }
}

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_host<Spaces>(), ...);
  (register_error<Spaces>(), ...);
#ifdef KOKKOS_ENABLE_CUDA
  register_cuda();
#endif
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
