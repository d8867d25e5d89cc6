#pragma once
// Runs a generic callable with the execution space chosen by name (--backend), or with Kokkos'
// default execution space when the name is empty.

#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/execution_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <tuple>

namespace nearsparse::app {

namespace detail {
using nearsparse::detail::to_lower;

template <class F, class... Spaces>
int dispatch(const std::string& name, F& f, std::tuple<Spaces...>*) {
  int result = 0;
  bool done = false;
  auto try_one = [&](auto space) {
    using S = decltype(space);
    if (!done && to_lower(S::name()) == name) {
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
  return detail::dispatch(detail::to_lower(name), f,
                          static_cast<nearsparse::enabled_execution_spaces*>(nullptr));
}

}  // namespace nearsparse::app
