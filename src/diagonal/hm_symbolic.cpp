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
        nearsparse::detail::concat("do not conform: op(A) is ", out.rows, " x ", out.inner,
                                   " (op ", to_string(a.operation), "), op(B) is ", op_rows(b),
                                   " x ", out.cols, " (op ", to_string(b.operation), ")"));
  const int m = out.rows, k = out.inner, n = out.cols;
  const std::size_t na = a.offsets->size(), nb = b.offsets->size();

  // Every pair that contributes, in A-major order, tagged with its C offset.
  struct tagged {
    hm_pair pair;
    int c;
  };
  std::vector<tagged> found;
  found.reserve(na * nb);
  std::vector<index_type> per_c(std::size_t(m + n > 0 ? m + n - 1 : 0), 0);
  out.a_ptr.assign(na + 1, 0);
  for (std::size_t ta = 0; ta < na; ++ta) {
    const int da = logical_offset(a, ta);
    for (std::size_t tb = 0; tb < nb; ++tb) {
      const int db = logical_offset(b, tb);
      const int c = da + db;
      if (c <= -m || c >= n) continue;
      const index_type len = diagonal_length(m, n, c);
      const index_type shift = c < 0 ? -c : 0;
      const index_type qlo = std::max<index_type>(0, -da - shift);
      const index_type qhi = std::min<index_type>(len, k - da - shift);
      if (qhi <= qlo) continue;
      hm_pair p;
      p.a_base = (*a.starts)[ta] + shift + std::min(da, 0);
      p.b_base = (*b.starts)[tb] + shift + da + std::min(db, 0);
      p.c_start = 0;
      p.qlo = int(qlo);
      p.qhi = int(qhi);
      found.push_back({p, c});
      ++per_c[std::size_t(c + m - 1)];
      out.multiply_adds += double(qhi - qlo);
    }
    out.a_ptr[ta + 1] = index_type(found.size());
  }

  // C's diagonals and where each starts.
  std::vector<int> c_index(per_c.size(), -1);
  out.c_starts.push_back(0);
  out.pair_ptr.push_back(0);
  out.chunk_ptr.push_back(0);
  for (std::size_t s = 0; s < per_c.size(); ++s) {
    if (per_c[s] == 0) continue;
    const int c = int(s) - (m - 1);
    c_index[s] = int(out.c_offsets.size());
    out.c_offsets.push_back(c);
    const index_type len = diagonal_length(m, n, c);
    out.c_starts.push_back(out.c_starts.back() + len);
    out.pair_ptr.push_back(out.pair_ptr.back() + per_c[s]);
    out.chunk_ptr.push_back(out.chunk_ptr.back() + (len + hm_chunk - 1) / hm_chunk);
  }

  // Group by C diagonal, keeping A-major order within each (a stable counting sort).
  std::vector<index_type> next(out.pair_ptr.begin(), out.pair_ptr.end() - 1);
  out.pairs.resize(found.size());
  out.a_order.resize(found.size());
  for (std::size_t f = 0; f < found.size(); ++f) {
    const int ci = c_index[std::size_t(found[f].c + m - 1)];
    const index_type at = next[std::size_t(ci)]++;
    out.pairs[std::size_t(at)] = found[f].pair;
    out.pairs[std::size_t(at)].c_start = out.c_starts[std::size_t(ci)];
    out.a_order[f] = at;
  }
  return out;
}

}  // namespace nearsparse::diagonal::detail
