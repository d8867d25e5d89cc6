// Eigen-decomposition of the small symmetric tridiagonal matrices Lanczos produces, by cyclic
// Jacobi rotations on a dense copy: k is at most a few hundred, and Jacobi is accurate for the
// extreme eigenvalues and their vectors alike.
#include <nearsparse/kpm/spectral_bounds.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace nearsparse::kpm::detail {

void tridiagonal_eigen(const std::vector<double>& alpha, const std::vector<double>& beta,
                       std::vector<double>& values, std::vector<double>& last_components) {
  const std::size_t k = alpha.size();
  std::vector<double> a(k * k, 0.0), v(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    a[i * k + i] = alpha[i];
    v[i * k + i] = 1;
    if (i + 1 < k) a[i * k + i + 1] = a[(i + 1) * k + i] = beta[i];
  }
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, scale = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) (i == j ? scale : off) += a[i * k + j] * a[i * k + j];
    if (off <= 1e-30 * scale || off == 0) break;
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t q = p + 1; q < k; ++q) {
        const double apq = a[p * k + q];
        if (apq == 0) continue;
        const double theta = (a[q * k + q] - a[p * k + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t r = 0; r < k; ++r) {  // columns p, q
          const double arp = a[r * k + p], arq = a[r * k + q];
          a[r * k + p] = c * arp - s * arq;
          a[r * k + q] = s * arp + c * arq;
        }
        for (std::size_t r = 0; r < k; ++r) {  // rows p, q
          const double apr = a[p * k + r], aqr = a[q * k + r];
          a[p * k + r] = c * apr - s * aqr;
          a[q * k + r] = s * apr + c * aqr;
        }
        for (std::size_t r = 0; r < k; ++r) {
          const double vrp = v[r * k + p], vrq = v[r * k + q];
          v[r * k + p] = c * vrp - s * vrq;
          v[r * k + q] = s * vrp + c * vrq;
        }
      }
  }
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return a[x * k + x] < a[y * k + y]; });
  values.resize(k);
  last_components.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    values[i] = a[order[i] * k + order[i]];
    last_components[i] = v[(k - 1) * k + order[i]];
  }
}

}  // namespace nearsparse::kpm::detail
