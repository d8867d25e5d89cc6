#pragma once
// main() of the programs that run under mpiexec: MPI, then Kokkos (which takes its own
// --kokkos-* arguments), around run(argc, argv, rank, size); an exception is reported with the
// process that raised it and ends every process (MPI_Abort); otherwise every process exits with
// the worst status of all.

#include <nearsparse/core/configuration.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace nearsparse::app {

template <class Run>
int mpi_main(int argc, char* argv[], const char* program, Run&& run) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (const std::string reason = nearsparse::missing_device_reason(); !reason.empty()) {
    std::fprintf(stderr, "%s (process %d): %s\n", program, rank, reason.c_str());
    status = 2;
  } else {
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      status = run(argc, argv, rank, size);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s (process %d): %s\n", program, rank, e.what());
      std::fflush(stderr);
      // Another process may be waiting in a collective call this one will never make: end
      // them all rather than hang.
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, 2);
      status = 2;
    }
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace nearsparse::app
