// The packing of SpAMM operands against a host copy, bit for bit, for operands that need more
// teams than one launch of a team reduction holds on a GPU (32768 blocks in Kokkos 3.4): the
// blocks then pack several league ranks one after another, reusing the team's scratch.
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/options.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
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

NEARSPARSE_SPACE_TEST_CASE("packing an operand with more teams than one launch equals a host copy",
                           "[spamm][pack]") {
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

NEARSPARSE_SPACE_TEST_CASE(
    "packing any source layout equals a host copy and counts non-finite values", "[spamm][pack]") {
  // Host spaces pack with plain loops, straight across where the destination's rows run along
  // the source's contiguous index and through a block otherwise; a plan on a GPU packs float and
  // double sources with the CUDA kernel (the same two ways): both orientations of both layouts,
  // odd extents, padding, and the count of NaN and Inf.
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  struct shape {
    std::size_t rows, cols;
  };
  for (const shape s : {shape{77, 45}, shape{33, 129}, shape{1, 1}, shape{130, 1}, shape{0, 5}}) {
    Kokkos::View<double**, Kokkos::LayoutRight, memory> right("right", s.rows, s.cols);
    nearsparse::fill_random(exec, right, seed, -1.0, 1.0);
    std::size_t non_finite = 0;
    if (s.rows * s.cols > 1) {
      Kokkos::deep_copy(Kokkos::subview(right, s.rows - 1, 0), std::nan(""));
      Kokkos::deep_copy(Kokkos::subview(right, 0, s.cols - 1), -HUGE_VAL);
      non_finite = 2;
    }
    Kokkos::View<float**, Kokkos::LayoutLeft, memory> left("left", s.rows, s.cols);
    Kokkos::deep_copy(left, right);
    auto host_right = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), right);
    auto host_left = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), left);
    for (const auto precision :
         {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::tf32,
          spamm_precision::fp16, spamm_precision::bf16}) {
      for (const bool transpose : {false, true}) {
        const int rows = int(transpose ? s.cols : s.rows), cols = int(transpose ? s.rows : s.cols);
        const int rows_p = (rows + 127) / 128 * 128 + (rows > 0 ? 0 : 128);
        const int cols_p = (cols + 31) / 32 * 32 + 32;  // whole rows of padding too
        ns::with_format(precision, [&](auto fmt) {
          using Format = decltype(fmt);
          using storage = typename Format::storage;
          Kokkos::View<storage*, memory> packed("packed", std::size_t(rows_p) * cols_p);
          for (const bool left_layout : {false, true}) {
            INFO(exec_space::name()
                 << " " << s.rows << " x " << s.cols << ", "
                 << nearsparse::spamm::to_string(precision) << (transpose ? ", transposed" : "")
                 << (left_layout ? ", float LayoutLeft" : ", LayoutRight") << ", seed " << seed);
            Kokkos::deep_copy(exec, packed, storage(0x5a5a));
            const std::size_t bad =
                left_layout ? ns::pack_operand<Format>(exec, left, transpose, packed.data(), rows_p,
                                                       cols_p, true)
                            : ns::pack_operand<Format>(exec, right, transpose, packed.data(),
                                                       rows_p, cols_p, true);
            CHECK(bad == non_finite);
            auto host_packed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
            // NaN encodes to a NaN pattern of the format: compare bits against the same encode.
            const std::size_t wrong =
                left_layout
                    ? count_wrong<Format>(host_left, transpose, host_packed, rows_p, cols_p)
                    : count_wrong<Format>(host_right, transpose, host_packed, rows_p, cols_p);
            CHECK(wrong == 0);

            // As a plan queues it (the CUDA kernel on a GPU), the count left in a device word;
            // without the check the word holds 0.
            Kokkos::deep_copy(exec, packed, storage(0x5a5a));
            Kokkos::View<std::int64_t, memory> queued_bad("queued_bad");
            for (const bool check : {false, true}) {
              if (left_layout)
                ns::pack_operand_queued<Format>(exec, nearsparse::implementation::automatic, left,
                                                transpose, packed.data(), rows_p, cols_p, check,
                                                queued_bad);
              else
                ns::pack_operand_queued<Format>(exec, nearsparse::implementation::automatic, right,
                                                transpose, packed.data(), rows_p, cols_p, check,
                                                queued_bad);
              std::int64_t queued = -1;
              Kokkos::deep_copy(queued, queued_bad);
              CHECK(std::size_t(queued) == (check ? non_finite : 0));
            }
            Kokkos::deep_copy(host_packed, packed);
            const std::size_t wrong_queued =
                left_layout
                    ? count_wrong<Format>(host_left, transpose, host_packed, rows_p, cols_p)
                    : count_wrong<Format>(host_right, transpose, host_packed, rows_p, cols_p);
            CHECK(wrong_queued == 0);
          }
          return 0;
        });
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("packing with teams that each pack several blocks equals a host copy",
                           "[spamm][pack]") {
  // pack_operand_teams gives a launch at most team_league_max teams (Kokkos 3.4 on CUDA computes
  // league size times team size in int for a team reduction; past 2^31 it skips the kernel or
  // runs it on one thread: an operand of 2^22 blocks at N = 65536). A small cap here sends every
  // team through several blocks, reusing its scratch, and the non-finite count summed over them.
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  const std::size_t rows = 301, cols = 197;
  Kokkos::View<double**, Kokkos::LayoutRight, memory> src("src", rows, cols);
  nearsparse::fill_random(exec, src, seed, -1.0, 1.0);
  Kokkos::deep_copy(Kokkos::subview(src, rows - 1, 0), std::nan(""));
  Kokkos::deep_copy(Kokkos::subview(src, 0, cols - 1), HUGE_VAL);
  Kokkos::deep_copy(Kokkos::subview(src, rows / 2, cols / 2), -HUGE_VAL);
  auto host_src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), src);
  for (const bool transpose : {false, true}) {
    const int r = int(transpose ? cols : rows), c = int(transpose ? rows : cols);
    const int rows_p = (r + 127) / 128 * 128, cols_p = (c + 63) / 64 * 64;
    for (const int league_max : {1, 3, 7, 1 << 20}) {
      INFO(exec_space::name() << (transpose ? ", transposed" : "") << ", at most " << league_max
                              << " teams, seed " << seed);
      using Format = ns::format<spamm_precision::fp32>;
      Kokkos::View<float*, memory> packed("packed", std::size_t(rows_p) * cols_p);
      Kokkos::deep_copy(exec, packed, 12345.0f);
      Kokkos::View<std::int64_t, memory> bad("bad");
      ns::pack_operand_teams<Format>(exec, src, transpose, packed.data(), rows_p, cols_p, true, bad,
                                     league_max);
      std::int64_t count = -1;
      Kokkos::deep_copy(count, bad);
      CHECK(count == 3);
      auto host_packed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
      CHECK(count_wrong<Format>(host_src, transpose, host_packed, rows_p, cols_p) == 0);
    }
  }
}
