#pragma once
// Element-wise loops and sums over the elements of a rank-2 View, in the order of its memory: a
// team per line (a row of a LayoutRight View, a column of a LayoutLeft one), or per segment of a
// long line, whose threads take consecutive elements, so that a warp reads and writes contiguous
// memory on CUDA and a host thread walks a line in order. Long lines are cut into segments so
// that a matrix of few long lines (a few stored diagonals, a single vector) still gives every
// multiprocessor work. Kokkos 3.4's two-dimensional MDRangePolicy iterates the first
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
/// elements; (line, e) is element (line, e) when `by_rows`, (e, line) otherwise. Each line is cut
/// into `segments` segments of at most segment_length elements, one team each: team t takes
/// elements [begin(t), end(t)) of line t / segments.
struct element_lines {
  static constexpr int segment_length = 1 << 13;

  int lines = 0;
  int length = 0;
  bool by_rows = true;
  int segments = 1;

  element_lines(int rows, int cols, bool second_contiguous)
      : lines(second_contiguous ? rows : cols),
        length(second_contiguous ? cols : rows),
        by_rows(second_contiguous),
        segments(length > 0 ? 1 + (length - 1) / segment_length : 1) {}

  int teams() const { return lines * segments; }
  KOKKOS_INLINE_FUNCTION int line(int team) const { return team / segments; }
  KOKKOS_INLINE_FUNCTION int begin(int team) const { return (team % segments) * segment_length; }
  KOKKOS_INLINE_FUNCTION int end(int team) const {
    const int e = begin(team) + segment_length;
    return e < length ? e : length;
  }
};

/// f(i, j) for every element of a rows x cols matrix, each line of memory (or segment of one) by
/// one team (the lines along the second index when `second_contiguous`). Queued on exec; does not
/// wait.
template <class ExecSpace, class F>
void for_each_element(const ExecSpace& exec, const char* label, int rows, int cols,
                      bool second_contiguous, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  const element_lines l(rows, cols, second_contiguous);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      label, policy(exec, l.teams(), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& team) {
        const int t = team.league_rank();
        const int line = l.line(t);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, l.begin(t), l.end(t)), [&](const int e) {
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
      label, policy(exec, l.teams(), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& team, double& s) {
        const int t = team.league_rank();
        const int line = l.line(t), begin = l.begin(t);
        double segment_sum = 0.0;
        team_reduce_fenced(
            team, l.end(t) - begin,
            [&](const int k, double& partial) {
              const int e = begin + k;
              partial += l.by_rows ? f(line, e) : f(e, line);
            },
            segment_sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { s += segment_sum; });
      },
      sum);
  // parallel_reduce into a host scalar fences exec before it returns: no fence needed here.
  return sum;
}

}  // namespace nearsparse::detail
