#pragma once
// SELL-C-sigma storage: rows sorted by length within windows of sigma rows, cut into chunks of C
// rows, each chunk stored column-major and padded to its longest row. Chunk height 32 gives the
// GPU coalesced loads of matrix values for one row per thread (the R = 1 case); C = 1 is CRS with
// reordering. The row sort is a symmetric permutation: row i of the SELL matrix is row
// permutation(i) of the original, and columns are renumbered the same way, so a vector block for
// a SELL matrix is the original block with its rows permuted (kpm::permute_rows).

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/crs.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace nearsparse::kpm {

template <class Scalar, class MemorySpace>
class sell_matrix {
 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  using index_view = Kokkos::View<int*, MemorySpace>;
  using offset_view = Kokkos::View<std::int64_t*, MemorySpace>;
  using value_view = Kokkos::View<Scalar*, MemorySpace>;

  sell_matrix() = default;
  sell_matrix(int rows, int cols, int chunk_height, int sigma, offset_view chunk_offsets,
              index_view chunk_lengths, index_view row_lengths, index_view columns,
              value_view values, index_view permutation, std::int64_t nonzeros)
      : rows_(rows),
        cols_(cols),
        chunk_height_(chunk_height),
        sigma_(sigma),
        chunk_offsets_(chunk_offsets),
        chunk_lengths_(chunk_lengths),
        row_lengths_(row_lengths),
        columns_(columns),
        values_(values),
        permutation_(permutation),
        nonzeros_(nonzeros) {}

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int chunk_height() const { return chunk_height_; }
  int sigma() const { return sigma_; }
  int chunk_count() const { return int(chunk_lengths_.extent(0)); }
  /// Stored entries, padding included.
  std::int64_t stored_count() const { return std::int64_t(values_.extent(0)); }
  /// Entries of the original matrix.
  std::int64_t nonzeros() const { return nonzeros_; }
  /// nonzeros / stored entries: 1 without padding (the beta of the SELL-C-sigma paper).
  double fill_efficiency() const {
    return stored_count() == 0 ? 1.0 : double(nonzeros_) / double(stored_count());
  }
  /// Chunk c's entries start at chunk_offsets(c); entry j of its row l is at
  /// chunk_offsets(c) + j * C + l. chunk_count() + 1 entries.
  const offset_view& chunk_offsets() const { return chunk_offsets_; }
  const index_view& chunk_lengths() const { return chunk_lengths_; }
  /// Entries of each (permuted) row before padding.
  const index_view& row_lengths() const { return row_lengths_; }
  const index_view& columns() const { return columns_; }
  const value_view& values() const { return values_; }
  /// Row i of this matrix is row permutation(i) of the original.
  const index_view& permutation() const { return permutation_; }

 private:
  int rows_ = 0, cols_ = 0, chunk_height_ = 1, sigma_ = 1;
  offset_view chunk_offsets_;
  index_view chunk_lengths_, row_lengths_, columns_;
  value_view values_;
  index_view permutation_;
  std::int64_t nonzeros_ = 0;
};

struct sell_options {
  /// C, in [1, 1024]: rows per chunk. 32 gives the GPU coalesced loads of matrix values for one
  /// row per thread; 1 is CRS with reordering.
  int chunk_height = 32;
  /// Rows sorted by length within windows of sigma rows: 1 (no sorting) or a multiple of C.
  int sigma = 1;
};

/// SELL-C-sigma copy of a square CRS matrix, in the CRS matrix's memory space. Built on the host
/// (a one-time conversion); throws nearsparse::invalid_argument for a bad C or sigma or an
/// invalid matrix.
template <class ExecSpace, class Crs>
sell_matrix<typename Crs::non_const_value_type, typename Crs::memory_space> make_sell(
    const ExecSpace& exec, const Crs& h, const sell_options& options = {}) {
  using scalar = typename Crs::non_const_value_type;
  using mem = typename Crs::memory_space;
  using nearsparse::detail::concat;
  constexpr const char* fn = "nearsparse::kpm::make_sell";
  const int chunk_height = options.chunk_height, sigma = options.sigma;
  require(chunk_height >= 1 && chunk_height <= 1024, fn, "options.chunk_height",
          concat("must be in [1, 1024], got ", chunk_height));
  require(sigma >= 1 && (sigma == 1 || sigma % chunk_height == 0), fn, "options.sigma",
          concat("must be 1 or a positive multiple of the chunk height ", chunk_height, ", got ",
                 sigma));
  detail::validate_crs(exec, h, fn, "H");
  exec.fence();
  const int n = int(h.numRows()), C = chunk_height;
  auto row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.row_map);
  auto entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.entries);
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.values);

  // Sort rows by descending length within each window of sigma rows (stable: ties keep order).
  std::vector<int> perm(static_cast<std::size_t>(n)), inverse(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  auto length = [&](int i) { return int(row_map(i + 1) - row_map(i)); };
  if (sigma > 1)
    for (int w = 0; w < n; w += sigma)
      std::stable_sort(perm.begin() + w, perm.begin() + std::min(n, w + sigma),
                       [&](int a, int b) { return length(a) > length(b); });
  for (int i = 0; i < n; ++i) inverse[std::size_t(perm[std::size_t(i)])] = i;

  const int chunks = (n + C - 1) / C;
  std::vector<std::int64_t> offsets(std::size_t(chunks) + 1, 0);
  std::vector<int> chunk_len(std::size_t(chunks), 0);
  for (int c = 0; c < chunks; ++c) {
    int longest = 0;
    for (int l = 0; l < C && c * C + l < n; ++l)
      longest = std::max(longest, length(perm[std::size_t(c * C + l)]));
    chunk_len[std::size_t(c)] = longest;
    offsets[std::size_t(c) + 1] = offsets[std::size_t(c)] + std::int64_t(longest) * C;
  }
  const std::int64_t stored = offsets.back();

  Kokkos::View<std::int64_t*, mem> d_offsets(std::string("nearsparse::kpm::sell.chunk_offsets"),
                                             std::size_t(chunks) + 1);
  Kokkos::View<int*, mem> d_chunk_len(std::string("nearsparse::kpm::sell.chunk_lengths"),
                                      std::size_t(chunks));
  Kokkos::View<int*, mem> d_row_len(std::string("nearsparse::kpm::sell.row_lengths"),
                                    std::size_t(n));
  Kokkos::View<int*, mem> d_cols(std::string("nearsparse::kpm::sell.columns"), std::size_t(stored));
  Kokkos::View<scalar*, mem> d_vals(std::string("nearsparse::kpm::sell.values"),
                                    std::size_t(stored));
  Kokkos::View<int*, mem> d_perm(std::string("nearsparse::kpm::sell.permutation"), std::size_t(n));
  auto h_offsets = Kokkos::create_mirror_view(d_offsets);
  auto h_chunk_len = Kokkos::create_mirror_view(d_chunk_len);
  auto h_row_len = Kokkos::create_mirror_view(d_row_len);
  auto h_cols = Kokkos::create_mirror_view(d_cols);
  auto h_vals = Kokkos::create_mirror_view(d_vals);
  auto h_perm = Kokkos::create_mirror_view(d_perm);
  for (int c = 0; c <= chunks; ++c) h_offsets(c) = offsets[std::size_t(c)];
  for (int c = 0; c < chunks; ++c) h_chunk_len(c) = chunk_len[std::size_t(c)];
  for (int i = 0; i < n; ++i) {
    const int orig = perm[std::size_t(i)];
    h_perm(i) = orig;
    h_row_len(i) = length(orig);
    const int c = i / C, l = i % C;
    const std::int64_t base = offsets[std::size_t(c)] + l;
    // Padding repeats the row's own index with a zero value: always a valid column, and the
    // vector entry it loads is one the row needs anyway.
    for (int j = 0; j < chunk_len[std::size_t(c)]; ++j) {
      const std::int64_t at = base + std::int64_t(j) * C;
      if (j < h_row_len(i)) {
        const auto e = row_map(orig) + j;
        h_cols(at) = inverse[std::size_t(entries(e))];
        h_vals(at) = values(e);
      } else {
        h_cols(at) = i;
        h_vals(at) = scalar(0);
      }
    }
  }
  // Chunks of rows past n (the last chunk's tail) stay zero-valued with column 0: never read.
  Kokkos::deep_copy(exec, d_offsets, h_offsets);
  Kokkos::deep_copy(exec, d_chunk_len, h_chunk_len);
  Kokkos::deep_copy(exec, d_row_len, h_row_len);
  Kokkos::deep_copy(exec, d_cols, h_cols);
  Kokkos::deep_copy(exec, d_vals, h_vals);
  Kokkos::deep_copy(exec, d_perm, h_perm);
  exec.fence();
  return sell_matrix<scalar, mem>(n, n, C, sigma, d_offsets, d_chunk_len, d_row_len, d_cols, d_vals,
                                  d_perm, std::int64_t(entries.extent(0)));
}

/// The original CRS matrix back from SELL storage: rows and columns unpermuted, padding dropped.
template <class ExecSpace, class Scalar, class Mem>
crs_matrix<Scalar, ExecSpace, Mem> to_crs(const ExecSpace& exec,
                                          const sell_matrix<Scalar, Mem>& s) {
  exec.fence();
  const int n = s.rows(), C = s.chunk_height();
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.chunk_offsets());
  auto row_len = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.row_lengths());
  auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.columns());
  auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.values());
  auto perm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.permutation());
  using crs = crs_matrix<Scalar, ExecSpace, Mem>;
  typename crs::row_map_type::non_const_type row_map(std::string("nearsparse::kpm::crs.row_map"),
                                                     std::size_t(n) + 1);
  auto h_row_map = Kokkos::create_mirror_view(row_map);
  std::vector<int> inverse(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) inverse[std::size_t(perm(i))] = i;
  h_row_map(0) = 0;
  for (int o = 0; o < n; ++o) h_row_map(o + 1) = h_row_map(o) + row_len(inverse[std::size_t(o)]);
  const auto nnz = std::size_t(h_row_map(n));
  typename crs::index_type::non_const_type entries(std::string("nearsparse::kpm::crs.entries"),
                                                   nnz);
  typename crs::values_type::non_const_type values(std::string("nearsparse::kpm::crs.values"), nnz);
  auto h_entries = Kokkos::create_mirror_view(entries);
  auto h_values = Kokkos::create_mirror_view(values);
  for (int o = 0; o < n; ++o) {
    const int i = inverse[std::size_t(o)];
    const std::int64_t base = offsets(i / C) + i % C;
    for (int j = 0; j < row_len(i); ++j) {
      const auto at = base + std::int64_t(j) * C;
      h_entries(h_row_map(o) + j) = perm(cols(at));
      h_values(h_row_map(o) + j) = vals(at);
    }
  }
  Kokkos::deep_copy(exec, row_map, h_row_map);
  Kokkos::deep_copy(exec, entries, h_entries);
  Kokkos::deep_copy(exec, values, h_values);
  exec.fence();
  return crs("nearsparse::kpm::crs", n, n, int(nnz), values, row_map, entries);
}

namespace detail {

/// out(i, r) = in(perm(i), r): row i of a vector block in the order of a SELL matrix.
template <class In, class Out, class Perm>
struct permute_rows_kernel {
  In in;
  Out out;
  Perm perm;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int r) const {
    out(i, r) = in(perm(i), r);
  }
};

}  // namespace detail

/// out(i, :) = in(permutation(i), :): a block of vectors in original row order into the order of
/// a SELL matrix. Both rank-2 Views of the same extents.
template <class ExecSpace, class Scalar, class Mem, class In, class Out>
void permute_rows(const ExecSpace& exec, const sell_matrix<Scalar, Mem>& s, const In& in,
                  const Out& out) {
  require(in.extent(0) == std::size_t(s.rows()) && out.extent(0) == in.extent(0) &&
              out.extent(1) == in.extent(1),
          "nearsparse::kpm::permute_rows", "in, out",
          nearsparse::detail::concat("must both be ", s.rows(), " x R; got ",
                                     nearsparse::detail::extents_string(in), " and ",
                                     nearsparse::detail::extents_string(out)));
  const auto perm = s.permutation();
  const int cols = int(in.extent(1));
  Kokkos::parallel_for(
      "nearsparse::kpm::permute_rows",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {s.rows(), cols}),
      detail::permute_rows_kernel<In, Out, typename sell_matrix<Scalar, Mem>::index_view>{in, out,
                                                                                          perm});
}

}  // namespace nearsparse::kpm
