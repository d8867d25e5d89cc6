#pragma once
// The subcommands of the nearsparse program. Each lives in a command_<name>.cpp of its own and
// is listed in commands.cpp; algorithm families add theirs there.

#include "arguments.hpp"

#include <string>
#include <vector>

namespace nearsparse::app {

struct command {
  std::string name;
  std::string summary;  ///< one line for `nearsparse --help`
  std::string usage;    ///< the options, for `nearsparse <name> --help`
  int (*run)(arguments& args);
  bool in_default_run;  ///< run, on its defaults, by `nearsparse` without a subcommand
};

const std::vector<command>& commands();

/// Options every command understands, documented once.
extern const char* const common_options;

int run_info(arguments& args);
int run_spamm(arguments& args);
int run_diag(arguments& args);
int run_kpm(arguments& args);
int run_tlr(arguments& args);
int run_sp2(arguments& args);
int run_invsqrt(arguments& args);
int run_sign(arguments& args);

/// The matrix functions of `nearsparse sp2`, `invsqrt` and `sign`.
enum class matrix_function { sp2, invsqrt, sign };
/// Those commands with `--storage block-sparse` (command_block_sparse_functions.cpp).
int run_block_sparse_function(arguments& args, matrix_function kind, const char* name);

}  // namespace nearsparse::app
