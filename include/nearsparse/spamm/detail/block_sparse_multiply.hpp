#pragma once
// The symbolic and numeric phases of C = alpha * A * B + beta * C on block-sparse SpAMM matrices
// (spamm/block_sparse.hpp), and the specialized numeric phases' interface
// (src/spamm/cuda_block_sparse.cpp, src/spamm/host_block_sparse.cpp).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/free_memory.hpp>
#include <nearsparse/core/detail/team_reduce.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/detail/block_sparse_parts.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nearsparse::spamm::detail {

/// Marks, for tile row i of C, the tile columns with a kept product (and C's own tiles when
/// beta != 0) in `kept_bits`, and those with any candidate product in `any_bits`; returns the
/// team's count of kept products. Ends with a barrier.
template <class Scalar, class MemorySpace>
struct product_row_marker {
  Kokkos::View<const std::int64_t*, MemorySpace> a_row_map, b_row_map, c_row_map;
  Kokkos::View<const int*, MemorySpace> a_cols, b_cols, c_cols;
  Kokkos::View<const double*, MemorySpace> a_norms, b_norms;
  double tau = 0.0;
  bool with_c = false;

  template <class Member, class Bits>
  KOKKOS_INLINE_FUNCTION std::int64_t mark(const Member& team, int i, const Bits& kept_bits,
                                           const Bits& any_bits, int words) const {
    // A team that runs several league ranks in turn may still read the last rank's bits.
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, words), [&](const int w) {
      kept_bits(w) = 0u;
      any_bits(w) = 0u;
    });
    team.team_barrier();
    const std::int64_t a0 = a_row_map(i);
    const int la = static_cast<int>(a_row_map(i + 1) - a0);
    std::int64_t kept = 0;
    nearsparse::detail::team_reduce_fenced(
        team, la,
        [&](const int s, std::int64_t& count) {
          const int k = a_cols(a0 + s);
          const double na = a_norms(a0 + s);
          for (auto q = b_row_map(k); q < b_row_map(k + 1); ++q) {
            const int j = b_cols(q);
            const std::uint32_t bit = std::uint32_t(1u) << (j & 31);
            Kokkos::atomic_fetch_or(&any_bits(j >> 5), bit);
            if (na * b_norms(q) >= tau) {
              Kokkos::atomic_fetch_or(&kept_bits(j >> 5), bit);
              ++count;
            }
          }
        },
        kept);
    if (with_c) {
      const std::int64_t c0 = c_row_map(i);
      const int lc = static_cast<int>(c_row_map(i + 1) - c0);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, lc), [&](const int s) {
        const int j = c_cols(c0 + s);
        Kokkos::atomic_fetch_or(&kept_bits(j >> 5), std::uint32_t(1u) << (j & 31));
      });
      team.team_barrier();
    }
    return kept;
  }
};

/// The numeric phase of a block-sparse product on raw pointers, for a specialized path: tile q
/// of C (tile row found in c_row_map, column c_cols[q]) becomes alpha * sum of the kept A[i,k]
/// B[k,j] (norm product >= tau) + beta * C_old[i,j] (old arrays null when beta == 0), written to
/// c_values + q * tile^2 with zeros outside the matrix; c_norms[q] its Frobenius norm and
/// tile_bound[q] the sum of its dropped norm products.
template <class Scalar>
struct block_sparse_products {
  int tile = 0, tile_rows = 0, rows = 0, cols = 0;
  std::int64_t c_tiles = 0;
  Scalar alpha = Scalar(1), beta = Scalar(0);
  double tau = 0.0;
  const std::int64_t *a_row_map = nullptr, *b_row_map = nullptr, *c_row_map = nullptr,
                     *old_row_map = nullptr;
  const int *a_cols = nullptr, *b_cols = nullptr, *c_cols = nullptr, *old_cols = nullptr;
  const Scalar *a_values = nullptr, *b_values = nullptr, *old_values = nullptr;
  const double *a_norms = nullptr, *b_norms = nullptr;
  Scalar* c_values = nullptr;
  double* c_norms = nullptr;
  double* tile_bound = nullptr;
};

/// Whether the execution space has a specialized numeric phase in this build (the overloads of
/// block_sparse_products_specialized below): this template (spaces without one) false; CUDA
/// true; the host spaces where the build has OpenBLAS.
template <class ExecSpace>
bool block_sparse_specialized_available(const ExecSpace&) {
  return false;
}
#ifdef KOKKOS_ENABLE_CUDA
bool block_sparse_specialized_available(const Kokkos::Cuda& exec);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
bool block_sparse_specialized_available(const Kokkos::OpenMP& exec);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool block_sparse_specialized_available(const Kokkos::Serial& exec);
#endif

/// The implementation a block-sparse product is asked for, checked where the call starts (so an
/// empty product refuses it too): nearsparse::invalid_argument for a value outside the
/// enumeration, naming `argument`; nearsparse::unsupported for implementation::specialized where
/// the space has no specialized numeric phase, naming `function` and the space.
template <class ExecSpace>
void require_block_sparse_implementation(const ExecSpace& exec, const char* function,
                                         const char* argument, nearsparse::implementation choice) {
  nearsparse::detail::require_valid(function, argument, choice);
  nearsparse::detail::take_specialized(function, choice, block_sparse_specialized_available(exec),
                                       ExecSpace::name());
}

/// The specialized numeric phase, where the execution space has one that `choice` takes: returns
/// true when it ran. This template (spaces without one) returns false, or throws
/// nearsparse::unsupported for implementation::specialized; CUDA overloads it with a kernel of
/// its own and the host spaces with the host BLAS path (src/spamm/host_block_sparse.cpp).
template <class ExecSpace, class Scalar>
bool block_sparse_products_specialized(const ExecSpace&, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<Scalar>&) {
  nearsparse::detail::take_specialized_none<ExecSpace>(function, choice);
  return false;
}
#ifdef KOKKOS_ENABLE_CUDA
// The CUDA kernel (src/spamm/cuda_block_sparse.cpp).
bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::Cuda& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::OpenMP& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<float>& p);
bool block_sparse_products_specialized(const Kokkos::Serial& exec, const char* function,
                                       nearsparse::implementation choice,
                                       const block_sparse_products<double>& p);
#endif

/// Counts of the multiply's phases.
struct product_counts {
  std::int64_t kept_products = 0, candidate_products = 0;
  std::int64_t tiles_before_drop = 0, tiles_dropped = 0;
  double bound_sq = 0.0, dropped_sq = 0.0;
  std::int64_t non_finite = 0;
};

/// Per tile row of C: counts of kept tiles, of tiles with only dropped products, and of products.
template <class ExecSpace, class Scalar, class MemorySpace>
struct multiply_symbolic_count_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using bits_view = Kokkos::View<std::uint32_t*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  product_row_marker<Scalar, MemorySpace> marker;
  Kokkos::View<const std::int64_t*, MemorySpace> a_row_map, b_row_map;
  Kokkos::View<const int*, MemorySpace> a_cols;
  Kokkos::View<std::int64_t*, MemorySpace> kept_counts, drop_counts, row_products;
  int words = 0, level = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int i = team.league_rank();
    bits_view kept_bits(team.team_scratch(level), words);
    bits_view any_bits(team.team_scratch(level), words);
    const std::int64_t kept = marker.mark(team, i, kept_bits, any_bits, words);
    const std::int64_t a0 = a_row_map(i);
    const int la = static_cast<int>(a_row_map(i + 1) - a0);
    std::int64_t candidates = 0;
    nearsparse::detail::team_reduce_fenced(
        team, la,
        [&](const int s, std::int64_t& sum) {
          const int k = a_cols(a0 + s);
          sum += b_row_map(k + 1) - b_row_map(k);
        },
        candidates);
    int kept_tiles = 0, drop_tiles = 0;
    nearsparse::detail::team_reduce_fenced(
        team, words, [&](const int w, int& sum) { sum += popcount32(kept_bits(w)); }, kept_tiles);
    nearsparse::detail::team_reduce_fenced(
        team, words, [&](const int w, int& sum) { sum += popcount32(any_bits(w) & ~kept_bits(w)); },
        drop_tiles);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      kept_counts(i) = kept_tiles;
      drop_counts(i) = drop_tiles;
      row_products(2 * i) = kept;
      row_products(2 * i + 1) = candidates;
    });
  }
};

/// Sum over tile rows of row_products(2 i + offset): kept products (0) or candidates (1).
template <class MemorySpace>
struct multiply_product_count_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> row_products;
  int offset = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, std::int64_t& s) const {
    s += row_products(2 * i + offset);
  }
};

/// Per tile row of C: writes its kept tile columns and those with only dropped products, ascending.
template <class ExecSpace, class Scalar, class MemorySpace>
struct multiply_symbolic_fill_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using bits_view = Kokkos::View<std::uint32_t*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  product_row_marker<Scalar, MemorySpace> marker;
  Kokkos::View<const std::int64_t*, MemorySpace> c_row_map, d_row_map;
  Kokkos::View<int*, MemorySpace> c_cols, d_cols;
  int words = 0, level = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int i = team.league_rank();
    bits_view kept_bits(team.team_scratch(level), words);
    bits_view any_bits(team.team_scratch(level), words);
    marker.mark(team, i, kept_bits, any_bits, words);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      std::int64_t out_c = c_row_map(i), out_d = d_row_map(i);
      for (int w = 0; w < words; ++w) {
        out_c = write_set_bits(kept_bits(w), w * 32, c_cols, out_c);
        out_d = write_set_bits(any_bits(w) & ~kept_bits(w), w * 32, d_cols, out_d);
      }
    });
  }
};

/// Sum of d_ij^2 over the tiles with only dropped products, d_ij the sum of their norm products.
template <class MemorySpace>
struct multiply_dropped_tiles_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> d_row_map, a_row_map, b_row_map;
  Kokkos::View<const int*, MemorySpace> d_cols, a_cols, b_cols;
  Kokkos::View<const double*, MemorySpace> a_norms, b_norms;
  int mt = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int p, double& s) const {
    const int i = tile_row_of(d_row_map, mt, p), j = d_cols(p);
    double d = 0.0;
    for (auto ap = a_row_map(i); ap < a_row_map(i + 1); ++ap) {
      const int k = a_cols(ap);
      const std::int64_t q = find_tile(b_cols, b_row_map(k), b_row_map(k + 1), j);
      if (q >= 0) d += a_norms(ap) * b_norms(q);
    }
    s += d * d;
  }
};

/// The largest number of tiles in a tile row of A (reduced with Kokkos::Max).
template <class MemorySpace>
struct multiply_longest_row_kernel {
  Kokkos::View<const std::int64_t*, MemorySpace> a_row_map;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& longest) const {
    const int len = static_cast<int>(a_row_map(i + 1) - a_row_map(i));
    if (len > longest) longest = len;
  }
};

/// Per tile p of C: its values, Frobenius norm c_norms(p) and dropped norm sum tile_bound(p).
template <class ExecSpace, class Scalar, class MemorySpace>
struct multiply_numeric_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using list_view = Kokkos::View<std::int64_t*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Scalar alpha = Scalar(1), beta = Scalar(0);
  double tau = 0.0;
  bool with_c = false;
  int tile = 0, tt = 0, mt = 0, m_rows = 0, n_cols = 0, max_row = 0, list_level = 0;
  Kokkos::View<const std::int64_t*, MemorySpace> a_row_map, b_row_map, c_row_map, old_row_map;
  Kokkos::View<const int*, MemorySpace> a_cols, b_cols, c_cols, old_cols;
  Kokkos::View<const Scalar*, MemorySpace> a_values, b_values, old_values;
  Kokkos::View<const double*, MemorySpace> a_norms, b_norms;
  Kokkos::View<Scalar*, MemorySpace> c_values;
  Kokkos::View<double*, MemorySpace> c_norms, tile_bound;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    list_view list(team.team_scratch(list_level), max_row + 1);
    const std::int64_t p = team.league_rank();
    const int i = tile_row_of(c_row_map, mt, p), j = c_cols(p);
    const std::int64_t a0 = a_row_map(i);
    const int la = static_cast<int>(a_row_map(i + 1) - a0);
    // list(s): the tile of B kept with A's s-th tile of row i, or -1.
    double dropped = 0.0;
    nearsparse::detail::team_reduce_fenced(
        team, la,
        [&](const int s, double& sum) {
          const int k = a_cols(a0 + s);
          const std::int64_t q = find_tile(b_cols, b_row_map(k), b_row_map(k + 1), j);
          std::int64_t keep = -1;
          if (q >= 0) {
            const double np = a_norms(a0 + s) * b_norms(q);
            if (np >= tau) {
              keep = q;
            } else {
              sum += np;
            }
          }
          list(s) = keep;
        },
        dropped);
    const std::int64_t old =
        with_c ? find_tile(old_cols, old_row_map(i), old_row_map(i + 1), j) : -1;
    const int r_end = (i + 1) * tile <= m_rows ? tile : m_rows - i * tile;
    const int c_end = (j + 1) * tile <= n_cols ? tile : n_cols - j * tile;
    double sq = 0.0;
    nearsparse::detail::team_reduce_fenced(
        team, tt,
        [&](const int e, double& sum) {
          const int r = e / tile, col = e % tile;
          Scalar value = Scalar(0);
          if (r < r_end && col < c_end) {
            Scalar acc = Scalar(0);
            for (int s = 0; s < la; ++s) {
              const std::int64_t q = list(s);
              if (q < 0) continue;
              const Scalar* a_row = a_values.data() + (a0 + s) * tt + r * tile;
              const Scalar* b_col = b_values.data() + q * tt + col;
              Scalar part = Scalar(0);
              for (int l = 0; l < tile; ++l) part += a_row[l] * b_col[l * tile];
              acc += part;
            }
            value = alpha * acc;
            if (old >= 0) value += beta * old_values(old * tt + e);
          }
          c_values(p * tt + e) = value;
          const double v = static_cast<double>(value);
          sum += v * v;
        },
        sq);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      c_norms(p) = ::sqrt(sq);
      tile_bound(p) = dropped;
    });
  }
};

/// Sum over the tiles of C of tile_bound(p)^2.
template <class MemorySpace>
struct multiply_bound_kernel {
  Kokkos::View<const double*, MemorySpace> tile_bound;

  KOKKOS_INLINE_FUNCTION void operator()(const int p, double& s) const {
    s += tile_bound(p) * tile_bound(p);
  }
};

/// C_new = alpha * A * B + beta * C (C's arrays when beta != 0) over the products kept at tau,
/// then the drop rule at (tolerance, relative). `c_new` comes with rows, cols and tile set.
template <class ExecSpace, class Scalar, class MemorySpace>
product_counts multiply_impl(const ExecSpace& exec, Scalar alpha,
                             const block_sparse_parts<Scalar, MemorySpace>& a,
                             const block_sparse_parts<Scalar, MemorySpace>& b, Scalar beta,
                             const block_sparse_parts<Scalar, MemorySpace>& c, double tau,
                             double tolerance, bool relative,
                             block_sparse_parts<Scalar, MemorySpace>& c_new, const char* function,
                             nearsparse::implementation choice) {
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using bits_view =
      Kokkos::View<std::uint32_t*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using list_view =
      Kokkos::View<std::int64_t*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  product_counts out;
  const int tile = a.tile, mt = a.tile_rows(), nt = b.tile_cols();
  const int m_rows = c_new.rows, n_cols = c_new.cols;
  const int tt = tile * tile;
  const int words = (nt + 31) / 32;
  const bool with_c = beta != Scalar(0);
  c_new.row_map = bs_alloc<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_map", std::size_t(mt) + 1);
  auto d_row_map = bs_alloc<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dropped_row_map", std::size_t(mt) + 1);
  if (mt == 0 || nt == 0) {
    allocate_tiles(exec, c_new, 0);
    return out;
  }
  product_row_marker<Scalar, MemorySpace> marker;
  marker.a_row_map = a.row_map;
  marker.b_row_map = b.row_map;
  marker.c_row_map = c.row_map;
  marker.a_cols = a.cols_idx;
  marker.b_cols = b.cols_idx;
  marker.c_cols = c.cols_idx;
  marker.a_norms = a.norms;
  marker.b_norms = b.norms;
  marker.tau = tau;
  marker.with_c = with_c;

  // Symbolic phase, count: per tile row of C, the tile columns kept and those with only dropped
  // products, in two bitmaps of team scratch.
  const std::size_t bytes = 2 * bits_view::shmem_size(words);
  const int level = scratch_level(bytes);
  auto kept_counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::kept_counts", std::size_t(mt));
  auto drop_counts = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::drop_counts", std::size_t(mt));
  auto row_products = bs_alloc_raw<std::int64_t, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::row_products", 2 * std::size_t(mt));
  const auto a_row_map = a.row_map;
  const auto b_row_map = b.row_map;
  const auto a_cols = a.cols_idx;
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("nearsparse::spamm::block_sparse::multiply_symbolic_count", policy,
                         multiply_symbolic_count_kernel<ExecSpace, Scalar, MemorySpace>{
                             marker, a_row_map, b_row_map, a_cols, kept_counts, drop_counts,
                             row_products, words, level});
  }
  {
    std::int64_t kept = 0, candidates = 0;
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::multiply_kept_products",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
                            multiply_product_count_kernel<MemorySpace>{row_products, 0}, kept);
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::multiply_candidate_products",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
                            multiply_product_count_kernel<MemorySpace>{row_products, 1},
                            candidates);
    out.kept_products = kept;
    out.candidate_products = candidates;
  }
  const auto c_row_map = c_new.row_map;
  const std::int64_t n_c = exclusive_scan(exec, "nearsparse::spamm::block_sparse::multiply_scan",
                                          kept_counts, c_row_map, mt);
  const std::int64_t n_d = exclusive_scan(
      exec, "nearsparse::spamm::block_sparse::multiply_dropped_scan", drop_counts, d_row_map, mt);
  // The tiles of C and those whose products were all dropped are counted with int below.
  constexpr std::int64_t int_max = 2147483647;
  nearsparse::require(n_c <= int_max && n_d <= int_max, function, "C",
                      nearsparse::detail::concat("would have ", n_c, " tiles and ", n_d,
                                                 " tiles whose products were all dropped; at most ",
                                                 int_max, " of each are supported"));
  // C before its drop rule, with its indices, norms and error bounds: refused here, with its
  // sizes, where the device cannot hold it (the drop rule then keeps a compacted copy).
  const std::size_t c_bytes =
      std::size_t(n_c) * (std::size_t(tt) * sizeof(Scalar) + sizeof(int) + 2 * sizeof(double)) +
      std::size_t(n_d) * sizeof(int);
  nearsparse::detail::require_fits<MemorySpace>(
      exec, function, "C",
      nearsparse::detail::concat("(", m_rows, " x ", n_cols, ", tile ", tile, ") would hold ", n_c,
                                 " tiles before its drop rule (A has ", a.cols_idx.extent(0),
                                 " tiles, B ", b.cols_idx.extent(0), "), with indices and norms"),
      c_bytes, "; raise tau (the drop tolerance applies only once this C is formed)");
  auto c_cols = bs_alloc_raw<int, MemorySpace>(exec, "nearsparse::spamm::block_sparse::cols",
                                               std::size_t(n_c));
  auto d_cols = bs_alloc_raw<int, MemorySpace>(
      exec, "nearsparse::spamm::block_sparse::dropped_cols", std::size_t(n_d));
  out.tiles_before_drop = n_c;

  // Symbolic phase, fill: the same bitmaps, read out in ascending order.
  {
    team_policy policy(exec, mt, Kokkos::AUTO);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for("nearsparse::spamm::block_sparse::multiply_symbolic_fill", policy,
                         multiply_symbolic_fill_kernel<ExecSpace, Scalar, MemorySpace>{
                             marker, c_row_map, d_row_map, c_cols, d_cols, words, level});
  }

  // Error bound of the tiles with dropped products only: d_ij = sum of their norm products.
  const auto b_cols = b.cols_idx;
  const auto a_norms = a.norms;
  const auto b_norms = b.norms;
  if (n_d > 0) {
    double sq = 0.0;
    Kokkos::parallel_reduce(
        "nearsparse::spamm::block_sparse::multiply_dropped_tiles",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<int>(n_d)),
        multiply_dropped_tiles_kernel<MemorySpace>{d_row_map, a_row_map, b_row_map, d_cols, a_cols,
                                                   b_cols, a_norms, b_norms, mt},
        sq);
    out.bound_sq += sq;
  }

  // Numeric phase: one team per tile of C.
  auto c_values = bs_alloc_raw<Scalar, MemorySpace>(exec, "nearsparse::spamm::block_sparse::values",
                                                    std::size_t(n_c) * std::size_t(tt));
  auto c_norms = bs_alloc_raw<double, MemorySpace>(exec, "nearsparse::spamm::block_sparse::norms",
                                                   std::size_t(n_c));
  c_new.cols_idx = c_cols;
  c_new.values = c_values;
  c_new.norms = c_norms;
  if (n_c > 0) {
    auto tile_bound = bs_alloc_raw<double, MemorySpace>(
        exec, "nearsparse::spamm::block_sparse::tile_bound", std::size_t(n_c));
    int max_row = 0;
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::multiply_longest_row",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, mt),
                            multiply_longest_row_kernel<MemorySpace>{a_row_map},
                            Kokkos::Max<int>(max_row));
    block_sparse_products<Scalar> sp;
    sp.tile = tile;
    sp.tile_rows = mt;
    sp.rows = m_rows;
    sp.cols = n_cols;
    sp.c_tiles = n_c;
    sp.alpha = alpha;
    sp.beta = beta;
    sp.tau = tau;
    sp.a_row_map = a.row_map.data();
    sp.b_row_map = b.row_map.data();
    sp.c_row_map = c_row_map.data();
    sp.a_cols = a.cols_idx.data();
    sp.b_cols = b.cols_idx.data();
    sp.c_cols = c_cols.data();
    sp.a_values = a.values.data();
    sp.b_values = b.values.data();
    sp.a_norms = a.norms.data();
    sp.b_norms = b.norms.data();
    if (with_c) {
      sp.old_row_map = c.row_map.data();
      sp.old_cols = c.cols_idx.data();
      sp.old_values = c.values.data();
    }
    sp.c_values = c_values.data();
    sp.c_norms = c_norms.data();
    sp.tile_bound = tile_bound.data();
    if (!block_sparse_products_specialized(exec, function, choice, sp)) {
      const std::size_t list_bytes = list_view::shmem_size(std::size_t(max_row) + 1);
      const int list_level = scratch_level(list_bytes);
      const auto a_values = a.values;
      const auto b_values = b.values;
      const auto old_row_map = c.row_map;
      const auto old_cols = c.cols_idx;
      const auto old_values = c.values;
      team_policy policy(exec, static_cast<int>(n_c), Kokkos::AUTO);
      policy.set_scratch_size(list_level, Kokkos::PerTeam(list_bytes));
      Kokkos::parallel_for(
          "nearsparse::spamm::block_sparse::multiply_numeric", policy,
          multiply_numeric_kernel<ExecSpace, Scalar, MemorySpace>{
              alpha,       beta,    tau,     with_c,     tile,      tt,        mt,
              m_rows,      n_cols,  max_row, list_level, a_row_map, b_row_map, c_row_map,
              old_row_map, a_cols,  b_cols,  c_cols,     old_cols,  a_values,  b_values,
              old_values,  a_norms, b_norms, c_values,   c_norms,   tile_bound});
    }
    double sq = 0.0;
    Kokkos::parallel_reduce("nearsparse::spamm::block_sparse::multiply_bound",
                            Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<int>(n_c)),
                            multiply_bound_kernel<MemorySpace>{tile_bound}, sq);
    out.bound_sq += sq;
  }
  const double norm_sq = sum_of_squares(exec, c_new.norms, out.non_finite);
  if (out.non_finite > 0) return out;
  out.dropped_sq = compact(exec, c_new, drop_threshold(tolerance, relative, norm_sq),
                           out.tiles_dropped, function);
  return out;
}

}  // namespace nearsparse::spamm::detail
