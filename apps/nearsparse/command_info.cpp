// `nearsparse info`: what this build is and what it runs on.
#include "commands.hpp"

#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <iostream>

namespace nearsparse::app {

int run_info(arguments& args) {
  const bool detailed = args.flag("detailed");
  const std::string backend = args.text("backend", "");
  args.finish();
  if (!backend.empty()) {
    nearsparse::require_backend(backend);
    std::cout << "selected backend: " << backend << "\n";
  }
  nearsparse::print_configuration(std::cout, detailed);
  return 0;
}

}  // namespace nearsparse::app
