// The host backends' CDM product (include/nearsparse/diagonal/detail/cdm_product_dispatch.hpp):
// C = alpha op(A) op(B) + beta C on Kokkos::OpenMP and Kokkos::Serial for matrices in HostSpace.
//
// A task computes a block of host_block positions of one compact diagonal k of C; the tasks are
// dealt cyclically over the threads (src/core/host/cyclic_tasks.hpp). Its terms are the stored
// diagonals a of A whose partner (k - a) mod n B stores; each term reads A and B at shifted
// positions that wrap around at n. Four terms are fused per pass: the block is cut where any of the
// four wraps, and over each piece the four products are added in one unit-stride loop (nine loads
// and one store per four multiply-adds, where one term at a time costs three loads and a store
// each). Remaining terms go one at a time. Every position adds its terms in the order of A's
// diagonals, starting from zero, as the portable host kernel does.

#include <nearsparse/diagonal/cdm_product.hpp>
#include <nearsparse/diagonal/detail/cdm_product_dispatch.hpp>

#include "../core/host/cyclic_tasks.hpp"
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

template <class Exec, class Scalar>
void host_kernel(const Exec& exec, int n, Scalar alpha, const Scalar* a, const int* a_logical,
                 int a_count, bool ta, const Scalar* b, const int* b_lookup, bool tb, Scalar beta,
                 Scalar* c, const int* c_indices, int c_count) {
  const int blocks = (n + host_block - 1) / host_block;
  const std::int64_t tasks = std::int64_t(c_count) * blocks;
  if (tasks == 0) return;
  const auto body = [=](const std::int64_t task) {
    const int row_c = int(task / blocks);
    const int p0 = int(task % blocks) * host_block;
    const int p1 = std::min(p0 + host_block, n);
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
  nearsparse::detail::for_each_task_cyclic(exec, "nearsparse::diagonal::cdm_multiply_host", tasks,
                                           body);
}

template <class Exec, class Scalar>
void with_plan(const Exec& exec, const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan,
               Scalar alpha, const cdm_matrix<Scalar, Kokkos::HostSpace>& a,
               const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
               const cdm_matrix<Scalar, Kokkos::HostSpace>& c) {
  host_kernel(exec, plan.size(), alpha, a.values().data(), plan.a_logical().data(),
              a.diagonal_count(), plan.op_a() == op::transpose, b.values().data(),
              b.lookup().data(), plan.op_b() == op::transpose, beta, c.values().data(),
              c.indices().data(), c.diagonal_count());
}

}  // namespace

// The overloads, one definition per execution space.
#define NEARSPARSE_HOST_CDM_PRODUCT(EXEC)                                                         \
  template <class Scalar>                                                                         \
  void cdm_multiply_host(const EXEC& exec,                                                        \
                         const cdm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,   \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& a,                          \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,             \
                         const cdm_matrix<Scalar, Kokkos::HostSpace>& c) {                        \
    with_plan(exec, plan, alpha, a, b, beta, c);                                                  \
  }                                                                                               \
  template void cdm_multiply_host<double>(                                                        \
      const EXEC&, const cdm_product_plan<double, Kokkos::HostSpace>&, double,                    \
      const cdm_matrix<double, Kokkos::HostSpace>&, const cdm_matrix<double, Kokkos::HostSpace>&, \
      double, const cdm_matrix<double, Kokkos::HostSpace>&);                                      \
  template void cdm_multiply_host<float>(                                                         \
      const EXEC&, const cdm_product_plan<float, Kokkos::HostSpace>&, float,                      \
      const cdm_matrix<float, Kokkos::HostSpace>&, const cdm_matrix<float, Kokkos::HostSpace>&,   \
      float, const cdm_matrix<float, Kokkos::HostSpace>&);

#ifdef KOKKOS_ENABLE_OPENMP
NEARSPARSE_HOST_CDM_PRODUCT(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_SERIAL
NEARSPARSE_HOST_CDM_PRODUCT(Kokkos::Serial)
#endif
#undef NEARSPARSE_HOST_CDM_PRODUCT

}  // namespace nearsparse::diagonal::detail
