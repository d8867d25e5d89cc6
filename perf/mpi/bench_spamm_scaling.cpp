// `nearsparse_bench_spamm_mpi`: strong scaling of distributed SpAMM over MPI processes, one per
// GPU, against the same product on one GPU (spamm::plan) and the dense vendor product there
// (cuBLAS of the same precision on CUDA; Kokkos Kernels gemm on host backends), all in one run.
//
//   mpiexec -n 4 nearsparse_bench_spamm_mpi --n 16384 --precision fp32 --ratios 0.1,0.05
//       --kokkos-num-devices=4
//
// Each process fills its blocks of the algebraic-decay matrix A (B = A) of the cuSpAMM paper's
// section 4.1. Times are the slowest process's, between barriers, after warm-up; the figure is
// the median of --repeats products with a reused plan. "first" is the first product of a fresh
// plan, which also replicates B (the panels travel while the ones already here multiply);
// "whole" is an iteration's call: A and B refreshed in place, then the product (median).
// Rank 0 then runs the single-GPU plan and the dense product on the whole matrices with the same
// tau, and checks that the kept tile products match and that ||C||_F agrees.

#include "arguments.hpp"
#include "mpi_program.hpp"
#include "support/harness.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include "baselines/cublas_spamm.hpp"
#endif

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/spamm/distributed.hpp>

#include <mpi.h>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace {

using exec_t = Kokkos::DefaultExecutionSpace;
template <class T>
using matrix = Kokkos::View<T**, Kokkos::LayoutRight, exec_t::memory_space>;

/// A matrix with unset contents: every one here is filled or written whole (products with beta =
/// 0) before it is read. Kokkos 3.4's zero-filling of a new View did not finish within minutes for
/// 2^32 elements on an H200 (a 65536 x 65536 block, one process).
template <class T>
matrix<T> unset_matrix(const char* label, std::size_t rows, std::size_t cols) {
  return matrix<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, cols);
}

const char* const usage =
    "Usage: mpiexec -n P nearsparse_bench_spamm_mpi [options] [--kokkos-num-devices=G]\n"
    "  --n N               matrix size (default 4096)\n"
    "  --precision P       fp64, fp32, tf32, fp16 or bf16 (default fp32)\n"
    "  --ratios R1,R2,...  target valid ratios (default 0.1,0.05)\n"
    "  --tile L            SpAMM tile, 32, 64 or 128 (default 64)\n"
    "  --process-cols C    process grid P/C x C (default 1: rows split, B replicated)\n"
    "  --panels K          panels per block of k (default 1)\n"
    "  --no-keep           send the panels again every product (SUMMA memory)\n"
    "  --whole-panels      broadcast whole panels (default: each process gets the tiles its\n"
    "                      kept tile products read)\n"
    "  --balance           split rows by the work a first plan counts (default: equal rows)\n"
    "  --transport T       automatic, host_staging or nccl (default automatic)\n"
    "  --repeats R         timed products per figure (default 10)\n"
    "  --no-single         skip the single-GPU plan and the dense product on rank 0\n"
    "  --csv FILE          append one line per ratio, after a header line when FILE is new\n"
    "                      (default: none)\n"
    "  --help              this text\n";

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    nearsparse::require(used == item.size() && v > 0 && v <= 1, "nearsparse_bench_spamm_mpi",
                        "--ratios", "must be a comma-separated list of numbers in (0, 1]");
    out.push_back(v);
  }
  return out;
}

/// Seconds of the slowest process for one call of f, between barriers.
template <class F>
double timed(const exec_t& exec, F&& f) {
  exec.fence();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  f();
  exec.fence();
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

template <class F>
double median_of(const exec_t& exec, int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) t.push_back(timed(exec, f));
  return nearsparse::perf::median(t);
}

/// Sum of squares of a block, summed over all processes.
template <class View>
double global_norm(const exec_t& exec, const View& c) {
  double s = nearsparse::frobenius_norm(exec, c);
  s *= s;
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(s);
}

struct single_result {
  double t_single = 0, t_dense = 0, norm = 0, dense_error = 0;
  std::int64_t kept = 0;
};

/// Rank 0: the same product on one GPU with spamm::plan at tau, and the dense vendor product.
template <class In, class Out>
single_result run_single(const exec_t& exec, int n, nearsparse::spamm::options o, double tau,
                         int repeats) {
  single_result r;
  auto a = unset_matrix<In>("A", n, n);
  nearsparse::spamm::fill_algebraic_decay(exec, a);
  auto c = unset_matrix<Out>("C", n, n);
  matrix<Out> dense("C_dense", n, n);  // zero: the host baseline is KokkosBlas::gemm
  o.target_valid_ratio = 0;
  o.tau = tau;
  nearsparse::spamm::plan<exec_t> plan(exec, a, a, o);
  r.kept = plan.kept_count();
  auto single = [&] { plan.multiply(exec, Out(1), Out(0), c); };
  for (int w = 0; w < 2; ++w) nearsparse::perf::time_call(exec, single);
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) t.push_back(nearsparse::perf::time_call(exec, single));
  r.t_single = nearsparse::perf::median(t);
  r.norm = nearsparse::frobenius_norm(exec, c);
#ifdef KOKKOS_ENABLE_CUDA
  namespace cublas = nearsparse::perf::cublas;
  const cublas::precision vp = cublas::vendor_precision(o.precision);
  const bool sixteen = cublas::is_16bit(o.precision);
  matrix<std::uint16_t> a16;
  if (sixteen) a16 = cublas::to_16bit(exec, o.precision, a);
  auto dense_product = [&] {
    if (sixteen) {
      cublas::gemm(exec, vp, 1.0, a16, a16, 0.0, dense);
    } else {
      cublas::gemm(exec, vp, 1.0, a, a, 0.0, dense);
    }
  };
#else
  auto dense_product = [&] { KokkosBlas::gemm("N", "N", Out(1), a, a, Out(0), dense); };
#endif
  for (int w = 0; w < 2; ++w) nearsparse::perf::time_call(exec, dense_product);
  t.clear();
  for (int i = 0; i < repeats; ++i) t.push_back(nearsparse::perf::time_call(exec, dense_product));
  r.t_dense = nearsparse::perf::median(t);
  r.dense_error = nearsparse::frobenius_distance(exec, dense, c) /
                  std::max(nearsparse::frobenius_norm(exec, dense), 1e-300);
  return r;
}

template <class In, class Out>
int run_case(nearsparse::app::arguments& args, int rank, int size) {
  const int n = int(args.integer("n", 4096, 1, 1 << 20));
  nearsparse::spamm::options o;
  o.precision = nearsparse::spamm::parse_precision(args.text("precision", "fp32"));
  o.tile = int(args.integer("tile", 64, 32, 128));
  const auto ratios = parse_list(args.text("ratios", "0.1,0.05"));
  nearsparse::spamm::distributed_options d;
  d.process_cols = int(args.integer("process-cols", 1, 1, size));
  d.panels_per_block = int(args.integer("panels", 1, 1, 1024));
  d.keep_panels = !args.flag("no-keep");
  d.kept_tiles_only = !args.flag("whole-panels");
  d.transport = nearsparse::parse_gpu_transport(args.text("transport", "automatic"));
  const int repeats = int(args.integer("repeats", 10, 1, 100000));
  const bool single = !args.flag("no-single");
  const bool balance = args.flag("balance");
  const std::string csv = args.text("csv", "");
  args.finish();

  const exec_t exec;
  matrix<In> a, b;
  matrix<Out> c;
  nearsparse::spamm::process_blocks blk;
  auto lay_out = [&](const std::vector<double>& work) {
    blk = nearsparse::spamm::distributed_blocks(MPI_COMM_WORLD, n, n, n, o.tile, d, work);
    a = matrix<In>();  // the old blocks go first: at most one set is held
    b = matrix<In>();
    c = matrix<Out>();
    a = unset_matrix<In>("A_block", blk.row_end - blk.row_begin, blk.a_col_end - blk.a_col_begin);
    b = unset_matrix<In>("B_block", blk.b_row_end - blk.b_row_begin, blk.col_end - blk.col_begin);
    c = unset_matrix<Out>("C_block", blk.row_end - blk.row_begin, blk.col_end - blk.col_begin);
    nearsparse::spamm::fill_algebraic_decay(exec, a, 0.1, 0.1, blk.row_begin, blk.a_col_begin);
    nearsparse::spamm::fill_algebraic_decay(exec, b, 0.1, 0.1, blk.b_row_begin, blk.col_begin);
  };
  if (rank == 0) std::fprintf(stderr, "[spamm-mpi] filling the blocks of A and B (n = %d)\n", n);
  lay_out({});
  if (rank == 0)
    std::printf(
        "distributed spamm on %d process(es), %s: n = %d, %s, tile %d, panels per block %d, "
        "keep %d, kept tiles only %d, balance %d\n",
        size, exec_t::name(), n, nearsparse::spamm::to_string(o.precision), o.tile,
        d.panels_per_block, int(d.keep_panels), int(d.kept_tiles_only), int(balance));
  if (rank == 0)
    std::printf("%-3s %-5s %6s %-5s %6s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %8s %8s %9s %6s\n",
                "P", "grid", "n", "prec", "ratio", "tau", "build_ms", "first_ms", "upd_a_ms",
                "upd_b_ms", "resend_ms", "whole_ms", "mult_ms", "single_ms", "dense_ms", "vs_one",
                "vs_dense", "recv_MB", "check");
  // Under mpiexec stdout is a pipe, fully buffered: flushed here and after every row, so that a
  // run stopped at a time limit still shows what it finished.
  if (rank == 0) std::fflush(stdout);
  int failures = 0;
  for (double ratio : ratios) {
    if (rank == 0) std::fprintf(stderr, "[spamm-mpi] ratio %.3f: building the plan\n", ratio);
    nearsparse::spamm::options oo = o;
    oo.target_valid_ratio = ratio;
    std::unique_ptr<nearsparse::spamm::distributed_plan<exec_t>> plan;
    if (balance) {
      // A first plan on equal rows counts the work of every tile row; the blocks are cut again
      // so that every process gets an even share.
      lay_out({});
      std::vector<double> work;
      {
        nearsparse::spamm::distributed_plan<exec_t> probe(MPI_COMM_WORLD, exec, a, b, oo, d);
        work = probe.tile_row_work(exec);
      }
      lay_out(work);
      if (rank == 0)
        std::fprintf(stderr, "[spamm-mpi]   balanced rows: process 0 holds [%d, %d)\n",
                     blk.row_begin, blk.row_end);
    }
    const double t_build = timed(exec, [&] {
      plan = std::make_unique<nearsparse::spamm::distributed_plan<exec_t>>(MPI_COMM_WORLD, exec, a,
                                                                           b, oo, d);
    });
    auto product = [&] { plan->multiply(exec, Out(1), Out(0), c); };
    const double t_first = timed(exec, product);
    const double received = double(plan->received_bytes());
    double recv_max = received;
    MPI_Allreduce(MPI_IN_PLACE, &recv_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) std::fprintf(stderr, "[spamm-mpi]   timing %d products\n", repeats);
    timed(exec, product);  // warm-up
    const double t_mult = median_of(exec, repeats, product);
    const double norm = global_norm(exec, c);
    // New A, then new B (the same values): packing, norms and the kept count, each a median;
    // then a product that sends every panel again, now on warm communicators.
    const double t_update_a = median_of(exec, repeats, [&] { plan->update_a(exec, a); });
    const double t_update_b = median_of(exec, repeats, [&] { plan->update_b(exec, b); });
    const double t_resend = timed(exec, product);
    // What an iteration pays: new A and B (the same values), packed and normed in place, then a
    // product that sends every panel again. The product after update_b alone less the reused
    // product is the communication the overlap did not hide.
    if (rank == 0) std::fprintf(stderr, "[spamm-mpi]   timing %d whole calls\n", repeats);
    const double t_whole = median_of(exec, repeats, [&] {
      plan->update_a(exec, a);
      plan->update_b(exec, b);
      product();
    });
    single_result s;
    if (single) {
      if (rank == 0) {
        std::fprintf(stderr, "[spamm-mpi]   single GPU and dense product on rank 0\n");
        s = run_single<In, Out>(exec, n, o, plan->tau(), repeats);
      }
      MPI_Bcast(&s, sizeof s, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    bool ok = true;
    if (single) {
      ok = s.kept == plan->kept_count() &&
           std::abs(norm - s.norm) <= 1e-4 * std::max(s.norm, 1e-300);
    }
    failures += ok ? 0 : 1;
    if (!ok && rank == 0)
      std::printf(
          "    check: kept %lld here, %lld on one GPU; ||C||_F %.9g here, %.9g on one GPU\n",
          (long long)plan->kept_count(), (long long)s.kept, norm, s.norm);
    if (rank == 0) {
      std::printf(
          "%-3d %dx%-3d %6d %-5s %6.3f %9.3g %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f "
          "%8.2f "
          "%8.2f %9.1f %6s\n",
          size, plan->process_rows(), plan->process_cols(), n,
          nearsparse::spamm::to_string(o.precision), plan->valid_ratio(), plan->tau(),
          1e3 * t_build, 1e3 * t_first, 1e3 * t_update_a, 1e3 * t_update_b, 1e3 * t_resend,
          1e3 * t_whole, 1e3 * t_mult, 1e3 * s.t_single, 1e3 * s.t_dense,
          single ? s.t_single / t_mult : 0.0, single ? s.t_dense / t_mult : 0.0, recv_max / 1e6,
          single ? (ok ? "OK" : "FAILED") : "-");
      if (single)
        std::printf("    transport %s; single-GPU error against the dense product %.3g\n",
                    nearsparse::to_string(plan->transport()), s.dense_error);
      if (!csv.empty()) {
        if (FILE* f = std::fopen(csv.c_str(), "a")) {
          std::fseek(f, 0, SEEK_END);
          if (std::ftell(f) == 0)  // a new file: its columns first
            std::fputs(
                "procs,grid_rows,grid_cols,n,precision,valid_ratio,tau,build_ms,first_ms,"
                "multiply_ms,single_ms,dense_ms,received_MB,transport,ok,update_b_ms,resend_ms,"
                "whole_ms,update_a_ms\n",
                f);
          std::fprintf(
              f,
              "%d,%d,%d,%d,%s,%.6f,%.6g,%.6f,%.6f,%.6f,%.6f,%.6f,%.1f,%s,%d,%.6f,%.6f,%.6f,%.6f\n",
              size, plan->process_rows(), plan->process_cols(), n,
              nearsparse::spamm::to_string(o.precision), plan->valid_ratio(), plan->tau(),
              1e3 * t_build, 1e3 * t_first, 1e3 * t_mult, 1e3 * s.t_single, 1e3 * s.t_dense,
              recv_max / 1e6, nearsparse::to_string(plan->transport()), int(ok), 1e3 * t_update_b,
              1e3 * t_resend, 1e3 * t_whole, 1e3 * t_update_a);
          std::fclose(f);
        }
      }
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}

int run(int argc, char* argv[], int rank, int size) {
  std::vector<std::string> list(argv + 1, argv + argc);
  nearsparse::app::arguments args(list);
  if (args.flag("help")) {
    if (rank == 0) std::printf("%s", usage);
    return 0;
  }
  std::vector<std::string> peek(argv + 1, argv + argc);
  nearsparse::app::arguments probe(peek);
  const auto precision = nearsparse::spamm::parse_precision(probe.text("precision", "fp32"));
  if (precision == nearsparse::spamm::precision::fp64)
    return run_case<double, double>(args, rank, size);
  return run_case<float, float>(args, rank, size);
}

}  // namespace

int main(int argc, char* argv[]) {
  return nearsparse::app::mpi_main(argc, argv, "nearsparse_bench_spamm_mpi", run);
}
