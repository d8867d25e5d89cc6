#pragma once
// Independent host references for the KPM tests: the matrix as a dense complex array, the
// Chebyshev recurrence in plain loops, exact moments from eigenvalues, and LAPACK's Hermitian
// eigensolver (where the build found LAPACK).

#include <nearsparse/kpm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <vector>

#ifdef NEARSPARSE_TEST_HAVE_LAPACK
extern "C" void zheev_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a,
                       const int* lda, double* w, std::complex<double>* work, const int* lwork,
                       double* rwork, int* info);
#endif

namespace nearsparse::test::kpm {

using cplx = std::complex<double>;

/// A cubic lattice of nx x ny x nz sites, periodic unless told.
inline nearsparse::kpm::cubic_lattice lattice(int nx, int ny, int nz, bool periodic_z = true) {
  nearsparse::kpm::cubic_lattice c;
  c.nx = nx;
  c.ny = ny;
  c.nz = nz;
  c.periodic_z = periodic_z;
  return c;
}

/// A small topological insulator with disorder and quantum dots in its top layer.
inline nearsparse::kpm::topological_insulator insulator(int nx, int ny, int nz, std::uint64_t seed,
                                                        double disorder = 2.0) {
  nearsparse::kpm::topological_insulator p;
  p.nx = nx;
  p.ny = ny;
  p.nz = nz;
  p.disorder = disorder;
  p.seed = seed;
  p.dot_period = 3;
  p.dot_radius = 1.0;
  p.dot_potential = 0.5;
  p.dot_layers = 1;
  return p;
}

struct dense {
  int n = 0;
  std::vector<cplx> a;  // row-major
  cplx& operator()(int i, int j) { return a[std::size_t(i) * n + j]; }
  cplx operator()(int i, int j) const { return a[std::size_t(i) * n + j]; }
};

inline cplx to_std(double x) {
  return {x, 0};
}
inline cplx to_std(const Kokkos::complex<double>& x) {
  return {x.real(), x.imag()};
}

/// Dense copy of a CRS matrix (duplicates summed).
template <class Crs>
dense dense_of(const Crs& h) {
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.values);
  dense d;
  d.n = int(h.numRows());
  d.a.assign(std::size_t(d.n) * d.n, cplx(0));
  for (int i = 0; i < d.n; ++i)
    for (auto e = rm(i); e < rm(i + 1); ++e) d(i, en(e)) += to_std(va(e));
  return d;
}

/// Start vectors as the library draws them, in original row order: N x R, row-major.
template <class Scalar>
std::vector<cplx> start_block(int n, int R, std::uint64_t seed) {
  std::vector<cplx> v(std::size_t(n) * R);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < R; ++r)
      v[std::size_t(i) * R + r] = to_std(nearsparse::kpm::detail::start_entry<Scalar>(seed, i, r));
  return v;
}

/// mu_n averaged as the library defines it, by the dense recurrence on the start block.
inline std::vector<double> reference_moments(const dense& h, const std::vector<cplx>& v0, int R,
                                             int M, double a, double b) {
  const int n = h.n;
  std::vector<double> num(std::size_t(M), 0.0);
  double den = 0;
  for (int r = 0; r < R; ++r) {
    std::vector<cplx> prev(static_cast<std::size_t>(n)), cur(static_cast<std::size_t>(n)),
        next(static_cast<std::size_t>(n)), first(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      first[std::size_t(i)] = cur[std::size_t(i)] = v0[std::size_t(i) * R + r];
    auto apply = [&](const std::vector<cplx>& x, std::vector<cplx>& y) {  // y = a (H - b) x
      for (int i = 0; i < n; ++i) {
        cplx s = 0;
        for (int j = 0; j < n; ++j) s += h(i, j) * x[std::size_t(j)];
        y[std::size_t(i)] = a * (s - b * x[std::size_t(i)]);
      }
    };
    auto dot = [&](const std::vector<cplx>& x, const std::vector<cplx>& y) {
      cplx s = 0;
      for (int i = 0; i < n; ++i) s += std::conj(x[std::size_t(i)]) * y[std::size_t(i)];
      return s.real();
    };
    den += dot(first, first);
    // mu_m directly: <v0| T_m |v0>, T_m v0 by the three-term recurrence.
    for (int m = 0; m < M; ++m) {
      if (m == 0) {
        num[0] += dot(first, first);
        continue;
      }
      if (m == 1) {
        apply(first, next);
      } else {
        apply(cur, next);
        for (int i = 0; i < n; ++i)
          next[std::size_t(i)] = 2.0 * next[std::size_t(i)] - prev[std::size_t(i)];
      }
      num[std::size_t(m)] += dot(first, next);
      prev = cur;
      cur = next;
    }
  }
  for (auto& x : num) x = den > 0 ? x / den : 0;
  return num;
}

/// mu_n = (1/N) sum_k T_n(a (E_k - b)).
inline std::vector<double> exact_moments(const std::vector<double>& eigenvalues, int M, double a,
                                         double b) {
  std::vector<double> mu(std::size_t(M), 0.0);
  for (double e : eigenvalues) {
    const double x = a * (e - b);
    double t0 = 1, t1 = x;
    for (int m = 0; m < M; ++m) {
      mu[std::size_t(m)] += m == 0 ? 1 : (m == 1 ? x : 0);
      if (m >= 2) {
        const double t2 = 2 * x * t1 - t0;
        mu[std::size_t(m)] += t2;
        t0 = t1;
        t1 = t2;
      }
    }
  }
  for (auto& x : mu) x /= double(eigenvalues.size());
  return mu;
}

#ifdef NEARSPARSE_TEST_HAVE_LAPACK
/// Eigenvalues of a Hermitian dense matrix, ascending (LAPACK zheev).
inline std::vector<double> eigenvalues(dense h) {
  const int n = h.n;
  std::vector<double> w(static_cast<std::size_t>(n)), rwork(std::size_t(std::max(1, 3 * n - 2)));
  // LAPACK is column-major: pass the conjugate (the transpose of a Hermitian matrix).
  std::vector<cplx> a(std::size_t(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a[std::size_t(j) * n + i] = h(i, j);
  int lwork = -1, info = 0;
  cplx query;
  zheev_("N", "U", &n, a.data(), &n, w.data(), &query, &lwork, rwork.data(), &info);
  lwork = int(query.real());
  std::vector<cplx> work(std::size_t(std::max(1, lwork)));
  zheev_("N", "U", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &info);
  if (info != 0) w.clear();
  return w;
}
#endif

}  // namespace nearsparse::test::kpm
