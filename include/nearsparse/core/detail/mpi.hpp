#pragma once
// Error checking shared by the multi-process (MPI) drivers. Only included where the library is
// built with NEARSPARSE_ENABLE_MPI.

#include <nearsparse/core/errors.hpp>

#include <mpi.h>

#include <string>

namespace nearsparse::detail {

/// Throws nearsparse::runtime_error naming the driver and the MPI call when `code` is an error.
inline void mpi_check(int code, const char* driver, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw nearsparse::runtime_error(std::string(driver) + ": " + call + " failed (" +
                                  std::string(text, std::size_t(length)) + ")");
}

inline int mpi_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

inline int mpi_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

}  // namespace nearsparse::detail
