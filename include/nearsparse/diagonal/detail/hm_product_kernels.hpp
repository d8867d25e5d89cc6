#pragma once
// Numeric kernels of the HM product C = alpha op(A) op(B) + beta C over the pairs of the symbolic
// phase (detail/hm_symbolic.hpp).

#include <nearsparse/diagonal/detail/hm_device_pairs.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::diagonal::detail {

/// Largest t with ptr(t) <= x, for ptr ascending with ptr(0) <= x.
template <class View>
KOKKOS_INLINE_FUNCTION int upper_index(const View& ptr, int size, index_type x) {
  int lo = 0, hi = size - 1;  // ptr(lo) <= x < ptr(hi) once narrowed
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (ptr(mid) <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Sums of the pairs meeting on one chunk of hm_chunk positions of one C diagonal (a team per
/// chunk, per_thread positions a thread), scaled into C.
template <class ExecSpace, class Scalar, class Mem>
struct hm_output_stationary_device_kernel {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  template <class T>
  using array = typename hm_device_pairs<Mem>::template array<T>;
  static constexpr int team =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : 64;
  static constexpr int per_thread = hm_chunk / team;

  array<hm_pair> pairs;
  array<index_type> pair_ptr;
  array<index_type> chunk_ptr;
  array<int> chunk_diagonal;
  array<index_type> c_starts;
  Scalar alpha;
  Kokkos::View<Scalar*, Mem> a;
  Kokkos::View<Scalar*, Mem> b;
  Scalar beta;
  Kokkos::View<Scalar*, Mem> c;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const index_type chunk = m.league_rank();
    const int ci = chunk_diagonal(chunk);
    const index_type c0 = c_starts(ci);
    const index_type len = c_starts(ci + 1) - c0;
    const index_type first = (chunk - chunk_ptr(ci)) * hm_chunk + m.team_rank();
    Scalar acc[per_thread];
    for (int j = 0; j < per_thread; ++j) acc[j] = 0;
    const index_type end = pair_ptr(ci + 1);
    for (index_type p = pair_ptr(ci); p < end; ++p) {
      const hm_pair pr = pairs(p);
      const Scalar* pa = a.data() + pr.a_base;
      const Scalar* pb = b.data() + pr.b_base;
      for (int j = 0; j < per_thread; ++j) {
        const index_type q = first + j * team;
        if (q >= pr.qlo && q < pr.qhi) acc[j] += pa[q] * pb[q];  // qhi <= len
      }
    }
    for (int j = 0; j < per_thread; ++j) {
      const index_type q = first + j * team;
      if (q < len)
        c(c0 + q) = beta == Scalar(0) ? alpha * acc[j] : alpha * acc[j] + beta * c(c0 + q);
    }
  }
};

/// One team per chunk of hm_chunk positions of one C diagonal. On a GPU a team has 64 threads,
/// each summing 4 positions (64 apart, so loads stay unit-stride across the team) in registers:
/// each pair is read once for 4 positions and a thread has 4 independent loads in flight. Host
/// backends (one-thread teams) run the same code with the whole chunk in one thread.
template <class ExecSpace, class Scalar, class Mem>
void hm_output_stationary_device(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                                 Scalar alpha, const Kokkos::View<Scalar*, Mem>& a,
                                 const Kokkos::View<Scalar*, Mem>& b, Scalar beta,
                                 const Kokkos::View<Scalar*, Mem>& c) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using kernel = hm_output_stationary_device_kernel<ExecSpace, Scalar, Mem>;
  Kokkos::parallel_for("nearsparse::diagonal::hm_multiply_output_stationary",
                       policy(exec, plan.chunks, kernel::team),
                       kernel{plan.pairs, plan.pair_ptr, plan.chunk_ptr, plan.chunk_diagonal,
                              plan.c_starts, alpha, a, b, beta, c});
}

/// Sums of the pairs meeting on one chunk of hm_chunk positions of one C diagonal (a task per
/// chunk, pairs outer and positions inner), scaled into C.
template <class Scalar, class Mem>
struct hm_output_stationary_host_kernel {
  template <class T>
  using array = typename hm_device_pairs<Mem>::template array<T>;

  array<hm_pair> pairs;
  array<index_type> pair_ptr;
  array<index_type> chunk_ptr;
  array<int> chunk_diagonal;
  array<index_type> c_starts;
  Scalar alpha;
  Kokkos::View<Scalar*, Mem> a;
  Kokkos::View<Scalar*, Mem> b;
  Scalar beta;
  Kokkos::View<Scalar*, Mem> c;

  KOKKOS_INLINE_FUNCTION void operator()(const index_type chunk) const {
    const int ci = chunk_diagonal(chunk);
    const index_type c0 = c_starts(ci);
    const index_type len = c_starts(ci + 1) - c0;
    const index_type q0 = (chunk - chunk_ptr(ci)) * hm_chunk;
    const index_type q1 = q0 + hm_chunk < len ? q0 + hm_chunk : len;
    Scalar acc[hm_chunk];
    for (index_type q = q0; q < q1; ++q) acc[q - q0] = 0;
    const index_type end = pair_ptr(ci + 1);
    for (index_type p = pair_ptr(ci); p < end; ++p) {
      const hm_pair pr = pairs(p);
      const index_type lo = pr.qlo > q0 ? pr.qlo : q0;
      const index_type hi = pr.qhi < q1 ? pr.qhi : q1;
      const Scalar* pa = a.data() + pr.a_base;
      const Scalar* pb = b.data() + pr.b_base;
      Scalar* out = acc - q0;
      for (index_type q = lo; q < hi; ++q) out[q] += pa[q] * pb[q];
    }
    for (index_type q = q0; q < q1; ++q)
      c(c0 + q) = beta == Scalar(0) ? alpha * acc[q - q0] : alpha * acc[q - q0] + beta * c(c0 + q);
  }
};

/// The host form: one task per chunk, pairs outer and positions inner, so each pair is a
/// unit-stride loop the compiler vectorizes.
template <class ExecSpace, class Scalar, class Mem>
void hm_output_stationary_host(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                               Scalar alpha, const Kokkos::View<Scalar*, Mem>& a,
                               const Kokkos::View<Scalar*, Mem>& b, Scalar beta,
                               const Kokkos::View<Scalar*, Mem>& c) {
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_multiply_output_stationary",
      Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(exec, 0, plan.chunks),
      hm_output_stationary_host_kernel<Scalar, Mem>{plan.pairs, plan.pair_ptr, plan.chunk_ptr,
                                                    plan.chunk_diagonal, plan.c_starts, alpha, a, b,
                                                    beta, c});
}

/// c(e) = beta c(e), or 0 when beta is 0.
template <class Scalar, class Mem>
struct hm_scale_c_kernel {
  Kokkos::View<Scalar*, Mem> c;
  Scalar beta;

  KOKKOS_INLINE_FUNCTION void operator()(const index_type e) const {
    c(e) = beta == Scalar(0) ? Scalar(0) : beta * c(e);
  }
};

/// alpha A(e) times every meeting element of B, added atomically into C, for stored element e of
/// A (its diagonal found by binary search over A's starts).
template <class Scalar, class Mem>
struct hm_atomic_kernel {
  template <class T>
  using array = typename hm_device_pairs<Mem>::template array<T>;

  Kokkos::View<int*, Mem> a_offsets;
  Kokkos::View<index_type*, Mem> a_starts;
  Scalar alpha;
  Kokkos::View<Scalar*, Mem> a;
  Kokkos::View<int*, Mem> b_offsets;
  Kokkos::View<index_type*, Mem> b_starts;
  Kokkos::View<Scalar*, Mem> b;
  Kokkos::View<Scalar*, Mem> c;
  array<int> c_index;
  array<index_type> c_starts;
  int m, k, n, c_lo;
  bool at, bt;
  int a_diagonals, b_diagonals;

  KOKKOS_INLINE_FUNCTION void operator()(const index_type e) const {
    const int ta = upper_index(a_starts, a_diagonals + 1, e);
    const int da = at ? -a_offsets(ta) : a_offsets(ta);
    const Scalar av = alpha * a(e);
    for (int tb = 0; tb < b_diagonals; ++tb) {
      hm_pair pr;
      const int db = bt ? -b_offsets(tb) : b_offsets(tb);
      if (!hm_make_pair(m, k, n, da, a_starts(ta), db, b_starts(tb), pr)) continue;
      const index_type q = e - pr.a_base;
      if (q >= pr.qlo && q < pr.qhi)
        Kokkos::atomic_add(&c(c_starts(c_index(da + db - c_lo)) + q), av * b(pr.b_base + q));
    }
  }
};

/// The published kernel: one thread per stored element of A, which finds its diagonal by binary
/// search over A's starts and adds its product with every meeting diagonal of B into C
/// atomically. C is scaled by beta first.
template <class ExecSpace, class Scalar, class Mem>
void hm_atomic(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
               const Kokkos::View<int*, Mem>& a_offsets,
               const Kokkos::View<index_type*, Mem>& a_starts, Scalar alpha,
               const Kokkos::View<Scalar*, Mem>& a, const Kokkos::View<int*, Mem>& b_offsets,
               const Kokkos::View<index_type*, Mem>& b_starts, const Kokkos::View<Scalar*, Mem>& b,
               Scalar beta, const Kokkos::View<Scalar*, Mem>& c) {
  Kokkos::parallel_for("nearsparse::diagonal::hm_multiply_scale_c",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, c.extent(0)),
                       hm_scale_c_kernel<Scalar, Mem>{c, beta});
  const int m = plan.rows, k = plan.inner, n = plan.cols, c_lo = plan.c_lo;
  const bool at = plan.a_transposed, bt = plan.b_transposed;
  const int a_diagonals = int(a_offsets.extent(0)), b_diagonals = int(b_offsets.extent(0));
  Kokkos::parallel_for("nearsparse::diagonal::hm_multiply_atomic",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, a.extent(0)),
                       hm_atomic_kernel<Scalar, Mem>{a_offsets, a_starts, alpha, a, b_offsets,
                                                     b_starts, b, c, plan.c_index, plan.c_starts, m,
                                                     k, n, c_lo, at, bt, a_diagonals, b_diagonals});
}

}  // namespace nearsparse::diagonal::detail
