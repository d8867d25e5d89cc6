// Symbolic phase of the HM product (see detail/hm_symbolic.hpp), on the host: O(dgA * dgB) work
// on the diagonal lists, nothing proportional to the matrix.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <algorithm>

namespace nearsparse::diagonal::detail {

namespace {
int op_rows(const hm_operand_structure& s) {
  return s.operation == op::none ? s.rows : s.cols;
}
int op_cols(const hm_operand_structure& s) {
  return s.operation == op::none ? s.cols : s.rows;
}
int logical_offset(const hm_operand_structure& s, std::size_t t) {
  return s.operation == op::none ? (*s.offsets)[t] : -(*s.offsets)[t];
}

/// Calls f(ta, tb, c, pair, length) for every pair of stored diagonals that meets inside C, in
/// A-major order; pair.c_start is left 0.
template <class F>
void for_each_pair(const hm_symbolic_product& s, F&& f) {
  const int m = s.rows, k = s.inner, n = s.cols;
  const std::size_t na = s.a.offsets->size(), nb = s.b.offsets->size();
  for (std::size_t ta = 0; ta < na; ++ta) {
    const int da = logical_offset(s.a, ta);
    const index_type a_start = (*s.a.starts)[ta];
    for (std::size_t tb = 0; tb < nb; ++tb) {
      const int db = logical_offset(s.b, tb);
      const int c = da + db;
      if (c <= -m || c >= n) continue;
      const index_type len = diagonal_length(m, n, c);
      const index_type shift = c < 0 ? -c : 0;
      const index_type qlo = std::max<index_type>(0, -da - shift);
      const index_type qhi = std::min<index_type>(len, k - da - shift);
      if (qhi <= qlo) continue;
      hm_pair p;
      p.a_base = a_start + shift + std::min(da, 0);
      p.b_base = (*s.b.starts)[tb] + shift + da + std::min(db, 0);
      p.c_start = 0;
      p.qlo = int(qlo);
      p.qhi = int(qhi);
      f(ta, tb, c, p, qhi - qlo);
    }
  }
}
}  // namespace

hm_symbolic_product hm_symbolic(const char* function, const hm_operand_structure& a,
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
  const std::size_t na = a.offsets->size();

  // Pass 1: how many pairs meet on each C diagonal, and on each diagonal of A.
  std::vector<index_type> per_c(std::size_t(m + n > 0 ? m + n - 1 : 0), 0);
  out.a_ptr.assign(na + 1, 0);
  for_each_pair(out, [&](std::size_t ta, std::size_t, int c, const hm_pair&, index_type len) {
    ++per_c[std::size_t(c + m - 1)];
    ++out.a_ptr[ta + 1];
    out.multiply_adds += double(len);
  });
  for (std::size_t ta = 0; ta < na; ++ta) out.a_ptr[ta + 1] += out.a_ptr[ta];

  // C's diagonals and where each starts.
  out.c_index.assign(per_c.size(), -1);
  out.c_starts.push_back(0);
  out.pair_ptr.push_back(0);
  out.chunk_ptr.push_back(0);
  for (std::size_t s = 0; s < per_c.size(); ++s) {
    if (per_c[s] == 0) continue;
    const int c = int(s) - (m - 1);
    out.c_index[s] = int(out.c_offsets.size());
    out.c_offsets.push_back(c);
    const index_type len = diagonal_length(m, n, c);
    out.c_starts.push_back(out.c_starts.back() + len);
    out.pair_ptr.push_back(out.pair_ptr.back() + per_c[s]);
    out.chunk_ptr.push_back(out.chunk_ptr.back() + (len + hm_chunk - 1) / hm_chunk);
  }
  return out;
}

void hm_fill_pairs(const hm_symbolic_product& s, hm_pair* pairs, index_type* a_order) {
  // A stable counting sort by C diagonal: A-major order within each.
  std::vector<index_type> next(s.pair_ptr.begin(), s.pair_ptr.end() - 1);
  index_type f = 0;
  for_each_pair(s, [&](std::size_t, std::size_t, int c, const hm_pair& p, index_type) {
    const int ci = s.c_index[std::size_t(c + s.rows - 1)];
    const index_type at = next[std::size_t(ci)]++;
    pairs[at] = p;
    pairs[at].c_start = s.c_starts[std::size_t(ci)];
    a_order[f++] = at;
  });
}

}  // namespace nearsparse::diagonal::detail
