#pragma once
// The unit-stride loops both host diagonal kernels (host_hm_product.cpp, host_cdm_product.cpp)
// sum pairs of diagonals with (one pair at a time, or four fused so the sums are read and written
// once per four pairs) and store a block of C with.

namespace nearsparse::diagonal::detail::host {

/// acc[i] += a[i] b[i], i < count.
template <class Scalar, class Index>
inline void add_one(Scalar* __restrict__ acc, const Scalar* __restrict__ a,
                    const Scalar* __restrict__ b, Index count) {
#pragma omp simd
  for (Index i = 0; i < count; ++i) acc[i] += a[i] * b[i];
}

/// acc[i] += a0[i] b0[i], then a1 b1, a2 b2, a3 b3 (that order), i < count.
template <class Scalar, class Index>
inline void add_four(Scalar* __restrict__ acc, const Scalar* __restrict__ a0,
                     const Scalar* __restrict__ b0, const Scalar* __restrict__ a1,
                     const Scalar* __restrict__ b1, const Scalar* __restrict__ a2,
                     const Scalar* __restrict__ b2, const Scalar* __restrict__ a3,
                     const Scalar* __restrict__ b3, Index count) {
#pragma omp simd
  for (Index i = 0; i < count; ++i) {
    Scalar s = acc[i];
    s += a0[i] * b0[i];
    s += a1[i] * b1[i];
    s += a2[i] * b2[i];
    s += a3[i] * b3[i];
    acc[i] = s;
  }
}

/// out[i] = alpha acc[i] + beta out[i], i < count; with beta = 0, out is only written (NaN in it
/// does not propagate).
template <class Scalar, class Index>
inline void store_scaled(Scalar* __restrict__ out, const Scalar* __restrict__ acc, Scalar alpha,
                         Scalar beta, Index count) {
  if (beta == Scalar(0)) {
#pragma omp simd
    for (Index i = 0; i < count; ++i) out[i] = alpha * acc[i];
  } else {
#pragma omp simd
    for (Index i = 0; i < count; ++i) out[i] = alpha * acc[i] + beta * out[i];
  }
}

}  // namespace nearsparse::diagonal::detail::host
