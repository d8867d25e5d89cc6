// The element-wise loops and sums of core/detail/elementwise.hpp and the Frobenius norms built on
// them, on LayoutRight, LayoutLeft and strided Views (a transposed one, a column, a row), against
// sums taken on the host in double.
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/matrix_norms.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

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
