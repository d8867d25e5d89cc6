// The packing of SpAMM operands against a host copy, bit for bit, for operands that need more
// teams than one launch of a team reduction holds on a GPU (32768 blocks in Kokkos 3.4): the
// blocks then pack several league ranks one after another, reusing the team's scratch.
#include "support/seeds.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/options.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace ns = nearsparse::spamm::detail;
using spamm_precision = nearsparse::spamm::precision;

namespace {

/// Elements of `packed` (rows_p x cols_p) that differ from encode(op(src)), zero outside op(src).
template <class Format, class HostSrc, class HostPacked>
std::size_t count_wrong(const HostSrc& src, bool transpose, const HostPacked& packed, int rows_p,
                        int cols_p) {
  const int rows = int(transpose ? src.extent(1) : src.extent(0));
  const int cols = int(transpose ? src.extent(0) : src.extent(1));
  std::size_t wrong = 0;
  for (int r = 0; r < rows_p; ++r)
    for (int c = 0; c < cols_p; ++c) {
      double v = 0.0;
      if (r < rows && c < cols) v = transpose ? src(c, r) : src(r, c);
      const auto expected = Format::encode(v);
      const auto got = packed(std::size_t(r) * std::size_t(cols_p) + std::size_t(c));
      wrong += std::memcmp(&expected, &got, sizeof expected) != 0 ? 1 : 0;
    }
  return wrong;
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("packing an operand with more teams than one launch equals a host copy",
                        "[spamm][pack]", nearsparse::enabled_execution_spaces) {
  using exec_space = TestType;
  const exec_space exec;
  // Over 32768 teams of 32 x 32 in both orientations, so that on a GPU some blocks pack a
  // second league rank (compute-sanitizer's racecheck sees the hazard on every run; the wrong
  // values themselves appear only now and then, so a GPU packs each case a few times).
  const bool device =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename exec_space::memory_space>::accessible;
  const std::size_t rows = 5981, cols = 6003;
  const int passes = device ? 4 : 1;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  Kokkos::View<double**, Kokkos::LayoutRight, typename exec_space::memory_space> src("src", rows,
                                                                                     cols);
  nearsparse::fill_random(exec, src, seed, -1.0, 1.0);
  auto host_src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), src);
  for (const auto precision : {spamm_precision::fp32, spamm_precision::fp16}) {
    for (const bool transpose : {false, true}) {
      // As a plan packs them: A is mp x kp with k = src cols; B^T is np x kp with k = src rows.
      const ns::geometry shape = transpose ? ns::geometry(0, int(cols), int(rows), 64)
                                           : ns::geometry(int(rows), 0, int(cols), 64);
      const int rows_p = transpose ? shape.np : shape.mp, cols_p = shape.kp;
      REQUIRE(std::size_t((rows_p + 31) / 32) * std::size_t((cols_p + 31) / 32) > 32768);
      ns::with_format(precision, [&](auto fmt) {
        using Format = decltype(fmt);
        using storage = typename Format::storage;
        Kokkos::View<storage*, typename exec_space::memory_space> packed(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("packed")),
            std::size_t(rows_p) * std::size_t(cols_p));
        for (int pass = 0; pass < passes; ++pass) {
          INFO(exec_space::name() << " " << nearsparse::spamm::to_string(precision)
                                  << (transpose ? ", transposed" : "") << ", " << rows_p << " x "
                                  << cols_p << ", pass " << pass << ", seed " << seed);
          Kokkos::deep_copy(exec, packed, storage(0x5a5a));  // anything the packing must overwrite
          const std::size_t bad =
              ns::pack_operand<Format>(exec, src, transpose, packed.data(), rows_p, cols_p, true);
          CHECK(bad == 0);
          auto host_packed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
          CHECK(count_wrong<Format>(host_src, transpose, host_packed, rows_p, cols_p) == 0);
        }
        return 0;
      });
    }
  }
}
