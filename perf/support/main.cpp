// Benchmark main: Kokkos around Google Benchmark, and the context every result needs to be
// read later (nearsparse and Kokkos versions, revision, backends, devices, host threads).
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <string>

int main(int argc, char* argv[]) {
  if (const std::string reason = nearsparse::missing_device_reason(); !reason.empty()) {
    std::fprintf(stderr, "%s\n", reason.c_str());
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  const auto build = nearsparse::get_build_info();
  std::string backends;
  for (const auto& b : nearsparse::enabled_backends())
    backends += (backends.empty() ? "" : ",") + b;
  benchmark::AddCustomContext("nearsparse", build.version + " (" + build.git_revision + ")");
  benchmark::AddCustomContext("kokkos", build.kokkos_version + ", backends " + backends);
  benchmark::AddCustomContext("compiler", build.compiler);
  benchmark::AddCustomContext("host_threads",
                              std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()));
  std::string devices;
  for (const auto& d : nearsparse::cuda_devices())
    devices += (devices.empty() ? "" : "; ") + d.name + " (sm_" + std::to_string(d.compute_major) +
               std::to_string(d.compute_minor) + ")";
  benchmark::AddCustomContext("devices", devices.empty() ? "none" : devices);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
