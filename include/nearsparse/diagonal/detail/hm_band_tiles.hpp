#pragma once
// HM products in dense tiles over the band (the CUDA kernel is
// src/diagonal/cuda_hm_band_tiles.cpp).
//
// The output-stationary kernel reads two n-long vectors for every pair of diagonals of A and B,
// (2w + 1)^2 of them for two bands of half-band w, and nothing keeps them between the blocks that
// share a segment of A: it is bound by L2 bandwidth at two loads per multiply-add. When the
// operands fill most of their diagonal range (bands), the product is an ordinary dense one
// restricted to a band, and dense tiles do it the way a GEMM does: a block computes a 64 x 64 tile
// of C, staging 16-wide slices of A and B (zeros where no diagonal is stored) in a ring of four
// shared-memory stages that asynchronous copies (cp.async) fill three slices ahead, so that the
// loads' latency hides behind the sums and the staged values never pass through registers.
// In double on compute capability 9.0 the fp64 tensor cores (mma.sync m16n8k16) sum the slices;
// otherwise each thread sums a 4 x 4 block of C in registers, about 8 multiply-adds per value
// read from shared memory. The tiles compute zeros at the band's edges; hm_band_tiles_pay
// counts that waste and takes the tiles only where they still pay.
//
// The terms of each element of C are those of the output-stationary kernel, plus exact zeros;
// the FMA form adds them in the same order (ascending inner index), the tensor cores in their
// own order within each slice.

#include <nearsparse/diagonal/detail/indexing.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace nearsparse::diagonal::detail {

/// Tile shape of the band kernel: C in hm_band_tile x hm_band_tile tiles, the inner index in
/// slices of hm_band_slice.
inline constexpr int hm_band_tile = 64;
inline constexpr int hm_band_slice = 16;
/// Most offsets the three diagonal ranges (of op(A), op(B) and C) may span together: a block
/// keeps an 8-byte entry per offset (and 320 of padding) in shared memory beside its 72 KB of
/// stages, and two blocks share an SM.
inline constexpr int hm_band_max_range = 4096;

/// The lowest and highest logical offset of op(X) and how many diagonals it stores.
struct hm_band_range {
  int lo = 0, hi = -1, count = 0;
  KOKKOS_INLINE_FUNCTION int span() const { return hi - lo + 1; }
  /// Whether every diagonal of the range is stored (a band).
  KOKKOS_INLINE_FUNCTION bool whole() const { return count > 0 && count == span(); }
};

/// The logical range of op(X) from its stored offsets (ascending).
hm_band_range hm_band_range_of(const std::vector<int>& stored_offsets, bool transposed);

/// Multiply-adds the band tiles do for an m x k times k x n product with these ranges, the zeros
/// at the band's edges included.
double hm_band_tile_work(int m, int k, int n, const hm_band_range& a, const hm_band_range& b,
                         const hm_band_range& c);

/// Whether the band kernel can run a product with these ranges: each holds a diagonal, and the
/// three span at most hm_band_max_range offsets together.
bool hm_band_tiles_fit(const hm_band_range& a, const hm_band_range& b, const hm_band_range& c);

/// Whether the band tiles pay for a product of `multiply_adds` multiply-adds: the ranges fit,
/// the operands fill at least half of their ranges, the product is large enough for the tiles'
/// fixed cost (hm_band_min_multiply_adds: below it a call is mostly its launch), and the tiles do
/// at most hm_band_max_waste times the multiply-adds the output-stationary kernel does. The tiles
/// do many times the output-stationary kernel's multiply-adds per second, so some waste still
/// pays; where the two limits sit is measured in perf/RESULTS.md (diag/banded).
inline constexpr double hm_band_max_waste = 12;
inline constexpr double hm_band_min_multiply_adds = 1 << 19;
bool hm_band_tiles_pay(int m, int k, int n, const hm_band_range& a, const hm_band_range& b,
                       const hm_band_range& c, double multiply_adds);

/// One operand of the band kernel on the device: its stored offsets (ascending) and starts, read
/// as op(X) with logical range `range`.
struct hm_band_operand {
  const int* offsets = nullptr;
  const index_type* starts = nullptr;
  bool transposed = false;
  hm_band_range range;
};

template <class Scalar>
struct cuda_hm_band_args {
  int m = 0, k = 0, n = 0;  // op(A) is m x k, op(B) k x n
  hm_band_operand a, b, c;  // C is never transposed
  const Scalar* a_values = nullptr;
  const Scalar* b_values = nullptr;
  Scalar* c_values = nullptr;
  Scalar alpha = 1, beta = 0;  // C = alpha op(A) op(B) + beta C; beta = 0 does not read C
  bool tensor_cores = true;    // false: the FMA form even where the tensor cores run
  // For a C that stores every diagonal of its range (c.offsets and c.starts are then not read):
  // where the kernel writes C's device offsets and starts, so a whole product copies nothing.
  int* c_offsets_out = nullptr;
  index_type* c_starts_out = nullptr;
};

#ifdef KOKKOS_ENABLE_CUDA
/// Queues C = alpha op(A) op(B) + beta C on exec's stream. Requires the three ranges to span at
/// most hm_band_max_range offsets together and C to hold every diagonal the product reaches (as
/// the symbolic phase makes it).
void cuda_hm_band_tiles(const Kokkos::Cuda& exec, const cuda_hm_band_args<double>& args);
void cuda_hm_band_tiles(const Kokkos::Cuda& exec, const cuda_hm_band_args<float>& args);
#endif

}  // namespace nearsparse::diagonal::detail
