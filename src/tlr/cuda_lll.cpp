// GEMM-LLL (products into a TLR C) on Kokkos::Cuda: the scheme of the host path (host_lll.cpp),
// batched over C tiles. Each C tile's products are summed once into a dense tile and the tile is
// recompressed once, rather than after every product as the portable kernels do:
//   - a dense C tile gets beta C + alpha sum_p A_a B_b in place, as in GEMM-LLD;
//   - a low-rank C tile's sum T = beta U_c V_c^T + alpha sum_p A_a B_b is formed in a packed
//     buffer (tile g of a batch at packed + g nb^2, leading dimension nb, zero beyond the tile's
//     extents), then the batch is recompressed by the shared batched randomized SVD
//     (cuda_tile_compression.hpp) to trunc relative to each tile's norm, with ell = C's max_rank +
//     10 samples and one power iteration (the host path's seed and oversampling; the host path
//     also factors narrow sums exactly and samples adaptively, this one always takes ell), and
//     what was dropped is added to the report's per-tile totals;
//   - a C tile whose products are all of width zero (or alpha == 0) is only scaled, C = beta C:
//     V *= beta for a low-rank tile (its rank kept; beta == 0 empties it).
// The sums are cublas_lld's launches (cuda_products.hpp): per product a left block
// (U_a (V_a^T U_b), D_a U_b or U_a) and a right block (V_b or D_b^T V_a), then one batched GEMM
// per tile-extent class applies all of a tile's products at once; a low-rank tile's own term is
// one more batched GEMM that writes the packed tile first.
//
// The host reads the dense-slot maps of A, B and C and the ranks of A and B once (one wait for the
// stream) to plan the batches: the pointer arrays are plain arithmetic on the host, as in GEMM-LLD.
// Batches of C tiles fit job.workspace_bytes (packed tiles, the SVD's workspace and the product
// blocks), at least one tile each, and queue without host synchronization.

#include "cuda_products.hpp"
#include "cuda_tile_compression.hpp"

#include "../core/cuda/check.hpp"

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/tlr/detail/lld_dispatch.hpp>
#include <nearsparse/tlr/detail/lll_dispatch.hpp>

#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <type_traits>
#include <vector>

namespace nearsparse::tlr::detail {

namespace {

namespace cuda = nearsparse::detail::cuda;

// lll_job carries no entry point's name; both entry points with a TLR C come here.
constexpr const char* fn = "nearsparse::tlr::gemm";

// The call's device memory, one stream-ordered allocation released in stream order when the call
// returns (the queued work that reads it runs first): nothing stays allocated between calls.
struct stream_block {
  void* ptr = nullptr;
  cudaStream_t stream = nullptr;
  stream_block(cudaStream_t s, std::size_t bytes) : stream(s) {
    cuda::check_allocation(cudaMallocAsync(&ptr, bytes, stream), fn, "recompression workspace",
                           bytes);
  }
  stream_block(const stream_block&) = delete;
  stream_block& operator=(const stream_block&) = delete;
  ~stream_block() { cudaFreeAsync(ptr, stream); }
};

/// Tiles of a TLR matrix.
std::size_t tile_count(const tile_access& m) {
  if (m.nb <= 0) return 0;
  return std::size_t(m.tile_rows) * std::size_t((m.cols + m.nb - 1) / m.nb);
}

/// Copies n ints from the device to the host (queued on the stream; the caller waits).
std::vector<int> to_host(const int* device, std::size_t n, cudaStream_t stream) {
  std::vector<int> host(n);
  if (n > 0)
    cuda::check(
        cudaMemcpyAsync(host.data(), device, n * sizeof(int), cudaMemcpyDeviceToHost, stream), fn,
        "cudaMemcpyAsync");
  return host;
}

/// C = beta C for the C tiles listed (beta != 1): a dense tile over its extents (beta == 0 writes
/// zeros without reading), a low-rank tile's V (beta == 0 zeroes U and V and sets the rank to 0).
/// Index e runs over nb x nb elements per tile.
struct scale_tiles {
  tile_access c;
  const int* tiles;
  double beta;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t e) const {
    const int nb = c.nb;
    const std::size_t area = std::size_t(nb) * nb;
    const int t = tiles[e / area];
    const std::size_t at = e % area;
    const int row = static_cast<int>(at % nb), col = static_cast<int>(at / nb);
    if (c.slot(t) >= 0) {
      if (row >= c.row_extent(t) || col >= c.col_extent(t)) return;
      double* d = c.dense_of(t) + at;
      *d = beta == 0 ? 0.0 : beta * *d;
      return;
    }
    if (beta == 0 && at == 0) c.ranks[t] = 0;
    if (col >= c.kmax) return;
    if (beta == 0) {
      c.u_of(t)[at] = 0.0;
      c.v_of(t)[at] = 0.0;
    } else {
      c.v_of(t)[at] *= beta;
    }
  }
};

/// The report's per-tile totals after the recompression of the tiles listed: the squared error,
/// and (accuracy truncation) whether the rank reached its cap, min(kmax, extents), with the error
/// still above the tile's tolerance, as the host path counts them.
struct tally {
  tile_access c;
  const int* tiles;
  const double* errors;
  const double* tolerances;
  double* dropped2;
  int* at_cap;
  bool accuracy;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const int t = tiles[i];
    const double e = errors[t];
    dropped2[t] += e * e;
    if (!accuracy) return;
    int cap = c.kmax;
    if (c.row_extent(t) < cap) cap = c.row_extent(t);
    if (c.col_extent(t) < cap) cap = c.col_extent(t);
    if (c.ranks[t] == cap && e > tolerances[t]) at_cap[t] += 1;
  }
};

/// Offset of the next region of a block, rounded up to 256 bytes.
std::size_t region(std::size_t& used, std::size_t bytes) {
  const std::size_t at = used;
  used += (bytes + 255) / 256 * 256;
  return at;
}

void cuda_lll(const Kokkos::Cuda& exec, const lll_job<Kokkos::CudaSpace>& job) {
  const product_pairs<Kokkos::CudaSpace>& pairs = job.pairs;
  const int groups = pairs.groups();
  if (groups == 0) return;
  const tile_access &A = job.a, &B = job.b, &C = job.c;
  const int nb = C.nb;
  const double alpha = job.alpha, beta = job.beta;
  cudaStream_t stream = exec.cuda_stream();

  // The host's view of the operands: dense slots and ranks of A and B, dense slots of C, and the
  // explicit product lists, after the work queued before this call.
  const std::vector<int> a_slots = to_host(A.slots, tile_count(A), stream);
  const std::vector<int> a_ranks = to_host(A.ranks, tile_count(A), stream);
  const std::vector<int> b_slots = to_host(B.slots, tile_count(B), stream);
  const std::vector<int> b_ranks = to_host(B.ranks, tile_count(B), stream);
  const std::vector<int> c_slots = to_host(C.slots, tile_count(C), stream);
  std::vector<int> group_c, pair_ptr, pair_a, pair_b;
  if (!pairs.outer) {
    group_c = to_host(pairs.group_c.data(), pairs.group_c.extent(0), stream);
    pair_ptr = to_host(pairs.pair_ptr.data(), pairs.pair_ptr.extent(0), stream);
    pair_a = to_host(pairs.pair_a.data(), pairs.pair_a.extent(0), stream);
    pair_b = to_host(pairs.pair_b.data(), pairs.pair_b.extent(0), stream);
  }
  cuda::check(cudaStreamSynchronize(stream), fn, "cudaStreamSynchronize");
  // product_pairs' accessors, on the host copies.
  auto c_tile = [&](int g) { return pairs.outer ? g : group_c[g]; };
  auto pair_count = [&](int g) {
    return pairs.outer ? pairs.k_end - pairs.k_begin : pair_ptr[g + 1] - pair_ptr[g];
  };
  auto a_tile = [&](int g, int p) {
    return pairs.outer ? g % pairs.mt_c + (pairs.k_begin + p) * pairs.mt_a
                       : pair_a[pair_ptr[g] + p];
  };
  auto b_tile = [&](int g, int p) {
    return pairs.outer ? (pairs.k_begin + p) + (g / pairs.mt_c) * pairs.mt_b
                       : pair_b[pair_ptr[g] + p];
  };
  // Columns a product's low-rank term takes (0: a zero product, skipped), -1 for two dense tiles
  // (host::product_width).
  auto width = [&](int a, int b) {
    const bool ad = a_slots[a] >= 0, bd = b_slots[b] >= 0;
    if (ad && bd) return -1;
    if (ad) return b_ranks[b];
    if (bd) return a_ranks[a];
    return a_ranks[a] == 0 || b_ranks[b] == 0 ? 0 : std::min(a_ranks[a], b_ranks[b]);
  };

  // Split the groups: tiles that are only scaled (no nonzero product, or alpha == 0; nothing to
  // do when beta == 1), and tiles that get products, with their nonzero products.
  std::vector<int> scaled;
  std::vector<int> act_c, act_ptr{0}, act_a, act_b;
  std::vector<char> act_low;
  int most = 0;
  for (int g = 0; g < groups; ++g) {
    const int ct = c_tile(g), count = pair_count(g);
    const std::size_t before = act_a.size();
    for (int p = 0; p < count && alpha != 0; ++p) {
      const int a = a_tile(g, p), b = b_tile(g, p);
      if (width(a, b) == 0) continue;
      act_a.push_back(a);
      act_b.push_back(b);
    }
    const int live = static_cast<int>(act_a.size() - before);
    if (live == 0) {
      if (beta != 1) scaled.push_back(ct);
      continue;
    }
    act_c.push_back(ct);
    act_ptr.push_back(static_cast<int>(act_a.size()));
    act_low.push_back(c_slots[ct] < 0 ? 1 : 0);
    most = std::max(most, live);
  }
  const int active = static_cast<int>(act_c.size());

  // Batches of active groups within the budget: a low-rank tile takes its packed tile and the
  // SVD's workspace, every tile the product blocks of `per` products (the products of a tile are
  // applied `per` at a time, as many as fit beside one packed tile).
  lld_operands ops;
  ops.a = A;
  ops.b = B;
  ops.a_slots = &a_slots;
  ops.b_slots = &b_slots;
  ops.c = nullptr;  // every launch names its targets
  ops.ldc = nb;
  ops.c_rows = C.rows;
  ops.c_cols = C.cols;
  ops.c_tile_rows = C.tile_rows;
  ops.c_tiles = static_cast<int>(tile_count(C));
  const int ell = std::min(nb, C.kmax + recompression_oversampling);
  const std::size_t tile = std::size_t(nb) * nb;
  const std::size_t low_doubles = tile + cuda_tiles::workspace_doubles_per_tile(nb, ell);
  const std::size_t product_doubles = cublas_work_doubles(ops, 1, 1);
  const std::size_t budget = job.workspace_bytes / sizeof(double);
  int per = std::max(most, 1);
  if (product_doubles > 0) {
    const std::size_t fit = (budget > low_doubles ? budget - low_doubles : 0) / product_doubles;
    per = static_cast<int>(std::clamp<std::size_t>(fit, 1, std::size_t(per)));
  }
  std::vector<int> batch_begin{0}, low_begin{0};  // per batch: active groups, low-rank tiles
  std::vector<int> low_tiles;                     // the low-rank active tiles, batch after batch
  int most_low = 0;
  {
    std::size_t used = 0;
    int low = 0;
    for (int i = 0; i < active; ++i) {
      const int count = act_ptr[i + 1] - act_ptr[i];
      const std::size_t cost =
          (act_low[i] ? low_doubles : 0) + std::size_t(std::min(count, per)) * product_doubles;
      if (i > batch_begin.back() && used + cost > budget) {
        batch_begin.push_back(i);
        low_begin.push_back(static_cast<int>(low_tiles.size()));
        most_low = std::max(most_low, low);
        used = 0;
        low = 0;
      }
      used += cost;
      if (act_low[i]) {
        low_tiles.push_back(act_c[i]);
        ++low;
      }
    }
    most_low = std::max(most_low, low);
    batch_begin.push_back(active);
    low_begin.push_back(static_cast<int>(low_tiles.size()));
  }
  const int batches = static_cast<int>(batch_begin.size()) - 1;

  // One block: the tile lists (scaled tiles, then the low-rank tiles batch after batch), the
  // errors and tolerances by C tile number, the packed tiles and the SVD's workspace of a batch.
  const std::size_t ids = scaled.size() + low_tiles.size();
  const std::size_t c_tiles = low_tiles.empty() ? 0 : tile_count(C);
  std::size_t used = 0;
  const std::size_t ids_at = region(used, ids * sizeof(int));
  const std::size_t errors_at = region(used, c_tiles * sizeof(double));
  const std::size_t tolerances_at = region(used, c_tiles * sizeof(double));
  const std::size_t packed_at = region(used, std::size_t(most_low) * tile * sizeof(double));
  const std::size_t work_at =
      region(used, std::size_t(most_low) * cuda_tiles::workspace_doubles_per_tile(nb, ell) *
                       sizeof(double));
  const stream_block block(stream, std::max<std::size_t>(used, 256));
  auto* base = static_cast<char*>(block.ptr);
  auto* d_ids = reinterpret_cast<int*>(base + ids_at);
  auto* errors = reinterpret_cast<double*>(base + errors_at);
  auto* tolerances = reinterpret_cast<double*>(base + tolerances_at);
  auto* packed = reinterpret_cast<double*>(base + packed_at);
  auto* work = reinterpret_cast<double*>(base + work_at);
  if (ids > 0) {
    // Pageable host memory: the copy has read it when it returns.
    std::vector<int> staged(scaled);
    staged.insert(staged.end(), low_tiles.begin(), low_tiles.end());
    cuda::check(
        cudaMemcpyAsync(d_ids, staged.data(), ids * sizeof(int), cudaMemcpyHostToDevice, stream),
        fn, "cudaMemcpyAsync");
  }
  const int* d_scaled = d_ids;
  const int* d_low = d_ids + scaled.size();

  if (!scaled.empty())
    Kokkos::parallel_for("nearsparse::tlr::gemm_lll::scale",
                         Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::size_t>>(
                             exec, 0, scaled.size() * tile),
                         scale_tiles{C, d_scaled, beta});

  // A low-rank tile's own term seeds its packed tile (beta U_c V_c^T, the whole nb x nb tile);
  // without one (beta == 0, where C's factors are not read, or max_rank 0) the packed tiles are
  // zeroed.
  const bool seed = beta != 0 && C.kmax > 0;
  for (int bi = 0; bi < batches; ++bi) {
    const int low0 = low_begin[bi], lows = low_begin[bi + 1] - low0;
    if (lows > 0 && !seed)
      cuda::check(cudaMemsetAsync(packed, 0, std::size_t(lows) * tile * sizeof(double), stream), fn,
                  "cudaMemsetAsync");
    // Launches by (chunk of `per` products, products in the chunk, low-rank targets): a launch
    // needs the same number of products in every group, and a tile's chunks apply in order.
    std::map<std::tuple<int, int, bool>, cublas_launch> launches;
    int li = 0;  // low-rank tile of the batch
    for (int i = batch_begin[bi]; i < batch_begin[bi + 1]; ++i) {
      const int ct = act_c[i], count = act_ptr[i + 1] - act_ptr[i];
      const bool low = act_low[i] != 0;
      double* target =
          low ? packed + std::size_t(li++) * tile : C.dense + std::size_t(c_slots[ct]) * tile;
      for (int p0 = 0, chunk = 0; p0 < count; p0 += per, ++chunk) {
        const int len = std::min(per, count - p0);
        cublas_launch& l = launches[std::make_tuple(chunk, len, low)];
        l.pairs_per_group = len;
        // Dense tiles scale by beta in their first chunk; packed tiles hold beta C already.
        l.beta = low || chunk > 0 ? 1.0 : beta;
        l.c_tile.push_back(ct);
        l.target.push_back(target);
        for (int p = p0; p < p0 + len; ++p) {
          l.a_tile.push_back(act_a[act_ptr[i] + p]);
          l.b_tile.push_back(act_b[act_ptr[i] + p]);
        }
        if (low && chunk == 0 && seed) {
          l.seed_u.push_back(C.u_of(ct));
          l.seed_v.push_back(C.v_of(ct));
          l.seed_k = C.kmax;
          l.seed_scale = beta;
        }
      }
    }
    std::vector<cublas_launch> ordered;  // the map's order: chunk 0 first
    ordered.reserve(launches.size());
    for (auto& entry : launches) ordered.push_back(std::move(entry.second));
    if (!ordered.empty()) cublas_lld(exec, fn, alpha, ops, ordered);
    if (lows == 0) continue;

    cuda_tiles::packed_tiles in;
    in.packed = packed;
    in.count = lows;
    in.nb = nb;
    in.tiles = d_low + low0;
    in.tile_rows = C.tile_rows;
    in.rows = C.rows;
    in.cols = C.cols;
    cuda_tiles::tile_factors out;
    out.u = C.u;
    out.v = C.v;
    out.kmax = C.kmax;
    out.ranks = C.ranks;
    out.errors = errors;
    out.tolerances = tolerances;
    cuda_tiles::sampling_rule rule;
    rule.fixed_rank = job.trunc.fixed_rank;
    rule.tolerance = job.trunc.fixed_rank >= 0 ? 0.0 : -job.trunc.accuracy;
    rule.ell = ell;
    rule.power_iterations = recompression_power_iterations;
    rule.seed = recompression_seed;
    cuda_tiles::compress_packed(exec, fn, in, out, rule, work);
  }

  if (!low_tiles.empty())
    Kokkos::parallel_for(
        "nearsparse::tlr::gemm_lll::tally",
        Kokkos::RangePolicy<Kokkos::Cuda>(exec, 0, static_cast<int>(low_tiles.size())),
        tally{C, d_low, errors, tolerances, job.dropped2, job.at_cap, job.trunc.fixed_rank < 0});
}

}  // namespace

bool take_specialized_lll(const Kokkos::Cuda& exec, const char* function,
                          const gemm_options& options) {
  constexpr bool device_memory = std::is_same<Kokkos::Cuda::memory_space, Kokkos::CudaSpace>::value;
  return nearsparse::detail::take_specialized(
      function, options.implementation, device_memory, exec.name(),
      "cuBLAS needs Kokkos::Cuda's memory space to be CudaSpace");
}

void specialized_lll(const Kokkos::Cuda& exec, const lll_job<Kokkos::CudaSpace>& job) {
  cuda_lll(exec, job);
}

}  // namespace nearsparse::tlr::detail
