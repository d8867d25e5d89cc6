// The host backends' CDM product (include/nearsparse/diagonal/detail/cdm_product_dispatch.hpp):
// C = alpha op(A) op(B) + beta C on Kokkos::OpenMP and Kokkos::Serial for matrices in HostSpace.
//
// A task computes a block of host_block positions of a group of host_rows compact diagonals of
// C; the tasks are dealt cyclically over the threads (src/core/host/cyclic_tasks.hpp), the groups
// of one block next to each other, so that a thread's consecutive tasks read the same segments of
// A and overlapping ones of B from its caches. The terms of compact diagonal k are the stored
// diagonals a of A whose partner (k - a) mod n B stores; each term reads A and B at shifted
// positions that wrap around at n. Every position adds its terms in the order of A's diagonals,
// starting from zero, as the portable host kernel does, in either of two forms:
//
// - Registers: where op(B) is B itself, term a reads B at the same shift (a) for every compact
//   diagonal of C, and A at a shift that depends on a alone. The group's sums stay in SIMD
//   registers while its whole term list passes: each load of A serves host_rows multiply-adds,
//   each sum is stored once. It takes blocks where no read wraps and groups of at most
//   host_max_terms terms. It is compiled at the baseline instruction set and, on x86-64 with GCC
//   or Clang, for AVX2 with FMA and for AVX-512 (per-function targets, the widest the processor
//   runs chosen at run time, so the build sets no instruction set).
// - Fused, one compact diagonal at a time, for the other blocks and transposed B: four terms per
//   pass, the block cut where any of the four wraps, and over each piece the four products added
//   in one unit-stride loop (nine loads and one store per four multiply-adds, where one term at a
//   time costs three loads and a store each); remaining terms go one at a time.

#include <nearsparse/diagonal/cdm_product.hpp>
#include <nearsparse/diagonal/detail/cdm_product_dispatch.hpp>

#include "../core/host/cyclic_tasks.hpp"
#include "../core/host/vector_targets.hpp"
#include "host_fused_sums.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace nearsparse::diagonal::detail {

namespace {

/// Positions of C a task computes (4 KB of sums in double).
constexpr int host_block = 512;

using host::add_four;
using host::add_one;

/// One term of a compact diagonal of C: position p adds a[(p + sa) mod n] b[(p + sb) mod n].
template <class Scalar>
struct term {
  const Scalar* a;
  const Scalar* b;
  int sa, sb;  // in [0, n)
};

/// Where a term's reads start for a piece beginning at position p (no wrap inside the piece).
template <class Scalar>
inline const Scalar* shifted(const Scalar* x, int p, int s, int n) {
  const int q = p + s >= n ? p + s - n : p + s;
  return x + q;
}

/// Adds up to four terms over positions [p0, p1) into acc (indexed by position - p0).
template <class Scalar>
void add_terms(Scalar* acc, int p0, int p1, int n, const term<Scalar>* t, int count) {
  if (count < 4) {
    for (int i = 0; i < count; ++i) {
      int p = p0;
      while (p < p1) {
        // Run until either index wraps or the block ends.
        int end = p1;
        const int qa = p + t[i].sa >= n ? p + t[i].sa - n : p + t[i].sa;
        const int qb = p + t[i].sb >= n ? p + t[i].sb - n : p + t[i].sb;
        end = std::min(end, p + (n - qa));
        end = std::min(end, p + (n - qb));
        add_one(acc + (p - p0), t[i].a + qa, t[i].b + qb, end - p);
        p = end;
      }
    }
    return;
  }
  // The pieces: the block cut at every position where one of the four reads wraps.
  int cuts[10];
  int nc = 0;
  cuts[nc++] = p0;
  for (int i = 0; i < 8; ++i) {
    const int s = i % 2 == 0 ? t[i / 2].sa : t[i / 2].sb;
    const int at = n - s;  // (p + s) wraps at p = n - s
    if (s > 0 && at > p0 && at < p1) cuts[nc++] = at;
  }
  // Insertion sort of at most eight cuts (std::sort's 16-element insertion stage on this small
  // array draws GCC's -Warray-bounds).
  for (int k = 2; k < nc; ++k)
    for (int j = k; j > 1 && cuts[j - 1] > cuts[j]; --j) std::swap(cuts[j - 1], cuts[j]);
  cuts[nc++] = p1;
  for (int k = 0; k + 1 < nc; ++k) {
    const int p = cuts[k], end = cuts[k + 1];
    if (end <= p) continue;
    add_four(acc + (p - p0), shifted(t[0].a, p, t[0].sa, n), shifted(t[0].b, p, t[0].sb, n),
             shifted(t[1].a, p, t[1].sa, n), shifted(t[1].b, p, t[1].sb, n),
             shifted(t[2].a, p, t[2].sa, n), shifted(t[2].b, p, t[2].sb, n),
             shifted(t[3].a, p, t[3].sa, n), shifted(t[3].b, p, t[3].sb, n), end - p);
  }
}

/// Compact diagonals of C one task of the register form computes together.
constexpr int host_rows = 4;
/// Terms of one group the register form takes (its tables live on the stack).
constexpr int host_max_terms = 128;

/// One task of the register form, positions p0 + i for i < len: for each term j (A's order)
/// where A's values for position p0 start (a[j]) and B's for each diagonal of the group (b[j][r],
/// nullptr where that diagonal has no partner in B for the term); where each diagonal's block of
/// C starts (nullptr past the group's last diagonal).
template <class Scalar>
struct row_group {
  int terms = 0;
  int len = 0;
  Scalar alpha = 1, beta = 0;
  Scalar* out[host_rows] = {};
  const Scalar* a[host_max_terms];
  const Scalar* b[host_max_terms][host_rows];
  bool full[host_max_terms];  // every diagonal of the group has the term
};

/// out = alpha sum + beta out for one position of one diagonal (out unread with beta = 0).
template <class Scalar>
NEARSPARSE_HOST_INLINE void store_one(Scalar* out, Scalar sum, Scalar alpha, Scalar beta) {
  *out = beta == Scalar(0) ? alpha * sum : alpha * sum + beta * *out;
}

/// Positions past the last whole step of the register form, one at a time, in the same order.
template <class Scalar>
NEARSPARSE_HOST_INLINE void group_tail(const row_group<Scalar>& g, int from) {
  for (int r = 0; r < host_rows; ++r) {
    if (!g.out[r]) continue;
    for (int i = from; i < g.len; ++i) {
      Scalar s = Scalar(0);
      for (int j = 0; j < g.terms; ++j)
        if (g.b[j][r]) s += g.a[j][i] * g.b[j][r][i];
      store_one(g.out[r] + i, s, g.alpha, g.beta);
    }
  }
}

#if NEARSPARSE_HOST_VECTORS
/// The register form over vectors of Bytes bytes, Steps of them per diagonal: host_rows x Steps
/// sums in registers while the whole term list passes.
template <class Scalar, int Bytes, int Steps>
NEARSPARSE_HOST_INLINE void group_vectors(const row_group<Scalar>& g) {
  typedef Scalar vec __attribute__((vector_size(Bytes)));
  constexpr int lanes = Bytes / int(sizeof(Scalar));
  constexpr int width = lanes * Steps;
  int i = 0;
  for (; i + width <= g.len; i += width) {
    vec sum[host_rows][Steps];
    for (int r = 0; r < host_rows; ++r)
      for (int u = 0; u < Steps; ++u) sum[r][u] = vec{} + Scalar(0);
    for (int j = 0; j < g.terms; ++j) {
      vec a[Steps];
      for (int u = 0; u < Steps; ++u) __builtin_memcpy(&a[u], g.a[j] + i + u * lanes, sizeof(vec));
      const bool full = g.full[j];
      for (int r = 0; r < host_rows; ++r) {
        if (!full && !g.b[j][r]) continue;
        for (int u = 0; u < Steps; ++u) {
          vec b;
          __builtin_memcpy(&b, g.b[j][r] + i + u * lanes, sizeof b);
          sum[r][u] += a[u] * b;
        }
      }
    }
    for (int r = 0; r < host_rows; ++r) {
      if (!g.out[r]) continue;
      for (int u = 0; u < Steps; ++u) {
        Scalar* const o = g.out[r] + i + u * lanes;
        vec v = g.alpha * sum[r][u];
        if (g.beta != Scalar(0)) {
          vec old;
          __builtin_memcpy(&old, o, sizeof old);
          v += g.beta * old;
        }
        __builtin_memcpy(o, &v, sizeof v);
      }
    }
  }
  group_tail(g, i);
}

template <class Scalar>
void group_baseline(const row_group<Scalar>& g) {
  // Two 16-byte vectors per diagonal: 8 sums, within the 16 SSE registers.
  group_vectors<Scalar, 16, 2>(g);
}

#if NEARSPARSE_HOST_WIDE
template <class Scalar>
__attribute__((target("avx2,fma"))) void group_avx2(const row_group<Scalar>& g) {
  // Two 32-byte vectors per diagonal: 8 of the 16 AVX registers hold sums, enough independent
  // chains to cover the FMA latency.
  group_vectors<Scalar, 32, 2>(g);
}

template <class Scalar>
__attribute__((target("avx512f,avx2,fma"))) void group_avx512(const row_group<Scalar>& g) {
  // Two 64-byte vectors per diagonal: 8 of the 32 registers hold sums, 16 doubles of each
  // diagonal per pass over the terms.
  group_vectors<Scalar, 64, 2>(g);
}
#endif
#else
template <class Scalar>
void group_baseline(const row_group<Scalar>& g) {
  group_tail(g, 0);
}
#endif

template <class Scalar>
using group_fn = void (*)(const row_group<Scalar>&);

/// The widest copy of the register form this processor runs, up to `widest` (2 AVX-512, 1 AVX2
/// with FMA, 0 the baseline).
template <class Scalar>
group_fn<Scalar> choose_group(int widest) {
#if NEARSPARSE_HOST_WIDE
  const int level = std::min(widest, nearsparse::detail::host_vector_level());
  if (level >= 2) return &group_avx512<Scalar>;
  if (level == 1) return &group_avx2<Scalar>;
#else
  (void)widest;
#endif
  return &group_baseline<Scalar>;
}

/// Whether a read at shift s (in [0, n)) wraps inside positions [p0, p1).
inline bool wraps_inside(int s, int p0, int p1, int n) {
  const int at = n - s;
  return s > 0 && at > p0 && at < p1;
}

template <class Exec, class Scalar>
void host_kernel(const Exec& exec, int n, Scalar alpha, const Scalar* a, const int* a_logical,
                 int a_count, bool ta, const Scalar* b, const int* b_lookup, bool tb, Scalar beta,
                 Scalar* c, const int* c_indices, int c_count, int widest) {
  const int blocks = (n + host_block - 1) / host_block;
  const int groups = (c_count + host_rows - 1) / host_rows;
  const std::int64_t tasks = std::int64_t(groups) * blocks;
  if (tasks == 0) return;
  const group_fn<Scalar> registers = choose_group<Scalar>(widest);
  // The fused form for one compact diagonal of C over [p0, p1).
  const auto fused = [=](int row_c, int p0, int p1) {
    const int k = c_indices[row_c];
    Scalar acc[host_block];
    for (int i = 0; i < p1 - p0; ++i) acc[i] = Scalar(0);
    term<Scalar> group[4];
    int pending = 0;
    for (int at = 0; at < a_count; ++at) {
      const int la = a_logical[at];
      const int lb = wrap(k - la, n);
      const int row_b = b_lookup[tb ? wrap(n - lb, n) : lb];
      if (row_b < 0) continue;
      // Entry p reads A at (p + sa) mod n and B at (p + sb) mod n.
      group[pending++] = {a + std::int64_t(at) * n, b + std::int64_t(row_b) * n, ta ? la : 0,
                          tb ? wrap(la + lb, n) : la};
      if (pending == 4) {
        add_terms(acc, p0, p1, n, group, 4);
        pending = 0;
      }
    }
    add_terms(acc, p0, p1, n, group, pending);
    host::store_scaled(c + std::int64_t(row_c) * n + p0, acc, alpha, beta, p1 - p0);
  };
  // The register form's tables for a group of diagonals over [p0, p1); false where it does not
  // apply (a read wraps inside the block, or too many terms).
  const auto tabulate = [=](row_group<Scalar>& g, int first, int rows, int p0, int p1) {
    g.len = p1 - p0;
    g.alpha = alpha;
    g.beta = beta;
    for (int r = 0; r < host_rows; ++r)
      g.out[r] = r < rows ? c + std::int64_t(first + r) * n + p0 : nullptr;
    int terms = 0;
    for (int at = 0; at < a_count; ++at) {
      const int la = a_logical[at];
      const int sa = ta ? la : 0, sb = la;  // B not transposed: the same shift for every row
      bool any = false, all = true;
      for (int r = 0; r < host_rows; ++r) {
        int row_b = -1;
        if (r < rows) row_b = b_lookup[wrap(c_indices[first + r] - la, n)];
        g.b[terms][r] = row_b < 0
                            ? nullptr
                            : b + std::int64_t(row_b) * n + (p0 + sb >= n ? p0 + sb - n : p0 + sb);
        any = any || row_b >= 0;
        all = all && row_b >= 0;
      }
      if (!any) continue;
      if (terms == host_max_terms || wraps_inside(sa, p0, p1, n) || wraps_inside(sb, p0, p1, n))
        return false;
      g.a[terms] = a + std::int64_t(at) * n + (p0 + sa >= n ? p0 + sa - n : p0 + sa);
      g.full[terms] = all;
      ++terms;
    }
    g.terms = terms;
    return true;
  };
  const auto body = [=](const std::int64_t task) {
    const int first = int(task % groups) * host_rows;
    const int rows = std::min(host_rows, c_count - first);
    const int p0 = int(task / groups) * host_block;
    const int p1 = std::min(p0 + host_block, n);
    if (!tb) {
      row_group<Scalar> g;
      if (tabulate(g, first, rows, p0, p1)) {
        registers(g);
        return;
      }
    }
    for (int r = 0; r < rows; ++r) fused(first + r, p0, p1);
  };
  nearsparse::detail::for_each_task_cyclic(exec, "nearsparse::diagonal::cdm_multiply_host", tasks,
                                           body);
}

template <class Exec, class Scalar>
void with_plan(const Exec& exec, const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan,
               Scalar alpha, const cdm_matrix<Scalar, Kokkos::HostSpace>& a,
               const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
               const cdm_matrix<Scalar, Kokkos::HostSpace>& c, int widest) {
  host_kernel(exec, plan.size(), alpha, a.values().data(), plan.a_logical().data(),
              a.diagonal_count(), plan.op_a() == op::transpose, b.values().data(),
              b.lookup().data(), plan.op_b() == op::transpose, beta, c.values().data(),
              c.indices().data(), c.diagonal_count(), widest);
}

}  // namespace

// The overloads, one definition per execution space.
#define NEARSPARSE_HOST_CDM_PRODUCT(EXEC)                                                         \
  template <class Scalar>                                                                         \
  void cdm_multiply_host(const EXEC& exec,                                                        \
                         const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,   \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& a,                          \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,             \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& c, int widest) {            \
    with_plan(exec, plan, alpha, a, b, beta, c, widest);                                          \
  }                                                                                               \
  template void cdm_multiply_host<double>(                                                        \
      const EXEC&, const cdm_product_plan<double, Kokkos::HostSpace>&, double,                    \
      const cdm_matrix<double, Kokkos::HostSpace>&, const cdm_matrix<double, Kokkos::HostSpace>&, \
      double, const cdm_matrix<double, Kokkos::HostSpace>&, int);                                 \
  template void cdm_multiply_host<float>(                                                         \
      const EXEC&, const cdm_product_plan<float, Kokkos::HostSpace>&, float,                      \
      const cdm_matrix<float, Kokkos::HostSpace>&, const cdm_matrix<float, Kokkos::HostSpace>&,   \
      float, const cdm_matrix<float, Kokkos::HostSpace>&, int);

#ifdef KOKKOS_ENABLE_OPENMP
NEARSPARSE_HOST_CDM_PRODUCT(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_SERIAL
NEARSPARSE_HOST_CDM_PRODUCT(Kokkos::Serial)
#endif
#undef NEARSPARSE_HOST_CDM_PRODUCT

}  // namespace nearsparse::diagonal::detail
