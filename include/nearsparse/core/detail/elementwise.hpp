#pragma once
// Element-wise loops and sums over the elements of a rank-2 View, in the order of its memory: a
// team per line (a row of a LayoutRight View, a column of a LayoutLeft one) whose threads take
// consecutive elements, so that a warp reads and writes contiguous memory on CUDA and a host
// thread walks a line in order. Kokkos 3.4's two-dimensional MDRangePolicy iterates the first
// index fastest on CUDA whatever the View's layout, which strides a LayoutRight matrix by a row
// per thread; its reductions there run far below the memory bandwidth.

#include <nearsparse/core/detail/team_reduce.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace nearsparse::detail {

/// Whether the second index of v runs along memory (LayoutRight, or a strided View whose column
/// stride is the smaller one). On a tie (a single row or column, where both strides may be 1)
/// the longer index makes the lines, so that teams are not given lines of one element.
template <class View>
bool second_index_contiguous(const View& v) {
  if (v.stride_1() != v.stride_0()) return v.stride_1() < v.stride_0();
  return v.extent(1) >= v.extent(0);
}

/// The elements of a rows x cols matrix as lines of the memory order: `lines` lines of `length`
/// elements; (line, e) is element (line, e) when `by_rows`, (e, line) otherwise.
struct element_lines {
  int lines = 0;
  int length = 0;
  bool by_rows = true;

  element_lines(int rows, int cols, bool second_contiguous)
      : lines(second_contiguous ? rows : cols),
        length(second_contiguous ? cols : rows),
        by_rows(second_contiguous) {}
};

/// f(i, j) for every element of a rows x cols matrix, each line of memory by one team (the
/// lines along the second index when `second_contiguous`). Queued on exec; does not wait.
template <class ExecSpace, class F>
void for_each_element(const ExecSpace& exec, const char* label, int rows, int cols,
                      bool second_contiguous, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  const element_lines l(rows, cols, second_contiguous);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      label, policy(exec, l.lines, Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& team) {
        const int line = team.league_rank();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, l.length), [&](const int e) {
          if (l.by_rows) {
            f(line, e);
          } else {
            f(e, line);
          }
        });
      });
}

/// The sum in double of f(i, j) over the elements of a rows x cols matrix, lines of memory as in
/// for_each_element. Waits for the device.
template <class ExecSpace, class F>
double sum_elements(const ExecSpace& exec, const char* label, int rows, int cols,
                    bool second_contiguous, const F& f) {
  if (rows <= 0 || cols <= 0) return 0.0;
  const element_lines l(rows, cols, second_contiguous);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  double sum = 0.0;
  Kokkos::parallel_reduce(
      label, policy(exec, l.lines, Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& team, double& s) {
        const int line = team.league_rank();
        double line_sum = 0.0;
        team_reduce_fenced(
            team, l.length,
            [&](const int e, double& partial) { partial += l.by_rows ? f(line, e) : f(e, line); },
            line_sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { s += line_sum; });
      },
      sum);
  exec.fence();
  return sum;
}

}  // namespace nearsparse::detail
