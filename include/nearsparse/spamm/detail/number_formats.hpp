#pragma once
// The input formats of SpAMM and their conversions, written with integer operations so the host,
// OpenMP and CUDA all round the same way, bit for bit: the portable kernels and the tensor-core
// kernels then start from identical inputs and differ only in the order of accumulation.

#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

namespace nearsparse::spamm::detail {

KOKKOS_INLINE_FUNCTION std::uint32_t bits_of(float x) {
  std::uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

KOKKOS_INLINE_FUNCTION float float_of(std::uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/// IEEE binary16 bits of x, rounded to nearest even; overflow gives infinity.
KOKKOS_INLINE_FUNCTION std::uint16_t float_to_half_bits(float x) {
  const std::uint32_t u = bits_of(x);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u)
    return static_cast<std::uint16_t>(sign | (a > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520
  if (a < 0x38800000u) {                                                    // below 2^-14
    if (a < 0x33000000u) return static_cast<std::uint16_t>(sign);           // <= 2^-25 ties to 0
    const std::uint32_t e = a >> 23;
    const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14 ... 24: value / 2^-24 = m >> shift
    std::uint32_t q = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<std::uint16_t>(sign | q);
  }
  const std::uint32_t rounded = a + 0xFFFu + ((a >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

KOKKOS_INLINE_FUNCTION float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 31) return float_of(sign | 0x7F800000u | (m << 13));
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

/// bfloat16 bits of x, rounded to nearest even.
KOKKOS_INLINE_FUNCTION std::uint16_t float_to_bf16_bits(float x) {
  const std::uint32_t u = bits_of(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

KOKKOS_INLINE_FUNCTION float bf16_bits_to_float(std::uint16_t b) {
  return float_of(static_cast<std::uint32_t>(b) << 16);
}

/// x rounded to TF32 (1 + 8 + 10 bits) to nearest, ties away from zero: what the CUDA
/// instruction cvt.rna.tf32.f32 does. The tensor cores read the top 19 bits of each operand.
KOKKOS_INLINE_FUNCTION float round_to_tf32(float x) {
  const std::uint32_t u = bits_of(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  return float_of((u + 0x1000u) & 0xFFFFE000u);
}

/// Storage and arithmetic of one precision: `storage` is what the packed operands hold,
/// `accumulate` what products are summed in. encode rounds a value to the input format.
template <spamm::precision P>
struct format;

template <>
struct format<spamm::precision::fp64> {
  using storage = double;
  using accumulate = double;
  KOKKOS_INLINE_FUNCTION static storage encode(double x) { return x; }
  KOKKOS_INLINE_FUNCTION static double decode(storage s) { return s; }
};

template <>
struct format<spamm::precision::fp32> {
  using storage = float;
  using accumulate = float;
  KOKKOS_INLINE_FUNCTION static storage encode(double x) { return static_cast<float>(x); }
  KOKKOS_INLINE_FUNCTION static float decode(storage s) { return s; }
};

template <>
struct format<spamm::precision::tf32> {
  using storage = float;
  using accumulate = float;
  KOKKOS_INLINE_FUNCTION static storage encode(double x) {
    return round_to_tf32(static_cast<float>(x));
  }
  KOKKOS_INLINE_FUNCTION static float decode(storage s) { return s; }
};

template <>
struct format<spamm::precision::fp16> {
  using storage = std::uint16_t;
  using accumulate = float;
  KOKKOS_INLINE_FUNCTION static storage encode(double x) {
    return float_to_half_bits(static_cast<float>(x));
  }
  KOKKOS_INLINE_FUNCTION static float decode(storage s) { return half_bits_to_float(s); }
};

template <>
struct format<spamm::precision::bf16> {
  using storage = std::uint16_t;
  using accumulate = float;
  KOKKOS_INLINE_FUNCTION static storage encode(double x) {
    return float_to_bf16_bits(static_cast<float>(x));
  }
  KOKKOS_INLINE_FUNCTION static float decode(storage s) { return bf16_bits_to_float(s); }
};

/// Bytes of one packed element.
inline int storage_bytes(spamm::precision p) {
  switch (p) {
    case spamm::precision::fp64:
      return 8;
    case spamm::precision::fp32:
    case spamm::precision::tf32:
      return 4;
    default:
      return 2;
  }
}

/// Calls f(format<P>{}) for the run-time precision p.
template <class F>
decltype(auto) with_format(spamm::precision p, F&& f) {
  switch (p) {
    case spamm::precision::fp64:
      return f(format<spamm::precision::fp64>{});
    case spamm::precision::fp32:
      return f(format<spamm::precision::fp32>{});
    case spamm::precision::tf32:
      return f(format<spamm::precision::tf32>{});
    case spamm::precision::fp16:
      return f(format<spamm::precision::fp16>{});
    default:
      return f(format<spamm::precision::bf16>{});
  }
}

/// The same format in another enumeration with the enumerators fp64, fp32, tf32, fp16 and
/// bf16 (a vendor library's precisions, a test's): for the baselines and references that
/// compute what a SpAMM precision computes.
template <class Target>
constexpr Target precision_as(spamm::precision p) {
  switch (p) {
    case spamm::precision::fp64:
      return Target::fp64;
    case spamm::precision::fp32:
      return Target::fp32;
    case spamm::precision::tf32:
      return Target::tf32;
    case spamm::precision::fp16:
      return Target::fp16;
    default:
      return Target::bf16;
  }
}

}  // namespace nearsparse::spamm::detail
