// TLR benchmarks (double precision, the paper's section 6), each against its dense baseline in the
// same process:
//   tlr/batched_lld/<space>/batch:<b>/rank:<r>   batched GEMM-LLD on b independent nb x nb tiles
//       (nb = 512) against cuBLAS strided-batched DGEMM of the same b dense products (OpenBLAS
//       DGEMM tile by tile on the host, on as many threads as the backend; Kokkos Kernels gemm,
//       counters named KokkosBlas_gemm_no_openblas, where the build has no OpenBLAS); on CUDA also
//       t_portable, the team-policy kernel.
//   tlr/batched_lll/<space>/batch:<b>/rank:<r>   batched GEMM-LLL (C low rank, recompressed to rank
//       r) against the same baseline.
//   tlr/batched_svd/<space>/m:<m>/n:<n>/batch:<b>   the batched SVD of b random m x n matrices:
//       cuSOLVER gesvdjBatched against the portable Jacobi kernel (t_portable), on CUDA;
//       automatic_is_vendor says which one the automatic choice takes. On the host the portable
//       kernel against itself.
//   tlr/accuracy/<space>/N:1024/rank:<r>   the accuracy each rank reaches (Figure 4(b)): the
//       1024 x 1024 Hilbert matrix as one tile at rank r, squared by GEMM-LLD (dense C) and
//       GEMM-LLL (C recompressed to rank r); error_lld, error_lll against the dense product, and
//       the times of both against it.
//   tlr/gemm/<dense_c|tlr_c>/<space>/N:<N>/tile:<nb>/rank:<r>   TLR-GEMM on the Hilbert matrix,
//       A = B compressed to rank r in nb x nb tiles, against cuBLAS DGEMM (OpenBLAS DGEMM on the
//       host, as above). Counters: t, t_<baseline>, speedup, t_with_compression (compressing A and
//       B included) and its speedup_with_compression, error (|C - C_dense|_F / |C_dense|_F), and
//       for a dense C t_one_call_per_outer_product (the paper's nt batched calls).
//   tlr/<compress|gemm/dense_c|gemm/tlr_c>/<space>/<hilbert|covariance2d>/N:<N>/tile:<nb>/
//       <accuracy:1e-8|fixed>/cap:<r>   the cases: the Hilbert matrix or the 2-D
//       exponential covariance (length 0.1, Morton order; diagonal tiles kept dense) compressed in
//       nb x nb tiles to 1e-8 with ranks up to r, or every tile to rank r (fixed: a TLR C is then
//       recompressed to exactly rank r, KBLAS's scheme; to 1e-8 per tile otherwise), and squared,
//       against one dense product of the same size (cuBLAS DGEMM; OpenBLAS DGEMM on the host, as
//       above). CUDA: N = 16384 at tiles 512, 1024, 2048 and N = 32768 at tiles 1024, 2048, caps 16
//       and 32, both inputs and truncations; host: hilbert at N = 2048, 4096 and covariance2d at
//       N = 2048, tile 256, accuracy:1e-8, cap 64. Counters: t (the compression for compress, the
//       product alone for gemm), t_<baseline> and speedup_<baseline>, t_compression (gemm: one
//       compression of A), compression_over_dgemm (compression / DGEMM; the target
//       <= 0.25 at N = 16384), t_with_compression (gemm: A and B compressed, then the product) and
//       speedup_with_compression, compression_error, accuracy_met, a_mean_rank, a_max_rank,
//       a_tiles_at_cap, a_dense_tiles (A's compression), error (gemm: |C - C_dense|_F /
//       |C_dense|_F); for a TLR C also c_mean_rank, c_max_rank, c_tiles_at_cap, c_dropped (the
//       gemm_report), t_products (the same product into a dense C: the outer products without
//       recompression) and t_recompression = t - t_products; t_portable where N <= 2048.
#include "baselines/cublas.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/detail/host_blas.hpp>

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/tlr.hpp>

#include <benchmark/benchmark.h>
#include <KokkosBlas3_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace nt = nearsparse::tlr;
using nearsparse::perf::contender;
using nearsparse::perf::pick;

template <class Exec>
using tlr_of = nt::tlr_matrix<typename Exec::memory_space>;
template <class Exec>
using dense_of = Kokkos::View<double**, Kokkos::LayoutLeft, typename Exec::memory_space>;

/// A TLR matrix whose low-rank tiles all have rank r with random factors (the batched kernels'
/// time does not depend on the values).
template <class Exec>
tlr_of<Exec> random_tlr(const Exec& exec, std::size_t rows, std::size_t cols, std::size_t nb, int r,
                        std::uint64_t seed) {
  tlr_of<Exec> m(exec, rows, cols, nb, r);
  auto u = m.u();
  auto v = m.v();
  auto ranks = m.ranks();
  const double scale = 1.0 / static_cast<double>(nb);
  Kokkos::parallel_for(
      "bench::random_tlr",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>(exec, {0, 0, 0},
                                                   {nb, std::size_t(r), m.tile_count()}),
      KOKKOS_LAMBDA(const std::size_t i, const std::size_t l, const std::size_t t) {
        const std::size_t k = (t * r + l) * nb + i;
        u(i, l, t) = nearsparse::detail::uniform01(seed, k, 0) - 0.5;
        v(i, l, t) = scale * (nearsparse::detail::uniform01(seed, k, 1) - 0.5);
        if (i == 0 && l == 0) ranks(t) = r;
      });
  exec.fence();
  return m;
}

/// The host's dense baseline: OpenBLAS DGEMM on as many threads as the backend has, or Kokkos
/// Kernels gemm where the build has no OpenBLAS (the counters then say
/// KokkosBlas_gemm_no_openblas).
struct host_dense {
  static bool openblas() { return nearsparse::detail::host_blas::available(); }
  static std::string name() {
    return openblas() ? "openblas_dgemm" : "KokkosBlas_gemm_no_openblas";
  }
  /// Call once per benchmark, before timing.
  template <class Exec>
  static void prepare(const Exec& exec) {
    nearsparse::detail::host_blas::set_threads(exec.concurrency());
  }
  template <class AView, class BView, class CView>
  static void gemm(double alpha, const AView& a, const BView& b, double beta, const CView& c) {
    if (openblas()) {
      nearsparse::detail::host_blas::gemm(alpha, a, b, beta, c);
    } else {
      KokkosBlas::gemm("N", "N", alpha, a, b, beta, c);
    }
  }
};

/// The dense baseline of b independent nb^3 products: cuBLAS strided-batched DGEMM, or a DGEMM per
/// product on the host (see host_dense).
template <class Exec>
struct batched_dense {
  Kokkos::View<double***, Kokkos::LayoutLeft, typename Exec::memory_space> a, b, c;
  batched_dense(const Exec& exec, int nb, int batch)
      : a("bench::a", nb, nb, batch), b("bench::b", nb, nb, batch), c("bench::c", nb, nb, batch) {
    nearsparse::fill_random(
        exec, Kokkos::View<double*, typename Exec::memory_space>(a.data(), a.size()), 1);
    nearsparse::fill_random(
        exec, Kokkos::View<double*, typename Exec::memory_space>(b.data(), b.size()), 2);
  }
  void run(const Exec& exec) {
    const int batch = static_cast<int>(a.extent(2));
    // The host loop sits in the else branch, so the CUDA instantiation has no unreachable code.
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<Exec, Kokkos::Cuda>::value) {
      const int nb = static_cast<int>(a.extent(0));
      const long long s = static_cast<long long>(nb) * nb;
      nearsparse::perf::cublas::dgemm_strided_batched(exec, nb, nb, nb, 1.0, a.data(), s, b.data(),
                                                      s, 1.0, c.data(), s, batch);
    } else
#endif
    {
      for (int t = 0; t < batch; ++t) {
        auto at = Kokkos::subview(a, Kokkos::ALL, Kokkos::ALL, t);
        auto bt = Kokkos::subview(b, Kokkos::ALL, Kokkos::ALL, t);
        auto ct = Kokkos::subview(c, Kokkos::ALL, Kokkos::ALL, t);
        host_dense::gemm(1.0, at, bt, 1.0, ct);
      }
      (void)exec;
    }
  }
};

const char* space_name(bool host) {
  return host ? "openmp" : "cuda";
}

/// The smoke run keeps one batched case per kind.
bool smoke_filter(int batch, int rank) {
  return nearsparse::perf::smoke_mode() && !(rank == 8 && (batch == 1000 || batch == 100));
}

template <class Exec>
void bench_batched(benchmark::State& state, int batch, int r, bool lowrank_c) {
  const Exec exec;
  const int nb = pick(512, 32);
  // A: batch x 1 tiles, B: 1 x batch tiles, C: batch x 1 tiles; product t = A_t B_t into C_t.
  auto a = random_tlr(exec, std::size_t(batch) * nb, nb, nb, r, 11);
  auto b = random_tlr(exec, nb, std::size_t(batch) * nb, nb, r, 12);
  std::vector<nt::tile_triple> triples;
  for (int t = 0; t < batch; ++t) triples.push_back({t, t, t});
  batched_dense<Exec> dense(exec, nb, batch);
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host) host_dense::prepare(exec);
  std::vector<contender> others;
  others.push_back({host ? host_dense::name() : "cublas_strided_batched",
                    [&] {
                      dense.run(exec);
                      exec.fence();
                    },
                    0, 1, true});
  nearsparse::perf::workload work;
  if (!lowrank_c) {
    dense_of<Exec> c("bench::c", std::size_t(batch) * nb, nb);
    nt::gemm_options portable;
    portable.implementation = nearsparse::implementation::portable;
    if (!host)
      others.push_back({"portable",
                        [&] {
                          nt::gemm_lld_batched(exec, 1.0, a, b, 1.0, c, triples, portable);
                          exec.fence();
                        },
                        0, 1, false});
    // Flops of the three small GEMMs: 2 nb r^2 (S) + 2 nb r^2 (U_a S) + 2 nb^2 r (the update).
    work.flops = double(batch) * (4.0 * nb * r * r + 2.0 * nb * nb * r);
    work.bytes = double(batch) * (2.0 * nb * nb + 4.0 * nb * r) * sizeof(double);
    nearsparse::perf::compare_many(
        state, exec, [&] { nt::gemm_lld_batched(exec, 1.0, a, b, 1.0, c, triples); }, others, work);
  } else {
    auto c = random_tlr(exec, std::size_t(batch) * nb, nb, nb, r, 13);
    nt::gemm_options o;
    o.trunc.fixed_rank = r;
    work.flops = double(batch) * (30.0 * nb * r * r);  // QR of two nb x 2r panels and rebuilds
    work.bytes = double(batch) * 8.0 * nb * r * sizeof(double);
    nearsparse::perf::compare_many(
        state, exec, [&] { nt::gemm_lll_batched(exec, 1.0, a, b, 1.0, c, triples, o); }, others,
        work);
  }
  state.counters["batch"] = batch;
  state.counters["rank"] = r;
  state.counters["tile"] = nb;
}

/// The batched SVD of `batch` random m x n matrices: cuSOLVER gesvdjBatched (on CUDA; the
/// automatic path elsewhere) against the portable one-team-per-matrix Jacobi kernel; every call
/// first restores A from a copy (the SVD overwrites it), the same for both.
template <class Exec>
void bench_svd(benchmark::State& state, int m, int n, int batch) {
  const Exec exec;
  using batch3 = Kokkos::View<double***, Kokkos::LayoutLeft, typename Exec::memory_space>;
  const int k = m < n ? m : n;
  batch3 a("bench::a", m, n, batch), original("bench::a0", m, n, batch);
  batch3 u("bench::u", m, k, batch), v("bench::v", n, k, batch);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Exec::memory_space> s("bench::s", k, batch);
  Kokkos::View<double*, typename Exec::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> flat(
      original.data(), original.size());
  nearsparse::fill_random(exec, flat, 21, -1.0, 1.0);
  nt::batched_svd_options portable, ours;
  portable.implementation = nearsparse::implementation::portable;
  // cuSOLVER is there on Kokkos::Cuda with device memory: take it for every shape (specialized).
  const bool vendor =
      std::string(Exec::name()) == "Cuda" && std::string(Exec::memory_space::name()) == "Cuda";
  ours.implementation =
      vendor ? nearsparse::implementation::specialized : nearsparse::implementation::automatic;
  std::string path;
  std::vector<contender> others;
  others.push_back({"portable",
                    [&] {
                      Kokkos::deep_copy(exec, a, original);
                      nt::batched_svd(exec, a, s, u, v, portable);
                      exec.fence();
                    },
                    0, 1, true});
  nearsparse::perf::workload work;
  work.bytes = double(batch) * (double(m) * n * 2 + double(m) * k + double(n) * k) * sizeof(double);
  nearsparse::perf::compare_many(
      state, exec,
      [&] {
        Kokkos::deep_copy(exec, a, original);
        path = nt::batched_svd(exec, a, s, u, v, ours).kernel;
      },
      others, work);
  state.counters["vendor"] = path == "portable" ? 0 : 1;
  state.counters["automatic_is_vendor"] = vendor && nt::detail::cusolver_svd_pays(m, n) ? 1 : 0;
  state.counters["batch"] = batch;
  state.SetLabel(path);
}

/// One dense product for the driver benchmarks: cuBLAS DGEMM, or host_dense on the host.
template <class Exec>
struct dense_gemm {
  Exec exec;
  explicit dense_gemm(const Exec& e) : exec(e) {}
  void run(const dense_of<Exec>& a, const dense_of<Exec>& b, const dense_of<Exec>& c) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<Exec, Kokkos::Cuda>::value) {
      nearsparse::perf::cublas::gemm(exec, nearsparse::perf::cublas::precision::fp64, 1.0, a, b,
                                     0.0, c);
    } else
#endif
    {
      host_dense::gemm(1.0, a, b, 0.0, c);
    }
  }
};

template <class Exec>
void bench_driver(benchmark::State& state, std::size_t n, std::size_t nb, int r, bool lowrank_c) {
  const Exec exec;
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host) host_dense::prepare(exec);
  const auto a = nt::hilbert(exec, n, n);
  nt::compression_options co;
  co.max_rank = r;
  co.trunc.fixed_rank = r;
  nt::compression_report report;
  auto at = nt::compress(exec, a, nb, co, report);
  dense_of<Exec> reference("bench::reference", n, n);
  dense_gemm<Exec> dense(exec);
  const std::string baseline = host ? host_dense::name() : std::string("cublas_dgemm");
  std::vector<contender> others;
  others.push_back({baseline,
                    [&] {
                      dense.run(a, a, reference);
                      exec.fence();
                    },
                    host ? 2 : 0, 1, true});
  nearsparse::perf::workload work;
  const double nt_ = double((n + nb - 1) / nb);
  double error = 0;
  if (!lowrank_c) {
    dense_of<Exec> c("bench::c", n, n);
    nt::gemm_options paper;
    paper.outer_products_per_call = 1;
    if (!host)
      others.push_back({"one_call_per_outer_product",
                        [&] {
                          nt::gemm(exec, 1.0, at, at, 0.0, c, paper);
                          exec.fence();
                        },
                        0, 1, false});
    others.push_back({"with_compression",
                      [&] {
                        auto a2 = nt::compress(exec, a, nb, co);
                        nt::gemm(exec, 1.0, a2, a2, 0.0, c);
                        exec.fence();
                      },
                      host ? 2 : 3, 1, false});
    work.flops = nt_ * nt_ * nt_ * (4.0 * nb * r * r + 2.0 * double(nb) * nb * r);
    work.bytes = 2.0 * double(n) * n * sizeof(double);
    nearsparse::perf::compare_many(
        state, exec, [&] { nt::gemm(exec, 1.0, at, at, 0.0, c); }, others, work, 1);
    error = nearsparse::frobenius_distance(exec, c, reference) /
            nearsparse::frobenius_norm(exec, reference);
  } else {
    nt::gemm_options o;
    o.trunc.accuracy = 1e-13;
    tlr_of<Exec> c(exec, n, n, nb, r);
    nt::gemm_report gr;
    others.push_back({"with_compression",
                      [&] {
                        auto a2 = nt::compress(exec, a, nb, co);
                        tlr_of<Exec> c2(exec, n, n, nb, r);
                        nt::gemm(exec, 1.0, a2, a2, 0.0, c2, o);
                        exec.fence();
                      },
                      host ? 2 : 3, 1, false});
    work.flops = nt_ * nt_ * nt_ * (30.0 * nb * r * r);
    work.bytes = nt_ * nt_ * nt_ * 8.0 * nb * r * sizeof(double);
    nearsparse::perf::compare_many(
        state, exec, [&] { gr = nt::gemm(exec, 1.0, at, at, 0.0, c, o); }, others, work, 1);
    error = nearsparse::frobenius_distance(exec, nt::to_dense(exec, c), reference) /
            nearsparse::frobenius_norm(exec, reference);
    state.counters["c_mean_rank"] = gr.mean_rank;
  }
  const double t_base = state.counters["t_" + baseline];
  state.counters["speedup_with_compression"] = t_base / state.counters["t_with_compression"];
  state.counters["error"] = error;
  state.counters["compression_error"] = report.relative_error;
  state.counters["N"] = double(n);
  state.counters["tile"] = double(nb);
  state.counters["rank"] = r;
}

/// The matrix a TLR case compresses and squares: the Hilbert matrix, or the exponential covariance
/// of random points in the unit square (correlation length 0.1, Morton order), whose diagonal
/// tiles are full rank and stay dense.
enum class tlr_input { hilbert, covariance2d };
/// How a TLR case truncates: to 1e-8 (ranks up to the cap), or every tile to the cap (KBLAS's
/// scheme: C recompressed to exactly that rank).
enum class tlr_truncation { accuracy, fixed };

/// One accuracy-driven or fixed-rank TLR case; `what` is compress, dense_c or tlr_c.
struct tlr_case {
  std::string what;
  tlr_input input = tlr_input::hilbert;
  tlr_truncation truncation = tlr_truncation::accuracy;
  std::size_t n = 0, nb = 0;
  int cap = 0;
};

constexpr double tlr_case_accuracy = 1e-8;

const char* input_name(tlr_input input) {
  return input == tlr_input::hilbert ? "hilbert" : "covariance2d";
}

/// tlr/<compress|gemm/dense_c|gemm/tlr_c>/<space>/<input>/N:<N>/tile:<nb>/<accuracy:1e-8|fixed>/
/// cap:<r>, with the full sizes (the smoke run shrinks them, not the names).
std::string tlr_case_name(const tlr_case& k, const std::string& space) {
  return "tlr/" + (k.what == "compress" ? k.what : "gemm/" + k.what) + "/" + space + "/" +
         input_name(k.input) + "/N:" + std::to_string(k.n) + "/tile:" + std::to_string(k.nb) +
         (k.truncation == tlr_truncation::accuracy ? "/accuracy:1e-8" : "/fixed") +
         "/cap:" + std::to_string(k.cap);
}

/// The cases: the input compressed in nb x nb tiles to 1e-8 (ranks up to the cap) or to the
/// cap, timed against one dense product of the same size (cuBLAS DGEMM on CUDA, host_dense on the
/// host): compression alone (what = compress; t is the compression), or TLR-GEMM A A of the
/// compressed operands (t is the product alone) into a dense C (dense_c) or a TLR C recompressed
/// the same way (tlr_c), next to one compression of A (t_compression) and the product with the
/// compression of A and B (t_with_compression: what a user with dense operands pays); for a TLR C
/// also the same product into a dense C (t_products, the outer products without recompression).
/// Dense n x n arrays: A, the DGEMM's C (the reference) and, for a product, one C. t_portable: the
/// portable kernels, where they finish in reasonable time (N <= 2048).
template <class Exec>
void bench_tlr_case(benchmark::State& state, const tlr_case& k) {
  const Exec exec;
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host) host_dense::prepare(exec);
  const std::size_t n = k.n, nb = k.nb;
  const bool covariance = k.input == tlr_input::covariance2d;
  const auto a = covariance ? nt::exponential_covariance(exec, n, 2, 0.1) : nt::hilbert(exec, n, n);
  nt::compression_options co;
  co.max_rank = k.cap;
  co.dense_diagonal = covariance;
  nt::gemm_options go;
  if (k.truncation == tlr_truncation::fixed) {
    co.trunc.fixed_rank = k.cap;
    go.trunc.fixed_rank = k.cap;
  } else {
    co.trunc.accuracy = tlr_case_accuracy;
    go.trunc.accuracy = tlr_case_accuracy;
  }
  nt::compression_options portable_co = co;
  portable_co.implementation = nearsparse::implementation::portable;
  nt::gemm_options portable_go = go;
  portable_go.implementation = nearsparse::implementation::portable;
  nt::compression_report report;
  auto at = nt::compress(exec, a, nb, co, report);
  dense_of<Exec> reference("bench::reference", n, n);
  dense_gemm<Exec> dense(exec);
  const std::string baseline = host ? host_dense::name() : std::string("cublas_dgemm");
  // The slow contenders: 2 samples on the host (as many as the dense baseline), every iteration on
  // CUDA; their first calls need no warm-up (A was compressed above, the product is warmed first).
  const int slow = host ? 2 : 0;
  std::vector<contender> others;
  others.push_back({baseline,
                    [&] {
                      dense.run(a, a, reference);
                      exec.fence();
                    },
                    slow, 1, true});
  nearsparse::perf::workload work;
  const bool portable_too = n <= 2048 || nearsparse::perf::smoke_mode();
  double error = 0;
  nt::gemm_report gr;
  if (k.what == "compress") {
    if (portable_too)
      others.push_back({"portable",
                        [&] {
                          nt::compress(exec, a, nb, portable_co);
                          exec.fence();
                        },
                        1, 0, false});
    work.bytes = double(n) * n * sizeof(double);
    nearsparse::perf::compare_many(
        state, exec, [&] { at = nt::compress(exec, a, nb, co, report); }, others, work, 1);
  } else {
    others.push_back({"compression",
                      [&] {
                        nt::compress(exec, a, nb, co);
                        exec.fence();
                      },
                      slow, 0, false});
    work.bytes = 2.0 * double(n) * n * sizeof(double);
    if (k.what == "dense_c") {
      dense_of<Exec> c("bench::c", n, n);
      others.push_back({"with_compression",
                        [&] {
                          auto a2 = nt::compress(exec, a, nb, co);
                          auto b2 = nt::compress(exec, a, nb, co);
                          nt::gemm(exec, 1.0, a2, b2, 0.0, c);
                          exec.fence();
                        },
                        slow, host ? 1 : 0, false});
      if (portable_too)
        others.push_back({"portable",
                          [&] {
                            nt::gemm(exec, 1.0, at, at, 0.0, c, portable_go);
                            exec.fence();
                          },
                          1, 0, false});
      nearsparse::perf::compare_many(
          state, exec, [&] { nt::gemm(exec, 1.0, at, at, 0.0, c); }, others, work, 1);
      error = nearsparse::frobenius_distance(exec, c, reference) /
              nearsparse::frobenius_norm(exec, reference);
    } else {
      tlr_of<Exec> c(exec, n, n, nb, k.cap, covariance);
      // The same product into a dense C; released before to_dense below takes its place.
      dense_of<Exec> products("bench::products", n, n);
      others.push_back({"products",
                        [&] {
                          nt::gemm(exec, 1.0, at, at, 0.0, products);
                          exec.fence();
                        },
                        slow, 1, false});
      others.push_back({"with_compression",
                        [&] {
                          auto a2 = nt::compress(exec, a, nb, co);
                          auto b2 = nt::compress(exec, a, nb, co);
                          tlr_of<Exec> c2(exec, n, n, nb, k.cap, covariance);
                          nt::gemm(exec, 1.0, a2, b2, 0.0, c2, go);
                          exec.fence();
                        },
                        slow, host ? 1 : 0, false});
      if (portable_too)
        others.push_back({"portable",
                          [&] {
                            tlr_of<Exec> c2(exec, n, n, nb, k.cap, covariance);
                            nt::gemm(exec, 1.0, at, at, 0.0, c2, portable_go);
                            exec.fence();
                          },
                          1, 0, false});
      nearsparse::perf::compare_many(
          state, exec, [&] { gr = nt::gemm(exec, 1.0, at, at, 0.0, c, go); }, others, work, 1);
      products = dense_of<Exec>();
      error = nearsparse::frobenius_distance(exec, nt::to_dense(exec, c), reference) /
              nearsparse::frobenius_norm(exec, reference);
    }
  }
  const double t = state.counters["t"];
  const double t_base = state.counters["t_" + baseline];
  const double t_compression = k.what == "compress" ? t : double(state.counters["t_compression"]);
  state.counters["compression_over_dgemm"] = t_compression / t_base;
  state.counters["compression_error"] = report.relative_error;
  state.counters["accuracy_met"] = report.accuracy_met ? 1 : 0;
  state.counters["a_mean_rank"] = report.mean_rank;
  state.counters["a_max_rank"] = report.max_rank;
  state.counters["a_tiles_at_cap"] = double(report.tiles_at_cap);
  state.counters["a_dense_tiles"] = double(report.dense_tiles);
  if (k.what != "compress") {
    state.counters["speedup_with_compression"] = t_base / state.counters["t_with_compression"];
    state.counters["error"] = error;
  }
  if (k.what == "tlr_c") {
    state.counters["t_recompression"] = t - state.counters["t_products"];
    state.counters["c_mean_rank"] = gr.mean_rank;
    state.counters["c_max_rank"] = gr.max_rank;
    state.counters["c_tiles_at_cap"] = double(gr.tiles_at_cap);
    state.counters["c_dropped"] = gr.dropped;
  }
  state.counters["N"] = double(n);
  state.counters["tile"] = double(nb);
  state.counters["cap"] = k.cap;
}

/// The accuracy each rank reaches (the paper's Figure 4(b)): the Hilbert matrix of size n as one
/// tile, compressed to a fixed rank, times itself into a dense C (GEMM-LLD) and into a low-rank C
/// recompressed to the same rank (GEMM-LLL); errors against the dense product, timed against it.
template <class Exec>
void bench_accuracy(benchmark::State& state, std::size_t n, int r) {
  const Exec exec;
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host) host_dense::prepare(exec);
  const auto a = nt::hilbert(exec, n, n);
  nt::compression_options co;
  co.max_rank = r;
  co.trunc.fixed_rank = r;
  nt::compression_report report;
  const auto at = nt::compress(exec, a, n, co, report);
  dense_of<Exec> reference("bench::reference", n, n), c("bench::c", n, n);
  dense_gemm<Exec> dense(exec);
  nt::gemm_options lll;
  lll.trunc.fixed_rank = r;
  tlr_of<Exec> ct(exec, n, n, n, r);
  std::vector<contender> others;
  others.push_back({host ? host_dense::name() : "cublas_dgemm",
                    [&] {
                      dense.run(a, a, reference);
                      exec.fence();
                    },
                    0, 1, true});
  others.push_back({"gemm_lll",
                    [&] {
                      nt::gemm(exec, 1.0, at, at, 0.0, ct, lll);
                      exec.fence();
                    },
                    0, 1, false});
  nearsparse::perf::workload work;
  work.flops = 4.0 * n * r * r + 2.0 * double(n) * n * r;
  work.bytes = 2.0 * double(n) * n * sizeof(double);
  nearsparse::perf::compare_many(
      state, exec, [&] { nt::gemm(exec, 1.0, at, at, 0.0, c); }, others, work);
  const double norm = nearsparse::frobenius_norm(exec, reference);
  state.counters["error_lld"] = nearsparse::frobenius_distance(exec, c, reference) / norm;
  state.counters["error_lll"] =
      nearsparse::frobenius_distance(exec, nt::to_dense(exec, ct), reference) / norm;
  state.counters["compression_error"] = report.relative_error;
  state.counters["rank"] = r;
}

/// The accuracy-driven and fixed-rank cases (bench_tlr_case). On the host: the Hilbert
/// matrix at N = 2048 and 4096 and the covariance at N = 2048, tile 256, accuracy 1e-8, cap 64. On
/// CUDA: both inputs, both truncations, caps 16 and 32 at N = 16384 (tiles 512, 1024, 2048) and
/// N = 32768 (tiles 1024, 2048). The smoke run keeps one case per kind (compress, dense_c, tlr_c):
/// the covariance (dense diagonal tiles), to 1e-8 on the host and at a fixed rank on CUDA.
template <class Exec>
void register_tlr_cases(bool host, const std::string& space) {
  std::vector<tlr_case> cases;
  const auto add = [&](tlr_input input, tlr_truncation truncation, std::size_t n, std::size_t nb,
                       int cap) {
    for (const char* what : {"compress", "dense_c", "tlr_c"})
      cases.push_back({what, input, truncation, n, nb, cap});
  };
  if (host) {
    for (const std::size_t n : {std::size_t(2048), std::size_t(4096)})
      add(tlr_input::hilbert, tlr_truncation::accuracy, n, 256, 64);
    add(tlr_input::covariance2d, tlr_truncation::accuracy, 2048, 256, 64);
  } else {
    for (const auto& [n, nb] : std::vector<std::pair<std::size_t, std::size_t>>{
             {16384, 512}, {16384, 1024}, {16384, 2048}, {32768, 1024}, {32768, 2048}})
      for (const tlr_input input : {tlr_input::hilbert, tlr_input::covariance2d})
        for (const tlr_truncation truncation : {tlr_truncation::accuracy, tlr_truncation::fixed})
          for (const int cap : {16, 32}) add(input, truncation, n, nb, cap);
  }
  const tlr_truncation smoke_truncation = host ? tlr_truncation::accuracy : tlr_truncation::fixed;
  std::vector<std::string> smoke_kept;
  for (const tlr_case& k : cases) {
    if (nearsparse::perf::smoke_mode()) {
      if (k.input != tlr_input::covariance2d || k.truncation != smoke_truncation ||
          std::find(smoke_kept.begin(), smoke_kept.end(), k.what) != smoke_kept.end())
        continue;
      smoke_kept.push_back(k.what);
    }
    tlr_case run = k;
    run.n = pick<std::size_t>(k.n, 100);
    run.nb = pick<std::size_t>(k.nb, 32);
    run.cap = pick(k.cap, 16);
    benchmark::RegisterBenchmark(tlr_case_name(k, space).c_str(),
                                 [run](benchmark::State& st) { bench_tlr_case<Exec>(st, run); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pick(host ? 3 : (k.n >= 32768 ? 3 : 5), 1));
  }
}

template <class Exec>
void register_space() {
  const bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if (host && std::string(Exec::name()) == "Serial") return;
  const std::string space = space_name(host);
  // Batch 1000 at ranks 8 .. 128; batch counts at ranks 16 (LLD) and 32 (LLL).
  std::vector<std::tuple<bool, int, int>> batched;
  const int full_batch = host ? 100 : 1000;
  for (int r : {8, 16, 32, 64, 128}) {
    batched.emplace_back(false, full_batch, r);
    batched.emplace_back(true, full_batch, r);
  }
  for (int b : host ? std::vector<int>{25, 50} : std::vector<int>{100, 250, 500, 2000}) {
    batched.emplace_back(false, b, 16);
    batched.emplace_back(true, b, 32);
  }
  for (const auto& [lll, b, r] : batched) {
    if (smoke_filter(b, r)) continue;
    const std::string name = std::string("tlr/") + (lll ? "batched_lll/" : "batched_lld/") + space +
                             "/batch:" + std::to_string(b) + "/rank:" + std::to_string(r);
    const int batch = pick(b, 4), rank = pick(r, 4);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [batch, rank, lll = lll](benchmark::State& st) {
                                   bench_batched<Exec>(st, batch, rank, lll);
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pick(host ? 3 : 10, 1));
  }
  // Batched SVD: the shapes cuSOLVER's gesvdjBatched takes (up to 32 x 32), at two batch counts.
  for (const auto& [m, n] :
       std::vector<std::pair<int, int>>{{8, 8}, {16, 16}, {24, 24}, {32, 32}, {32, 16}, {32, 24}})
    for (int b : {1000, 10000}) {
      if (nearsparse::perf::smoke_mode() && (m != 8 || b != 1000)) continue;
      const std::string name = "tlr/batched_svd/" + space + "/m:" + std::to_string(m) +
                               "/n:" + std::to_string(n) + "/batch:" + std::to_string(b);
      const int batch = pick(host ? b / 10 : b, 3);
      benchmark::RegisterBenchmark(
          name.c_str(),
          [m = m, n = n, batch](benchmark::State& st) { bench_svd<Exec>(st, m, n, batch); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(pick(host ? 3 : 10, 1));
    }
  register_tlr_cases<Exec>(host, space);
  for (int r : {2, 4, 8, 12, 16, 24, 32, 48, 64}) {
    if (nearsparse::perf::smoke_mode() && r != 4) continue;
    const std::string name = "tlr/accuracy/" + space + "/N:1024/rank:" + std::to_string(r);
    const std::size_t size = pick<std::size_t>(1024, 40);
    benchmark::RegisterBenchmark(
        name.c_str(), [size, r](benchmark::State& st) { bench_accuracy<Exec>(st, size, r); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pick(host ? 3 : 10, 1));
  }
  // (N, tile): 1024 x 1024 tiles as in the paper's Figure 8, and 2048 x 2048 tiles for the largest
  // sizes (fewer, larger tiles: the recompression's cost falls as 1 / tile^2 at a fixed N).
  const std::vector<std::pair<std::size_t, std::size_t>> sizes =
      host ? std::vector<std::pair<std::size_t, std::size_t>>{{2048, 256}}
           : std::vector<std::pair<std::size_t, std::size_t>>{
                 {4096, 1024},  {8192, 1024},  {16384, 1024}, {32768, 1024},
                 {32768, 2048}, {49152, 2048}, {49152, 4096}};
  // Rank 16 with a dense C and rank 32 with a TLR C everywhere; at the largest size both ranks
  // with both kinds of C.
  for (const auto& [n, tile] : sizes)
    for (const auto& [lll, r] :
         std::vector<std::pair<bool, int>>{{false, 16}, {true, 32}, {false, 32}, {true, 16}}) {
      if (r != (lll ? 32 : 16) && !(n == sizes.back().first && tile == sizes.back().second))
        continue;
      const std::string name = std::string("tlr/gemm/") + (lll ? "tlr_c/" : "dense_c/") + space +
                               "/N:" + std::to_string(n) + "/tile:" + std::to_string(tile) +
                               "/rank:" + std::to_string(r);
      const std::size_t size = pick<std::size_t>(n, 100), nb = pick<std::size_t>(tile, 32);
      const int rank = pick(r, 4);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [size, nb, rank, lll = lll](benchmark::State& st) {
                                     bench_driver<Exec>(st, size, nb, rank, lll);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(pick(n >= 32768 ? 3 : 5, 1));
      if (nearsparse::perf::smoke_mode()) break;
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
