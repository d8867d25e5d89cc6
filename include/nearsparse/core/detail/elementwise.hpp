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
#include <cstdint>

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
/// into `segments` segments of at most segment_length elements: units() pieces of work, unit u
/// being elements [begin(u), end(u)) of line line(u). Extents and element indices are 64-bit, so
/// that a matrix of more than 2^31 elements (or a line of more than 2^31 - segment_length) is
/// covered whole. A launch has teams() teams, at most team_league_max (team_reduce.hpp says why);
/// team t takes units t, t + teams(), t + 2 teams(), ...
struct element_lines {
  static constexpr int segment_length = 1 << 13;

  std::int64_t lines = 0;
  std::int64_t length = 0;
  bool by_rows = true;
  std::int64_t segments = 1;

  element_lines(std::int64_t rows, std::int64_t cols, bool second_contiguous)
      : lines(second_contiguous ? rows : cols),
        length(second_contiguous ? cols : rows),
        by_rows(second_contiguous),
        segments(length > 0 ? 1 + (length - 1) / segment_length : 1) {}

  std::int64_t units() const { return lines * segments; }
  int teams() const {
    const std::int64_t u = units();
    return u < team_league_max ? static_cast<int>(u) : team_league_max;
  }
  KOKKOS_INLINE_FUNCTION std::int64_t line(std::int64_t unit) const { return unit / segments; }
  KOKKOS_INLINE_FUNCTION std::int64_t begin(std::int64_t unit) const {
    return (unit % segments) * segment_length;
  }
  KOKKOS_INLINE_FUNCTION std::int64_t end(std::int64_t unit) const {
    const std::int64_t e = begin(unit) + segment_length;
    return e < length ? e : length;
  }
  /// Elements of unit u: at most segment_length, so a team's range stays an int.
  KOKKOS_INLINE_FUNCTION int count(std::int64_t unit) const {
    return static_cast<int>(end(unit) - begin(unit));
  }
};

/// One team's units of for_each_element: f(i, j) over the elements of units t, t + teams, ...
template <class Member, class F>
struct for_each_element_kernel {
  element_lines l;
  std::int64_t units;
  int teams;
  F f;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    for (std::int64_t u = team.league_rank(); u < units; u += teams) {
      const std::int64_t line = l.line(u), begin = l.begin(u);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, l.count(u)), [&](const int k) {
        const std::int64_t e = begin + k;
        if (l.by_rows) {
          f(line, e);
        } else {
          f(e, line);
        }
      });
    }
  }
};

/// f(i, j) for every element of a rows x cols matrix, each line of memory (or segment of one) by
/// one team (the lines along the second index when `second_contiguous`); i and j are passed as
/// std::int64_t. Queued on exec; does not wait.
template <class ExecSpace, class F>
void for_each_element(const ExecSpace& exec, const char* label, std::int64_t rows,
                      std::int64_t cols, bool second_contiguous, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  const element_lines l(rows, cols, second_contiguous);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      label, policy(exec, l.teams(), Kokkos::AUTO),
      for_each_element_kernel<typename policy::member_type, F>{l, l.units(), l.teams(), f});
}

/// One team's units of sum_elements: the sum of f(i, j) over units t, t + teams, ...
template <class Member, class F>
struct sum_elements_kernel {
  element_lines l;
  std::int64_t units;
  int teams;
  F f;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, double& s) const {
    double team_sum = 0.0;
    for (std::int64_t u = team.league_rank(); u < units; u += teams) {
      const std::int64_t line = l.line(u), begin = l.begin(u);
      double segment_sum = 0.0;
      team_reduce_fenced(
          team, l.count(u),
          [&](const int k, double& partial) {
            const std::int64_t e = begin + k;
            partial += l.by_rows ? f(line, e) : f(e, line);
          },
          segment_sum);
      team_sum += segment_sum;
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { s += team_sum; });
  }
};

/// The sum in double of f(i, j) over the elements of a rows x cols matrix, lines of memory as in
/// for_each_element. Waits for the device.
template <class ExecSpace, class F>
double sum_elements(const ExecSpace& exec, const char* label, std::int64_t rows, std::int64_t cols,
                    bool second_contiguous, const F& f) {
  if (rows <= 0 || cols <= 0) return 0.0;
  const element_lines l(rows, cols, second_contiguous);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  double sum = 0.0;
  Kokkos::parallel_reduce(
      label, policy(exec, l.teams(), Kokkos::AUTO),
      sum_elements_kernel<typename policy::member_type, F>{l, l.units(), l.teams(), f}, sum);
  // parallel_reduce into a host scalar fences exec before it returns: no fence needed here.
  return sum;
}

}  // namespace nearsparse::detail
