// nearsparse: the command-line program. `nearsparse` alone runs every command that takes part
// in the default run on its built-in defaults; `nearsparse <command> [options]` runs one.
#include "arguments.hpp"
#include "commands.hpp"

#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

using nearsparse::app::commands;

void print_help(std::ostream& out) {
  out << "Usage: nearsparse [<command>] [options]\n\n"
         "Kernels for matrices between dense and sparse. Without a command, runs every\n"
         "command marked * below on its built-in defaults.\n\nCommands:\n";
  for (const auto& c : commands()) {
    out << "  " << (c.in_default_run ? '*' : ' ') << ' ' << c.name
        << std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') << c.summary << "\n";
  }
  out << "\nOptions of every command:\n"
      << nearsparse::app::common_options
      << "\n`nearsparse <command> --help` lists a command's own options.\n";
}

const nearsparse::app::command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

void print_command_help(const nearsparse::app::command& c) {
  std::cout << "Usage: nearsparse " << c.name << " [options]\n\n"
            << c.summary << "\n\nOptions:\n"
            << c.usage << nearsparse::app::common_options;
}

bool wants_help(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

// Messages of nearsparse exceptions already name their origin.
void report(const char* kind, const std::exception& e) {
  const std::string what = e.what();
  std::cerr << (what.rfind("nearsparse", 0) == 0 ? "" : "nearsparse: ") << kind << what << "\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const nearsparse::app::command* chosen = nullptr;
  if (!args.empty() && args[0].rfind("-", 0) != 0) {
    chosen = find_command(args[0] == "help" && args.size() > 1 ? args[1] : args[0]);
    if (!chosen && args[0] != "help") {
      std::cerr << "nearsparse: unknown command '" << args[0] << "'\n\n";
      print_help(std::cerr);
      return 2;
    }
  }
  // Help is answered before Kokkos starts: Kokkos 3 takes an unprefixed --help as its own.
  if (wants_help(args) || (!args.empty() && args[0] == "help")) {
    if (chosen) {
      print_command_help(*chosen);
    } else {
      print_help(std::cout);
    }
    return 0;
  }

  // Without a visible GPU a CUDA build would stop inside Kokkos' initialization: say so instead.
  if (const std::string reason = nearsparse::missing_device_reason(); !reason.empty()) {
    std::cerr << reason << "\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);  // consumes the --kokkos-* arguments
  args.assign(argv + 1, argv + argc);
  try {
    if (!chosen) {
      // The default run: every command marked for it, on its defaults; common options such as
      // --backend are passed on to each.
      int status = 0;
      for (const auto& c : commands()) {
        if (!c.in_default_run) continue;
        std::cout << "== nearsparse " << c.name << " ==\n";
        nearsparse::app::arguments parsed(args);
        status |= c.run(parsed);
      }
      return status;
    }
    nearsparse::app::arguments parsed(std::vector<std::string>(args.begin() + 1, args.end()));
    return chosen->run(parsed);
  } catch (const nearsparse::invalid_argument& e) {
    report("", e);
    return 2;
  } catch (const nearsparse::unsupported& e) {
    report("", e);
    return 2;
  } catch (const std::exception& e) {
    report("error: ", e);
    return 1;
  }
}
