// Conversions between HM, CDM, dense, COO and CSR: round trips are exact, and invalid input
// (indices out of range, repeated CSR entries, broken row offsets, NaN) gets a clear error.

#include "diagonal_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <tuple>
#include <type_traits>

namespace nd = nearsparse::diagonal;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nearsparse::test::host_matrix;
using nearsparse::test::diagonal::dense_of;

namespace {

template <class View>
View device_copy(const std::vector<typename View::non_const_value_type>& host, const char* label) {
  View out(std::string(label), host.size());
  auto mirror = Kokkos::create_mirror_view(out);
  for (std::size_t k = 0; k < host.size(); ++k) mirror(k) = host[k];
  Kokkos::deep_copy(out, mirror);
  return out;
}

void check_equal(const host_matrix<double>& a, const host_matrix<double>& b) {
  REQUIRE(a.rows == b.rows);
  REQUIRE(a.cols == b.cols);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.data.size(); ++k) differ += a.data[k] != b.data[k];
  CHECK(differ == 0);
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("HM <-> dense, COO and CSR round trips are exact", "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto shape =
      GENERATE(std::make_tuple(37, 53, 11), std::make_tuple(53, 37, 20), std::make_tuple(1, 1, 1),
               std::make_tuple(9, 9, 17), std::make_tuple(0, 0, 0), std::make_tuple(0, 5, 0));
  const int rows = std::get<0>(shape), cols = std::get<1>(shape), count = std::get<2>(shape);
  INFO(rows << " x " << cols << " with " << count << " diagonals");
  const auto offsets = nd::random_offsets(rows, cols, count, seed, false);
  const auto m = nd::random_hm<double>(exec, rows, cols, offsets, seed + 1);
  const auto dense = dense_of(exec, m);
  // Off the stored diagonals the dense form is zero; on them it holds the stored values.
  for (std::size_t i = 0; i < dense.rows; ++i)
    for (std::size_t j = 0; j < dense.cols; ++j)
      if (m.find_diagonal(int(j) - int(i)) < 0) REQUIRE(dense(i, j) == 0.0);

  // to_dense returns a column-major matrix; hm_from_dense takes any layout.
  const auto as_dense = nd::to_dense(exec, m);
  static_assert(std::is_same_v<typename decltype(as_dense)::array_layout, Kokkos::LayoutLeft>);
  static_assert(std::is_same_v<std::decay_t<decltype(as_dense)>, nd::dense_matrix<double, mem>>);
  const auto from_dense = nd::hm_from_dense(exec, as_dense);
  CHECK(from_dense.host_offsets() == m.host_offsets());
  check_equal(dense_of(exec, from_dense), dense);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> row_major("row_major", std::size_t(rows),
                                                             std::size_t(cols));
  Kokkos::deep_copy(exec, row_major, as_dense);
  exec.fence();
  const auto from_row_major = nd::hm_from_dense(exec, row_major);
  CHECK(from_row_major.host_offsets() == m.host_offsets());
  check_equal(dense_of(exec, from_row_major), dense);

  const auto coo = nd::to_coo(exec, m);
  CHECK(coo.values.extent(0) == std::size_t(m.stored_count()));
  const auto from_coo =
      nd::hm_from_coo(exec, rows, cols, coo.row_indices, coo.col_indices, coo.values);
  CHECK(from_coo.host_offsets() == m.host_offsets());
  check_equal(dense_of(exec, from_coo), dense);

  const auto crs = nd::to_crs(exec, m);
  {
    // The CSR matrix itself, read on the host: sorted columns, the right values.
    auto row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.graph.row_map);
    auto entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.graph.entries);
    auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.values);
    host_matrix<double> rebuilt{std::size_t(rows), std::size_t(cols)};
    for (int i = 0; i < rows; ++i)
      for (int e = row_map(i); e < row_map(i + 1); ++e) {
        if (e > row_map(i)) CHECK(entries(e) > entries(e - 1));
        rebuilt(std::size_t(i), std::size_t(entries(e))) = values(e);
      }
    check_equal(rebuilt, dense);
  }
  const auto from_crs = nd::hm_from_crs(exec, crs);
  CHECK(from_crs.host_offsets() == m.host_offsets());
  check_equal(dense_of(exec, from_crs), dense);
}

NEARSPARSE_SPACE_TEST_CASE("hm_from_dense on given diagonals keeps zeros and refuses stray entries",
                           "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  const auto m = nd::random_hm<float>(exec, 30, 30, nd::banded_offsets(30, 30, 2, 1), seed);
  const auto dense = nd::to_dense(exec, m);
  const auto wider = nd::hm_from_dense(exec, dense, nd::banded_offsets(30, 30, 3, 3));
  CHECK(wider.diagonal_count() == 7);
  CHECK(dense_of(exec, wider).data == dense_of(exec, m).data);
  CHECK_THROWS_WITH(nd::hm_from_dense(exec, dense, {-1, 0, 1}),
                    StartsWith("nearsparse::diagonal::hm_from_dense: ") && Contains("(2, 0)") &&
                        Contains("diagonal -2") && Contains("offsets"));
  Kokkos::deep_copy(Kokkos::subview(dense, 3, 3), std::numeric_limits<float>::quiet_NaN());
  CHECK_THROWS_WITH(nd::hm_from_dense(exec, dense), Contains("non-finite"));
}

NEARSPARSE_SPACE_TEST_CASE("hm_from_coo sums duplicates and rejects bad entries", "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  using ints = Kokkos::View<int*, mem>;
  using reals = Kokkos::View<double*, mem>;
  // Entries in any order, (2, 0) twice.
  const auto r = device_copy<ints>({2, 0, 2, 1, 3}, "r");
  const auto c = device_copy<ints>({0, 3, 0, 1, 4}, "c");
  const auto v = device_copy<reals>({1.5, 2.0, 0.25, -1.0, 7.0}, "v");
  const auto m = nd::hm_from_coo(exec, 4, 5, r, c, v);
  CHECK(m.host_offsets() == std::vector<int>{-2, 0, 1, 3});
  const auto d = dense_of(exec, m);
  CHECK(d(2, 0) == 1.75);
  CHECK(d(0, 3) == 2.0);
  CHECK(d(1, 1) == -1.0);
  CHECK(d(3, 4) == 7.0);

  CHECK_THROWS_WITH(nd::hm_from_coo(exec, 4, 4, r, c, v),
                    Contains("entry 4 is (3, 4)") && Contains("4 x 4"));
  const auto short_v = device_copy<reals>({1.0}, "v");
  CHECK_THROWS_WITH(nd::hm_from_coo(exec, 4, 5, r, c, short_v), Contains("one length"));
  const auto nan_v = device_copy<reals>({1.0, 2.0, std::nan(""), 0.0, 1.0}, "v");
  CHECK_THROWS_WITH(nd::hm_from_coo(exec, 4, 5, r, c, nan_v), Contains("values"));
  const auto neg = device_copy<ints>({2, 0, -1, 1, 3}, "r");
  CHECK_THROWS_WITH(nd::hm_from_coo(exec, 4, 5, neg, c, v), Contains("entry 2"));
}

NEARSPARSE_SPACE_TEST_CASE("hm_from_crs rejects invalid CSR matrices", "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  using crs = nd::crs_matrix<double, TestType, mem>;
  using rows_view = typename crs::row_map_type::non_const_type;
  using cols_view = typename crs::index_type::non_const_type;
  using vals_view = typename crs::values_type::non_const_type;
  const auto make = [&](std::vector<int> row_map, std::vector<int> cols, std::vector<double> vals,
                        int ncols) {
    const int nnz = int(cols.size());
    const int nrows = int(row_map.size()) - 1;
    return crs("A", nrows, ncols, nnz, device_copy<vals_view>(vals, "v"),
               device_copy<rows_view>(row_map, "r"), device_copy<cols_view>(cols, "c"));
  };
  CHECK_NOTHROW(nd::hm_from_crs(exec, make({0, 2, 3}, {0, 2, 1}, {1, 2, 3}, 3)));
  CHECK_THROWS_WITH(nd::hm_from_crs(exec, make({0, 2, 3}, {0, 0, 1}, {1, 2, 3}, 3)),
                    Contains("more than once"));
  CHECK_THROWS_WITH(nd::hm_from_crs(exec, make({0, 2, 3}, {0, 3, 1}, {1, 2, 3}, 3)),
                    Contains("(0, 3)") && Contains("2 x 3"));
  CHECK_THROWS_WITH(nd::hm_from_crs(exec, make({1, 2, 3}, {0, 2, 1}, {1, 2, 3}, 3)),
                    Contains("row_map") && Contains("start at 0"));
  CHECK_THROWS_WITH(nd::hm_from_crs(exec, make({0, 2, 1}, {0, 2, 1}, {1, 2, 3}, 3)),
                    Contains("row_map"));
  CHECK_THROWS_WITH(nd::hm_from_crs(exec, make({0, 2, 3}, {0, 2, 1}, {1, std::nan(""), 3}, 3)),
                    Contains("non-finite"));
}

NEARSPARSE_SPACE_TEST_CASE("CDM <-> HM, dense, COO and CSR round trips are exact", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const int n = GENERATE(1, 2, 13, 40);
  const int count = std::min(2 * n - 1, 9);
  const auto m = nd::random_hm<double>(exec, n, n, nd::random_offsets(n, n, count, seed), seed + 3);
  const auto dense = dense_of(exec, m);
  const auto cdm = nd::cdm_from_hm(exec, m);
  check_equal(dense_of(exec, cdm), dense);
  // Element (i, j) is entry i of compact diagonal (j - i) mod n.
  {
    auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cdm.values());
    for (int t = 0; t < cdm.diagonal_count(); ++t)
      for (int p = 0; p < n; ++p)
        CHECK(values(t, p) == dense(std::size_t(p), std::size_t((p + cdm.host_indices()[t]) % n)));
  }
  const auto back = nd::hm_from_cdm(exec, cdm);
  CHECK(back.host_offsets() == m.host_offsets());  // random values: no stored diagonal is zero
  check_equal(dense_of(exec, back), dense);
  check_equal(dense_of(exec, nd::cdm_from_dense(exec, nd::to_dense(exec, m))), dense);
  check_equal(dense_of(exec, nd::cdm_from_crs(exec, nd::to_crs(exec, cdm))), dense);
  const auto coo = nd::to_coo(exec, cdm);
  check_equal(
      dense_of(exec, nd::cdm_from_coo(exec, n, coo.row_indices, coo.col_indices, coo.values)),
      dense);
}

NEARSPARSE_SPACE_TEST_CASE("a banded CDM matrix holds zeros outside its band", "[diagonal]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  const int n = 23, lower = 3, upper = 1;
  const auto cdm = nd::random_banded_cdm<double>(exec, n, lower, upper, seed);
  CHECK(cdm.diagonal_count() == lower + upper + 1);
  const auto dense = dense_of(exec, cdm);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const bool in_band = j - i <= upper && i - j <= lower;
      CHECK((dense(std::size_t(i), std::size_t(j)) != 0.0) == in_band);
    }
  // Only the band's diagonals come back in HM: the padding is dropped.
  CHECK(nd::hm_from_cdm(exec, cdm).host_offsets() == nd::banded_offsets(n, n, lower, upper));
  const auto rect = nd::random_hm<double>(exec, 4, 5, {0}, seed);
  CHECK_THROWS_WITH(nd::cdm_from_hm(exec, rect), Contains("4 x 5") && Contains("square"));
}
