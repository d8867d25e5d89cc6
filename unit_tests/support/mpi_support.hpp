#pragma once
// Helpers for the multi-process tests.

#include <mpi.h>

#include <cstdint>
#include <random>

namespace nearsparse::test {

/// A fresh seed, the same on every process (rank 0's).
inline std::uint64_t shared_seed() {
  std::uint64_t seed =
      std::uint64_t(std::random_device{}()) << 20 ^ std::uint64_t(std::random_device{}());
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace nearsparse::test
