// The HM and CDM structures: validation of offsets and compact diagonals, index arithmetic,
// diagonal sets for bands and random placements.

#include "diagonal_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>

#include <catch2/catch.hpp>

#include <set>

namespace nd = nearsparse::diagonal;
using Catch::Matchers::Contains;

NEARSPARSE_SPACE_TEST_CASE("hm_matrix lays diagonals out in ascending order with their lengths",
                           "[diagonal]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const nd::hm_matrix<double, mem> m(exec, 4, 6, {3, -2, 0, 5});
  CHECK(m.host_offsets() == std::vector<int>{-2, 0, 3, 5});
  // Lengths on a 4 x 6 matrix: d = -2 -> 2, 0 -> 4, 3 -> 3, 5 -> 1.
  CHECK(m.host_starts() == std::vector<std::int64_t>{0, 2, 6, 9, 10});
  CHECK(m.stored_count() == 10);
  CHECK(m.find_diagonal(3) == 2);
  CHECK(m.find_diagonal(1) == -1);
  // Positions are min(i, j), so an element keeps its position under transposition.
  CHECK(nd::detail::position_of(5, 2) == 2);
  CHECK(nd::detail::row_of(-3, 2) == 5);
  CHECK(nd::detail::col_of(-3, 2) == 2);
  CHECK(nd::detail::diagonal_length(4, 6, 5) == 1);
  CHECK(nd::detail::diagonal_length(4, 6, -4) == 0);
}

NEARSPARSE_SPACE_TEST_CASE("hm_matrix rejects bad structures with clear errors", "[diagonal]") {
  const TestType exec;
  using matrix = nd::hm_matrix<double, typename TestType::memory_space>;
  CHECK_THROWS_AS(matrix(exec, 5, 5, {0, 5}), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(matrix(exec, 5, 5, {0, 5}),
                    Contains("offsets") && Contains("offset 5") && Contains("5 x 5"));
  CHECK_THROWS_WITH(matrix(exec, 5, 3, {-5}), Contains("offset -5"));
  CHECK_THROWS_WITH(matrix(exec, 5, 5, {1, -1, 1}), Contains("offset 1 more than once"));
  CHECK_THROWS_WITH(matrix(exec, -1, 5, {}), Contains("negative"));
  CHECK_THROWS_WITH(matrix(exec, 0, 3, {0}), Contains("offset 0"));
  CHECK_NOTHROW(matrix(exec, 0, 0, {}));
  CHECK_NOTHROW(matrix(exec, 1, 1, {0}));
}

NEARSPARSE_SPACE_TEST_CASE("cdm_matrix maps compact diagonals and rejects bad ones", "[diagonal]") {
  const TestType exec;
  using matrix = nd::cdm_matrix<float, typename TestType::memory_space>;
  const matrix m(exec, 6, {5, 0, 2});
  CHECK(m.host_indices() == std::vector<int>{0, 2, 5});
  CHECK(m.host_lookup() == std::vector<int>{0, -1, 1, -1, -1, 2});
  CHECK(m.stored_count() == 18);
  CHECK_THROWS_WITH(matrix(exec, 6, {6}), Contains("compact diagonal 6") && Contains("[0, 6)"));
  CHECK_THROWS_WITH(matrix(exec, 6, {-1}), Contains("compact diagonal -1"));
  CHECK_THROWS_WITH(matrix(exec, 6, {2, 2}), Contains("more than once"));
  CHECK_THROWS_WITH(matrix(exec, -2, {}), Contains("negative"));
  CHECK(nd::banded_compact_indices(10, 2, 1) == std::vector<int>{0, 1, 8, 9});
  CHECK(nd::banded_compact_indices(3, 5, 5) == std::vector<int>{0, 1, 2});
  CHECK(nd::banded_compact_indices(0, 1, 1).empty());
}

TEST_CASE("diagonal sets for bands and random placements", "[diagonal]") {
  CHECK(nd::banded_offsets(5, 5, 1, 2) == std::vector<int>{-1, 0, 1, 2});
  CHECK(nd::banded_offsets(3, 8, 9, 9).size() == 10);  // all of a 3 x 8 matrix
  CHECK_THROWS_WITH(nd::banded_offsets(3, 3, -1, 0), Contains("lower/upper"));
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto r = nd::random_offsets(100, 80, 40, seed);
  CHECK(r.size() == 40);
  CHECK(std::set<int>(r.begin(), r.end()).size() == 40);
  CHECK(std::find(r.begin(), r.end(), 0) != r.end());
  CHECK(*std::min_element(r.begin(), r.end()) > -100);
  CHECK(*std::max_element(r.begin(), r.end()) < 80);
  CHECK(nd::random_offsets(7, 7, 13, seed).size() == 13);  // every diagonal
  CHECK_THROWS_WITH(nd::random_offsets(7, 7, 14, seed), Contains("13 diagonals"));
}
