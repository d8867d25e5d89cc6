#pragma once
// Host references for the SpAMM tests, written independently of the library's kernels: rounding
// to the input formats by scaling to the unit in the last place (not by bit manipulation), tile
// norms, kept tile sets, and the product summed over exactly the kept tile pairs.

#include "support/host_reference.hpp"

#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/options.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace nearsparse::test::spamm {

/// x rounded to a binary format with `mantissa` stored bits and smallest normal exponent
/// `min_exp`; ties to even, or away from zero when `ties_away`. Infinity beyond `max`.
inline double round_binary(double x, int mantissa, int min_exp, double max, bool ties_away) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| = f * 2^e, f in [0.5, 1): leading bit has exponent e - 1
  const int lead = std::max(e - 1, min_exp);
  const double ulp = std::ldexp(1.0, lead - mantissa);
  const double q = x / ulp;
  const double r = (ties_away ? std::round(q) : std::nearbyint(q)) * ulp;
  if (std::abs(r) > max)
    return x > 0 ? std::numeric_limits<double>::infinity()
                 : -std::numeric_limits<double>::infinity();
  return r;
}

/// The value a SpAMM input takes in the given precision: first converted to float (fp64 keeps
/// the double), then rounded to the input format.
inline double round_input(double x, nearsparse::spamm::precision p) {
  if (p == nearsparse::spamm::precision::fp64) return x;
  const double f = static_cast<float>(x);
  switch (p) {
    case nearsparse::spamm::precision::tf32:
      return round_binary(f, 10, -126, 3.4e38, true);
    case nearsparse::spamm::precision::fp16:
      return round_binary(f, 10, -14, 65504.0, false);
    case nearsparse::spamm::precision::bf16:
      return round_binary(f, 7, -126, 3.4e38, false);
    default:
      return f;
  }
}

inline host_matrix<double> rounded(const host_matrix<double>& m, nearsparse::spamm::precision p) {
  host_matrix<double> out = m;
  for (double& x : out.data) x = round_input(x, p);
  return out;
}

/// Frobenius norms of the tile x tile tiles of m: tiles_r x tiles_c, row-major.
inline host_matrix<double> tile_norms(const host_matrix<double>& m, int tile) {
  const std::size_t tr = (m.rows + tile - 1) / tile, tc = (m.cols + tile - 1) / tile;
  host_matrix<double> out(tr, tc);
  for (std::size_t i = 0; i < m.rows; ++i)
    for (std::size_t j = 0; j < m.cols; ++j) out(i / tile, j / tile) += m(i, j) * m(i, j);
  for (double& x : out.data) x = std::sqrt(x);
  return out;
}

/// kept[(i * nt + j) * kt + k] for norm maps an (mt x kt) and bn (kt x nt).
inline std::vector<char> kept_set(const host_matrix<double>& an, const host_matrix<double>& bn,
                                  double tau) {
  const std::size_t mt = an.rows, kt = an.cols, nt = bn.cols;
  std::vector<char> kept(mt * nt * kt);
  for (std::size_t i = 0; i < mt; ++i)
    for (std::size_t j = 0; j < nt; ++j)
      for (std::size_t k = 0; k < kt; ++k) kept[(i * nt + j) * kt + k] = an(i, k) * bn(k, j) >= tau;
  return kept;
}

/// alpha * sum over kept (i, k, j) of A[i,k] B[k,j] + beta * C, in double.
inline host_matrix<double> kept_product(double alpha, const host_matrix<double>& a,
                                        const host_matrix<double>& b, double beta,
                                        const host_matrix<double>& c, int tile,
                                        const std::vector<char>& kept) {
  const std::size_t kt = (a.cols + tile - 1) / tile, nt = (b.cols + tile - 1) / tile;
  host_matrix<double> out(c.rows, c.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.cols; ++j) {
      double sum = 0;
      const std::size_t base = ((i / tile) * nt + j / tile) * kt;
      for (std::size_t l = 0; l < a.cols; ++l)
        if (kept[base + l / tile]) sum += a(i, l) * b(l, j);
      out(i, j) = alpha * sum + beta * c(i, j);
    }
  return out;
}

inline precision test_precision(nearsparse::spamm::precision p) {
  return nearsparse::spamm::detail::precision_as<precision>(p);
}

/// Tolerance on the relative error against the product of the rounded inputs: only the
/// accumulation differs (float, or double for fp64), bounded by a few units of roundoff times
/// the square root of the inner extent.
inline double accumulation_tolerance(nearsparse::spamm::precision p, std::size_t k) {
  const double u = p == nearsparse::spamm::precision::fp64 ? 0x1p-53 : 0x1p-24;
  return 8.0 * u * std::sqrt(double(k) + 1.0) +
         (p == nearsparse::spamm::precision::fp64 ? 1e-15 : 1e-7);
}

/// |alpha| || |A| |B| ||_F: the scale of rounding errors in alpha A B, whatever beta C cancels.
inline double abs_product_norm(double alpha, const host_matrix<double>& a,
                               const host_matrix<double>& b) {
  host_matrix<double> abs_a = a, abs_b = b;
  for (double& x : abs_a.data) x = std::abs(x);
  for (double& x : abs_b.data) x = std::abs(x);
  host_matrix<double> zero(a.rows, b.cols);
  return frobenius_norm(reference_gemm(std::abs(alpha), abs_a, abs_b, 0.0, zero));
}

/// Bound on ||C - C_exact||_F from rounding the inputs: each product a_il b_lj is off by at
/// most 2u |a_il| |b_lj| (plus u^2), so the error is at most 2.5 u |alpha| || |A| |B| ||_F,
/// however much alpha A B and beta C cancel.
inline double input_error_bound(nearsparse::spamm::precision p, double alpha,
                                const host_matrix<double>& a, const host_matrix<double>& b) {
  const double u =
      p == nearsparse::spamm::precision::fp64 ? 0x1p-53 : unit_roundoff(test_precision(p));
  return 2.5 * u * abs_product_norm(alpha, a, b);
}

/// Bound on ||C - C_rounded||_F from accumulating in float (double for fp64), where C_rounded is
/// the product of the rounded inputs: a few units of roundoff times sqrt(k + 1), relative to
/// |alpha| || |A| |B| ||_F, so cancellation between alpha A B and beta C cannot make it fail.
inline double accumulation_error_bound(nearsparse::spamm::precision p, double alpha,
                                       const host_matrix<double>& a, const host_matrix<double>& b) {
  return accumulation_tolerance(p, a.cols) * abs_product_norm(alpha, a, b);
}

/// ||x - y||_F.
inline double frobenius_distance(const host_matrix<double>& x, const host_matrix<double>& y) {
  double sum = 0;
  for (std::size_t i = 0; i < x.data.size(); ++i) sum += std::norm(x.data[i] - y.data[i]);
  return std::sqrt(sum);
}

}  // namespace nearsparse::test::spamm
