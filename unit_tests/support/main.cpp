// Catch2 main for every nearsparse test executable: Kokkos is initialized once around the whole
// session (Kokkos consumes its own --kokkos-* arguments first), and the run names the backends
// and the random seed so a failure can be replayed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/seeds.hpp"

#include <nearsparse/core/execution_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <iostream>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::cout << "nearsparse tests: backends";
  for (const auto& name : nearsparse::enabled_backends()) std::cout << ' ' << name;
  std::cout << ", host threads " << Kokkos::DefaultHostExecutionSpace().concurrency()
            << ", base seed " << nearsparse::test::base_seed()
            << " (set NEARSPARSE_TEST_SEED to replay)\n";
  return Catch::Session().run(argc, argv);
}
