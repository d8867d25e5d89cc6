#pragma once
// Runs a generic callable with the execution space chosen by name (--backend), or with Kokkos'
// default execution space when the name is empty.

#include <nearsparse/core/execution_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>

namespace nearsparse::app {

namespace detail {
inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

template <class F, class... Spaces>
int dispatch(const std::string& name, F& f, std::tuple<Spaces...>*) {
  int result = 0;
  bool done = false;
  auto try_one = [&](auto space) {
    using S = decltype(space);
    if (!done && lower(S::name()) == name) {
      result = f(S());
      done = true;
    }
  };
  (try_one(Spaces()), ...);
  return result;
}
}  // namespace detail

template <class F>
int with_backend(const std::string& name, F&& f) {
  if (name.empty()) return f(Kokkos::DefaultExecutionSpace());
  nearsparse::require_backend(name);  // throws for unknown or missing backends
  return detail::dispatch(detail::lower(name), f,
                          static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
}

}  // namespace nearsparse::app
