// Symbolic phase of the HM product (see detail/hm_symbolic.hpp), on the host: O(dgA * dgB) work
// on the diagonal lists, nothing proportional to the matrix.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <algorithm>
#include <cstdint>

namespace nearsparse::diagonal::detail {

namespace {
/// Working arrays of the symbolic phase, kept per thread from call to call. Fresh ones can cost
/// more than the counting itself: freeing a few hundred kilobytes may return the pages to the
/// system, and touching new ones faults each page in (perf/RESULTS.md, diag/structured).
struct symbolic_scratch {
  std::vector<int> per_c;              // pairs per offset of C's range
  std::vector<std::uint64_t> present;  // a bit per offset of C's range
  std::vector<int> b_logical;          // B's logical offsets, ascending
  std::vector<index_type> b_start;     // and their starts
};
symbolic_scratch& scratch() {
  thread_local symbolic_scratch s;
  return s;
}

int op_rows(const hm_operand_structure& s) {
  return s.operation == op::none ? s.rows : s.cols;
}
int op_cols(const hm_operand_structure& s) {
  return s.operation == op::none ? s.cols : s.rows;
}
int logical_offset(const hm_operand_structure& s, std::size_t t) {
  return s.operation == op::none ? (*s.offsets)[t] : -(*s.offsets)[t];
}

/// Calls f(c, pair, length) for every pair of stored diagonals that meets inside C, with A's
/// diagonals in ascending logical offset (the device pass's order); pair.c_start is left 0.
/// For each diagonal of A only B's diagonals that put c inside C are visited (two binary
/// searches): with scattered diagonals many pairs fall outside C.
template <class F>
void for_each_pair(const hm_symbolic_product& s, F&& f) {
  const int m = s.rows, k = s.inner, n = s.cols;
  const std::size_t na = s.a.offsets->size(), nb = s.b.offsets->size();
  auto& b_logical = scratch().b_logical;  // ascending
  auto& b_start = scratch().b_start;
  b_logical.resize(nb);
  b_start.resize(nb);
  for (std::size_t j = 0; j < nb; ++j) {
    const std::size_t tb = s.b.operation == op::none ? j : nb - 1 - j;
    b_logical[j] = logical_offset(s.b, tb);
    b_start[j] = (*s.b.starts)[tb];
  }
  for (std::size_t ia = 0; ia < na; ++ia) {
    const std::size_t ta = s.a.operation == op::none ? ia : na - 1 - ia;
    const int da = logical_offset(s.a, ta);
    const index_type a_start = (*s.a.starts)[ta];
    // c = da + db in (-m, n)
    const auto first = std::lower_bound(b_logical.begin(), b_logical.end(), 1 - m - da);
    const auto last = std::upper_bound(first, b_logical.end(), n - 1 - da);
    for (auto it = first; it != last; ++it) {
      const std::size_t j = std::size_t(it - b_logical.begin());
      hm_pair p;
      if (hm_make_pair(m, k, n, da, a_start, *it, b_start[j], p))
        f(da + *it, p, index_type(p.qhi - p.qlo));
    }
  }
}

/// Sum and count of the positive values of g(x) = c0 + s x over the integers x in [x0, x1],
/// for a slope s of -1, 0 or +1.
struct positive_part {
  index_type sum = 0, count = 0;
};
positive_part positive_over(index_type x0, index_type x1, index_type c0, int s) {
  positive_part out;
  if (s > 0) x0 = std::max(x0, 1 - c0);  // c0 + x > 0
  if (s < 0) x1 = std::min(x1, c0 - 1);  // c0 - x > 0
  if (x1 < x0 || (s == 0 && c0 <= 0)) return out;
  out.count = x1 - x0 + 1;
  // c0 * count + s * (x0 + ... + x1), the integers' sum halved exactly.
  out.sum = c0 * out.count + s * ((x0 + x1) * out.count / 2);
  return out;
}

/// The pairs meeting on diagonal c of C when op(A) and op(B) store every diagonal of their
/// ranges: how many, and their multiply-adds, in O(1) instead of one visit per pair.
///
/// Pair (da, c - da) adds L(da) = min(alpha - da, len) - max(beta - da, 0) terms when positive
/// (hm_make_pair, with alpha = k - shift, beta = -shift, len = C's diagonal length): a concave
/// function, linear between its two breaks at da = alpha - len and da = beta.
positive_part pairs_on(int m, int k, int n, int c, int da_lo, int da_hi) {
  positive_part total;
  if (da_hi < da_lo) return total;
  const index_type len = diagonal_length(m, n, c);
  const index_type shift = c < 0 ? -c : 0;
  const index_type alpha = k - shift, beta = -shift;
  const index_type p1 = alpha - len, p2 = beta;  // where each piece changes
  index_type cuts[4] = {da_lo, std::min(p1, p2), std::max(p1, p2), index_type(da_hi) + 1};
  for (int piece = 0; piece < 3; ++piece) {
    const index_type x0 = std::max(cuts[piece], index_type(da_lo));
    const index_type x1 = std::min(cuts[piece + 1], index_type(da_hi) + 1) - 1;
    if (x1 < x0) continue;
    // Within the piece both branches are fixed; x0 tells which.
    const bool before_p1 = x0 < p1, before_p2 = x0 < p2;
    const index_type c0 = (before_p1 ? len : alpha) - (before_p2 ? beta : 0);
    const int slope = (before_p1 ? 0 : -1) + (before_p2 ? 1 : 0);
    const positive_part part = positive_over(x0, x1, c0, slope);
    total.sum += part.sum;
    total.count += part.count;
  }
  return total;
}

}  // namespace

hm_symbolic_product hm_symbolic_frame(const char* function, const hm_operand_structure& a,
                                      const hm_operand_structure& b) {
  hm_symbolic_product out;
  out.rows = op_rows(a);
  out.inner = op_cols(a);
  out.cols = op_cols(b);
  if (op_rows(b) != out.inner)
    nearsparse::detail::throw_invalid_argument(
        function, "A/B",
        nearsparse::detail::concat("do not conform: op(A) is ", out.rows, " x ", out.inner, " (op ",
                                   to_string(a.operation), "), op(B) is ", op_rows(b), " x ",
                                   out.cols, " (op ", to_string(b.operation), ")"));
  out.a = a;
  out.b = b;
  const int m = out.rows, n = out.cols;

  // The offsets C can have: sums of the extreme offsets, clipped to C. Counting over this range
  // instead of all m + n - 1 offsets keeps a narrow band's symbolic phase independent of n.
  const hm_band_range ra = hm_band_range_of(*a.offsets, a.operation == op::transpose);
  const hm_band_range rb = hm_band_range_of(*b.offsets, b.operation == op::transpose);
  int c_hi = -1;  // with c_lo = 0: no offset
  if (ra.count > 0 && rb.count > 0) {
    out.c_lo = std::max(ra.lo + rb.lo, 1 - m);
    c_hi = std::min(ra.hi + rb.hi, n - 1);
  }
  out.c_range = std::max(c_hi - out.c_lo + 1, 0);
  out.c_starts.assign(1, 0);
  out.pair_ptr.assign(1, 0);
  out.chunk_ptr.assign(1, 0);
  return out;
}

hm_symbolic_product hm_symbolic(const char* function, const hm_operand_structure& a,
                                const hm_operand_structure& b, bool pairwise) {
  hm_symbolic_product out = hm_symbolic_frame(function, a, b);
  const int m = out.rows, n = out.cols;
  const hm_band_range ra = hm_band_range_of(*a.offsets, a.operation == op::transpose);
  const hm_band_range rb = hm_band_range_of(*b.offsets, b.operation == op::transpose);

  // Pass 1: how many pairs meet on each C diagonal, and a bit per offset C has.
  const std::size_t range = std::size_t(out.c_range);
  auto& per_c = scratch().per_c;
  auto& present = scratch().present;
  per_c.assign(range, 0);
  present.assign((range + 63) / 64, 0);
  index_type multiply_adds = 0;  // an integer sum: no chain of floating-point adds
  if (pairwise || !ra.whole() || !rb.whole()) {
    for_each_pair(out, [&](int c, const hm_pair&, index_type len) {
      const std::size_t at = std::size_t(c - out.c_lo);
      ++per_c[at];
      present[at / 64] |= std::uint64_t(1) << (at % 64);
      multiply_adds += len;
    });
  } else {
    // Two bands: each diagonal of C in closed form (at half-bands of 100, 401 diagonals where
    // the pairwise pass visits 40401 pairs).
    for (std::size_t at = 0; at < range; ++at) {
      const int c = out.c_lo + int(at);
      const positive_part p =
          pairs_on(m, out.inner, n, c, std::max(ra.lo, c - rb.hi), std::min(ra.hi, c - rb.lo));
      if (p.count == 0) continue;
      per_c[at] = int(p.count);
      present[at / 64] |= std::uint64_t(1) << (at % 64);
      multiply_adds += p.sum;
    }
  }
  out.multiply_adds = double(multiply_adds);

  // Pass 2: C's diagonals and where each starts. Walking the set bits, not every offset in the
  // range, spares a branch per offset that mispredicts as often as scattered diagonals make it
  // (a quarter of the symbolic phase at n = 5000, 59 x 35).
  std::size_t nc = 0;
  for (const std::uint64_t word : present) nc += std::size_t(__builtin_popcountll(word));
  out.c_offsets.reserve(nc);
  out.c_starts.reserve(nc + 1);
  out.pair_ptr.reserve(nc + 1);
  out.chunk_ptr.reserve(nc + 1);
  for (std::size_t word = 0; word < present.size(); ++word)
    for (std::uint64_t bits = present[word]; bits != 0; bits &= bits - 1) {
      const std::size_t at = word * 64 + std::size_t(__builtin_ctzll(bits));
      const int c = int(at) + out.c_lo;
      out.c_offsets.push_back(c);
      const index_type len = diagonal_length(m, n, c);
      out.c_starts.push_back(out.c_starts.back() + len);
      out.pair_ptr.push_back(out.pair_ptr.back() + per_c[at]);
      out.chunk_ptr.push_back(out.chunk_ptr.back() + (len + hm_chunk - 1) / hm_chunk);
    }
  return out;
}

index_type* hm_staging_buffer(std::size_t count) {
  thread_local std::vector<index_type> buffer;
  if (buffer.size() < count) buffer.resize(count);
  return buffer.data();
}

void hm_c_index(const hm_symbolic_product& s, int* index) {
  std::fill(index, index + s.c_range, -1);
  for (std::size_t t = 0; t < s.c_offsets.size(); ++t) index[s.c_offsets[t] - s.c_lo] = int(t);
}

void hm_fill_pairs(const hm_symbolic_product& s, const int* c_index, hm_pair* pairs) {
  // A stable counting sort by C diagonal: A's order within each.
  std::vector<index_type> next(s.pair_ptr.begin(), s.pair_ptr.end() - 1);
  for_each_pair(s, [&](int c, const hm_pair& p, index_type) {
    const int ci = c_index[std::size_t(c - s.c_lo)];
    const index_type at = next[std::size_t(ci)]++;
    pairs[at] = p;
    pairs[at].c_start = s.c_starts[std::size_t(ci)];
  });
}

}  // namespace nearsparse::diagonal::detail
