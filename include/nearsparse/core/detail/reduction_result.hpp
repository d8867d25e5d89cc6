#pragma once
// Results of Kokkos reductions that are either a host value (the call waits for it) or a rank-0
// View in the space's memory (the call returns at once, as for any kernel).

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nearsparse::detail {

/// Sets such a result to zero where no reduction runs to write it: Kokkos 3.4 would write the
/// identity of an empty reduction through a device View's pointer from the host.
template <class ExecSpace, class Result>
void set_zero(const ExecSpace& exec, Result&& result) {
  if constexpr (Kokkos::is_view<std::decay_t<Result>>::value) {
    Kokkos::deep_copy(exec, result, 0);
  } else {
    result = 0;
  }
}

}  // namespace nearsparse::detail
