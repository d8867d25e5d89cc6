#include "arguments.hpp"

#include <nearsparse/core/errors.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nearsparse::app {

namespace {
[[noreturn]] void bad_option(const std::string& name, const std::string& problem) {
  throw nearsparse::invalid_argument("option '--" + name + "' " + problem);
}

/// A limit as people write it: 1e+300 rather than its 300 digits, 0.5 rather than 0.500000.
std::string readable(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

/// "must lie in [0, 1]", or "must be at least 0" where there is no upper limit.
std::string range_text(double min, double max) {
  if (std::isinf(max)) return "must be at least " + readable(min);
  return "must lie in [" + readable(min) + ", " + readable(max) + "]";
}
}  // namespace

bool arguments::take(const std::string& name, std::string* value) {
  const std::string key = "--" + name;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const std::string& a = args_[i];
    if (a == key) {
      if (value) {
        if (i + 1 >= args_.size()) bad_option(name, "needs a value");
        *value = args_[i + 1];
        args_.erase(args_.begin() + i, args_.begin() + i + 2);
      } else {
        args_.erase(args_.begin() + i);
      }
      return true;
    }
    if (value && a.compare(0, key.size() + 1, key + "=") == 0) {
      *value = a.substr(key.size() + 1);
      args_.erase(args_.begin() + i);
      return true;
    }
  }
  return false;
}

bool arguments::flag(const std::string& name) {
  return take(name, nullptr);
}

std::string arguments::text(const std::string& name, const std::string& fallback) {
  std::string v;
  return take(name, &v) ? v : fallback;
}

long long arguments::integer(const std::string& name, long long fallback, long long min,
                             long long max) {
  std::string v;
  if (!take(name, &v)) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') bad_option(name, "expects an integer, got '" + v + "'");
  if (x < min || x > max)
    bad_option(name,
               "must lie in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v);
  return x;
}

double arguments::number(const std::string& name, double fallback, double min, double max) {
  std::string v;
  if (!take(name, &v)) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x))
    bad_option(name, "expects a finite number, got '" + v + "'");
  if (x < min || x > max) bad_option(name, range_text(min, max) + ", got " + v);
  return x;
}

void arguments::finish() const {
  if (args_.empty()) return;
  const std::string& a = args_.front();
  if (a.rfind("--", 0) == 0) {
    throw nearsparse::invalid_argument("unknown option '" + a.substr(0, a.find('=')) + "'");
  }
  throw nearsparse::invalid_argument("unexpected argument '" + a + "'");
}

}  // namespace nearsparse::app
