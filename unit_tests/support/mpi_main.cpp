// Catch2 main for the multi-process tests (run under mpiexec): MPI, then Kokkos, around one
// session; only rank 0 reports unless NEARSPARSE_MPI_ALL_RANKS is set, and every process exits
// with the worst result of all.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <nearsparse/core/configuration.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int result = 0;
  if (const std::string reason = nearsparse::missing_device_reason(); !reason.empty()) {
    std::fprintf(stderr, "%s\n", reason.c_str());
    result = 2;
  } else {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Catch::Session session;
    if (rank != 0 && !std::getenv("NEARSPARSE_MPI_ALL_RANKS"))
      session.configData().outputFilename = "%debug";  // one report
    result = session.run(argc, argv);
    int worst = 0;
    MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    result = worst;
  }
  MPI_Finalize();
  return result;
}
