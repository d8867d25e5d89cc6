#pragma once
// Symbolic phase of the HM product C = op(A) op(B): which diagonals C has, and for each of them
// the pairs of diagonals of A and B that meet on it.
//
// Diagonal a of op(A) (M x K) and diagonal b of op(B) (K x N) meet on diagonal c = a + b of C.
// Along c, with m = max(-c, 0), the element at position q is row i = q + m, and the pair adds
//   A.values[a_base + q] * B.values[b_base + q]   for q in [qlo, qhi),
// where a_base = start_a + m + min(a, 0) and b_base = start_b + m + a + min(b, 0): a product of
// two shifted, unit-stride vectors, whichever of A and B is transposed (positions along a
// diagonal do not change under transposition).

#include <nearsparse/diagonal/detail/indexing.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nearsparse::diagonal::detail {

struct hm_pair {
  index_type a_base;
  index_type b_base;
  index_type c_start;  // where C's diagonal starts in C's values
  int qlo;
  int qhi;
};

/// Whether logical diagonal da of op(A) (M x K, its first value at a_start) and db of op(B)
/// (K x N, at b_start) meet inside C; if so fills `p` (c_start left 0). The one definition the
/// host and device passes of the symbolic phase and the atomic kernel share, so they agree on
/// every pair.
KOKKOS_INLINE_FUNCTION bool hm_make_pair(int m, int k, int n, int da, index_type a_start, int db,
                                         index_type b_start, hm_pair& p) {
  const int c = da + db;
  if (c <= -m || c >= n) return false;
  const index_type len = diagonal_length(m, n, c);
  const index_type shift = c < 0 ? -c : 0;
  const index_type lo = -da - shift, hi = k - da - shift;
  const index_type qlo = lo > 0 ? lo : 0;
  const index_type qhi = hi < len ? hi : len;
  if (qhi <= qlo) return false;
  p.a_base = a_start + shift + (da < 0 ? da : 0);
  p.b_base = b_start + shift + da + (db < 0 ? db : 0);
  p.c_start = 0;
  p.qlo = int(qlo);
  p.qhi = int(qhi);
  return true;
}

/// One operand: its stored offsets (ascending) and starts, read as op.
struct hm_operand_structure {
  int rows;  // of the stored matrix
  int cols;
  const std::vector<int>* offsets;
  const std::vector<index_type>* starts;
  op operation;
};

struct hm_symbolic_product {
  int rows = 0;  // of C
  int cols = 0;
  int inner = 0;                      // K
  std::vector<int> c_offsets;         // ascending
  std::vector<index_type> c_starts;   // c_offsets.size() + 1
  std::vector<index_type> pair_ptr;   // pairs of each C diagonal; c_offsets.size() + 1
  std::vector<index_type> chunk_ptr;  // chunks of `chunk` positions per C diagonal
  double multiply_adds = 0;           // sum of qhi - qlo
  hm_operand_structure a{}, b{};      // what it was made from (for the second pass)
  int c_lo = 0;                       // the lowest offset C can have
  int c_range = 0;                    // how many offsets C can have, from c_lo on
};

/// C's index by offset: offset - c_lo -> C diagonal, or -1; c_range entries. Only the plan
/// needs it (the atomic kernel), so the symbolic phase does not make it.
void hm_c_index(const hm_symbolic_product& s, int* index);

/// Positions of C one team or one host task handles in the output-stationary kernel.
inline constexpr int hm_chunk = 256;

/// What the symbolic phase knows before counting: the shapes (throwing
/// nearsparse::invalid_argument naming `function` when the inner extents of op(A) and op(B)
/// differ), the operands, and the range of offsets C can have (c_lo, c_range); C's arrays hold
/// only their leading 0. Both passes, the host's (hm_symbolic) and the device's
/// (detail/hm_device_symbolic.hpp), start from it.
hm_symbolic_product hm_symbolic_frame(const char* function, const hm_operand_structure& a,
                                      const hm_operand_structure& b);

/// The symbolic product's counts and C's structure (first pass: nothing per pair is stored).
/// Throws nearsparse::invalid_argument naming `function` when the inner extents of op(A) and
/// op(B) differ. When both operands store every diagonal of their ranges (bands), each diagonal
/// of C is counted in closed form, in time proportional to C's diagonals; otherwise, or with
/// `pairwise` (tests compare the two), every pair of diagonals is visited.
hm_symbolic_product hm_symbolic(const char* function, const hm_operand_structure& a,
                                const hm_operand_structure& b, bool pairwise = false);

/// Second pass, on the host: writes the pairs, grouped by C diagonal and in ascending logical
/// offset of op(A) within each, to `pairs` (pair_ptr.back() of them), straight into the caller's
/// buffer, finding each pair's diagonal through `c_index` (from hm_c_index, which the plan keeps
/// anyway). Device memory gets them from hm_fill_pairs_device (detail/hm_device_pairs.hpp)
/// instead, in the same order.
void hm_fill_pairs(const hm_symbolic_product& s, const int* c_index, hm_pair* pairs);

/// A host buffer of at least `count` values, kept per thread from call to call (a plan stages
/// its device arrays there). Valid until the calling thread asks again.
index_type* hm_staging_buffer(std::size_t count);

}  // namespace nearsparse::diagonal::detail
