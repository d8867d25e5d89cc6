#pragma once
// The decay matrices SpAMM is made for (section 2.1 of the cuSpAMM paper):
//   algebraic:   a_ij = c / (|i - j|^lambda + 1)   (the paper's benchmark: c = 0.1, lambda = 0.1)
//   exponential: a_ij = c * lambda^|i - j|          (0 < lambda < 1)
// For rectangular matrices |i - j| is the distance from the main diagonal. With `row0` and
// `col0`, `a` is filled as the block of a larger decay matrix whose element (0, 0) it holds at
// (row0, col0): the block a process of a distributed product holds.

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace nearsparse::spamm {

namespace detail {
/// Element (i, j) of the algebraic decay c / (|gi - gj|^lambda + 1), (gi, gj) = (i + row0, j +
/// col0).
template <class View>
struct algebraic_decay_element {
  View a;
  double c, lambda;
  long row0, col0;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const long gi = i + row0, gj = j + col0;
    const double d = static_cast<double>(gi > gj ? gi - gj : gj - gi);
    a(i, j) = static_cast<typename View::non_const_value_type>(c / (::pow(d, lambda) + 1.0));
  }
};

/// Element (i, j) of the exponential decay c lambda^|gi - gj|, (gi, gj) = (i + row0, j + col0).
template <class View>
struct exponential_decay_element {
  View a;
  double c, lambda;
  long row0, col0;

  KOKKOS_INLINE_FUNCTION void operator()(const long i, const long j) const {
    const long gi = i + row0, gj = j + col0;
    const double d = static_cast<double>(gi > gj ? gi - gj : gj - gi);
    a(i, j) = static_cast<typename View::non_const_value_type>(c * ::pow(lambda, d));
  }
};
}  // namespace detail

template <class ExecSpace, class View>
void fill_algebraic_decay(const ExecSpace& exec, const View& a, double c = 0.1, double lambda = 0.1,
                          long row0 = 0, long col0 = 0) {
  nearsparse::static_assert_matrix<ExecSpace, View>();
  require(std::isfinite(c), "nearsparse::spamm::fill_algebraic_decay", "c", "must be finite");
  require_positive("nearsparse::spamm::fill_algebraic_decay", "lambda", lambda);
  nearsparse::detail::for_each_element(
      exec, "nearsparse::spamm::fill_algebraic_decay", a.extent(0), a.extent(1),
      nearsparse::detail::second_index_contiguous(a),
      detail::algebraic_decay_element<View>{a, c, lambda, row0, col0});
}

template <class ExecSpace, class View>
void fill_exponential_decay(const ExecSpace& exec, const View& a, double c = 1.0,
                            double lambda = 0.9, long row0 = 0, long col0 = 0) {
  nearsparse::static_assert_matrix<ExecSpace, View>();
  require(std::isfinite(c), "nearsparse::spamm::fill_exponential_decay", "c", "must be finite");
  require(lambda > 0 && lambda < 1, "nearsparse::spamm::fill_exponential_decay", "lambda",
          nearsparse::detail::concat("is ", lambda, "; it must lie in (0, 1)"));
  nearsparse::detail::for_each_element(
      exec, "nearsparse::spamm::fill_exponential_decay", a.extent(0), a.extent(1),
      nearsparse::detail::second_index_contiguous(a),
      detail::exponential_decay_element<View>{a, c, lambda, row0, col0});
}

}  // namespace nearsparse::spamm
