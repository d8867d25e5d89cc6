#include "spamm_reference.hpp"
#include "support/seeds.hpp"

#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace ns = nearsparse::spamm::detail;
using spamm_precision = nearsparse::spamm::precision;
using nearsparse::test::spamm::round_input;

namespace {

// Values that exercise every branch: zeros, ties in each format, subnormal halves, the overflow
// threshold of fp16, powers of two, and random values over many binades.
std::vector<float> probe_values(std::uint64_t seed) {
  std::vector<float> v = {
      0.0f,          -0.0f,          1.0f,          -1.0f,         65504.0f,
      65519.99f,     65520.0f,       -70000.0f,     6.1035156e-5f, 5.9604645e-8f,
      2.9802322e-8f, 2.98023259e-8f, 4.4703484e-8f, 1e-30f,        3.0e38f,
      1.0009766f,    1.00048828f,    1.00146484f,   1.00390625f,   1.01171875f,
      0.333333f,     1e-6f,          -2.5e-7f,      1e4f,          123.456f};
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const double u = nearsparse::detail::uniform01(seed, i, 0);
    const double s = nearsparse::detail::uniform01(seed, i, 1);
    const double mag = std::ldexp(0.5 + 0.5 * u, static_cast<int>(i % 80) - 40);
    v.push_back(static_cast<float>(s < 0.5 ? -mag : mag));
  }
  return v;
}

}  // namespace

TEST_CASE("fp16, bf16 and tf32 rounding match a scaling reference", "[spamm][formats]") {
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::size_t bad_half = 0, bad_bf16 = 0, bad_tf32 = 0;
  for (const float x : probe_values(seed)) {
    const double half = ns::half_bits_to_float(ns::float_to_half_bits(x));
    const double bf16 = ns::bf16_bits_to_float(ns::float_to_bf16_bits(x));
    const double tf32 = ns::round_to_tf32(x);
    if (half != round_input(x, spamm_precision::fp16)) {
      ++bad_half;
      UNSCOPED_INFO("fp16 of " << x << ": " << half << " vs "
                               << round_input(x, spamm_precision::fp16));
    }
    if (bf16 != round_input(x, spamm_precision::bf16)) ++bad_bf16;
    if (tf32 != round_input(x, spamm_precision::tf32)) ++bad_tf32;
  }
  CHECK(bad_half == 0);
  CHECK(bad_bf16 == 0);
  CHECK(bad_tf32 == 0);
}

TEST_CASE("fp16 decoding covers subnormals and infinities", "[spamm][formats]") {
  CHECK(ns::half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(ns::half_bits_to_float(0x03FF) == 1023 * std::ldexp(1.0f, -24));
  CHECK(ns::half_bits_to_float(0x7BFF) == 65504.0f);
  CHECK(std::isinf(ns::half_bits_to_float(0x7C00)));
  CHECK(std::isnan(ns::half_bits_to_float(0x7E00)));
  CHECK(ns::half_bits_to_float(0x8000) == 0.0f);
  CHECK(std::signbit(ns::half_bits_to_float(0x8000)));
  CHECK(std::isnan(ns::bf16_bits_to_float(ns::float_to_bf16_bits(std::nanf("")))));
  // Every one of the 63488 finite halves survives a round trip.
  std::size_t bad = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    const float f = ns::half_bits_to_float(static_cast<std::uint16_t>(h));
    if (ns::float_to_half_bits(f) != h) ++bad;
  }
  CHECK(bad == 0);
}
