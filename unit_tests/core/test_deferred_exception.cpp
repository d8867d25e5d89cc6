// An exception thrown by one work item of a host parallel region leaves after the region, and the
// items that start after it are skipped.

#include <nearsparse/core/detail/deferred_exception.hpp>
#include <nearsparse/core/errors.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <string>

namespace {

using host_space = Kokkos::DefaultHostExecutionSpace;

/// Runs n items on the host space, item `bad` throwing (none when bad < 0); returns the items
/// that ran to their end.
int run_items(nearsparse::detail::deferred_exception& failure, int n, int bad) {
  std::atomic<int> finished{0};
  auto* f = &failure;
  auto* done = &finished;
  Kokkos::parallel_for(
      "nearsparse::test::deferred_exception",
      Kokkos::RangePolicy<host_space, Kokkos::Schedule<Kokkos::Dynamic>>(host_space(), 0, n),
      [=](const int i) {
        f->run([&] {
          if (i == bad) throw nearsparse::runtime_error("item " + std::to_string(i) + " failed");
          done->fetch_add(1);
        });
      });
  host_space().fence();
  return finished.load();
}

}  // namespace

TEST_CASE("deferred_exception rethrows the first failure after a host parallel region",
          "[core][deferred_exception]") {
  SECTION("no failure") {
    nearsparse::detail::deferred_exception failure;
    CHECK(run_items(failure, 1000, -1) == 1000);
    CHECK_FALSE(failure.failed());
    CHECK_NOTHROW(failure.rethrow());
  }
  SECTION("one item throws") {
    nearsparse::detail::deferred_exception failure;
    const int finished = run_items(failure, 1000, 17);
    CHECK(failure.failed());
    CHECK(finished < 1000);
    CHECK_THROWS_AS(failure.rethrow(), nearsparse::runtime_error);
    CHECK_THROWS_WITH(failure.rethrow(), Catch::Matchers::Contains("item 17 failed"));
  }
  SECTION("the process goes on: a later region runs in full") {
    nearsparse::detail::deferred_exception failure;
    run_items(failure, 100, 0);
    nearsparse::detail::deferred_exception next;
    CHECK(run_items(next, 100, -1) == 100);
  }
}
