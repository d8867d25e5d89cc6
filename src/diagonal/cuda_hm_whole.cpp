// CUDA kernel of a whole HM product (see include/nearsparse/diagonal/detail/cuda_hm_whole.hpp),
// and the CUDA overload of the whole product, which takes it or the band tiles
// (include/nearsparse/diagonal/detail/hm_product_dispatch.hpp).
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/cuda_hm_whole.hpp>
#include <nearsparse/diagonal/detail/hm_device_pairs.hpp>
#include <nearsparse/diagonal/hm_product.hpp>

#include "../core/cuda/check.hpp"
#include "cuda_hm_product.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace nearsparse::diagonal::detail {

namespace {

// A block per chunk of 1024 positions of one C diagonal, 256 threads each summing 4 positions
// 256 apart. Each block first finds the pairs meeting on its chunk, a few dependent loads, so
// blocks of 256 threads (rather than the portable kernel's teams of 64) do a quarter as many
// searches for the same positions (perf/RESULTS.md, diag/structured).
constexpr int block_threads = 256;
constexpr int per_thread = 4;
constexpr int chunk_positions = block_threads * per_thread;
constexpr unsigned full_mask = 0xffffffffu;

// A pair of diagonals as the block uses it (C's start is the block's own).
struct block_pair {
  index_type a_base;
  index_type b_base;
  int qlo;
  int qhi;
};

template <class Scalar>
struct operands {
  int m, k, n;
  bool a_transposed, b_transposed;
  int na, nb, nc;
  const int* a_offsets;
  const index_type* a_starts;
  const Scalar* a;
  const int* b_offsets;
  const index_type* b_starts;
  const Scalar* b;
  int* c_offsets;
  index_type* c_starts;
  Scalar* c;
};

// C's structure by value in the parameters, with the first chunk of each diagonal (the grid
// has a block per chunk, none idle); the kernels are compiled for a few capacities so a small C
// does not pay for copying the largest.
template <int Capacity>
struct c_structure {
  int offsets[Capacity];
  int chunk_ptr[Capacity + 1];
  index_type starts[Capacity + 1];
};

template <class Scalar, int Capacity>
__global__ void __launch_bounds__(block_threads)
    whole_product(const operands<Scalar> o, const c_structure<Capacity> cs) {
  extern __shared__ index_type shared_words[];  // 8-byte aligned for the pairs
  block_pair* const pairs = reinterpret_cast<block_pair*>(shared_words);
  int* const b_logical = reinterpret_cast<int*>(pairs + o.na);
  __shared__ int warp_counts[block_threads / 32];

  const int tid = threadIdx.x;
  const int chunk = int(blockIdx.x);
  // This chunk's diagonal: the last t with chunk_ptr[t] <= chunk (the same for the whole block).
  int t = 0;
  for (int hi = o.nc; hi - t > 1;) {
    const int mid = (t + hi) / 2;
    if (cs.chunk_ptr[mid] <= chunk)
      t = mid;
    else
      hi = mid;
  }
  // A thread's first diagonal of A, loaded before B's offsets so the two loads overlap.
  const auto a_offset = [&](const int ta) { return __ldg(o.a_offsets + ta); };
  const auto a_start_of = [&](const int ta) { return __ldg(o.a_starts + ta); };
  int da0 = 0;
  index_type a_start0 = 0;
  if (tid < o.na) da0 = logical_diagonal(a_offset, a_start_of, o.a_transposed, o.na, tid, a_start0);

  const int c = cs.offsets[t];
  const index_type c0 = cs.starts[t], len = cs.starts[t + 1] - c0;
  if (chunk == cs.chunk_ptr[t] && tid == 0) {
    o.c_offsets[t] = c;
    o.c_starts[t] = c0;
    if (t == o.nc - 1) o.c_starts[t + 1] = cs.starts[t + 1];
  }
  const index_type q0 = index_type(chunk - cs.chunk_ptr[t]) * chunk_positions;
  const index_type q1 = q0 + chunk_positions < len ? q0 + chunk_positions : len;

  // B's logical offsets, ascending (a transposed operand's stored offsets negated, from the back).
  for (int i = tid; i < o.nb; i += block_threads)
    b_logical[i] = o.b_transposed ? -__ldg(o.b_offsets + o.nb - 1 - i) : __ldg(o.b_offsets + i);
  __syncthreads();

  // The pairs meeting on this chunk: thread tid takes A's diagonals tid, tid + 256, ... in
  // ascending logical offset; a warp ballot and the warps' counts keep A's order.
  const int lane = tid & 31, warp = tid >> 5;
  int count = 0;
  for (int base = 0; base < o.na; base += block_threads) {
    const int ia = base + tid;
    bool keep = false;
    hm_pair p;
    if (ia < o.na) {
      int da = da0;
      index_type a_start = a_start0;
      if (base > 0) da = logical_diagonal(a_offset, a_start_of, o.a_transposed, o.na, ia, a_start);
      const int ib = find_ascending(o.nb, c - da, [&](const int i) { return b_logical[i]; });
      if (ib >= 0) {
        const int tb = o.b_transposed ? o.nb - 1 - ib : ib;
        keep = hm_make_pair(o.m, o.k, o.n, da, a_start, c - da, __ldg(o.b_starts + tb), p) &&
               p.qlo < q1 && p.qhi > q0;
      }
    }
    const unsigned ballot = __ballot_sync(full_mask, keep);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int before = count + __popc(ballot & ((1u << lane) - 1));
    for (int w = 0; w < warp; ++w) before += warp_counts[w];
    if (keep) pairs[before] = {p.a_base, p.b_base, p.qlo, p.qhi};
    for (int w = 0; w < block_threads / 32; ++w) count += warp_counts[w];
    __syncthreads();  // every thread has read warp_counts before the next round writes them
  }

  Scalar acc[per_thread];
  for (int j = 0; j < per_thread; ++j) acc[j] = 0;
  const index_type first = q0 + tid;
  int p = 0;
  for (; p < count; ++p) {
    const block_pair pr = pairs[p];
#pragma unroll
    for (int j = 0; j < per_thread; ++j) {
      const index_type q = first + j * block_threads;
      if (q >= pr.qlo && q < pr.qhi)
        acc[j] += __ldg(o.a + pr.a_base + q) * __ldg(o.b + pr.b_base + q);
    }
  }
#pragma unroll
  for (int j = 0; j < per_thread; ++j) {
    const index_type q = first + j * block_threads;
    if (q < len) o.c[c0 + q] = acc[j];
  }
}

template <class Scalar, int Capacity>
void launch(const Kokkos::Cuda& exec, const cuda_hm_whole_args<Scalar>& args) {
  c_structure<Capacity> cs;  // only the first c_diagonals entries are read
  const int nc = args.c_diagonals;
  std::copy(args.host_c_offsets, args.host_c_offsets + nc, cs.offsets);
  std::copy(args.host_c_starts, args.host_c_starts + nc + 1, cs.starts);
  cs.chunk_ptr[0] = 0;
  for (int t = 0; t < nc; ++t)
    cs.chunk_ptr[t + 1] =
        cs.chunk_ptr[t] +
        int((cs.starts[t + 1] - cs.starts[t] + chunk_positions - 1) / chunk_positions);
  const operands<Scalar> o{args.m,
                           args.k,
                           args.n,
                           args.a_transposed,
                           args.b_transposed,
                           args.a_diagonals,
                           args.b_diagonals,
                           nc,
                           args.a_offsets,
                           args.a_starts,
                           args.a,
                           args.b_offsets,
                           args.b_starts,
                           args.b,
                           args.c_offsets,
                           args.c_starts,
                           args.c};
  const std::size_t shared = std::size_t(args.a_diagonals) * sizeof(block_pair) +
                             std::size_t(args.b_diagonals) * sizeof(int);
  whole_product<Scalar, Capacity>
      <<<unsigned(cs.chunk_ptr[nc]), block_threads, shared, exec.cuda_stream()>>>(o, cs);
  nearsparse::detail::cuda::check_launch(multiply_name, "whole_product");
}

template <class Scalar>
void launch_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<Scalar>& args) {
  if (args.c_diagonals < 1 || args.c_diagonals > cuda_hm_whole_max_diagonals ||
      args.a_diagonals > cuda_hm_whole_max_operand_diagonals ||
      args.b_diagonals > cuda_hm_whole_max_operand_diagonals)
    throw nearsparse::invalid_argument(nearsparse::detail::concat(
        "nearsparse::diagonal::multiply (CUDA): the fused product takes 1 to ",
        cuda_hm_whole_max_diagonals, " diagonals of C and at most ",
        cuda_hm_whole_max_operand_diagonals, " of A and B; got ", args.c_diagonals, ", ",
        args.a_diagonals, " and ", args.b_diagonals));
  if (args.c_diagonals <= 64)
    launch<Scalar, 64>(exec, args);
  else if (args.c_diagonals <= 512)
    launch<Scalar, 512>(exec, args);
  else
    launch<Scalar, cuda_hm_whole_max_diagonals>(exec, args);
}

}  // namespace

void cuda_hm_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<double>& args) {
  launch_whole(exec, args);
}

void cuda_hm_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<float>& args) {
  launch_whole(exec, args);
}

namespace {

// C's offsets, starts and values for the symbolic product `s`, from the allocation cache, with
// one wait for the device for the three.
template <class Scalar, class Mem>
auto cached_c_arrays(const hm_symbolic_product& s) {
  using matrix = hm_matrix<Scalar, Mem>;
  namespace core = nearsparse::detail;
  const std::size_t nc = s.c_offsets.size();
  bool wait = false;
  auto arrays =
      std::make_tuple(core::cached_view_taken<typename matrix::offsets_view>(
                          wait, "nearsparse::hm_product.C.offsets", nc),
                      core::cached_view_taken<typename matrix::starts_view>(
                          wait, "nearsparse::hm_product.C.starts", nc + 1),
                      core::cached_view_taken<typename matrix::values_view>(
                          wait, "nearsparse::hm_product.C.values", std::size_t(s.c_starts.back())));
  core::fence_cached_views<Mem>(wait);
  return arrays;
}

// The whole product in band tiles, one launch. When C stores every diagonal of its range (two
// bands make such a C) the kernel writes C's device structure; otherwise it is copied up first
// (two small copies).
template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> band_whole(const Kokkos::Cuda& exec, const hm_matrix<Scalar, Mem>& a,
                                  const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                  hm_symbolic_product s, bool tensor_cores) {
  const std::size_t nc = s.c_offsets.size();
  const bool c_is_band = hm_band_range_of(s.c_offsets, false).whole();
  auto [offsets, starts, values] = cached_c_arrays<Scalar, Mem>(s);
  if (!c_is_band) {
    // Pageable copies: the sources are consumed before the calls return.
    Kokkos::deep_copy(exec, offsets,
                      Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          s.c_offsets.data(), nc));
    Kokkos::deep_copy(exec, starts,
                      Kokkos::View<const index_type*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          s.c_starts.data(), nc + 1));
  }
  const auto c = hm_product_access::make_matrix<Scalar, Mem>(
      s.rows, s.cols, std::move(s.c_offsets), std::move(s.c_starts), std::move(offsets),
      std::move(starts), std::move(values));
  cuda_hm_band_tiles(exec, cuda_hm_band_args_of(Scalar(1), a, op_a, b, op_b, Scalar(0), c,
                                                tensor_cores, c_is_band));
  return c;
}

// Whether the fused kernel takes this product.
bool fused_takes(const hm_symbolic_product& s, int a_diagonals, int b_diagonals) {
  const std::size_t nc = s.c_offsets.size();
  return nc >= 1 && nc <= std::size_t(cuda_hm_whole_max_diagonals) &&
         s.chunk_ptr.back() <= std::numeric_limits<int>::max() &&  // a block per chunk
         a_diagonals <= cuda_hm_whole_max_operand_diagonals &&
         b_diagonals <= cuda_hm_whole_max_operand_diagonals;
}

// The whole product through the fused kernel: C's three arrays from the allocation cache and one
// launch.
template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> fused_whole(const Kokkos::Cuda& exec, const hm_matrix<Scalar, Mem>& a,
                                   const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                   hm_symbolic_product s) {
  const std::size_t nc = s.c_offsets.size();
  auto [offsets, starts, values] = cached_c_arrays<Scalar, Mem>(s);
  cuda_hm_whole_args<Scalar> args;
  args.m = s.rows;
  args.k = s.inner;
  args.n = s.cols;
  args.a_transposed = op_a == op::transpose;
  args.b_transposed = op_b == op::transpose;
  args.a_diagonals = a.diagonal_count();
  args.b_diagonals = b.diagonal_count();
  args.a_offsets = a.offsets().data();
  args.a_starts = a.starts().data();
  args.a = a.values().data();
  args.b_offsets = b.offsets().data();
  args.b_starts = b.starts().data();
  args.b = b.values().data();
  args.c_diagonals = int(nc);
  args.host_c_offsets = s.c_offsets.data();
  args.host_c_starts = s.c_starts.data();
  args.c_offsets = offsets.data();
  args.c_starts = starts.data();
  args.c = values.data();
  cuda_hm_whole(exec, args);
  return hm_product_access::make_matrix<Scalar, Mem>(s.rows, s.cols, std::move(s.c_offsets),
                                                     std::move(s.c_starts), std::move(offsets),
                                                     std::move(starts), std::move(values));
}

}  // namespace

template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> hm_multiply_whole(const Kokkos::Cuda& exec, const hm_matrix<Scalar, Mem>& a,
                                         const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                         hm_symbolic_result<Mem> symbolic,
                                         const product_options& options) {
  auto& s = symbolic.host;
  const bool output_stationary = options.algorithm == hm_algorithm::output_stationary;
  const bool specialized = options.implementation == nearsparse::implementation::specialized;
  const bool band_pays = output_stationary && hm_band_tiles_pay_for(s, a, b, op_a, op_b);
  const bool fused = output_stationary && fused_takes(s, a.diagonal_count(), b.diagonal_count());
  const bool band_fits =
      output_stationary && specialized && cuda_hm_band_fits(a, op_a, b, op_b, s.c_offsets);
  if (nearsparse::detail::take_specialized(multiply_name, options.implementation,
                                           band_pays || fused || band_fits, exec.name(),
                                           cuda_hm_declined(options.algorithm, true))) {
    if (band_pays || !fused)
      return band_whole(exec, a, b, op_a, op_b, std::move(s), options.tensor_cores);
    return fused_whole(exec, a, b, op_a, op_b, std::move(s));
  }
  return hm_multiply_whole_portable(exec, a, b, op_a, op_b, std::move(symbolic), options.algorithm);
}

#define NEARSPARSE_INSTANTIATE_WHOLE(S, M)                                                      \
  template hm_matrix<S, M> hm_multiply_whole<S, M>(const Kokkos::Cuda&, const hm_matrix<S, M>&, \
                                                   const hm_matrix<S, M>&, op, op,              \
                                                   hm_symbolic_result<M>, const product_options&);
NEARSPARSE_DIAGONAL_CUDA_INSTANTIATE(NEARSPARSE_INSTANTIATE_WHOLE)
#undef NEARSPARSE_INSTANTIATE_WHOLE

}  // namespace nearsparse::diagonal::detail
