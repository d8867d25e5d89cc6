#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <sstream>
#include <tuple>

using Catch::Matchers::Contains;

TEST_CASE("enabled backends match the compiled Kokkos", "[core][backends]") {
  const auto names = nearsparse::enabled_backends();
  CHECK(std::tuple_size<nearsparse::enabled_execution_spaces>::value == names.size());
#ifdef KOKKOS_ENABLE_OPENMP
  CHECK(nearsparse::backend_enabled("openmp"));
  CHECK(nearsparse::backend_enabled("OpenMP"));
  CHECK_NOTHROW(nearsparse::require_backend("openmp"));
#endif
#ifdef KOKKOS_ENABLE_CUDA
  CHECK(nearsparse::backend_enabled("cuda"));
#else
  CHECK_FALSE(nearsparse::backend_enabled("cuda"));
  CHECK_THROWS_AS(nearsparse::require_backend("cuda"), nearsparse::unsupported);
  CHECK_THROWS_WITH(nearsparse::require_backend("cuda"),
                    Contains("'cuda' is not compiled into this build") && Contains("enabled:"));
  CHECK(nearsparse::cuda_devices().empty());
#endif
  CHECK_THROWS_AS(nearsparse::require_backend("hip-sycl"), nearsparse::invalid_argument);
  CHECK_THROWS_WITH(nearsparse::require_backend("vulkan"), Contains("unknown backend 'vulkan'"));
}

TEST_CASE("print_configuration reports versions and backends", "[core][backends]") {
  std::ostringstream out;
  nearsparse::print_configuration(out);
  const auto info = nearsparse::get_build_info();
  CHECK_THAT(out.str(), Contains("nearsparse " + info.version));
  CHECK_THAT(out.str(), Contains("Kokkos:          " + info.kokkos_version));
  CHECK(info.kokkos_version.substr(0, 1) >= "3");
  for (const auto& b : nearsparse::enabled_backends()) CHECK_THAT(out.str(), Contains(b));
}
