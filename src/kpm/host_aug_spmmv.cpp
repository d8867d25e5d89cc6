// Host kernel of the augmented SpMMV on Kokkos::OpenMP and Kokkos::Serial; see
// include/nearsparse/kpm/detail/host_aug_spmmv.hpp.
#include <nearsparse/kpm/detail/host_aug_spmmv.hpp>

#include "../core/host/vector_targets.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nearsparse::kpm::detail {

namespace {

/// What a pass over rows reads; blocks and values in doubles, D doubles per block row.
struct pass {
  const int* row_map;
  const std::int64_t* chunk_offsets;
  const int* row_lengths;
  std::int64_t chunk_height;
  const int* columns;
  const double* values;
  const double* in;
  double* out;
  std::size_t D;
  double alpha, beta, gamma;
};

/// The kernel's compile-time shape: complex values, SELL storage, dot products, whether it reads
/// in(i, :) (beta != 0 or dots) and out(i, :) (gamma != 0), and whether it may use FMA.
template <bool Complex, bool Sell, bool Dots, bool ReadIn, bool ReadOut, bool Fma>
struct shape {
  static constexpr bool complex = Complex, sell = Sell, dots = Dots, read_in = ReadIn,
                        read_out = ReadOut, fma = Fma;
};

#if NEARSPARSE_HOST_VECTORS
/// L doubles as one SIMD register: 2 (SSE2, the x86-64 baseline) or 4 (AVX2).
template <int L>
struct simd;
template <>
struct simd<2> {
  typedef double type __attribute__((vector_size(16)));
};
template <>
struct simd<4> {
  typedef double type __attribute__((vector_size(32)));
};
#endif

/// c + a b; a fused multiply-add only in the copy compiled for FMA (elsewhere std::fma would be a
/// library call).
template <bool Fma>
NEARSPARSE_HOST_INLINE double madd(double a, double b, double c) {
  if constexpr (Fma)
    return std::fma(a, b, c);
  else
    return a * b + c;
}

/// Doubles [d, d + W) of row i: H x over the row's entries with the accumulators in registers,
/// then the shifts and the dot products (see the header's comment). For complex values acc sums
/// Re(v) x and im sums Im(v) x, both contiguous; i Im(v) x = (-im_im, im_re) swaps the pairs of
/// im once per block instead of once per entry.
template <class K, int W>
NEARSPARSE_HOST_INLINE void block(const pass& p, std::int64_t begin, int count, std::size_t i,
                                  std::size_t d, double* __restrict n2, double* __restrict od) {
  double acc[W], im[W];
  const int* __restrict columns = p.columns;
  const double* __restrict values = p.values;
  const double* __restrict in = p.in + d;
  const std::size_t D = p.D;
#if NEARSPARSE_HOST_VECTORS
  constexpr int L = K::fma ? 4 : 2;
  if constexpr (W % L == 0) {
    // GCC's and Clang's generic vectors: the block as whole SIMD registers of the target (SSE2
    // at the baseline, AVX2 in the wide copy), the accumulators in registers across the entries.
    using vec = typename simd<L>::type;
    constexpr int V = W / L;
    vec a[V], b[V];
    for (int m = 0; m < V; ++m) a[m] = b[m] = vec{} + 0.0;
    for (int j = 0; j < count; ++j) {
      const std::int64_t e = begin + (K::sell ? std::int64_t(j) * p.chunk_height : std::int64_t(j));
      const double* __restrict x = in + std::size_t(columns[e]) * D;
      if constexpr (K::complex) {
        const double vr = values[2 * e], vi = values[2 * e + 1];
        for (int m = 0; m < V; ++m) {
          vec xv;
          std::memcpy(&xv, x + L * m, sizeof xv);
          a[m] += vr * xv;
          b[m] += vi * xv;
        }
      } else {
        const double v = values[e];
        for (int m = 0; m < V; ++m) {
          vec xv;
          std::memcpy(&xv, x + L * m, sizeof xv);
          a[m] += v * xv;
        }
      }
    }
    std::memcpy(acc, a, sizeof acc);
    std::memcpy(im, b, sizeof im);
  } else
#endif
  {
    for (int k = 0; k < W; ++k) acc[k] = im[k] = 0;
    for (int j = 0; j < count; ++j) {
      const std::int64_t e = begin + (K::sell ? std::int64_t(j) * p.chunk_height : std::int64_t(j));
      const double* __restrict x = in + std::size_t(columns[e]) * D;
      if constexpr (K::complex) {
        const double vr = values[2 * e], vi = values[2 * e + 1];
        for (int k = 0; k < W; ++k) {
          acc[k] = madd<K::fma>(vr, x[k], acc[k]);
          im[k] = madd<K::fma>(vi, x[k], im[k]);
        }
      } else {
        const double v = values[e];
        for (int k = 0; k < W; ++k) acc[k] = madd<K::fma>(v, x[k], acc[k]);
      }
    }
  }
  if constexpr (K::complex)
    for (int k = 0; k < W; k += 2) {
      acc[k] -= im[k + 1];
      acc[k + 1] += im[k];
    }
  double* __restrict o = p.out + i * D + d;
  const double* __restrict v = p.in + i * D + d;
  double* __restrict n2d = K::dots ? n2 + d : nullptr;
  double* __restrict odd = K::dots ? od + d : nullptr;
  for (int k = 0; k < W; ++k) {
    double r = p.alpha * acc[k];
    if constexpr (K::read_in) r = madd<K::fma>(p.beta, v[k], r);
    if constexpr (K::read_out) r = madd<K::fma>(p.gamma, o[k], r);
    o[k] = r;
    if constexpr (K::dots) {
      n2d[k] = madd<K::fma>(v[k], v[k], n2d[k]);
      odd[k] = madd<K::fma>(r, v[k], odd[k]);
    }
  }
}

/// The rest of a row from double d on, in blocks of W, W / 2, ... doubles (a complex value is
/// never split).
template <class K, int W>
NEARSPARSE_HOST_INLINE void tail(const pass& p, std::int64_t begin, int count, std::size_t i,
                                 std::size_t d, double* n2, double* od) {
  if constexpr (W >= (K::complex ? 2 : 1)) {
    if (d + W <= p.D) {
      block<K, W>(p, begin, count, i, d, n2, od);
      d += W;
    }
    tail<K, W / 2>(p, begin, count, i, d, n2, od);
  }
}

/// Rows [first, last), W doubles of each row at a time.
template <class K, int W>
NEARSPARSE_HOST_INLINE void rows(const pass& p, int first, int last, double* n2, double* od) {
  for (int i = first; i < last; ++i) {
    std::int64_t begin;
    int count;
    if constexpr (K::sell) {
      const std::int64_t c = i / p.chunk_height;
      begin = p.chunk_offsets[c] + (i - c * p.chunk_height);
      count = p.row_lengths[i];
    } else {
      begin = p.row_map[i];
      count = p.row_map[i + 1] - p.row_map[i];
    }
    std::size_t d = 0;
    for (; d + W <= p.D; d += W) block<K, W>(p, begin, count, std::size_t(i), d, n2, od);
    tail<K, W / 2>(p, begin, count, std::size_t(i), d, n2, od);
  }
}

using rows_fn = void (*)(const pass&, int, int, double*, double*);

// Blocks of 8 doubles keep the baseline copy's accumulators within the 16 SSE registers; the
// AVX2 copy takes 16 (8 registers of 4), enough independent sums to cover the FMA latency.
template <class K>
void rows_baseline(const pass& p, int first, int last, double* n2, double* od) {
  rows<K, 8>(p, first, last, n2, od);
}

#if NEARSPARSE_HOST_WIDE
template <class K>
__attribute__((target("avx2,fma"))) void rows_wide(const pass& p, int first, int last, double* n2,
                                                   double* od) {
  rows<K, 16>(p, first, last, n2, od);
}
#endif

/// The copy of the kernel for the run-time flags.
template <bool... B>
rows_fn choose(bool wide) {
#if NEARSPARSE_HOST_WIDE
  if (wide && nearsparse::detail::host_vector_level() >= 1) return &rows_wide<shape<B..., true>>;
#else
  (void)wide;
#endif
  return &rows_baseline<shape<B..., false>>;
}
template <bool... B, class... Rest>
rows_fn choose(bool wide, bool next, Rest... rest) {
  return next ? choose<B..., true>(wide, rest...) : choose<B..., false>(wide, rest...);
}

template <class Exec>
void run(const Exec& exec, const host_aug_args& a) {
  const int first = a.row_begin, last = a.row_end;
  if (last <= first || a.R <= 0) return;
  const bool sell = a.chunk_offsets != nullptr, dots = a.eta != nullptr;
  const bool read_in = dots || a.beta != 0, read_out = a.gamma != 0;
  pass p;
  p.row_map = a.row_map;
  p.chunk_offsets = a.chunk_offsets;
  p.row_lengths = a.row_lengths;
  p.chunk_height = a.chunk_height;
  p.columns = a.columns;
  p.values = a.values;
  p.in = a.in;
  p.out = a.out;
  p.D = std::size_t(a.R) * (a.complex_values ? 2 : 1);
  p.alpha = a.alpha;
  p.beta = a.beta;
  p.gamma = a.gamma;
  const rows_fn f = choose<>(a.wide_vectors, a.complex_values, sell, dots, read_in, read_out);

  // Ranges of consecutive rows balanced by stored entries plus rows (a row's shifts and dot
  // products cost about one entry; weight(i) is that count over the rows before i), several per
  // thread and taken dynamically: a thread that loses its core for a while (the host is shared
  // with the caller's other work) does not hold up the step. Neighbouring ranges run at about the
  // same time, so the vector rows they share stay in the last-level cache.
  auto weight = [&](int i) -> std::int64_t {
    if (!sell) return std::int64_t(a.row_map[i]) + i;
    const std::int64_t C = a.chunk_height, c = i / C, l = i - c * C;
    return a.chunk_offsets[c] + (l > 0 ? l * a.chunk_lengths[c] : 0) + i;
  };
  constexpr int parts_per_thread = 8;
  constexpr int min_rows_per_part = 64;
  const int parts =
      std::max(1, std::min<int>(int(exec.concurrency()) * parts_per_thread,
                                (last - first + min_rows_per_part - 1) / min_rows_per_part));
  std::vector<int> bounds(std::size_t(parts) + 1, first);
  bounds[std::size_t(parts)] = last;
  const std::int64_t w0 = weight(first), total = weight(last) - w0;
  for (int k = 1; k < parts; ++k) {
    const std::int64_t target = w0 + total * k / parts;
    int lo = bounds[std::size_t(k) - 1], hi = last;  // smallest i in [lo, hi] with weight >= target
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (weight(mid) >= target)
        hi = mid;
      else
        lo = mid + 1;
    }
    bounds[std::size_t(k)] = lo;
  }

  const std::size_t D = p.D;
  std::vector<double> partial(dots ? std::size_t(parts) * 2 * D : 0, 0.0);
  const int* b = bounds.data();
  double* sums = partial.data();
  Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>> policy(exec, 0, parts);
  policy.set_chunk_size(1);
  Kokkos::parallel_for(a.label, policy, [=](const int k) {
    double* n2 = dots ? sums + std::size_t(k) * 2 * D : nullptr;
    f(p, b[k], b[k + 1], n2, dots ? n2 + D : nullptr);
  });
  exec.fence();
  if (!dots) return;
  // The ranges' partial sums in row order (the same for any schedule), each column's re and im
  // parts together.
  const int per = a.complex_values ? 2 : 1;
  double* eta_norm = a.eta + std::size_t(2 * a.step) * a.eta_ld;
  double* eta_dot = a.eta + std::size_t(2 * a.step + 1) * a.eta_ld;
  for (int r = 0; r < a.R; ++r) {
    double norm = 0, dot = 0;
    for (int k = 0; k < parts; ++k) {
      const double* n2 = sums + std::size_t(k) * 2 * D;
      for (int q = 0; q < per; ++q) {
        norm += n2[std::size_t(r) * per + q];
        dot += n2[D + std::size_t(r) * per + q];
      }
    }
    eta_norm[r] += norm;
    eta_dot[r] += dot;
  }
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
void host_aug_spmmv(const Kokkos::OpenMP& exec, const host_aug_args& args) {
  run(exec, args);
}
#endif
#ifdef KOKKOS_ENABLE_SERIAL
void host_aug_spmmv(const Kokkos::Serial& exec, const host_aug_args& args) {
  run(exec, args);
}
#endif

}  // namespace nearsparse::kpm::detail
