// The host backends' HM product (include/nearsparse/diagonal/detail/hm_product_dispatch.hpp):
// the output-stationary product on Kokkos::OpenMP and Kokkos::Serial, with a plan and whole.
//
// C is computed in blocks of host_block positions of one C diagonal, one task each, dealt over
// the threads cyclically (src/core/host/cyclic_tasks.hpp: neighbouring blocks have about as many
// pairs). A block sums the pairs of diagonals of A and B meeting on it in a stack buffer, four
// pairs fused per pass over their common range (three loads per multiply-add become nine per
// four, and the buffer is read and written once per four pairs), the rest one pair at a time; every
// element still adds its pairs in the plan's order, starting from zero, as the portable kernel
// does. A block with one pair covering it and beta = 0 writes C directly. The loops are contiguous
// and unit-stride, so the compiler vectorizes them at its baseline instruction set.
//
// The whole product needs no plan: the pairs of the symbolic phase are written to a per-thread
// buffer kept from call to call, and C's values come from the allocation cache
// (detail/plan_outputs.hpp).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/diagonal/detail/hm_product_dispatch.hpp>
#include <nearsparse/diagonal/detail/hm_product_kernels.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>
#include <nearsparse/diagonal/hm_product.hpp>

#include "../core/host/cyclic_tasks.hpp"
#include "host_fused_sums.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace nearsparse::diagonal::detail {

namespace {

/// Positions of one C diagonal a task computes: its sums (4 KB in double) stay in L1 beside the
/// operands' segments.
constexpr int host_block = 512;

const char* const atomic_declined = "the atomic algorithm has only the portable kernel";

/// The arrays the host kernel reads: the pairs grouped by C diagonal (pair_ptr) and C's starts.
template <class Scalar>
struct host_product {
  const hm_pair* pairs = nullptr;
  const index_type* pair_ptr = nullptr;  // nc + 1
  const index_type* c_starts = nullptr;  // nc + 1
  int nc = 0;
  const Scalar* a = nullptr;
  const Scalar* b = nullptr;
  Scalar* c = nullptr;
  Scalar alpha = 1, beta = 0;
};

using host::add_four;
using host::add_one;

/// A pair clipped to a block: positions [lo, hi) of the C diagonal, read at a + q and b + q.
template <class Scalar>
struct clipped {
  index_type lo, hi;
  const Scalar* a;
  const Scalar* b;
};

/// Adds up to four clipped pairs into acc (indexed by position - q0), in their order for every
/// position: first each pair's part before the common range, then the common range fused, then
/// each pair's part after it (a position lies in exactly one of the three).
template <class Scalar>
void add_group(Scalar* acc, index_type q0, const clipped<Scalar>* g, int count) {
  const auto single = [&](const clipped<Scalar>& p, index_type lo, index_type hi) {
    if (lo < hi) add_one(acc + (lo - q0), p.a + lo, p.b + lo, hi - lo);
  };
  if (count < 4) {
    for (int i = 0; i < count; ++i) single(g[i], g[i].lo, g[i].hi);
    return;
  }
  index_type lo = g[0].lo, hi = g[0].hi;
  for (int i = 1; i < 4; ++i) {
    lo = std::max(lo, g[i].lo);
    hi = std::min(hi, g[i].hi);
  }
  if (hi <= lo) {
    for (int i = 0; i < 4; ++i) single(g[i], g[i].lo, g[i].hi);
    return;
  }
  for (int i = 0; i < 4; ++i) single(g[i], g[i].lo, lo);
  add_four(acc + (lo - q0), g[0].a + lo, g[0].b + lo, g[1].a + lo, g[1].b + lo, g[2].a + lo,
           g[2].b + lo, g[3].a + lo, g[3].b + lo, hi - lo);
  for (int i = 0; i < 4; ++i) single(g[i], hi, g[i].hi);
}

/// Tasks before each C diagonal (nc + 1 entries), in a per-thread buffer kept from call to call.
const index_type* block_pointers(const index_type* c_starts, int nc) {
  thread_local std::vector<index_type> ptr;
  ptr.resize(std::size_t(nc) + 1);
  ptr[0] = 0;
  for (int t = 0; t < nc; ++t) {
    const index_type len = c_starts[t + 1] - c_starts[t];
    ptr[std::size_t(t) + 1] = ptr[std::size_t(t)] + (len + host_block - 1) / host_block;
  }
  return ptr.data();
}

/// C = alpha op(A) op(B) + beta C on the host, for the pairs in `p`.
template <class Exec, class Scalar>
void host_kernel(const Exec& exec, const host_product<Scalar>& p) {
  if (p.nc == 0) return;
  const index_type* const block_ptr = block_pointers(p.c_starts, p.nc);
  const index_type tasks = block_ptr[p.nc];
  const auto body = [=](const index_type task) {
    // This task's C diagonal: the last t with block_ptr[t] <= task.
    int lo_t = 0, hi_t = p.nc;
    while (hi_t - lo_t > 1) {
      const int mid = (lo_t + hi_t) / 2;
      if (block_ptr[mid] <= task)
        lo_t = mid;
      else
        hi_t = mid;
    }
    const int ci = lo_t;
    const index_type c0 = p.c_starts[ci];
    const index_type len = p.c_starts[ci + 1] - c0;
    const index_type q0 = (task - block_ptr[ci]) * host_block;
    const index_type q1 = std::min(q0 + host_block, len);
    Scalar* const out = p.c + c0;
    const Scalar alpha = p.alpha, beta = p.beta;
    const index_type first = p.pair_ptr[ci], last = p.pair_ptr[ci + 1];

    // One pair over the whole block and nothing to keep of C: write C
    // directly.
    if (last - first == 1 && beta == Scalar(0)) {
      const hm_pair& pr = p.pairs[first];
      if (pr.qlo <= q0 && pr.qhi >= q1) {
        const Scalar* __restrict__ a = p.a + pr.a_base;
        const Scalar* __restrict__ b = p.b + pr.b_base;
        Scalar* __restrict__ o = out;
#pragma omp simd
        for (index_type q = q0; q < q1; ++q) o[q] = alpha * (a[q] * b[q]);
        return;
      }
    }

    Scalar acc[host_block];
    for (index_type i = 0; i < q1 - q0; ++i) acc[i] = Scalar(0);
    clipped<Scalar> group[4];
    int pending = 0;
    for (index_type k = first; k < last; ++k) {
      const hm_pair& pr = p.pairs[k];
      const index_type lo = std::max(index_type(pr.qlo), q0);
      const index_type hi = std::min(index_type(pr.qhi), q1);
      if (lo >= hi) continue;
      group[pending++] = {lo, hi, p.a + pr.a_base, p.b + pr.b_base};
      if (pending == 4) {
        add_group(acc, q0, group, 4);
        pending = 0;
      }
    }
    add_group(acc, q0, group, pending);
    host::store_scaled(out + q0, acc, alpha, beta, q1 - q0);
  };
  nearsparse::detail::for_each_task_cyclic(exec, "nearsparse::diagonal::hm_multiply_host", tasks,
                                           body);
  exec.fence();  // block_ptr is this thread's buffer, reused by its next call
}

template <class Exec, class Scalar>
void with_plan(const Exec& exec, const hm_product_plan<Scalar, Kokkos::HostSpace>& plan,
               Scalar alpha, const hm_matrix<Scalar, Kokkos::HostSpace>& a,
               const hm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,
               const hm_matrix<Scalar, Kokkos::HostSpace>& c, const product_options& options) {
  const bool available = options.algorithm == hm_algorithm::output_stationary;
  if (!nearsparse::detail::take_specialized(multiply_name, options.implementation, available,
                                            exec.name(), atomic_declined)) {
    hm_multiply_with_plan_portable(exec, plan, alpha, a, b, beta, c, options.algorithm);
    return;
  }
  const auto& d = plan.device();
  host_product<Scalar> p;
  p.pairs = d.pairs.data();
  p.pair_ptr = d.pair_ptr.data();
  p.c_starts = d.c_starts.data();
  p.nc = int(plan.c_offsets().size());
  p.a = a.values().data();
  p.b = b.values().data();
  p.c = c.values().data();
  p.alpha = alpha;
  p.beta = beta;
  host_kernel(exec, p);
}

template <class Exec, class Scalar>
hm_matrix<Scalar, Kokkos::HostSpace> whole(const Exec& exec,
                                           const hm_matrix<Scalar, Kokkos::HostSpace>& a,
                                           const hm_matrix<Scalar, Kokkos::HostSpace>& b, op op_a,
                                           op op_b, hm_symbolic_result<Kokkos::HostSpace> symbolic,
                                           const product_options& options) {
  using matrix = hm_matrix<Scalar, Kokkos::HostSpace>;
  const bool available = options.algorithm == hm_algorithm::output_stationary;
  if (!nearsparse::detail::take_specialized(multiply_name, options.implementation, available,
                                            exec.name(), atomic_declined))
    return hm_multiply_whole_portable(exec, a, b, op_a, op_b, std::move(symbolic),
                                      options.algorithm);
  auto& s = symbolic.host;
  const std::size_t nc = s.c_offsets.size();
  // The pairs, grouped by C diagonal, and C's index by offset that places them.
  thread_local std::vector<int> c_index;
  thread_local std::vector<hm_pair> pairs;
  c_index.resize(std::size_t(s.c_range));
  pairs.resize(std::size_t(s.pair_ptr.back()));
  hm_c_index(s, c_index.data());
  hm_fill_pairs(s, c_index.data(), pairs.data());

  // C's structure in host Views of its own; its values from the allocation cache.
  typename matrix::offsets_view offsets(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::hm_product.C.offsets"), nc);
  typename matrix::starts_view starts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nearsparse::hm_product.C.starts"), nc + 1);
  std::copy(s.c_offsets.begin(), s.c_offsets.end(), offsets.data());
  std::copy(s.c_starts.begin(), s.c_starts.end(), starts.data());
  auto values = hm_c_values<Scalar, Kokkos::HostSpace>(std::size_t(s.c_starts.back()));

  host_product<Scalar> p;
  p.pairs = pairs.data();
  p.pair_ptr = s.pair_ptr.data();
  p.c_starts = s.c_starts.data();
  p.nc = int(nc);
  p.a = a.values().data();
  p.b = b.values().data();
  p.c = values.data();
  host_kernel(exec, p);  // alpha 1, beta 0: every value is written
  return hm_product_access::make_matrix<Scalar, Kokkos::HostSpace>(
      s.rows, s.cols, std::move(s.c_offsets), std::move(s.c_starts), std::move(offsets),
      std::move(starts), std::move(values));
}

}  // namespace

// The overloads, one definition per execution space.
#define NEARSPARSE_HOST_HM_PRODUCT(EXEC)                                                          \
  template <class Scalar>                                                                         \
  void hm_multiply_with_plan(                                                                     \
      const EXEC& exec, const hm_product_plan<Scalar, Kokkos::HostSpace>& plan, Scalar alpha,     \
      const hm_matrix<Scalar, Kokkos::HostSpace>& a,                                              \
      const hm_matrix<Scalar, Kokkos::HostSpace>& b, Scalar beta,                                 \
      const hm_matrix<Scalar, Kokkos::HostSpace>& c, const product_options& options) {            \
    with_plan(exec, plan, alpha, a, b, beta, c, options);                                         \
  }                                                                                               \
  template <class Scalar>                                                                         \
  hm_matrix<Scalar, Kokkos::HostSpace> hm_multiply_whole(                                         \
      const EXEC& exec, const hm_matrix<Scalar, Kokkos::HostSpace>& a,                            \
      const hm_matrix<Scalar, Kokkos::HostSpace>& b, op op_a, op op_b,                            \
      hm_symbolic_result<Kokkos::HostSpace> symbolic, const product_options& options) {           \
    return whole(exec, a, b, op_a, op_b, std::move(symbolic), options);                           \
  }                                                                                               \
  template void hm_multiply_with_plan<double>(                                                    \
      const EXEC&, const hm_product_plan<double, Kokkos::HostSpace>&, double,                     \
      const hm_matrix<double, Kokkos::HostSpace>&, const hm_matrix<double, Kokkos::HostSpace>&,   \
      double, const hm_matrix<double, Kokkos::HostSpace>&, const product_options&);               \
  template void hm_multiply_with_plan<float>(                                                     \
      const EXEC&, const hm_product_plan<float, Kokkos::HostSpace>&, float,                       \
      const hm_matrix<float, Kokkos::HostSpace>&, const hm_matrix<float, Kokkos::HostSpace>&,     \
      float, const hm_matrix<float, Kokkos::HostSpace>&, const product_options&);                 \
  template hm_matrix<double, Kokkos::HostSpace> hm_multiply_whole<double>(                        \
      const EXEC&, const hm_matrix<double, Kokkos::HostSpace>&,                                   \
      const hm_matrix<double, Kokkos::HostSpace>&, op, op, hm_symbolic_result<Kokkos::HostSpace>, \
      const product_options&);                                                                    \
  template hm_matrix<float, Kokkos::HostSpace> hm_multiply_whole<float>(                          \
      const EXEC&, const hm_matrix<float, Kokkos::HostSpace>&,                                    \
      const hm_matrix<float, Kokkos::HostSpace>&, op, op, hm_symbolic_result<Kokkos::HostSpace>,  \
      const product_options&);

#ifdef KOKKOS_ENABLE_OPENMP
NEARSPARSE_HOST_HM_PRODUCT(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_SERIAL
NEARSPARSE_HOST_HM_PRODUCT(Kokkos::Serial)
#endif
#undef NEARSPARSE_HOST_HM_PRODUCT

}  // namespace nearsparse::diagonal::detail
