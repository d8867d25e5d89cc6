#pragma once
// Command-line options of one subcommand: --name value, --name=value and --flag. Every option a
// command reads is consumed; finish() rejects whatever is left, so a typo is an error, never
// silently ignored.

#include <cstddef>
#include <string>
#include <vector>

namespace nearsparse::app {

class arguments {
 public:
  explicit arguments(std::vector<std::string> args) : args_(std::move(args)) {}

  /// True (and consumed) when --name is present.
  bool flag(const std::string& name);

  /// The value of --name, or `fallback` when absent. Throws when --name has no value.
  std::string text(const std::string& name, const std::string& fallback);

  /// The value of --name as an integer in [min, max]; throws naming the option otherwise.
  long long integer(const std::string& name, long long fallback, long long min, long long max);

  /// The value of --name as a finite number in [min, max]; throws naming the option otherwise.
  double number(const std::string& name, double fallback, double min, double max);

  /// Throws nearsparse::invalid_argument naming the first argument nobody consumed.
  void finish() const;

 private:
  bool take(const std::string& name, std::string* value);
  std::vector<std::string> args_;
};

}  // namespace nearsparse::app
