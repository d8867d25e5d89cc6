// Moments from the recurrence's dot products, the names of the algorithms, and the check of the
// CUDA kernel's tuning.
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/eta.hpp>

#include <cmath>
#include <string>

namespace nearsparse::kpm {

namespace {
constexpr nearsparse::detail::enum_name<algorithm> algorithm_names[] = {
    {algorithm::naive, "naive"},
    {algorithm::aug_spmv, "aug_spmv"},
    {algorithm::aug_spmmv, "aug_spmmv"}};
}  // namespace

const char* to_string(algorithm a) {
  return nearsparse::detail::enum_to_string(algorithm_names, a);
}

algorithm parse_algorithm(const std::string& name, const char* function, const char* argument) {
  return nearsparse::detail::enum_from_string(algorithm_names, name, function, argument);
}

step_cost step_cost_of(algorithm method, std::int64_t rows, std::int64_t nonzeros, int R,
                       bool complex_values) {
  const double sd = complex_values ? 16 : 8, si = 4, fa = complex_values ? 2 : 1,
               fm = complex_values ? 6 : 1;
  const double n = double(rows), nnz = double(nonzeros);
  step_cost c;
  c.flops = R * (nnz * (fa + fm) + n * (std::ceil(7 * fa / 2) + std::ceil(9 * fm / 2)));
  const double matrix = nnz * (sd + si);
  switch (method) {
    case algorithm::aug_spmmv:
      c.min_bytes = matrix + 3 * R * sd * n;
      break;
    case algorithm::aug_spmv:
      c.min_bytes = R * (matrix + 3 * sd * n);
      break;
    case algorithm::naive:
      c.min_bytes = R * (matrix + 13 * sd * n);
      break;
  }
  return c;
}

namespace detail {

void check_tuning(const cuda_tuning& t, int R, const char* function) {
  using nearsparse::detail::concat;
  require(t.chunk_rows >= 0, function, "options.tuning.chunk_rows",
          concat("must be 0 (automatic) or a row count, got ", t.chunk_rows));
  const int g = t.lanes_per_row, c = t.columns_per_lane;
  if (g == 0 && c == 0) return;
  require(
      g >= 1 && g <= 32 && (g & (g - 1)) == 0, function, "options.tuning.lanes_per_row",
      concat("must be 1, 2, 4, 8, 16 or 32 (or 0 with columns_per_lane 0: automatic), got ", g));
  require(c == 1 || c == 2 || c == 4, function, "options.tuning.columns_per_lane",
          concat("must be 1, 2 or 4 (or 0 with lanes_per_row 0: automatic), got ", c));
  require(
      g * c >= R, function, "options.tuning.lanes_per_row, columns_per_lane",
      concat("cover ", g, " x ", c, " = ", g * c, " columns, fewer than the R = ", R, " vectors"));
}

void moments_from_eta(const std::vector<double>& eta, int steps, int R, chebyshev_moments& result,
                      const char* function) {
  const int M = result.num_moments;
  result.mu.assign(std::size_t(M), 0.0);
  result.mu_per_vector.assign(std::size_t(M) * R, 0.0);
  auto at = [&](int n, int r) { return eta[std::size_t(n) * R + r]; };
  // A Chebyshev polynomial stays in [-1, 1] on [-1, 1], so ||v_m|| <= ||v_0|| for every m when
  // the scaled spectrum is inside; outside, ||v_m|| grows like cosh(m acosh|x|).
  for (int r = 0; r < R; ++r) {
    const double norm0 = at(0, r);
    for (int m = 0; m < steps; ++m) {
      const double grown = at(2 * m, r);
      if (!(grown <= norm0 * (1 + 1e-6) + 1e-300) || !std::isfinite(at(2 * m + 1, r)))
        nearsparse::detail::throw_invalid_argument(
            function, "scaling",
            nearsparse::detail::concat(
                "(a = ", result.map.a, ", b = ", result.map.b,
                ") does not map the spectrum of H into [-1, 1]: ||T_m(a(H - b)) v||^2 reached ",
                grown / norm0, " times ||v||^2 at m = ", m, " (start vector ", r,
                "); take the scaling from kpm::gershgorin_bounds or widen the margin"));
    }
  }
  double total = 0;
  for (int r = 0; r < R; ++r) total += at(0, r);
  for (int n = 0; n < M; ++n) {
    double sum = 0;
    for (int r = 0; r < R; ++r) {
      const double mu = 2 * at(n, r) - at(n % 2, r);
      sum += mu;
      result.mu_per_vector[std::size_t(n) * R + r] = at(0, r) > 0 ? mu / at(0, r) : 0.0;
    }
    result.mu[std::size_t(n)] = total > 0 ? sum / total : 0.0;
  }
}

chebyshev_moments finish_moments(const std::vector<double>& eta, const run_description& run,
                                 const char* function) {
  chebyshev_moments m;
  m.num_moments = run.num_moments;
  m.num_vectors = run.num_vectors;
  m.steps = run.steps;
  m.rows = run.rows;
  m.nonzeros = run.nonzeros;
  m.map = run.map;
  m.method = run.method;
  m.seconds = run.seconds;
  moments_from_eta(eta, run.steps, run.num_vectors, m, function);
  return m;
}

}  // namespace detail

}  // namespace nearsparse::kpm
