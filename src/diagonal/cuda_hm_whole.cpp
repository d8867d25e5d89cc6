// CUDA kernel of a whole HM product; see include/nearsparse/diagonal/detail/cuda_hm_whole.hpp.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/cuda_hm_whole.hpp>
#include <nearsparse/diagonal/detail/hm_device_pairs.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace nearsparse::diagonal::detail {

namespace {

// A block per chunk of 1024 positions of one C diagonal, 256 threads each summing 4 positions
// 256 apart. Each block first finds the pairs meeting on its chunk, a few dependent loads: on an
// H100, blocks of 256 threads made small whole products (n = 1000-5000) 10-30 % faster than blocks
// of 64 (the portable kernel's teams), since there are a quarter as many searches.
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
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw nearsparse::runtime_error(nearsparse::detail::concat(
        "nearsparse::diagonal::multiply (CUDA): the product kernel's launch failed: ",
        cudaGetErrorString(status)));
}

template <class Scalar>
void dispatch(const Kokkos::Cuda& exec, const cuda_hm_whole_args<Scalar>& args) {
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
  dispatch(exec, args);
}

void cuda_hm_whole(const Kokkos::Cuda& exec, const cuda_hm_whole_args<float>& args) {
  dispatch(exec, args);
}

}  // namespace nearsparse::diagonal::detail
