// The numeric phase of the block-sparse multiply on the host (Kokkos::OpenMP and Kokkos::Serial):
// threads over C's tiles (dynamic schedule, tiles differ in their number of products), each
// tile's kept products through the host BLAS on the calling thread, one gemm per product
// accumulating straight into the tile (row-major, leading dimension the tile). The portable
// kernel forms each entry as a dot product over k with B read down a column, which the host's
// caches and vector units serve poorly; a gemm on 64 x 64 tiles runs near the core's peak.
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/spamm/detail/block_sparse_multiply.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nearsparse::spamm::detail {

namespace {

namespace blas = nearsparse::detail::host_blas;

/// Position of column j among cols[begin, end) (ascending), or -1.
inline std::int64_t find_column(const int* cols, std::int64_t begin, std::int64_t end, int j) {
  const int* first = cols + begin;
  const int* last = cols + end;
  const int* at = std::lower_bound(first, last, j);
  return (at != last && *at == j) ? begin + (at - first) : -1;
}

template <class Scalar>
void tile_products(const block_sparse_products<Scalar>& p, std::int64_t q) {
  const int t = p.tile;
  const std::int64_t tt = std::int64_t(t) * t;
  // The tile row of q: the last i with c_row_map[i] <= q.
  const std::int64_t* row = std::upper_bound(p.c_row_map, p.c_row_map + p.tile_rows + 1, q) - 1;
  const int i = int(row - p.c_row_map), j = p.c_cols[q];
  Scalar* c = p.c_values + q * tt;
  bool written = false;
  double dropped = 0.0;
  for (std::int64_t ap = p.a_row_map[i]; ap < p.a_row_map[i + 1]; ++ap) {
    const int k = p.a_cols[ap];
    const std::int64_t bq = find_column(p.b_cols, p.b_row_map[k], p.b_row_map[k + 1], j);
    if (bq < 0) continue;
    const double np = p.a_norms[ap] * p.b_norms[bq];
    if (!(np >= p.tau)) {  // as the symbolic phase: kept when >= tau
      dropped += np;
      continue;
    }
    blas::gemm(blas::order::row_major, blas::op::none, blas::op::none, t, t, t, p.alpha,
               p.a_values + ap * tt, t, p.b_values + bq * tt, t, written ? Scalar(1) : Scalar(0), c,
               t);
    written = true;
  }
  if (!written) std::fill(c, c + tt, Scalar(0));
  if (p.old_values != nullptr) {
    const std::int64_t old = find_column(p.old_cols, p.old_row_map[i], p.old_row_map[i + 1], j);
    if (old >= 0) {
      const Scalar* o = p.old_values + old * tt;
      for (std::int64_t e = 0; e < tt; ++e) c[e] += p.beta * o[e];
    }
  }
  // The parts of an edge tile outside the matrix hold zeros, whatever the products left there
  // (a non-finite entry times a zero of the padding).
  const int r_end = std::min(t, p.rows - i * t), c_end = std::min(t, p.cols - j * t);
  double sq = 0.0;
  for (int r = 0; r < t; ++r)
    for (int col = 0; col < t; ++col) {
      Scalar& v = c[std::int64_t(r) * t + col];
      if (r >= r_end || col >= c_end) v = Scalar(0);
      sq += double(v) * double(v);
    }
  p.c_norms[q] = std::sqrt(sq);
  p.tile_bound[q] = dropped;
}

template <class Exec, class Scalar>
bool run_products(const Exec& exec, const char* function, nearsparse::implementation choice,
                  const block_sparse_products<Scalar>& p) {
  if (!blas::take_path(function, choice, Exec::name())) return false;
  const block_sparse_products<Scalar> q = p;
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const blas::thread_scope one_thread(1);
  Kokkos::parallel_for(
      "nearsparse::spamm::block_sparse::multiply_numeric_host",
      Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<std::int64_t>>(
          exec, 0, p.c_tiles),
      [q](const std::int64_t t) { tile_products(q, t); });
  return true;
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
bool block_sparse_specialized_available(const Kokkos::OpenMP&) {
  return blas::available();
}
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p) {
  return run_products(exec, function, choice, p);
}
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p) {
  return run_products(exec, function, choice, p);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool block_sparse_specialized_available(const Kokkos::Serial&) {
  return blas::available();
}
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p) {
  return run_products(exec, function, choice, p);
}
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p) {
  return run_products(exec, function, choice, p);
}
#endif

}  // namespace nearsparse::spamm::detail
