#pragma once
// The banded CDM product kernel (the published Algorithm 1, made portable): a team computes a
// tile of T compact diagonals of C by T positions; the matching T x T tile of A (T diagonals at
// the same T positions) is staged in team scratch, chunk by chunk, and each element of C adds,
// for every staged diagonal a, A_a[p] * B_((k - a) mod n)[(p + a) mod n] when B stores that
// diagonal. Transposed operands are read through reversed compact diagonals:
// (A^T)_a[p] = A_((n - a) mod n)[(p + a) mod n].

#include <nearsparse/diagonal/detail/indexing.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace nearsparse::diagonal::detail {

/// lookup(k) = the index of k in the ascending `indices`, or -1.
template <class Mem>
struct cdm_lookup_kernel {
  Kokkos::View<int*, Mem> indices;
  Kokkos::View<int*, Mem> lookup;
  int count;

  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    lookup(k) = find_ascending(count, k, [&](const int t) { return indices(t); });
  }
};

/// lookup(k) = the index of k in the ascending `indices`, or -1, for every compact diagonal k.
template <class ExecSpace, class Mem>
void cdm_fill_lookup(const ExecSpace& exec, const Kokkos::View<int*, Mem>& indices,
                     const Kokkos::View<int*, Mem>& lookup) {
  const int count = int(indices.extent(0));
  Kokkos::parallel_for("nearsparse::diagonal::cdm_lookup",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, lookup.extent(0)),
                       cdm_lookup_kernel<Mem>{indices, lookup, count});
}

/// Tile edge: T diagonals by T positions, T * T threads per team on a GPU.
inline constexpr int cdm_tile = 16;

/// One T x T tile of C (T compact diagonals by T positions, a team per tile): the matching tiles
/// of A staged in team scratch chunk by chunk, each element of C summing its products with B.
template <class ExecSpace, class Scalar, class Mem>
struct cdm_banded_multiply_kernel {
  static constexpr int T = cdm_tile;
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scalar_tile = Kokkos::View<Scalar[T][T], typename ExecSpace::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using int_row = Kokkos::View<int[T], typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  int n;
  Scalar alpha;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> a;
  Kokkos::View<int*, Mem> a_logical;
  bool transpose_a;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> b;
  Kokkos::View<int*, Mem> b_lookup;
  bool transpose_b;
  Scalar beta;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> c;
  Kokkos::View<int*, Mem> c_indices;
  int a_count, c_count, position_tiles;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int k0 = (m.league_rank() / position_tiles) * T;
    const int p0 = (m.league_rank() % position_tiles) * T;
    scalar_tile a_tile(m.team_scratch(0));
    scalar_tile acc(m.team_scratch(0));
    int_row a_diag(m.team_scratch(0));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, T * T),
                         [&](const int e) { acc(e / T, e % T) = 0; });
    for (int j0 = 0; j0 < a_count; j0 += T) {
      m.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, T * T), [&](const int e) {
        const int t = e / T, tp = e % T, at = j0 + t, p = p0 + tp;
        const bool in = at < a_count && p < n;
        const int la = at < a_count ? a_logical(at) : -1;
        if (tp == 0) a_diag(t) = la;
        a_tile(t, tp) = in ? a(at, transpose_a ? wrap(p + la, n) : p) : Scalar(0);
      });
      m.team_barrier();
      const int staged = a_count - j0 < T ? a_count - j0 : T;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, T * T), [&](const int e) {
        const int kd = e / T, tp = e % T, p = p0 + tp;
        if (k0 + kd >= c_count || p >= n) return;
        const int k = c_indices(k0 + kd);
        Scalar sum = 0;
        for (int t = 0; t < staged; ++t) {
          const int la = a_diag(t);
          const int lb = wrap(k - la, n);
          const int row = b_lookup(transpose_b ? wrap(n - lb, n) : lb);
          if (row < 0) continue;
          const int q = wrap(p + la, n);
          sum += a_tile(t, tp) * b(row, transpose_b ? wrap(q + lb, n) : q);
        }
        acc(kd, tp) += sum;
      });
    }
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, T * T), [&](const int e) {
      const int kd = e / T, tp = e % T, p = p0 + tp;
      if (k0 + kd >= c_count || p >= n) return;
      const Scalar v = alpha * acc(kd, tp);
      c(k0 + kd, p) = beta == Scalar(0) ? v : v + beta * c(k0 + kd, p);
    });
  }
};

template <class ExecSpace, class Scalar, class Mem>
void cdm_banded_multiply(const ExecSpace& exec, int n, Scalar alpha,
                         const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& a,
                         const Kokkos::View<int*, Mem>& a_logical, bool transpose_a,
                         const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& b,
                         const Kokkos::View<int*, Mem>& b_lookup, bool transpose_b, Scalar beta,
                         const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& c,
                         const Kokkos::View<int*, Mem>& c_indices) {
  constexpr int T = cdm_tile;
  const int a_count = int(a.extent(0));
  const int c_count = int(c.extent(0));
  const int position_tiles = (n + T - 1) / T;
  const int league = ((c_count + T - 1) / T) * position_tiles;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using kernel = cdm_banded_multiply_kernel<ExecSpace, Scalar, Mem>;
  const std::size_t scratch = 2 * kernel::scalar_tile::shmem_size() + kernel::int_row::shmem_size();
  const int team = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : T * T;
  Kokkos::parallel_for("nearsparse::diagonal::cdm_multiply_banded",
                       policy(exec, league, team).set_scratch_size(0, Kokkos::PerTeam(scratch)),
                       kernel{n, alpha, a, a_logical, transpose_a, b, b_lookup, transpose_b, beta,
                              c, c_indices, a_count, c_count, position_tiles});
}

/// Positions of C one host task handles.
inline constexpr int cdm_host_chunk = 512;

/// One (compact diagonal of C, chunk of positions) task: the multiply-adds of every stored
/// diagonal of A whose partner in B exists, split where the shifted indices wrap around.
template <class Scalar, class Mem>
struct cdm_banded_multiply_host_kernel {
  static constexpr int chunk = cdm_host_chunk;

  int n;
  Scalar alpha;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> a;
  Kokkos::View<int*, Mem> a_logical;
  bool transpose_a;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> b;
  Kokkos::View<int*, Mem> b_lookup;
  bool transpose_b;
  Scalar beta;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem> c;
  Kokkos::View<int*, Mem> c_indices;
  int a_count, chunks;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t task) const {
    const int row_c = int(task / chunks);
    const int p0 = int(task % chunks) * chunk;
    const int p1 = p0 + chunk < n ? p0 + chunk : n;
    const int k = c_indices(row_c);
    Scalar acc[chunk];
    for (int p = p0; p < p1; ++p) acc[p - p0] = 0;
    for (int at = 0; at < a_count; ++at) {
      const int la = a_logical(at);
      const int lb = wrap(k - la, n);
      const int row_b = b_lookup(transpose_b ? wrap(n - lb, n) : lb);
      if (row_b < 0) continue;
      // Entry p reads A at (p + sa) mod n and B at (p + sb) mod n.
      const int sa = transpose_a ? la : 0;
      const int sb = transpose_b ? wrap(la + lb, n) : la;
      const Scalar* pa = &a(at, 0);
      const Scalar* pb = &b(row_b, 0);
      int p = p0;
      while (p < p1) {
        const int qa = p + sa >= n ? p + sa - n : p + sa;
        const int qb = p + sb >= n ? p + sb - n : p + sb;
        // Run until either index wraps or the chunk ends.
        int end = p1;
        if (p + (n - qa) < end) end = p + (n - qa);
        if (p + (n - qb) < end) end = p + (n - qb);
        const Scalar* xa = pa + (qa - p);
        const Scalar* xb = pb + (qb - p);
        Scalar* out = acc - p0;
        for (int q = p; q < end; ++q) out[q] += xa[q] * xb[q];
        p = end;
      }
    }
    for (int p = p0; p < p1; ++p) {
      const Scalar v = alpha * acc[p - p0];
      c(row_c, p) = beta == Scalar(0) ? v : v + beta * c(row_c, p);
    }
  }
};

/// The host form: one task per (compact diagonal of C, chunk of positions); for every stored
/// diagonal of A whose partner in B exists, a multiply-add over the chunk split where the shifted
/// indices wrap around, so each piece is a unit-stride loop the compiler vectorizes. The
/// portable team kernel above runs on the host too, but its per-element lookups keep it scalar.
template <class ExecSpace, class Scalar, class Mem>
void cdm_banded_multiply_host(const ExecSpace& exec, int n, Scalar alpha,
                              const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& a,
                              const Kokkos::View<int*, Mem>& a_logical, bool transpose_a,
                              const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& b,
                              const Kokkos::View<int*, Mem>& b_lookup, bool transpose_b,
                              Scalar beta,
                              const Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>& c,
                              const Kokkos::View<int*, Mem>& c_indices) {
  constexpr int chunk = cdm_host_chunk;
  const int a_count = int(a.extent(0));
  const int c_count = int(c.extent(0));
  const int chunks = (n + chunk - 1) / chunk;
  Kokkos::parallel_for("nearsparse::diagonal::cdm_multiply_banded",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, std::int64_t(c_count) * chunks),
                       cdm_banded_multiply_host_kernel<Scalar, Mem>{
                           n, alpha, a, a_logical, transpose_a, b, b_lookup, transpose_b, beta, c,
                           c_indices, a_count, chunks});
}

}  // namespace nearsparse::diagonal::detail
