// The check of a large allocation against the memory an execution space has free
// (core/detail/free_memory.hpp): it refuses with the function, the argument and both sizes in
// GiB, passes what fits, and passes everything where the free memory is unknown (0, the host
// spaces).
#include "support/space_test_case.hpp"

#include <nearsparse/core/detail/free_memory.hpp>
#include <nearsparse/core/errors.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace d = nearsparse::detail;
using Catch::Matchers::Contains;

TEST_CASE("require_fits refuses what exceeds the free memory, naming the call and the sizes",
          "[core][free_memory][errors]") {
  constexpr std::size_t gib = std::size_t(1) << 30;
  CHECK_NOTHROW(d::require_fits("f", "C", "would hold 3 tiles", 10 * gib, 0));
  CHECK_NOTHROW(d::require_fits("f", "C", "would hold 3 tiles", 10 * gib, 10 * gib));
  CHECK_THROWS_AS(d::require_fits("f", "C", "would hold 3 tiles", 10 * gib + 1, 10 * gib),
                  nearsparse::runtime_error);
  CHECK_THROWS_WITH(d::require_fits("nearsparse::spamm::multiply", "C", "would hold 3 tiles",
                                    72 * gib + gib / 2, 60 * gib, "; raise tau"),
                    Contains("nearsparse::spamm::multiply: 'C' would hold 3 tiles: 72.50 GiB") &&
                        Contains("the device has 60.00 GiB free; raise tau"));
}

NEARSPARSE_SPACE_TEST_CASE("free_memory_bytes is known on CUDA and 0 on the host spaces",
                           "[core][free_memory]") {
  using exec_space = TestType;
  using memory = typename exec_space::memory_space;
  const exec_space exec;
  const std::size_t free = d::free_memory_bytes(exec);
  if (std::string(exec_space::name()) == "Cuda") {
    CHECK(free > 0);
  } else {
    CHECK(free == 0);
  }
  if constexpr (d::free_memory_known<memory>::value) {
    // Nothing this small is refused, and everything beyond the free memory is.
    CHECK_NOTHROW(d::require_fits<memory>(exec, "f", "X", "needs", 1));
    CHECK_THROWS_AS(d::require_fits<memory>(exec, "f", "X", "needs", free + (std::size_t(1) << 40)),
                    nearsparse::runtime_error);
  }
  // Host memory is not checked: the operating system decides.
  CHECK_NOTHROW(d::require_fits<Kokkos::HostSpace>(exec, "f", "X", "needs", ~std::size_t(0)));
}
