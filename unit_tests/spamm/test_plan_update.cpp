// plan::update: a plan refreshed in place for new operands computes what a new plan computes,
// and reports non-finite operands and bad extents at the points its documentation names.
#include "spamm_inputs.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/spamm.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace spamm = nearsparse::spamm;
using nearsparse::test::spamm::decaying_random;
template <class Exec, class T = double>
using matrix = nearsparse::test::spamm::matrix<Exec, T>;

namespace {

// Elements whose bits differ between two products (widened to double, which keeps float's bits).
template <class CView>
std::size_t bits_differ(const CView& x, const CView& y) {
  const auto hx = nearsparse::test::to_host(x), hy = nearsparse::test::to_host(y);
  std::size_t count = 0;
  for (std::size_t i = 0; i < hx.rows; ++i)
    for (std::size_t j = 0; j < hx.cols; ++j)
      count += std::memcmp(&hx(i, j), &hy(i, j), sizeof(hx(i, j))) != 0;
  return count;
}

template <class Exec>
std::vector<int> work_of(const spamm::plan<Exec>& p) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.work_matrix());
  std::vector<int> out;
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) out.push_back(int(h(i, j)));
  return out;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("a plan refreshed in place equals a new plan on the same operands",
                           "[spamm][plan][update]") {
  using exec_space = TestType;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  // Extents that are no multiple of the tile; a second pair of operands with other values.
  const int m = 157, k = 131, n = 149;
  const auto a1 = decaying_random(exec, m, k, seed), b1 = decaying_random(exec, k, n, seed + 1);
  const auto a2 = decaying_random(exec, m, k, seed + 2, 0.02);
  const auto b2 = decaying_random(exec, k, n, seed + 3, 0.02);
  for (const auto precision : {spamm::precision::fp64, spamm::precision::fp32,
                               spamm::precision::fp16, spamm::precision::bf16}) {
    INFO("precision " << spamm::to_string(precision));
    spamm::options opt;
    opt.precision = precision;
    opt.tile = 32;
    opt.target_valid_ratio = 0.4;
    spamm::plan<exec_space> refreshed(exec, a1, b1, opt);
    refreshed.update(exec, a2, b2);
    matrix<exec_space, float> c_refreshed("c_refreshed", m, n), c_new("c_new", m, n);
    refreshed.multiply(exec, 1.0f, 0.0f, c_refreshed);

    spamm::options fixed = opt;
    fixed.target_valid_ratio = 0;
    fixed.tau = refreshed.tau();  // update keeps the plan's tau
    const spamm::plan<exec_space> fresh(exec, a2, b2, fixed);
    fresh.multiply(exec, 1.0f, 0.0f, c_new);
    exec.fence();
    CHECK(refreshed.kept_count() == fresh.kept_count());
    CHECK(refreshed.kept_count() > 0);
    CHECK(refreshed.kept_count() < std::int64_t(5 * 5 * 5));  // not every product: tau matters
    CHECK(work_of(refreshed) == work_of(fresh));
    CHECK(bits_differ(c_refreshed, c_new) == 0);

    // Back to the first operands: the first plan's product again, bit for bit.
    refreshed.update(exec, a1, b1);
    const spamm::plan<exec_space> first(exec, a1, b1, fixed);
    refreshed.multiply(exec, 1.0f, 0.0f, c_refreshed);
    first.multiply(exec, 1.0f, 0.0f, c_new);
    refreshed.check(exec);
    CHECK(refreshed.kept_count() == first.kept_count());
    CHECK(bits_differ(c_refreshed, c_new) == 0);
  }
}

NEARSPARSE_SPACE_TEST_CASE("plan::update reports non-finite operands and bad extents",
                           "[spamm][plan][update][errors]") {
  using exec_space = TestType;
  using Catch::Matchers::Contains;
  const exec_space exec;
  const std::uint64_t seed = nearsparse::test::fresh_seed();
  INFO(exec_space::name() << ", seed " << seed);
  const auto a = decaying_random(exec, 70, 45, seed), b = decaying_random(exec, 45, 33, seed + 1);
  matrix<exec_space> bad_a("bad_a", 70, 45);
  Kokkos::deep_copy(bad_a, a);
  Kokkos::deep_copy(Kokkos::subview(bad_a, 69, 44), std::numeric_limits<double>::quiet_NaN());
  spamm::options opt;
  opt.tile = 32;
  opt.target_valid_ratio = 0.5;
  spamm::plan<exec_space> plan(exec, a, b, opt);

  // Extents are checked at once, naming the operand and both extents.
  const auto wrong_b = decaying_random(exec, 45, 34, seed + 2);
  CHECK_THROWS_WITH(plan.update(exec, a, wrong_b), Contains("nearsparse::spamm::plan::update") &&
                                                       Contains("'B'") && Contains("45 x 34") &&
                                                       Contains("45 x 33"));
  CHECK_THROWS_WITH(plan.update(exec, b, b), Contains("'A'") && Contains("70 x 45"));

  // A non-finite operand is reported by the next call that waits: check, or the counts.
  plan.update(exec, bad_a, b);
  CHECK_THROWS_WITH(plan.check(exec), Contains("nearsparse::spamm::plan::update") &&
                                          Contains("'A'") && Contains("1 non-finite"));
  // Still held: every call that waits reports it, naming update, until finite operands come.
  CHECK_THROWS_WITH(plan.kept_count(), Contains("nearsparse::spamm::plan::update"));
  CHECK_THROWS_WITH(plan.set_tau(exec, plan.tau()),
                    Contains("nearsparse::spamm::plan::update") && Contains("'A'"));
  plan.update(exec, bad_a, b);
  CHECK_THROWS_WITH(plan.valid_ratio(), Contains("'A'") && Contains("1 non-finite"));
  // Finite operands again: the plan works again.
  plan.update(exec, a, b);
  CHECK_NOTHROW(plan.check(exec));
  CHECK(plan.valid_ratio() > 0);

  // With the check off nothing is counted, and nothing is thrown.
  opt.check_finite = false;
  spamm::plan<exec_space> unchecked(exec, a, b, opt);
  unchecked.update(exec, bad_a, b);
  CHECK_NOTHROW(unchecked.check(exec));

  // Empty extents: nothing to pack, nothing kept.
  const matrix<exec_space> e0("e0", 0, 7), e1("e1", 7, 5);
  spamm::plan<exec_space> empty(exec, e0, e1, opt);
  CHECK_NOTHROW(empty.update(exec, e0, e1));
  CHECK(empty.kept_count() == 0);
}
