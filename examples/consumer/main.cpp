// A minimal application using the installed nearsparse: it makes a random matrix on the default
// execution space, plants one NaN, and lets the library find it.
#include <nearsparse/nearsparse.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <iostream>
#include <limits>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  nearsparse::print_configuration(std::cout);

  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<double**> a("A", 300, 200);
  nearsparse::fill_random(exec, a, /*seed=*/2026);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  h(17, 5) = std::numeric_limits<double>::quiet_NaN();
  Kokkos::deep_copy(a, h);

  try {
    nearsparse::require_finite(exec, "consumer", "A", a);
    std::printf("FAILED: the NaN went unnoticed\n");
    return 1;
  } catch (const nearsparse::invalid_argument& e) {
    std::printf("caught as expected: %s\n", e.what());
  }
  return 0;
}
