// Matrix-vector and matrix-multivector products in HM and CDM storage against the dense product,
// both orientations, LayoutLeft and LayoutRight multivectors, alpha and beta, bad extents.

#include "diagonal_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

namespace nd = nearsparse::diagonal;
namespace ref = nearsparse::test::diagonal;
using Catch::Matchers::Contains;
using nearsparse::test::host_matrix;

namespace {

/// A rank-1 View as an n x 1 host matrix, a rank-2 View as it is.
template <class View>
host_matrix<double> as_matrix(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  const std::size_t cols = View::rank == 2 ? v.extent(1) : 1;
  host_matrix<double> out(v.extent(0), cols);
  for (std::size_t i = 0; i < out.rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      if constexpr (View::rank == 2)
        out(i, j) = h(i, j);
      else
        out(i, j) = h(i);
    }
  return out;
}

template <class Scalar, class Exec, class Matrix, class XView, class YView>
void check_spmv(const Exec& exec, const Matrix& a, nd::op o, const XView& x, const YView& y,
                std::uint64_t seed) {
  INFO("op " << nd::to_string(o) << ", rank " << XView::rank << ", seed " << seed);
  nearsparse::fill_random(exec, x, seed);
  nearsparse::fill_random(exec, y, seed + 1);
  const auto y0 = as_matrix(y);
  nd::spmv(exec, o, 0.5, a, x, -1.5, y);
  ref::check_product<Scalar>(as_matrix(y), 0.5, ref::apply_op(ref::dense_of(exec, a), o),
                             as_matrix(x), -1.5, y0);
  nd::spmv(exec, o, 1.0, a, x, 0.0, y);
  ref::check_product<Scalar>(as_matrix(y), 1.0, ref::apply_op(ref::dense_of(exec, a), o),
                             as_matrix(x), 0.0, host_matrix<double>(y0.rows, y0.cols));
}

template <class Scalar, class Exec, class Matrix>
void check_all_forms(const Exec& exec, const Matrix& a, std::uint64_t seed) {
  using mem = typename Exec::memory_space;
  for (const auto o : {nd::op::none, nd::op::transpose}) {
    const bool t = o == nd::op::transpose;
    const std::size_t rows = t ? a.cols() : a.rows(), cols = t ? a.rows() : a.cols();
    check_spmv<Scalar>(exec, a, o, Kokkos::View<Scalar*, mem>("x", cols),
                       Kokkos::View<Scalar*, mem>("y", rows), seed);
    check_spmv<Scalar>(exec, a, o, Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem>("x", cols, 5),
                       Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem>("y", rows, 5), seed);
    check_spmv<Scalar>(exec, a, o, Kokkos::View<Scalar**, Kokkos::LayoutRight, mem>("x", cols, 3),
                       Kokkos::View<Scalar**, Kokkos::LayoutRight, mem>("y", rows, 3), seed);
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("spmv in HM and CDM equals the dense product", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  check_all_forms<double>(
      exec, nd::random_hm<double>(exec, 67, 45, nd::random_offsets(67, 45, 13, seed), seed), seed);
  check_all_forms<float>(
      exec, nd::random_hm<float>(exec, 33, 70, nd::random_offsets(33, 70, 7, seed), seed), seed);
  check_all_forms<double>(exec, nd::random_banded_cdm<double>(exec, 71, 4, 2, seed), seed);
  using cdm = nd::cdm_matrix<float, typename TestType::memory_space>;
  cdm wrapped(exec, 29, {0, 5, 28});
  nearsparse::fill_random(exec, wrapped.values(), seed);
  check_all_forms<float>(exec, wrapped, seed);
  check_all_forms<double>(
      exec, nd::hm_matrix<double, typename TestType::memory_space>(exec, 0, 4, {}), seed);
}

NEARSPARSE_SPACE_TEST_CASE("spmv rejects vectors that do not conform", "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const nd::hm_matrix<double, mem> a(exec, 6, 4, {0, 1});
  Kokkos::View<double*, mem> x("x", 6), y("y", 6);
  CHECK_THROWS_WITH(nd::spmv(exec, nd::op::none, 1.0, a, x, 0.0, y),
                    Contains("6 x 4") && Contains("x is 6"));
  Kokkos::View<double*, mem> x4("x", 4);
  CHECK_THROWS_WITH(nd::spmv(exec, nd::op::transpose, 1.0, a, x4, 0.0, y), Contains("4 x 6"));
  Kokkos::View<double**, mem> xm("x", 4, 2), ym("y", 6, 3);
  CHECK_THROWS_WITH(nd::spmv(exec, nd::op::none, 1.0, a, xm, 0.0, ym), Contains("6 x 3"));
  CHECK_THROWS_WITH(nd::spmv(exec, nd::op::none, std::nan(""), a, x4, 0.0, y), Contains("alpha"));
}
