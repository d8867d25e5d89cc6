// The refresh of one operand as a plan queues it (detail/pack_norms.hpp): on CUDA one kernel
// packs and computes the norm map; it must write the same packed bits as the packing alone and
// the same norm bits as the get-norm kernel run on its result, and norms within rounding of a
// host sum in double. Every precision and tile, both operands, source layouts that take the
// straight, the 16-byte and the shared-memory paths, odd extents, non-finite values, empty.
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/detail/pack_norms.hpp>
#include <nearsparse/spamm/options.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace ns = nearsparse::spamm::detail;
using spamm_precision = nearsparse::spamm::precision;

// A named namespace: nvcc's extended lambdas need an enclosing function with external linkage.
namespace pack_norms_test {

/// Packs `src` as operand `which` of `geo` twice, fused and as packing then get-norm, and
/// compares the two and a host reference.
template <class Format, class Exec, class Src>
void check_source(const Exec& exec, const nearsparse::spamm::options& opt, const Src& src,
                  ns::operand which, const ns::geometry& geo, std::size_t non_finite) {
  using storage = typename Format::storage;
  using memory = typename Exec::memory_space;
  const bool is_a = which == ns::operand::a;
  const int rows_p = is_a ? geo.mp : geo.np, cols_p = geo.kp;
  const int tiles_r = is_a ? geo.mt : geo.nt;
  const std::size_t size = std::size_t(rows_p) * std::size_t(cols_p);
  Kokkos::View<storage*, memory> fused("fused", size), separate("separate", size);
  Kokkos::deep_copy(exec, fused, storage(0x5a5a));  // anything the packing must overwrite
  Kokkos::deep_copy(exec, separate, storage(0x5a5a));
  const int nr = is_a ? geo.mt : geo.kt, nc = is_a ? geo.kt : geo.nt;
  ns::norm_map<memory> fused_norms("fused_norms", nr, nc), separate_norms("separate_norms", nr, nc);
  Kokkos::deep_copy(exec, fused_norms, -1.0);
  Kokkos::View<std::int64_t, memory> fused_bad("fused_bad"), separate_bad("separate_bad");
  ns::pack_and_norms_queued<Format>(exec, "test", opt, src, which, fused.data(), geo, fused_bad,
                                    fused_norms);
  ns::pack_operand_queued<Format>(exec, opt.implementation, src, !is_a, separate.data(), rows_p,
                                  cols_p, opt.check_finite, separate_bad);
  ns::compute_norms(exec, "test", opt, separate.data(), geo, which, separate_norms);
  exec.fence();

  std::int64_t bad_f = -1, bad_s = -1;
  Kokkos::deep_copy(bad_f, fused_bad);
  Kokkos::deep_copy(bad_s, separate_bad);
  CHECK(std::size_t(bad_f) == (opt.check_finite ? non_finite : 0));
  CHECK(bad_f == bad_s);

  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fused);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), separate);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i)
    wrong += std::memcmp(&hf(i), &hs(i), sizeof(storage)) != 0 ? 1 : 0;
  CHECK(wrong == 0);

  auto nf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fused_norms);
  auto nsep = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), separate_norms);
  // The host's sum of squares of the packed tile in double: the fused kernel sums in float for
  // every format but fp64, at most tile^2 terms.
  const double tol = sizeof(storage) == 8 ? 1e-13 : 1e-5;
  std::size_t norm_bits_differ = 0, norm_off = 0;
  for (int tr = 0; tr < tiles_r; ++tr)
    for (int tk = 0; tk < geo.kt; ++tk) {
      const int i = is_a ? tr : tk, j = is_a ? tk : tr;
      const double f = nf(i, j), s = nsep(i, j);
      const bool both_nan = std::isnan(f) && std::isnan(s);
      norm_bits_differ += (!both_nan && std::memcmp(&f, &s, sizeof f) != 0) ? 1 : 0;
      double sum = 0.0;
      for (int r = 0; r < geo.tile; ++r)
        for (int c = 0; c < geo.tile; ++c) {
          const double v = Format::decode(hs(std::size_t(tr * geo.tile + r) * std::size_t(cols_p) +
                                             std::size_t(tk * geo.tile + c)));
          sum += v * v;
        }
      const double expect = std::sqrt(sum);
      const bool near = std::isnan(expect)   ? std::isnan(f)
                        : std::isinf(expect) ? f == expect
                                             : std::fabs(f - expect) <= tol * expect;
      norm_off += near ? 0 : 1;
    }
  CHECK(norm_bits_differ == 0);
  CHECK(norm_off == 0);
}

}  // namespace pack_norms_test

NEARSPARSE_SPACE_TEST_CASE("packing with the norm map equals packing, then the get-norm kernel",
                           "[spamm][pack][norms]") {
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  struct shape {
    int m, k, n;
    bool non_finite;
  };
  for (const shape s : {shape{157, 131, 149, false}, shape{200, 77, 33, true},
                        shape{1, 1, 1, false}, shape{0, 5, 3, false}, shape{130, 0, 7, false}}) {
    // A (m x k) in four layouts: double and float LayoutRight (straight; 16-byte loads where a
    // row's chunk is aligned), float LayoutLeft (through shared memory), and float LayoutRight
    // one column in (no row 16-byte aligned: the element path). B (k x n) the same.
    Kokkos::View<double**, Kokkos::LayoutRight, memory> a("A", s.m, s.k), b("B", s.k, s.n);
    nearsparse::fill_random(exec, a, seed, -1.0, 1.0);
    nearsparse::fill_random(exec, b, seed + 1, -1.0, 1.0);
    std::size_t a_bad = 0, b_bad = 0;
    if (s.non_finite) {
      Kokkos::deep_copy(Kokkos::subview(a, s.m - 1, 0), std::nan(""));
      Kokkos::deep_copy(Kokkos::subview(a, 0, s.k - 1), HUGE_VAL);
      Kokkos::deep_copy(Kokkos::subview(b, s.k / 2, s.n / 2), -HUGE_VAL);
      a_bad = 2;
      b_bad = 1;
    }
    Kokkos::View<float**, Kokkos::LayoutLeft, memory> a_left("A_left", s.m, s.k),
        b_left("B_left", s.k, s.n);
    Kokkos::deep_copy(a_left, a);
    Kokkos::deep_copy(b_left, b);
    // float LayoutRight: rows whose start is 16-byte aligned take the 16-byte loads, the others
    // (k and n are not multiples of 4) the element path.
    Kokkos::View<float**, Kokkos::LayoutRight, memory> a_float("A_float", s.m, s.k),
        b_float("B_float", s.k, s.n);
    Kokkos::deep_copy(a_float, a);
    Kokkos::deep_copy(b_float, b);
    Kokkos::View<float**, Kokkos::LayoutRight, memory> a_wide("A_wide", s.m, s.k + 1),
        b_wide("B_wide", s.k, s.n + 1);
    const auto a_off = Kokkos::subview(a_wide, Kokkos::ALL, std::make_pair(1, s.k + 1));
    const auto b_off = Kokkos::subview(b_wide, Kokkos::ALL, std::make_pair(1, s.n + 1));
    Kokkos::deep_copy(exec, a_off, a_left);
    Kokkos::deep_copy(exec, b_off, b_left);
    exec.fence();
    for (const auto precision :
         {spamm_precision::fp64, spamm_precision::fp32, spamm_precision::tf32,
          spamm_precision::fp16, spamm_precision::bf16}) {
      for (const int tile : {32, 64, 128}) {
        for (const auto choice :
             {nearsparse::implementation::automatic, nearsparse::implementation::portable}) {
          const ns::geometry geo(s.m, s.n, s.k, tile);
          nearsparse::spamm::options opt;
          opt.precision = precision;
          opt.tile = tile;
          opt.implementation = choice;
          opt.check_finite = s.non_finite || tile != 64;  // both settings on some shapes
          INFO(exec_space::name() << " " << s.m << " x " << s.k << " x " << s.n << ", "
                                  << nearsparse::spamm::to_string(precision) << ", tile " << tile
                                  << ", " << nearsparse::to_string(choice) << ", seed " << seed);
          ns::with_format(precision, [&](auto fmt) {
            using Format = decltype(fmt);
            using pack_norms_test::check_source;
            {
              INFO("A double LayoutRight");
              check_source<Format>(exec, opt, a, ns::operand::a, geo, a_bad);
            }
            {
              INFO("A float LayoutRight");
              check_source<Format>(exec, opt, a_float, ns::operand::a, geo, a_bad);
            }
            {
              INFO("A float LayoutLeft");
              check_source<Format>(exec, opt, a_left, ns::operand::a, geo, a_bad);
            }
            {
              INFO("A float, rows not 16-byte aligned");
              check_source<Format>(exec, opt, a_off, ns::operand::a, geo, a_bad);
            }
            {
              INFO("B double LayoutRight");
              check_source<Format>(exec, opt, b, ns::operand::b, geo, b_bad);
            }
            {
              INFO("B float LayoutRight");
              check_source<Format>(exec, opt, b_float, ns::operand::b, geo, b_bad);
            }
            {
              INFO("B float LayoutLeft");
              check_source<Format>(exec, opt, b_left, ns::operand::b, geo, b_bad);
            }
            {
              INFO("B float, rows not 16-byte aligned");
              check_source<Format>(exec, opt, b_off, ns::operand::b, geo, b_bad);
            }
            return 0;
          });
        }
      }
    }
  }
}
