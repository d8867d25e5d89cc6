// The element-wise loops and sums of core/detail/elementwise.hpp and the Frobenius norms built on
// them, on LayoutRight, LayoutLeft and strided Views (a transposed one, a column, a row), against
// sums taken on the host in double.
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/matrix_norms.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

// A named namespace: nvcc's extended lambdas need an enclosing function with external linkage.
namespace elementwise_test {

/// The host's sum of squares of v (any layout).
template <class HostView>
double host_sum_squares(const HostView& v) {
  double s = 0.0;
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j) s += double(v(i, j)) * double(v(i, j));
  return s;
}

/// The value written at (i, j): exact in double however the device contracts or orders the
/// operations (multiples of 1/1024 below 32 in magnitude), so the host can compare it bit for bit.
KOKKOS_INLINE_FUNCTION double value(int i, int j) {
  return 0.25 * double((i * 7 + j * 3) % 11) - 1.0 + double(i) / 1024.0;
}

/// Checks frobenius_norm, frobenius_distance, sum_elements and for_each_element on v (a rank-2
/// View on exec's memory space), filling it with values that depend on (i, j).
template <class Exec, class View>
void check_view(const Exec& exec, const View& v) {
  const int rows = int(v.extent(0)), cols = int(v.extent(1));
  INFO(rows << " x " << cols << ", strides " << v.stride_0() << ", " << v.stride_1());
  // Every element written once, in place, from its own indices.
  nearsparse::detail::for_each_element(
      exec, "test::fill", rows, cols, nearsparse::detail::second_index_contiguous(v),
      KOKKOS_LAMBDA(const int i, const int j) { v(i, j) = value(i, j); });
  // Kokkos copies between memory spaces only contiguous Views: a strided v goes through a
  // LayoutRight copy in its own space first.
  Kokkos::View<double**, Kokkos::LayoutRight, typename View::memory_space> packed("test::packed",
                                                                                  rows, cols);
  Kokkos::deep_copy(exec, packed, v);
  exec.fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) REQUIRE(h(i, j) == value(i, j));
  const double expect = host_sum_squares(h);
  CHECK(nearsparse::frobenius_norm(exec, v) == Approx(std::sqrt(expect)).epsilon(1e-13));
  // Both orders give the same sum (up to rounding).
  for (const bool by_rows : {true, false}) {
    const double s = nearsparse::detail::sum_elements(
        exec, "test::sum", rows, cols, by_rows,
        KOKKOS_LAMBDA(const int i, const int j) { return double(v(i, j)) * double(v(i, j)); });
    CHECK(s == Approx(expect).epsilon(1e-13));
  }
  CHECK(nearsparse::frobenius_distance(exec, v, v) == 0.0);
}

}  // namespace elementwise_test

using elementwise_test::check_view;

NEARSPARSE_SPACE_TEST_CASE("element-wise loops and Frobenius norms in every layout",
                           "[core][elementwise]") {
  using exec_space = TestType;
  using mem = typename exec_space::memory_space;
  const exec_space exec;
  const int rows = GENERATE(1, 37, 130), cols = GENERATE(1, 33, 65);
  INFO(exec_space::name() << ", " << rows << " x " << cols);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> right("right", rows, cols);
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> left("left", rows, cols);
  check_view(exec, right);
  check_view(exec, left);
  // Strided Views: the left half of a wider LayoutRight matrix (rows further apart than they
  // are long), and element (i, j) at i + j * rows (the second index is the strided one).
  Kokkos::View<double**, Kokkos::LayoutRight, mem> wide("wide", rows, 2 * cols);
  const auto left_half = Kokkos::subview(wide, Kokkos::ALL, std::make_pair(0, cols));
  check_view(exec, left_half);
  Kokkos::View<double**, Kokkos::LayoutStride, mem> t("column_major_strided",
                                                      Kokkos::LayoutStride(rows, 1, cols, rows));
  check_view(exec, t);
}

NEARSPARSE_SPACE_TEST_CASE("element-wise loops cut long lines into segments",
                           "[core][elementwise]") {
  // Lines longer than element_lines::segment_length go to several teams: every element must
  // still be written once and summed once, at a segment's edge too.
  using exec_space = TestType;
  using mem = typename exec_space::memory_space;
  const exec_space exec;
  constexpr int segment = nearsparse::detail::element_lines::segment_length;
  for (const auto& e : {std::pair<int, int>{3, 2 * segment + 5},
                        {2 * segment + 1, 1},
                        {1, segment + 1},
                        {2, segment},
                        {4, 3 * segment - 1}}) {
    INFO(exec_space::name() << ", " << e.first << " x " << e.second);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> right("right", e.first, e.second);
    Kokkos::View<double**, Kokkos::LayoutLeft, mem> left("left", e.second, e.first);
    check_view(exec, right);
    check_view(exec, left);
  }
}

NEARSPARSE_SPACE_TEST_CASE("element-wise loops and sums of empty matrices do nothing",
                           "[core][elementwise]") {
  using exec_space = TestType;
  using mem = typename exec_space::memory_space;
  const exec_space exec;
  for (const auto& e : {std::pair<int, int>{0, 5}, {4, 0}, {0, 0}}) {
    Kokkos::View<double**, Kokkos::LayoutRight, mem> v("v", e.first, e.second);
    CHECK(nearsparse::frobenius_norm(exec, v) == 0.0);
    CHECK(nearsparse::detail::sum_elements(
              exec, "test::empty", e.first, e.second, true,
              KOKKOS_LAMBDA(int, int) { return 1.0; }) == 0.0);
  }
}

TEST_CASE("element-wise lines cover extents whose element count passes 2^31",
          "[core][elementwise]") {
  // Extents and element indices are 64-bit, a launch holds at most team_league_max teams (each
  // taking several units in turn past that), and a line within segment_length of 2^31 still ends
  // where it should. No memory: the geometry alone.
  using nearsparse::detail::element_lines;
  constexpr std::int64_t segment = element_lines::segment_length;
  constexpr int league_max = nearsparse::detail::team_league_max;
  struct shape {
    std::int64_t rows, cols;
    bool second_contiguous;
  };
  for (const shape s :
       {shape{131072, 131072, true}, shape{65536, 65536, false}, shape{1, 2147483647, true},
        shape{2147483647, 3, false}, shape{1, 3000000000, true}, shape{3000000000, 2, true}}) {
    const element_lines l(s.rows, s.cols, s.second_contiguous);
    INFO(s.rows << " x " << s.cols << (s.second_contiguous ? ", by rows" : ", by columns"));
    const std::int64_t lines = s.second_contiguous ? s.rows : s.cols;
    const std::int64_t length = s.second_contiguous ? s.cols : s.rows;
    const std::int64_t segments = (length + segment - 1) / segment;
    REQUIRE(l.lines == lines);
    REQUIRE(l.length == length);
    CHECK(l.units() == lines * segments);
    CHECK(l.teams() == std::min<std::int64_t>(l.units(), league_max));
    // The last unit of the first and of the last line end at the line's end, after a full
    // segment before them; every unit holds between 1 and segment_length elements.
    for (const std::int64_t line : {std::int64_t(0), lines - 1}) {
      const std::int64_t last = (line + 1) * segments - 1;
      CHECK(l.line(last) == line);
      CHECK(l.end(last) == length);
      CHECK(l.count(last) == length - (segments - 1) * segment);
      CHECK(l.count(last) >= 1);
      if (segments > 1) {
        CHECK(l.end(last - 1) == l.begin(last));
        CHECK(l.count(last - 1) == segment);
      }
    }
    // Where the units are few enough to walk, they cover every element once, in order.
    if (l.units() <= (std::int64_t(1) << 22)) {
      std::int64_t covered = 0, breaks = 0;
      for (std::int64_t u = 0; u < l.units(); ++u) {
        covered += l.count(u);
        const bool next_in_line = u + 1 < l.units() && l.line(u + 1) == l.line(u);
        if (next_in_line ? l.end(u) != l.begin(u + 1) : l.end(u) != length) ++breaks;
      }
      CHECK(covered == s.rows * s.cols);
      CHECK(breaks == 0);
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("element-wise loops and sums with more lines than teams",
                           "[core][elementwise]") {
  // team_league_max + 3 rows of 2 (16 MB): some teams take two rows, one after the other.
  using exec_space = TestType;
  using mem = typename exec_space::memory_space;
  const exec_space exec;
  const std::int64_t rows = nearsparse::detail::team_league_max + 3, cols = 2;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> v("v", rows, cols);
  REQUIRE(nearsparse::detail::second_index_contiguous(v));
  REQUIRE(nearsparse::detail::element_lines(rows, cols, true).units() >
          nearsparse::detail::element_lines(rows, cols, true).teams());
  nearsparse::detail::for_each_element(
      exec, "test::fill", rows, cols, true,
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        v(i, j) = double(i * cols + j);
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) wrong += h(i, j) == double(i * cols + j) ? 0 : 1;
  CHECK(wrong == 0);
  // The sum of 0, 1, ..., n - 1 (exact in double), in both orders.
  const double n = double(rows * cols), expect = n * (n - 1) / 2;
  for (const bool by_rows : {true, false}) {
    INFO(exec_space::name() << (by_rows ? ", by rows" : ", by columns"));
    CHECK(nearsparse::detail::sum_elements(
              exec, "test::sum", rows, cols, by_rows,
              KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) { return v(i, j); }) ==
          expect);
  }
}
