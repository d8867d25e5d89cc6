// Catch2 main for every nearsparse test executable: Kokkos is initialized once around the whole
// session (Kokkos consumes its own --kokkos-* arguments first), and the run names the backends
// and the random seed so a failure can be replayed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/seeds.hpp"

#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <iostream>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer builds (NEARSPARSE_ENABLE_SANITIZERS): an allocation too large to serve returns
// null, as malloc does, instead of stopping the program, so the tests of out-of-memory errors
// see what they see without the sanitizer. ASAN_OPTIONS adds to these.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif

int main(int argc, char* argv[]) {
  if (const std::string reason = nearsparse::missing_device_reason(); !reason.empty()) {
    std::cerr << reason << "\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::cout << "nearsparse tests: backends";
  for (const auto& name : nearsparse::enabled_backends()) std::cout << ' ' << name;
  std::cout << ", host threads " << Kokkos::DefaultHostExecutionSpace().concurrency()
            << ", base seed " << nearsparse::test::base_seed()
            << " (set NEARSPARSE_TEST_SEED to replay)\n";
  return Catch::Session().run(argc, argv);
}
