#pragma once
// Numeric kernels of the HM product C = alpha op(A) op(B) + beta C over the pairs of the symbolic
// phase (detail/hm_symbolic.hpp).

#include <nearsparse/diagonal/detail/hm_symbolic.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::diagonal::detail {

/// The symbolic product on the device: one allocation holding every array (a product that also
/// builds its plan pays for one allocation and one copy, not six).
template <class Mem>
struct hm_device_pairs {
  template <class T>
  using array = Kokkos::View<T*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<index_type*, Mem> storage;
  array<hm_pair> pairs;
  array<index_type> pair_ptr;
  array<index_type> chunk_ptr;
  array<index_type> c_starts;
  array<index_type> a_ptr;
  array<index_type> a_order;
  index_type chunks = 0;
};

static_assert(sizeof(hm_pair) == 4 * sizeof(index_type), "hm_pair packs into four words");

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

/// One team per chunk of hm_chunk positions of one C diagonal; one thread per position, summing
/// that diagonal's pairs in a register. The loads of A and B are unit-stride across the team.
template <class ExecSpace, class Scalar, class Mem>
void hm_output_stationary_device(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                                 Scalar alpha, const Kokkos::View<Scalar*, Mem>& a,
                                 const Kokkos::View<Scalar*, Mem>& b, Scalar beta,
                                 const Kokkos::View<Scalar*, Mem>& c) {
  const auto pairs = plan.pairs;
  const auto pair_ptr = plan.pair_ptr;
  const auto chunk_ptr = plan.chunk_ptr;
  const auto c_starts = plan.c_starts;
  const int c_diagonals = int(chunk_ptr.extent(0));
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  // On a GPU one thread per position; a host team (one thread) walks the chunk.
  const int team =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : hm_chunk;
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_multiply_output_stationary", policy(exec, plan.chunks, team),
      KOKKOS_LAMBDA(const typename policy::member_type& m) {
        const index_type chunk = m.league_rank();
        const int ci = upper_index(chunk_ptr, c_diagonals, chunk);
        const index_type c0 = c_starts(ci);
        const index_type len = c_starts(ci + 1) - c0;
        const index_type first = (chunk - chunk_ptr(ci)) * hm_chunk;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, hm_chunk), [&](const int r) {
          const index_type q = first + r;
          if (q >= len) return;
          Scalar acc = 0;
          const index_type end = pair_ptr(ci + 1);
          for (index_type p = pair_ptr(ci); p < end; ++p) {
            const hm_pair pr = pairs(p);
            if (q >= pr.qlo && q < pr.qhi) acc += a(pr.a_base + q) * b(pr.b_base + q);
          }
          c(c0 + q) = beta == Scalar(0) ? alpha * acc : alpha * acc + beta * c(c0 + q);
        });
      });
}

/// The host form: one task per chunk, pairs outer and positions inner, so each pair is a
/// unit-stride loop the compiler vectorizes.
template <class ExecSpace, class Scalar, class Mem>
void hm_output_stationary_host(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
                               Scalar alpha, const Kokkos::View<Scalar*, Mem>& a,
                               const Kokkos::View<Scalar*, Mem>& b, Scalar beta,
                               const Kokkos::View<Scalar*, Mem>& c) {
  const auto pairs = plan.pairs;
  const auto pair_ptr = plan.pair_ptr;
  const auto chunk_ptr = plan.chunk_ptr;
  const auto c_starts = plan.c_starts;
  const int c_diagonals = int(chunk_ptr.extent(0));
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_multiply_output_stationary",
      Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(exec, 0, plan.chunks),
      KOKKOS_LAMBDA(const index_type chunk) {
        const int ci = upper_index(chunk_ptr, c_diagonals, chunk);
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
          c(c0 + q) =
              beta == Scalar(0) ? alpha * acc[q - q0] : alpha * acc[q - q0] + beta * c(c0 + q);
      });
}

/// The published kernel: one thread per stored element of A, which finds its diagonal by binary
/// search over A's starts and adds its product with every meeting diagonal of B into C
/// atomically. C is scaled by beta first.
template <class ExecSpace, class Scalar, class Mem>
void hm_atomic(const ExecSpace& exec, const hm_device_pairs<Mem>& plan,
               const Kokkos::View<index_type*, Mem>& a_starts, Scalar alpha,
               const Kokkos::View<Scalar*, Mem>& a, const Kokkos::View<Scalar*, Mem>& b,
               Scalar beta, const Kokkos::View<Scalar*, Mem>& c) {
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_multiply_scale_c",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, c.extent(0)),
      KOKKOS_LAMBDA(const index_type e) { c(e) = beta == Scalar(0) ? Scalar(0) : beta * c(e); });
  const auto pairs = plan.pairs;
  const auto a_ptr = plan.a_ptr;
  const auto a_order = plan.a_order;
  const int a_diagonals = int(a_starts.extent(0));
  Kokkos::parallel_for(
      "nearsparse::diagonal::hm_multiply_atomic",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, a.extent(0)), KOKKOS_LAMBDA(const index_type e) {
        const int ta = upper_index(a_starts, a_diagonals, e);
        const Scalar av = alpha * a(e);
        const index_type end = a_ptr(ta + 1);
        for (index_type k = a_ptr(ta); k < end; ++k) {
          const hm_pair pr = pairs(a_order(k));
          const index_type q = e - pr.a_base;
          if (q >= pr.qlo && q < pr.qhi)
            Kokkos::atomic_add(&c(pr.c_start + q), av * b(pr.b_base + q));
        }
      });
}

}  // namespace nearsparse::diagonal::detail
