#pragma once
// Host kernels in copies for vector instruction sets wider than the build's: per-function targets
// (GCC and Clang on x86-64), the copy taken at run time, so the build sets no instruction set and
// runs on any x86-64 processor. The KPM and CDM host kernels use it.

#if defined(__GNUC__) && defined(__x86_64__)
#define NEARSPARSE_HOST_WIDE 1
#else
#define NEARSPARSE_HOST_WIDE 0
#endif
// GCC and Clang: generic vectors (compiled for whatever instruction set the function targets) and
// forced inlining into the per-target copies.
#if defined(__GNUC__)
#define NEARSPARSE_HOST_VECTORS 1
#define NEARSPARSE_HOST_INLINE inline __attribute__((always_inline))
#else
#define NEARSPARSE_HOST_VECTORS 0
#define NEARSPARSE_HOST_INLINE inline
#endif

namespace nearsparse::detail {

/// The widest copies this processor runs: 2 AVX-512 (with AVX2 and FMA), 1 AVX2 with FMA, 0
/// neither (or no per-function targets in this build).
inline int host_vector_level() {
#if NEARSPARSE_HOST_WIDE
  static const int level = [] {
    __builtin_cpu_init();
    const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2_fma && __builtin_cpu_supports("avx512f")) return 2;
    return avx2_fma ? 1 : 0;
  }();
  return level;
#else
  return 0;
#endif
}

}  // namespace nearsparse::detail
