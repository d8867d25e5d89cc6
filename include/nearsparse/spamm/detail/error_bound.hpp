#pragma once
// The error bound of the dropped tile products and the search for the largest tau that meets an
// error target. Portable on every backend.
//
// Tie rule: a tile product whose norm product equals tau is kept (A(i,k) * B(k,j) >= tau in
// double, the comparison of the multiply kernels); the bound sums the others.
//
// Determinism: every backend computes the same bits from the same norm maps, so the same tau
// comes out of the search on Serial, OpenMP and CUDA. Each tile's d_ij sums its k in ascending
// order with fma (fused on every backend, so no compiler contracts it differently), the squares
// of the d_ij are summed with fma in fixed chunks of the row-major tile order, the chunks' sums
// in chunk order; the minimum and maximum that guide the search do not depend on order. (Norm
// maps from different implementations, portable or specialized, differ by rounding, and so may
// their taus.)

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/spamm/detail/kept_products.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace nearsparse::spamm::detail {

/// The bound at one tau and the norm products nearest it, which the search steps to.
struct bound_at_tau {
  double bound = 0.0;   ///< sqrt(sum_ij d_ij^2), absolute, rounded up (see error_bound_at)
  double below = -1.0;  ///< the largest norm product < tau (-1 when none)
  double above = std::numeric_limits<double>::infinity();  ///< the smallest one >= tau
  /// ||A||_F ||B||_F from the norm maps, when asked for (else 0).
  double norm_product = 0.0;
};

/// Chunks of a fixed-order sum: a function of the length only, never of the backend.
inline constexpr std::int64_t ordered_sum_chunks = 256;

/// Device storage of the bound's reductions, kept by a plan between searches.
template <class Mem>
struct error_bound_scratch {
  Kokkos::View<double*, Mem> tiles;    // d_ij, below_ij, above_ij: 3 * MT * NT
  Kokkos::View<double*, Mem> partial;  // per chunk: 3 * ordered_sum_chunks
  // Sum of squares, below, above of the bound, then the sums of squares of A's and B's norms
  // (and the maximum and minimum that come with them).
  Kokkos::View<double*, Mem> result;

  // From the allocation cache (core/detail/view_cache.hpp), as the plan's other storage: plans
  // made one after another allocate nothing.
  template <class ExecSpace>
  void reserve(const ExecSpace& exec, std::int64_t tiles_count) {
    using nearsparse::detail::cached_view_taken;
    using view = Kokkos::View<double*, Mem>;
    const auto need = static_cast<std::size_t>(3 * tiles_count);
    bool wait = false;
    if (tiles.extent(0) < need)
      tiles = cached_view_taken<view>(wait, "nearsparse::spamm::error_bound::tiles", need);
    if (partial.extent(0) == 0) {
      partial = cached_view_taken<view>(wait, "nearsparse::spamm::error_bound::partial",
                                        std::size_t(3 * ordered_sum_chunks));
      result =
          cached_view_taken<view>(wait, "nearsparse::spamm::error_bound::result", std::size_t(9));
    }
    if (wait) exec.fence();
  }
};

/// Chunk c of ordered_reduce: its sum of squares, maximum and minimum into partial(c),
/// partial(stride + c), partial(2 * stride + c).
template <class Mem>
struct ordered_chunks_kernel {
  const double* sq;
  const double* mx;
  const double* mn;
  std::int64_t n, chunks, stride;
  double inf;
  Kokkos::View<double*, Mem> partial;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    const std::int64_t begin = c * n / chunks, end = (c + 1) * n / chunks;
    double s = 0.0, hi = -1.0, lo = inf;
    for (std::int64_t t = begin; t < end; ++t) {
      s = ::fma(sq[t], sq[t], s);
      if (mx != nullptr && mx[t] > hi) hi = mx[t];
      if (mn != nullptr && mn[t] < lo) lo = mn[t];
    }
    partial(c) = s;
    partial(stride + c) = hi;
    partial(2 * stride + c) = lo;
  }
};

/// The chunks' sums of ordered_reduce in chunk order, into result(at), (at + 1), (at + 2).
template <class Mem>
struct ordered_total_kernel {
  Kokkos::View<double*, Mem> partial, result;
  std::int64_t chunks, stride;
  double inf;
  int at;

  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    double s = 0.0, hi = -1.0, lo = inf;
    for (std::int64_t c = 0; c < chunks; ++c) {
      s += partial(c);
      if (partial(stride + c) > hi) hi = partial(stride + c);
      if (partial(2 * stride + c) < lo) lo = partial(2 * stride + c);
    }
    result(at) = s;
    result(at + 1) = hi;
    result(at + 2) = lo;
  }
};

/// result(at) = sum of sq[t]^2 over t < n, result(at + 1) = max of mx[t], result(at + 2) = min of
/// mn[t] (mx and mn may be null: then -1 and +inf; all three 0, -1, +inf for n = 0), in a fixed
/// order: n is cut into the same chunks on
/// every backend, each summed in ascending order with fma, then the chunks' sums in order.
template <class ExecSpace, class Mem>
void ordered_reduce(const ExecSpace& exec, const double* sq, const double* mx, const double* mn,
                    std::int64_t n, const Kokkos::View<double*, Mem>& partial,
                    const Kokkos::View<double*, Mem>& result, int at) {
  const std::int64_t chunks = n < ordered_sum_chunks ? n : ordered_sum_chunks;
  const std::int64_t stride = ordered_sum_chunks;  // partial holds three runs of this length
  const double inf = std::numeric_limits<double>::infinity();
  Kokkos::parallel_for("nearsparse::spamm::error_bound_chunks",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks),
                       ordered_chunks_kernel<Mem>{sq, mx, mn, n, chunks, stride, inf, partial});
  Kokkos::parallel_for("nearsparse::spamm::error_bound_total",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                       ordered_total_kernel<Mem>{partial, result, chunks, stride, inf, at});
}

/// Takes result's nine words to the host (waits for the device).
template <class ExecSpace, class Mem>
void read_result(const ExecSpace& exec, const Kokkos::View<double*, Mem>& result, double* out) {
  Kokkos::deep_copy(
      exec,
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out, 9),
      result);
  exec.fence();
}

/// Queues the sums of squared tile norms of A and B into result(3) and result(6), each in a
/// fixed order.
template <class ExecSpace, class Mem>
void queue_norm_sums(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                     const norm_map<Mem>& b_norms, error_bound_scratch<Mem>& scratch) {
  const std::int64_t na = std::int64_t(a_norms.extent(0)) * std::int64_t(a_norms.extent(1));
  const std::int64_t nb = std::int64_t(b_norms.extent(0)) * std::int64_t(b_norms.extent(1));
  ordered_reduce(exec, a_norms.data(), nullptr, nullptr, na, scratch.partial, scratch.result, 3);
  ordered_reduce(exec, b_norms.data(), nullptr, nullptr, nb, scratch.partial, scratch.result, 6);
}

/// ||A||_F ||B||_F from the norm maps: the square roots of the sums of squared tile norms, each
/// summed in a fixed order (waits for the device).
template <class ExecSpace, class Mem>
double norm_product_from_maps(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                              const norm_map<Mem>& b_norms, error_bound_scratch<Mem>& scratch) {
  const std::int64_t na = std::int64_t(a_norms.extent(0)) * std::int64_t(a_norms.extent(1));
  const std::int64_t nb = std::int64_t(b_norms.extent(0)) * std::int64_t(b_norms.extent(1));
  if (na == 0 || nb == 0) return 0.0;
  scratch.reserve(exec, 0);
  queue_norm_sums(exec, a_norms, b_norms, scratch);
  double out[9];
  read_result(exec, scratch.result, out);
  return std::sqrt(out[3]) * std::sqrt(out[6]);
}

/// Factor that rounds a computed bound up past the rounding of its own sums: each d_ij sums kt
/// nonnegative terms (relative error below kt * 2^-53), the squares n more, the square root
/// halves the sum's relative error and adds 2^-53. (1 + (kt + n + 4) * 2^-52) covers them all.
inline double bound_rounding_factor(std::int64_t kt, std::int64_t n) {
  return 1.0 + double(kt + n + 4) * 0x1p-52;
}

/// Output tile t of error_bound_at: its d_ij (the dropped products summed with fma in ascending
/// k) into tiles(t), the largest dropped product into tiles(n + t), the smallest kept one into
/// tiles(2 * n + t).
template <class Mem>
struct error_bound_tiles_kernel {
  norm_map<Mem> a_norms, b_norms;
  Kokkos::View<double*, Mem> tiles;
  double tau, inf;
  std::int64_t n;
  int nt, kt;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const int i = static_cast<int>(t / nt), j = static_cast<int>(t % nt);
    double d = 0.0, below = -1.0, above = inf;
    for (int k = 0; k < kt; ++k) {
      const double a = a_norms(i, k), b = b_norms(k, j);
      const double p = a * b;
      if (p >= tau) {
        if (p < above) above = p;
      } else {
        d = ::fma(a, b, d);
        if (p > below) below = p;
      }
    }
    tiles(t) = d;
    tiles(n + t) = below;
    tiles(2 * n + t) = above;
  }
};

/// The bound at `tau` over the products of all MT x NT output tiles: products equal to tau are
/// kept (as by the multiply kernels, A(i,k) * B(k,j) >= tau), the others dropped. Also the norm
/// products nearest tau from below and above, and with `norms` ||A||_F ||B||_F too. One wait for
/// the device.
template <class ExecSpace, class Mem>
bound_at_tau error_bound_at(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                            const norm_map<Mem>& b_norms, double tau,
                            error_bound_scratch<Mem>& scratch, bool norms = false) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  const std::int64_t n = std::int64_t(mt) * nt;
  bound_at_tau r;
  if (n == 0 || kt == 0) return r;
  scratch.reserve(exec, n);
  if (norms) queue_norm_sums(exec, a_norms, b_norms, scratch);
  const auto tiles = scratch.tiles;
  const double inf = std::numeric_limits<double>::infinity();
  Kokkos::parallel_for("nearsparse::spamm::error_bound", Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
                       error_bound_tiles_kernel<Mem>{a_norms, b_norms, tiles, tau, inf, n, nt, kt});
  const double* base = scratch.tiles.data();
  ordered_reduce(exec, base, base + n, base + 2 * n, n, scratch.partial, scratch.result, 0);
  double out[9];
  read_result(exec, scratch.result, out);
  r.bound = std::sqrt(out[0]) * bound_rounding_factor(kt, n);
  r.below = out[1];
  r.above = out[2];
  if (norms) r.norm_product = std::sqrt(out[3]) * std::sqrt(out[6]);
  return r;
}

/// What the search for an error target found.
struct error_search_found {
  double tau = 0.0;
  double bound = 0.0;  ///< absolute, at tau
  int evaluations = 0;
  bool converged = false;
};

/// The largest tau whose bound is at most `threshold` (an absolute bound, target_error times
/// ||A||_F ||B||_F), given `bound_at(tau)`, which returns a bound_at_tau. The bound only grows with
/// tau and changes only at norm products, so the answer is a norm product (kept, with its ties,
/// by the rule products >= tau are kept), or, when dropping everything meets the threshold, the
/// next double above the largest product. The first evaluation drops everything (tau = +inf);
/// then a bisection over the bit patterns of the doubles between the largest tau known to meet
/// the threshold and the largest product not known to miss it, each step moving the ends to the
/// norm products next to the midpoint: at most about 64 steps, usually far fewer.
/// `max_steps` bisection steps at most; when they run out, tau is the largest known to meet the
/// threshold and converged is false.
template <class BoundAt>
error_search_found search_error_tau(double threshold, int max_steps, BoundAt&& bound_at) {
  error_search_found f;
  const double inf = std::numeric_limits<double>::infinity();
  const bound_at_tau all = bound_at(inf);
  f.evaluations = 1;
  if (all.below < 0) {  // no norm products: nothing to drop
    f.converged = true;
    return f;
  }
  if (all.bound <= threshold) {
    f.tau = std::nextafter(all.below, inf);
    f.bound = all.bound;
    f.converged = true;
    return f;
  }
  // lo meets the threshold (tau = 0 keeps every product: bound 0); every tau above `candidate`
  // misses it, and candidate is a norm product.
  double lo = 0.0, lo_bound = 0.0, candidate = all.below;
  int steps = 0;
  while (lo < candidate && steps < max_steps) {
    const std::int64_t lb = bits_of(lo), hb = bits_of(candidate);
    const double mid = double_of(lb + (hb - lb + 1) / 2);  // in (lo, candidate]
    const bound_at_tau e = bound_at(mid);
    ++f.evaluations;
    ++steps;
    if (e.bound <= threshold) {
      lo = e.above;  // the same products dropped: the same bound
      lo_bound = e.bound;
    } else {
      candidate = e.below;
    }
  }
  f.tau = lo;
  f.bound = lo_bound;
  f.converged = !(lo < candidate);
  return f;
}

}  // namespace nearsparse::spamm::detail
