#pragma once
// Many small tasks of similar cost on a host execution space, without a scheduler: one worker
// per thread of the space, worker w running tasks w, w + P, w + 2P, ... (P workers). Neighbouring
// tasks cost about the same in the host kernels that use it (blocks of one diagonal), so the
// cyclic deal balances them, and no task is claimed through a shared counter (a dynamic schedule
// with one task per claim makes the threads contend on each other's work ranges).

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace nearsparse::detail {

/// Runs body(task) for every task in [0, tasks) on exec, cyclically over exec's threads.
template <class Exec, class Body>
void for_each_task_cyclic(const Exec& exec, const char* label, std::int64_t tasks,
                          const Body& body) {
  if (tasks <= 0) return;
  const std::int64_t workers =
      std::min<std::int64_t>(tasks, std::max<std::int64_t>(1, exec.concurrency()));
  Kokkos::parallel_for(label,
                       Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Static>>(
                           exec, 0, static_cast<int>(workers)),
                       [=](const int w) {
                         for (std::int64_t task = w; task < tasks; task += workers) body(task);
                       });
}

}  // namespace nearsparse::detail
