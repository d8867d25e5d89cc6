// GEMM-LLD on Kokkos::Cuda: cuBLAS batched GEMMs over pointer arrays where the options allow it,
// the portable kernels otherwise.
//
// A launch is a set of groups, each a C tile and the same number P of tile products; for every
// product the two small GEMMs make a left block (U_a (V_a^T U_b), D_a U_b, or U_a) and a right
// block (V_b, or D_b^T V_a) of width w = max(kmax_a, kmax_b), zero-padded; then one batched GEMM
// per tile-extent class does C = beta C + alpha [L_1 .. L_P] [R_1 .. R_P]^T, reading and writing
// each C tile once for all P products (cuBLAS, or where P w is small and the product is bound by
// C's traffic, low_rank_update_batched in cuda_low_rank_update.cpp). Products of two dense tiles go
// to one more batched GEMM. P = 1 is the paper's batched GEMM-LLD; P = nt is the whole TLR-GEMM in
// one pass over C.
//
// The pointer arrays of all launches are built on the host, where every tile's address is plain
// arithmetic, and uploaded once; the launches then queue without host synchronization.
//
// cublas_lld (cuda_products.hpp) also serves GEMM-LLL (cuda_lll.cpp): there a launch names its own
// targets (the dense tiles of a TLR C, or the packed tiles a low-rank C tile's sum is formed in
// before its recompression) and may first set them to C's own term, beta U_c V_c^T.

#include "cuda_products.hpp"

#include "../core/cuda/check.hpp"
#include "../core/cuda/handles.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/detail/lld_dispatch.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::tlr::detail {

namespace {

namespace cuda = nearsparse::detail::cuda;

// Device buffers kept between calls, one set per stream so calls on different streams never
// share them; grown with the stream-ordered allocator, so a buffer still read by queued work is
// released only after it. Freed when Kokkos finalizes.
struct stream_buffers {
  void* work = nullptr;
  void* table = nullptr;
  void* jobs = nullptr;
  std::size_t work_bytes = 0, table_bytes = 0, jobs_bytes = 0;
};

std::mutex buffers_mutex;
std::map<cudaStream_t, stream_buffers>* buffers = nullptr;

void* grow(void*& ptr, std::size_t& have, std::size_t need, cudaStream_t stream,
           const char* function, const char* what) {
  if (need <= have) return ptr;
  if (ptr) cuda::check(cudaFreeAsync(ptr, stream), function, "cudaFreeAsync");
  ptr = nullptr;
  have = 0;
  cuda::check_allocation(cudaMallocAsync(&ptr, need, stream), function, what, need);
  have = need;
  return ptr;
}

stream_buffers& buffers_of(cudaStream_t stream) {
  if (!buffers) {
    buffers = new std::map<cudaStream_t, stream_buffers>();
    Kokkos::push_finalize_hook([] {
      cudaDeviceSynchronize();
      for (auto& entry : *buffers) {
        cudaFree(entry.second.work);
        cudaFree(entry.second.table);
        cudaFree(entry.second.jobs);
      }
      delete buffers;
      buffers = nullptr;
    });
  }
  return (*buffers)[stream];
}

// A batched GEMM whose pointer arrays are segment [begin, begin + count) of the uploaded table.
struct batched_call {
  cublasOperation_t ta, tb;
  int m, n, k;
  double alpha, beta;
  int lda, ldb, ldc;
  std::size_t a, b, c;  // offsets of the three pointer arrays in the table
  int count;
  bool low_rank_update;  // C = beta C + alpha A B^T with small k, by low_rank_update_batched
};

// A zero-fill or copy of whole columns (nb rows, leading dimension nb): copy `copy` columns from
// src (when not null), then zero `zero` columns after them.
struct column_job {
  const double* src;
  double* dst;
  int copy, zero;
};

struct plan {
  std::vector<const double*> table;
  std::vector<std::vector<batched_call>> calls;  // per launch
  std::vector<column_job> jobs;  // all launches, launch li at [job_begin[li], job_begin[li + 1])
  std::vector<std::size_t> job_begin{0};
};

}  // namespace

std::size_t cublas_work_doubles(const lld_operands& ops, std::size_t groups, int P) {
  const std::size_t w = ops.a.kmax > ops.b.kmax ? ops.a.kmax : ops.b.kmax;
  return groups * P * (2 * std::size_t(ops.a.nb) * w + std::size_t(ops.a.kmax) * ops.b.kmax);
}

// (Not in the unnamed namespace: nvcc wants external linkage for a function that holds a device
// lambda.)
void cublas_lld(const Kokkos::Cuda& exec, const char* function, double alpha,
                const lld_operands& ops, const std::vector<cublas_launch>& launches) {
  // The per-stream buffers are shared by every call on the stream: one call at a time builds,
  // uploads and queues its work.
  const std::lock_guard<std::mutex> lock(buffers_mutex);
  cudaStream_t stream = exec.cuda_stream();
  stream_buffers& buf = buffers_of(stream);
  std::size_t work_doubles = 1;
  for (const auto& l : launches)
    work_doubles =
        std::max(work_doubles, cublas_work_doubles(ops, l.c_tile.size(), l.pairs_per_group));
  double* work = static_cast<double*>(
      grow(buf.work, buf.work_bytes, work_doubles * sizeof(double), stream, function, "workspace"));
  const tile_access& A = ops.a;
  const tile_access& B = ops.b;
  const int nb = A.nb, ka = A.kmax, kb = B.kmax, w = ka > kb ? ka : kb;
  const int tr = ops.c_tile_rows;
  auto dense_a = [&](int t) { return A.dense + std::size_t((*ops.a_slots)[t]) * nb * nb; };
  auto dense_b = [&](int t) { return B.dense + std::size_t((*ops.b_slots)[t]) * nb * nb; };

  const bool low_rank_update = low_rank_update_runs(exec);
  plan p;
  p.calls.resize(launches.size());
  for (std::size_t li = 0; li < launches.size(); ++li) {
    const cublas_launch& l = launches[li];
    const int P = l.pairs_per_group;
    const std::size_t groups = l.c_tile.size();
    const bool targets = !l.target.empty();
    const bool seeded = l.seed_k > 0 && !l.seed_u.empty();
    const int ldc = targets ? nb : ops.ldc;
    double* L = work;
    double* R = L + groups * P * std::size_t(nb) * w;
    double* S = R + groups * P * std::size_t(nb) * w;
    auto lblock = [&](std::size_t g, int q) { return L + (g * P + q) * std::size_t(nb) * w; };
    auto rblock = [&](std::size_t g, int q) { return R + (g * P + q) * std::size_t(nb) * w; };

    std::vector<const double*> ll_va, ll_ub, ll_s, ll_ua, ll_s2, ll_l;
    std::vector<const double*> dl_da, dl_ub, dl_l, ld_db, ld_va, ld_r;
    std::map<std::pair<int, int>, std::vector<const double*>> fin_l, fin_r, fin_c;
    std::map<std::pair<int, int>, std::vector<const double*>> dd_a, dd_b, dd_c;
    std::vector<const double*> seed_c;
    auto& jobs = p.jobs;
    for (std::size_t g = 0; g < groups; ++g) {
      const int ct = l.c_tile[g];
      const int row0 = (ct % tr) * nb, col0 = (ct / tr) * nb;
      const int m = ops.c_rows - row0 < nb ? ops.c_rows - row0 : nb;
      const int n = ops.c_cols - col0 < nb ? ops.c_cols - col0 : nb;
      double* c = targets ? l.target[g] : ops.c + row0 + std::size_t(col0) * ops.ldc;
      if (seeded) seed_c.push_back(c);
      const std::pair<int, int> cls(m, n);
      // With one product per group and w = kb, the right block of a product with a low-rank B
      // tile (R = V_b) is V_b itself, read in place rather than copied.
      const bool v_in_place = P == 1 && kb == w && (*ops.b_slots)[l.b_tile[g]] < 0;
      fin_l[cls].push_back(lblock(g, 0));
      fin_r[cls].push_back(v_in_place ? B.v_of(l.b_tile[g]) : rblock(g, 0));
      fin_c[cls].push_back(c);
      for (int q = 0; q < P; ++q) {
        const int a = l.a_tile[g * P + q], b = l.b_tile[g * P + q];
        const bool ad = (*ops.a_slots)[a] >= 0, bd = (*ops.b_slots)[b] >= 0;
        double* lb = lblock(g, q);
        double* rb = rblock(g, q);
        if (ad && bd) {
          jobs.push_back({nullptr, lb, 0, w});
          jobs.push_back({nullptr, rb, 0, w});
          dd_a[cls].push_back(dense_a(a));
          dd_b[cls].push_back(dense_b(b));
          dd_c[cls].push_back(c);
        } else if (ad) {  // L = D_a U_b, R = V_b
          jobs.push_back({nullptr, lb + std::size_t(kb) * nb, 0, w - kb});
          if (!v_in_place) jobs.push_back({B.v_of(b), rb, kb, w - kb});
          dl_da.push_back(dense_a(a));
          dl_ub.push_back(B.u_of(b));
          dl_l.push_back(lb);
        } else if (bd) {  // L = U_a, R = D_b^T V_a
          jobs.push_back({A.u_of(a), lb, ka, w - ka});
          jobs.push_back({nullptr, rb + std::size_t(ka) * nb, 0, w - ka});
          ld_db.push_back(dense_b(b));
          ld_va.push_back(A.v_of(a));
          ld_r.push_back(rb);
        } else {  // S = V_a^T U_b, L = U_a S, R = V_b
          jobs.push_back({nullptr, lb + std::size_t(kb) * nb, 0, w - kb});
          if (!v_in_place) jobs.push_back({B.v_of(b), rb, kb, w - kb});
          double* s = S + (g * P + q) * std::size_t(ka) * kb;
          ll_va.push_back(A.v_of(a));
          ll_ub.push_back(B.u_of(b));
          ll_s.push_back(s);
          ll_ua.push_back(A.u_of(a));
          ll_s2.push_back(s);
          ll_l.push_back(lb);
        }
      }
    }
    auto add = [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double al,
                   double be, int lda, int ldb, int ldc, const std::vector<const double*>& a,
                   const std::vector<const double*>& b, const std::vector<const double*>& c) {
      if (a.empty() || m == 0 || n == 0) return;
      batched_call call{
          ta, tb, m, n, k, al, be, lda, ldb, ldc, 0, 0, 0, static_cast<int>(a.size()), false};
      call.low_rank_update =
          ta == CUBLAS_OP_N && tb == CUBLAS_OP_T && k <= low_rank_update_max_k && low_rank_update;
      call.a = p.table.size();
      p.table.insert(p.table.end(), a.begin(), a.end());
      call.b = p.table.size();
      p.table.insert(p.table.end(), b.begin(), b.end());
      call.c = p.table.size();
      p.table.insert(p.table.end(), c.begin(), c.end());
      p.calls[li].push_back(call);
    };
    const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    add(T, N, ka, kb, nb, 1.0, 0.0, nb, nb, ka, ll_va, ll_ub, ll_s);  // S = V_a^T U_b
    add(N, N, nb, kb, ka, 1.0, 0.0, nb, ka, nb, ll_ua, ll_s2, ll_l);  // L = U_a S
    add(N, N, nb, kb, nb, 1.0, 0.0, nb, nb, nb, dl_da, dl_ub, dl_l);  // L = D_a U_b
    add(T, N, nb, ka, nb, 1.0, 0.0, nb, nb, nb, ld_db, ld_va, ld_r);  // R = D_b^T V_a
    if (seeded)  // C = s U_c V_c^T over the whole tile
      add(N, T, nb, nb, l.seed_k, l.seed_scale, 0.0, nb, nb, nb, l.seed_u, l.seed_v, seed_c);
    for (auto& [cls, ls] : fin_l)  // C = b C + a L R^T
      add(N, T, cls.first, cls.second, P * w, alpha, l.beta, nb, nb, ldc, ls, fin_r[cls],
          fin_c[cls]);
    for (auto& [cls, as] : dd_a)  // C += a D_a D_b
      add(N, N, cls.first, cls.second, nb, alpha, 1.0, nb, nb, ldc, as, dd_b[cls], dd_c[cls]);
    p.job_begin.push_back(p.jobs.size());
  }

  // Upload the pointer table and the column jobs once (pageable host memory: the copies have
  // read it when they return).
  auto* table = static_cast<std::uintptr_t*>(grow(
      buf.table, buf.table_bytes, std::max<std::size_t>(1, p.table.size()) * sizeof(std::uintptr_t),
      stream, function, "pointer table"));
  {
    std::vector<std::uintptr_t> staged(p.table.size());
    for (std::size_t k = 0; k < p.table.size(); ++k)
      staged[k] = reinterpret_cast<std::uintptr_t>(p.table[k]);
    cuda::check(cudaMemcpyAsync(table, staged.data(), staged.size() * sizeof(std::uintptr_t),
                                cudaMemcpyHostToDevice, stream),
                function, "cudaMemcpyAsync");
  }
  auto* jobs = static_cast<column_job*>(
      grow(buf.jobs, buf.jobs_bytes, std::max<std::size_t>(1, p.jobs.size()) * sizeof(column_job),
           stream, function, "column jobs"));
  cuda::check(cudaMemcpyAsync(jobs, p.jobs.data(), p.jobs.size() * sizeof(column_job),
                              cudaMemcpyHostToDevice, stream),
              function, "cudaMemcpyAsync");
  cublasHandle_t h = cuda::cublas_handle(exec, function);
  // Registry handles stay in host pointer mode (src/core/cuda/handles.hpp): alpha and beta are
  // host values.
  for (std::size_t li = 0; li < launches.size(); ++li) {
    const std::size_t j0 = p.job_begin[li], j1 = p.job_begin[li + 1];
    if (j1 > j0) {
      const int rows = nb, cols = w;
      Kokkos::parallel_for(
          "nearsparse::tlr::gemm_lld::assemble",
          Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, (j1 - j0) * std::size_t(cols) * rows),
          KOKKOS_LAMBDA(const std::size_t e) {
            const std::size_t job = j0 + e / (std::size_t(cols) * rows);
            const int col = static_cast<int>((e / rows) % cols), row = static_cast<int>(e % rows);
            const column_job j = jobs[job];
            if (col >= j.copy + j.zero) return;
            j.dst[row + std::size_t(col) * rows] =
                col < j.copy ? j.src[row + std::size_t(col) * rows] : 0.0;
          });
    }
    for (const batched_call& c : p.calls[li]) {
      auto ptr = [&](std::size_t offset) {
        return reinterpret_cast<const double* const*>(table + offset);
      };
      if (c.low_rank_update)
        low_rank_update_batched(exec, function, c.m, c.n, c.k, c.alpha, ptr(c.a), c.lda, ptr(c.b),
                                c.ldb, c.beta, const_cast<double* const*>(ptr(c.c)), c.ldc,
                                c.count);
      else
        cuda::check(cublasDgemmBatched(h, c.ta, c.tb, c.m, c.n, c.k, &c.alpha, ptr(c.a), c.lda,
                                       ptr(c.b), c.ldb, &c.beta,
                                       const_cast<double* const*>(ptr(c.c)), c.ldc, c.count),
                    function, "cublasDgemmBatched");
    }
  }
}

namespace {

/// Whether cuBLAS takes the call: Kokkos::Cuda's memory space must be device memory, where the
/// tile pointers and C live.
bool take_cublas(const Kokkos::Cuda& exec, const char* function, const gemm_options& options) {
  constexpr bool device_memory = std::is_same<Kokkos::Cuda::memory_space, Kokkos::CudaSpace>::value;
  return nearsparse::detail::take_specialized(
      function, options.implementation, device_memory, exec.name(),
      "cuBLAS needs Kokkos::Cuda's memory space to be CudaSpace");
}

}  // namespace

void dispatch_gemm_lld_batched(const Kokkos::Cuda& exec, double alpha, const lld_operands& ops,
                               double beta, const std::vector<tile_triple>& batch,
                               const gemm_options& options) {
  const char* fn = "nearsparse::tlr::gemm_lld_batched";
  if (!take_cublas(exec, fn, options))
    return portable_gemm_lld_batched(exec, alpha, ops, beta, batch, options);
  cublas_launch l;
  l.pairs_per_group = 1;
  l.beta = beta;
  for (const auto& t : batch) {
    l.c_tile.push_back(t.c);
    l.a_tile.push_back(t.a);
    l.b_tile.push_back(t.b);
  }
  cublas_lld(exec, fn, alpha, ops, {l});
}

void dispatch_gemm_dense(const Kokkos::Cuda& exec, double alpha, const lld_operands& ops,
                         double beta, const gemm_options& options) {
  const char* fn = "nearsparse::tlr::gemm";
  const int kt = ops.inner_tiles();
  // An empty inner dimension leaves C = beta C, which the portable kernel does in one launch.
  if (!take_cublas(exec, fn, options) || kt == 0)
    return portable_gemm_dense(exec, alpha, ops, beta, options);
  const int groups = ops.c_tiles, mt = ops.c_tile_rows;
  const int mt_a = ops.a.tile_rows, mt_b = ops.b.tile_rows;
  int per_call = options.outer_products_per_call;
  if (per_call == 0) {
    const std::size_t one = cublas_work_doubles(ops, std::size_t(groups), 1) * sizeof(double);
    per_call = static_cast<int>(
        std::max<std::size_t>(1, options.workspace_bytes / std::max<std::size_t>(1, one)));
  }
  per_call = std::min(per_call, kt);
  std::vector<cublas_launch> launches;
  for (int k0 = 0; k0 < kt; k0 += per_call) {
    cublas_launch l;
    const int k1 = std::min(kt, k0 + per_call);
    l.pairs_per_group = k1 - k0;
    l.beta = k0 == 0 ? beta : 1.0;
    for (int g = 0; g < groups; ++g) {
      l.c_tile.push_back(g);
      const int i = g % mt, j = g / mt;
      for (int k = k0; k < k1; ++k) {
        l.a_tile.push_back(i + k * mt_a);  // A tile (i, k)
        l.b_tile.push_back(k + j * mt_b);  // B tile (k, j)
      }
    }
    launches.push_back(std::move(l));
  }
  cublas_lld(exec, fn, alpha, ops, launches);
}

}  // namespace nearsparse::tlr::detail
