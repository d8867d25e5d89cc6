#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <thread>

namespace nearsparse {

namespace {

using detail::to_lower;

const std::vector<std::string>& known_backends() {
  static const std::vector<std::string> names{"serial", "openmp", "cuda"};
  return names;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

template <class... Spaces>
std::vector<std::string> lower_names(std::tuple<Spaces...>*) {
  return {to_lower(Spaces::name())...};
}

}  // namespace

// Derived from the type list, so names and types cannot disagree ("Serial" -> "serial").
std::vector<std::string> enabled_backends() {
  return lower_names(static_cast<enabled_execution_spaces*>(nullptr));
}

bool backend_enabled(const std::string& name) {
  const auto enabled = enabled_backends();
  return std::find(enabled.begin(), enabled.end(), to_lower(name)) != enabled.end();
}

void require_backend(const std::string& name) {
  const auto& known = known_backends();
  if (std::find(known.begin(), known.end(), to_lower(name)) == known.end()) {
    throw invalid_argument(detail::concat("nearsparse: unknown backend '", name,
                                          "' (nearsparse knows: ", join(known), ")"));
  }
  if (!backend_enabled(name)) {
    throw unsupported(detail::concat(
        "nearsparse: backend '", name,
        "' is not compiled into this build (enabled: ", join(enabled_backends()), ")"));
  }
}

void print_configuration(std::ostream& out, bool detailed) {
  const build_info b = get_build_info();
  out << "nearsparse " << b.version << " (revision " << b.git_revision << ")\n"
      << "  compiler:        " << b.compiler << ", C++ " << b.cxx_standard << "\n"
      << "  Kokkos:          " << b.kokkos_version << "\n"
      << "  backends:        " << join(enabled_backends()) << "\n"
      << "  default space:   " << Kokkos::DefaultExecutionSpace::name() << "\n"
      << "  host threads:    " << Kokkos::DefaultHostExecutionSpace().concurrency() << " of "
      << std::thread::hardware_concurrency() << " hardware threads\n"
      << "  MPI drivers:     " << (b.mpi ? "yes" : "no") << "\n"
      << "  host BLAS:       " << detail::host_blas::name() << "\n";
  const auto devices = cuda_devices();
  if (backend_enabled("cuda")) {
    out << "  CUDA devices:    " << devices.size() << "\n";
    for (const auto& d : devices) {
      out << "    [" << d.id << "] " << d.name << ", sm_" << d.compute_major << d.compute_minor
          << ", " << d.multiprocessors << " SMs, " << std::fixed << std::setprecision(1)
          << static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB\n";
      out.unsetf(std::ios::floatfield);
    }
  }
  if (detailed) {
    out << "\nKokkos configuration:\n";
    Kokkos::print_configuration(out, true);
  }
}

}  // namespace nearsparse
