#include "commands.hpp"

namespace nearsparse::app {

const char* const common_options =
    "  --backend NAME   execution space: serial, openmp or cuda (default: the build's default)\n"
    "  --help           this text\n"
    "  --kokkos-...     Kokkos' own options, e.g. --kokkos-threads=4 (3.x) or\n"
    "                   --kokkos-num-threads=4 (4.x), --kokkos-device-id=1\n";

const std::vector<command>& commands() {
  static const std::vector<command> list{
      {"info", "versions, Kokkos configuration, backends and devices",
       "  --detailed       add Kokkos' full configuration report\n", run_info, true},
  };
  return list;
}

}  // namespace nearsparse::app
