#pragma once
// Dense references of the matrix-function commands (sp2, invsqrt, sign, on dense and on
// block-sparse storage): f(A) of a small symmetric matrix from LAPACK's eigendecomposition on
// the host, and the relative Frobenius distance of a result from it.

#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/core/errors.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace nearsparse::app {

/// f(A) = V diag(f(l_j, j)) V^T on the host from LAPACK's syevd (eigenvalues l_j ascending);
/// a and the result row-major n x n (symmetric).
inline std::vector<double> dense_function(std::vector<double> a, int n,
                                          const std::function<double(double, int)>& f) {
  namespace host_blas = nearsparse::detail::host_blas;
  std::vector<double> w(n);
  double work_size = 0;
  int iwork_size = 0;
  host_blas::syevd('V', 'U', n, a.data(), n, w.data(), &work_size, -1, &iwork_size, -1);
  std::vector<double> work(std::size_t(work_size) + 1);
  std::vector<int> iwork(iwork_size + 1);
  if (host_blas::syevd('V', 'U', n, a.data(), n, w.data(), work.data(), int(work.size()),
                       iwork.data(), int(iwork.size())) != 0)
    throw nearsparse::runtime_error("dense reference: syevd did not converge");
  std::vector<double> scaled(a), out(std::size_t(n) * n);
  for (int j = 0; j < n; ++j) {
    const double fj = f(w[j], j);
    for (int i = 0; i < n; ++i) scaled[std::size_t(j) * n + i] *= fj;
  }
  host_blas::gemm(host_blas::order::column_major, host_blas::op::none, host_blas::op::transpose, n,
                  n, n, 1.0, scaled.data(), n, a.data(), n, 0.0, out.data(), n);
  return out;
}

/// The rank-2 View v (any memory space) as a row-major vector of doubles on the host.
template <class View>
std::vector<double> to_vector(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(h.extent(0) * h.extent(1));
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) out[i * h.extent(1) + j] = double(h(i, j));
  return out;
}

/// ||x - ref||_F / ||ref||_F (the absolute distance when ref is zero).
inline double relative_distance(const std::vector<double>& x, const std::vector<double>& ref) {
  double e = 0, nr = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e += (x[i] - ref[i]) * (x[i] - ref[i]);
    nr += ref[i] * ref[i];
  }
  return nr > 0 ? std::sqrt(e / nr) : std::sqrt(e);
}

}  // namespace nearsparse::app
