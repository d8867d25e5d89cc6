#pragma once
// Row distribution of a sparse matrix over P parts (two devices of one process, or MPI ranks):
// part p owns the contiguous global rows [bounds[p], bounds[p+1]). Its local matrix numbers its
// own rows first and the columns it needs from other parts (its halo) after them, in ascending
// global order, so the halo from part q is one contiguous block of the vector block. Local rows
// that some other part needs come first (rows [0, n_send_rows)): a step computes them, starts
// sending, and computes the remaining rows while the messages travel.
//
// Built in two stages because in a distributed run a part only knows its own rows: localize()
// finds the halo from the part's rows alone; finalize() takes the requests of the other parts
// (the global rows each needs from this one) and numbers the rows.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nearsparse::kpm::detail {

template <class Scalar>
struct local_part {
  int self = 0, parts = 1;
  std::int64_t row_begin = 0, row_end = 0;
  int n_local = 0, n_halo = 0, n_send_rows = 0;
  /// Some row after the first n_send_rows reads a halo column (a pattern that is not symmetric):
  /// those rows must wait for the other parts' data like the first ones.
  bool interior_needs_halo = false;
  std::vector<std::int64_t> halo_global;    ///< sorted global columns owned by other parts
  std::vector<int> recv_offsets;            ///< P + 1: halo entries of part q
  std::vector<std::vector<int>> send_rows;  ///< to part q: local rows, in q's halo order
  std::vector<int> local_to_global;         ///< local row i is global row row_begin + this[i]
  host_crs<Scalar> matrix;                  ///< local rows and columns
  host_crs<Scalar> global_rows;             ///< the input rows (global columns) until finalize

  /// The global rows this part needs from part q.
  std::vector<std::int64_t> requests_to(int q) const {
    return {halo_global.begin() + recv_offsets[std::size_t(q)],
            halo_global.begin() + recv_offsets[std::size_t(q) + 1]};
  }
};

inline int owner_of(const std::vector<std::int64_t>& bounds, std::int64_t g) {
  return int(std::upper_bound(bounds.begin(), bounds.end(), g) - bounds.begin()) - 1;
}

/// Stage one: the halo of part `self` from its rows (global columns). `function` names the entry
/// point in errors.
template <class Scalar>
local_part<Scalar> localize(host_crs<Scalar> rows, const std::vector<std::int64_t>& bounds,
                            int self, const char* function) {
  local_part<Scalar> p;
  p.self = self;
  p.parts = int(bounds.size()) - 1;
  p.row_begin = bounds[std::size_t(self)];
  p.row_end = bounds[std::size_t(self) + 1];
  require(rows.rows == p.row_end - p.row_begin, function, "rows",
          nearsparse::detail::concat("holds ", rows.rows, " rows for the range [", p.row_begin,
                                     ", ", p.row_end, ")"));
  p.n_local = int(rows.rows);
  for (int c : rows.columns)
    if (c < p.row_begin || c >= p.row_end) p.halo_global.push_back(c);
  std::sort(p.halo_global.begin(), p.halo_global.end());
  p.halo_global.erase(std::unique(p.halo_global.begin(), p.halo_global.end()), p.halo_global.end());
  p.n_halo = int(p.halo_global.size());
  p.recv_offsets.assign(std::size_t(p.parts) + 1, 0);
  for (int q = 0; q <= p.parts; ++q)
    p.recv_offsets[std::size_t(q)] =
        int(std::lower_bound(p.halo_global.begin(), p.halo_global.end(), bounds[std::size_t(q)]) -
            p.halo_global.begin());
  p.global_rows = std::move(rows);
  return p;
}

/// Stage two: requests[q] = the global rows part q needs from this part (its requests_to(self)).
template <class Scalar>
void finalize(local_part<Scalar>& p, const std::vector<std::vector<std::int64_t>>& requests) {
  const int n = p.n_local;
  std::vector<char> needed(static_cast<std::size_t>(n), 0);
  for (const auto& list : requests)
    for (auto g : list) needed[std::size_t(g - p.row_begin)] = 1;
  // Rows others need first, then the rest, each ascending.
  p.local_to_global.clear();
  for (int pass = 1; pass >= 0; --pass)
    for (int i = 0; i < n; ++i)
      if (needed[std::size_t(i)] == pass) p.local_to_global.push_back(i);
  p.n_send_rows = int(std::count(needed.begin(), needed.end(), char(1)));
  std::vector<int> global_to_local(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) global_to_local[std::size_t(p.local_to_global[std::size_t(i)])] = i;
  p.send_rows.assign(std::size_t(p.parts), {});
  for (int q = 0; q < p.parts; ++q)
    for (auto g : requests[std::size_t(q)])
      p.send_rows[std::size_t(q)].push_back(global_to_local[std::size_t(g - p.row_begin)]);
  // The local matrix: rows in local order, columns renumbered.
  const auto& in = p.global_rows;
  host_crs<Scalar> m;
  m.rows = n;
  m.cols = std::int64_t(n) + p.n_halo;
  m.row_map.assign(1, 0);
  m.columns.reserve(in.columns.size());
  m.values.reserve(in.values.size());
  for (int i = 0; i < n; ++i) {
    const int src = p.local_to_global[std::size_t(i)];
    for (int e = in.row_map[std::size_t(src)]; e < in.row_map[std::size_t(src) + 1]; ++e) {
      const std::int64_t g = in.columns[std::size_t(e)];
      int c;
      if (g >= p.row_begin && g < p.row_end) {
        c = global_to_local[std::size_t(g - p.row_begin)];
      } else {
        c = n + int(std::lower_bound(p.halo_global.begin(), p.halo_global.end(), g) -
                    p.halo_global.begin());
      }
      m.columns.push_back(c);
      m.values.push_back(in.values[std::size_t(e)]);
    }
    m.row_map.push_back(int(m.columns.size()));
  }
  for (int i = p.n_send_rows; i < n && !p.interior_needs_halo; ++i)
    for (int e = m.row_map[std::size_t(i)]; e < m.row_map[std::size_t(i) + 1]; ++e)
      if (m.columns[std::size_t(e)] >= n) p.interior_needs_halo = true;
  p.matrix = std::move(m);
  p.global_rows = {};
}

/// Row bounds for weights w_p (non-negative, not all zero): part p gets about w_p / sum w of the
/// rows, in multiples of `granule` rows (4 orbitals of a site, say) where the sizes allow.
/// Errors name `function` and `argument` (the weights).
inline std::vector<std::int64_t> split_rows(std::int64_t rows, const std::vector<double>& weights,
                                            std::int64_t granule, const char* function,
                                            const char* argument) {
  double total = 0;
  for (double w : weights) total += w;
  require(total > 0 && std::all_of(weights.begin(), weights.end(),
                                   [](double w) { return w >= 0 && std::isfinite(w); }),
          function, argument,
          "must be finite and non-negative on every part, and not zero on all of them");
  std::vector<std::int64_t> b(weights.size() + 1, 0);
  double acc = 0;
  for (std::size_t p = 0; p < weights.size(); ++p) {
    acc += weights[p];
    auto edge = std::int64_t(std::llround(double(rows) * acc / total));
    edge = std::min(rows, (edge + granule / 2) / granule * granule);
    b[p + 1] = p + 1 == weights.size() ? rows : std::max(b[p], edge);
  }
  return b;
}

}  // namespace nearsparse::kpm::detail
