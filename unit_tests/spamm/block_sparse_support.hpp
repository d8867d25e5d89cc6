#pragma once
// Host references of the block-sparse tests: dense matrices on the device and back, the dense
// form of a block-sparse matrix, Frobenius distances and tile norms, all in double.

#include "support/host_reference.hpp"

#include <nearsparse/spamm/block_sparse.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>

namespace nearsparse::test {

/// h on the device as a View of T (row-major unless Layout says otherwise).
template <class Exec, class T = double, class Layout = Kokkos::LayoutRight>
Kokkos::View<T**, Layout, typename Exec::memory_space> to_device(const Exec& exec,
                                                                 const host_matrix<double>& h) {
  Kokkos::View<T**, Layout, typename Exec::memory_space> d("d", h.rows, h.cols);
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.rows; ++i)
    for (std::size_t j = 0; j < h.cols; ++j) m(i, j) = static_cast<T>(h(i, j));
  Kokkos::deep_copy(exec, d, m);
  exec.fence();
  return d;
}

/// The dense form of m on the host, in double.
template <class Exec, class Scalar>
host_matrix<double> dense_of(const Exec& exec,
                             const nearsparse::spamm::block_sparse_matrix<Scalar, Exec>& m) {
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Exec::memory_space> d("dense", m.rows(),
                                                                            m.cols());
  nearsparse::spamm::to_dense(exec, m, d);
  return to_host(d);
}

/// ||x - y||_F.
inline double diff_norm(const host_matrix<double>& x, const host_matrix<double>& y) {
  double s = 0;
  for (std::size_t e = 0; e < x.data.size(); ++e)
    s += (x.data[e] - y.data[e]) * (x.data[e] - y.data[e]);
  return std::sqrt(s);
}

/// Frobenius norms of the tiles of h, tile rows x tile columns.
inline host_matrix<double> tile_norms(const host_matrix<double>& h, int tile) {
  host_matrix<double> out((h.rows + tile - 1) / tile, (h.cols + tile - 1) / tile);
  for (std::size_t i = 0; i < h.rows; ++i)
    for (std::size_t j = 0; j < h.cols; ++j) out(i / tile, j / tile) += h(i, j) * h(i, j);
  for (double& x : out.data) x = std::sqrt(x);
  return out;
}

}  // namespace nearsparse::test
