// Benchmarks of the core kernels against their baselines, on every enabled execution space, and
// on CUDA the vendor anchors every family is judged by (dense GEMM per precision, copy bandwidth,
// CSR SpMV).
//
//   core.count_non_finite  one read pass, against Kokkos Kernels nrm2 (and cuBLAS Dnrm2)
//   core.fill_random       one write pass, against Kokkos::deep_copy of a constant
//   anchor.*               vendor libraries alone or against Kokkos Kernels
#include "baselines/cublas.hpp"
#include "baselines/cusparse.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/random.hpp>

#include <benchmark/benchmark.h>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

using nearsparse::perf::pick;
using nearsparse::perf::workload;

template <class Exec>
using vector_of = Kokkos::View<double*, typename Exec::device_type>;

template <class Exec>
void bench_count_non_finite(benchmark::State& state) {
  const Exec exec;
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  vector_of<Exec> x("x", n);
  nearsparse::fill_random(exec, x, 42);
  std::size_t bad = 0;
  double norm = 0;
  nearsparse::perf::compare(
      state, exec, [&] { bad = nearsparse::count_non_finite(exec, x); }, "KokkosBlas::nrm2",
      [&] { norm = KokkosBlas::nrm2(x); }, workload{double(n), 8.0 * n});
  if (bad != 0 || !(norm > 0)) state.SkipWithError("wrong result");
}

template <class Exec>
void bench_fill_random(benchmark::State& state) {
  const Exec exec;
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  vector_of<Exec> x("x", n);
  nearsparse::perf::compare(
      state, exec, [&] { nearsparse::fill_random(exec, x, 7); }, "Kokkos::deep_copy(constant)",
      [&] { Kokkos::deep_copy(exec, x, 1.0); }, workload{0, 8.0 * n});
}

template <class Exec>
void register_space() {
  const std::string space = Exec::name();
  const bool serial = space == "Serial";
  // Serial runs one size: it is the reference, not a target.
  const long big = pick<long>(serial ? 1 << 22 : 1 << 26, 1 << 12);
  benchmark::RegisterBenchmark(("core.count_non_finite/" + space).c_str(),
                               bench_count_non_finite<Exec>)
      ->Arg(pick<long>(1 << 20, 1000))
      ->Arg(big)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("core.fill_random/" + space).c_str(), bench_fill_random<Exec>)
      ->Arg(pick<long>(1 << 20, 1000))
      ->Arg(big)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

#ifdef KOKKOS_ENABLE_CUDA
namespace cublas = nearsparse::perf::cublas;
namespace cusparse = nearsparse::perf::cusparse;

// The algebraic-decay matrix of the SpAMM paper, a_ij = 0.1 / (|i - j|^0.1 + 1), the data the
// recorded cuBLAS anchors were measured on.
template <class View>
void fill_decay(const Kokkos::Cuda& exec, const View& a) {
  using T = typename View::non_const_value_type;
  const int n = static_cast<int>(a.extent(1));
  Kokkos::parallel_for(
      "nearsparse::perf::fill_decay",
      Kokkos::MDRangePolicy<Kokkos::Cuda, Kokkos::Rank<2>>(exec, {0, 0}, {int(a.extent(0)), n}),
      KOKKOS_LAMBDA(const int i, const int j) {
        a(i, j) = T(static_cast<float>(0.1 / (pow(fabs(double(i - j)), 0.1) + 1.0)));
      });
}

template <class In, class Out>
void bench_cublas_gemm(benchmark::State& state, cublas::precision p) {
  const Kokkos::Cuda exec;
  const int n = static_cast<int>(state.range(0));
  using layout = Kokkos::LayoutRight;
  Kokkos::View<In**, layout, Kokkos::CudaSpace> a("A", n, n);
  Kokkos::View<Out**, layout, Kokkos::CudaSpace> c("C", n, n);
  fill_decay(exec, a);
  nearsparse::perf::measure(
      state, exec, [&] { cublas::gemm(exec, p, 1.0, a, a, 0.0, c); },
      workload{2.0 * n * n * double(n), double(n) * n * (2 * sizeof(In) + sizeof(Out))});
}

void bench_device_copy(benchmark::State& state) {
  const Kokkos::Cuda exec;
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  Kokkos::View<double*, Kokkos::CudaSpace> src("src", n), dst("dst", n);
  nearsparse::fill_random(exec, src, 3);
  nearsparse::perf::measure(
      state, exec, [&] { Kokkos::deep_copy(exec, dst, src); }, workload{0, 16.0 * n});
}

// 2-D five-point Laplacian on a g x g grid, in CSR with 32-bit indices.
void bench_spmv_laplacian(benchmark::State& state) {
  const Kokkos::Cuda exec;
  const int g = static_cast<int>(state.range(0)), rows = g * g;
  using matrix = KokkosSparse::CrsMatrix<double, int, Kokkos::Cuda::device_type, void, int>;
  Kokkos::View<int*, Kokkos::CudaSpace> row_ptr("row_ptr", rows + 1);
  Kokkos::parallel_scan(
      "nearsparse::perf::laplacian_rows", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, rows),
      KOKKOS_LAMBDA(const int r, int& offset, const bool final) {
        const int i = r / g, j = r % g;
        const int count = 1 + (i > 0) + (i + 1 < g) + (j > 0) + (j + 1 < g);
        if (final) row_ptr(r) = offset;
        offset += count;
        if (final && r + 1 == rows) row_ptr(rows) = offset;
      });
  int nnz = 0;
  Kokkos::deep_copy(exec, nnz, Kokkos::subview(row_ptr, rows));
  exec.fence();
  Kokkos::View<int*, Kokkos::CudaSpace> cols("cols", nnz);
  Kokkos::View<double*, Kokkos::CudaSpace> vals("vals", nnz), x("x", rows), y("y", rows);
  Kokkos::parallel_for(
      "nearsparse::perf::laplacian_entries", Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, rows),
      KOKKOS_LAMBDA(const int r) {
        const int i = r / g, j = r % g;
        int k = row_ptr(r);
        if (i > 0) {
          cols(k) = r - g;
          vals(k++) = -1;
        }
        if (j > 0) {
          cols(k) = r - 1;
          vals(k++) = -1;
        }
        cols(k) = r;
        vals(k++) = 4;
        if (j + 1 < g) {
          cols(k) = r + 1;
          vals(k++) = -1;
        }
        if (i + 1 < g) {
          cols(k) = r + g;
          vals(k++) = -1;
        }
      });
  nearsparse::fill_random(exec, x, 11);
  matrix a("laplacian", rows, rows, nnz, vals, row_ptr, cols);
  cusparse::csr_spmv vendor(exec, rows, rows, nnz, row_ptr.data(), cols.data(), vals.data(),
                            x.data(), y.data());
  const double bytes = 12.0 * nnz + 4.0 * (rows + 1) + 16.0 * rows;
  nearsparse::perf::compare(
      state, exec, [&] { KokkosSparse::spmv("N", 1.0, a, x, 0.0, y); }, "cusparseSpMV",
      [&] { vendor.run(1.0, 0.0); }, workload{2.0 * nnz, bytes});
}

void register_cuda_anchors() {
  const long big = pick<long>(8192, 256);
  auto gemm = [&](const char* name, auto fn) {
    benchmark::RegisterBenchmark(name, fn)
        ->Arg(pick<long>(1024, 128))
        ->Arg(pick<long>(4096, 128))
        ->Arg(big)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  gemm("anchor.cublas_gemm/fp64",
       [](benchmark::State& s) { bench_cublas_gemm<double, double>(s, cublas::precision::fp64); });
  gemm("anchor.cublas_gemm/fp32",
       [](benchmark::State& s) { bench_cublas_gemm<float, float>(s, cublas::precision::fp32); });
  gemm("anchor.cublas_gemm/tf32",
       [](benchmark::State& s) { bench_cublas_gemm<float, float>(s, cublas::precision::tf32); });
  gemm("anchor.cublas_gemm/fp16", [](benchmark::State& s) {
    bench_cublas_gemm<Kokkos::Experimental::half_t, float>(s, cublas::precision::fp16);
  });
  benchmark::RegisterBenchmark("anchor.device_copy", bench_device_copy)
      ->Arg(pick<long>(1L << 27, 1 << 12))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("anchor.spmv_laplacian", bench_spmv_laplacian)
      ->Arg(pick<long>(2048, 64))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}
#endif

template <class... Spaces>
void register_all(std::tuple<Spaces...>*) {
  (register_space<Spaces>(), ...);
#ifdef KOKKOS_ENABLE_CUDA
  register_cuda_anchors();
#endif
}

const bool registered = [] {
  register_all(static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
  return true;
}();

}  // namespace
