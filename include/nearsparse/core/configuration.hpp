#pragma once
// What this build of nearsparse is and what it runs on, for `nearsparse info`, benchmark context
// and bug reports.

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace nearsparse {

struct build_info {
  std::string version;         ///< nearsparse version, "0.1.0"
  std::string git_revision;    ///< revision the tree was configured from, or "unknown"
  std::string compiler;        ///< compiler and version that built the library
  std::string kokkos_version;  ///< "3.4.1"
  long cxx_standard;           ///< __cplusplus of the library build
  bool mpi;                    ///< built with the MPI drivers
};

/// Facts fixed when the library was compiled.
build_info get_build_info();

struct device_info {
  int id = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

/// The CUDA devices visible to this process; empty in builds without the CUDA backend. Throws
/// nearsparse::runtime_error when the CUDA runtime reports an error other than "no device".
std::vector<device_info> cuda_devices();

/// Why this build cannot start on this machine, or "" when it can: in a build with the CUDA
/// backend where no CUDA device is visible (none installed, no driver, or CUDA_VISIBLE_DEVICES
/// hiding them all), a message naming CUDA_VISIBLE_DEVICES and its value. Kokkos 3 stops the
/// process without a device when it initializes, so programs ask this first, print the message
/// and exit non-zero. Needs no initialized Kokkos.
std::string missing_device_reason();

/// Prints version, compiler, Kokkos version and backends, host concurrency and the visible
/// devices. `detailed` adds Kokkos' own configuration report. Kokkos must be initialized.
void print_configuration(std::ostream& out, bool detailed = false);

}  // namespace nearsparse
