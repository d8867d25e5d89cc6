#pragma once
// The multiplication kernel (section 3.3 of the cuSpAMM paper), portable version: one team per
// group of output tiles (s x s tiles at equal strides, the load balance of section 3.5.1). The
// team lists the kept k of its tile in scratch (the bitmap compacted into map_offset of
// Algorithm 2); each thread then forms its elements of C = alpha * sum + beta * C over the kept
// tile products, one partial sum per tile of k. The CUDA kernels overload the dispatch,
// `multiply`, on Kokkos::Cuda.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/host_path.hpp>
#include <nearsparse/spamm/detail/number_formats.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace nearsparse::spamm::detail {

/// One group of output tiles of multiply_impl per team: for each of its tiles the kept k listed
/// in scratch, then C = alpha * sum + beta * C over them, an element per thread.
template <class Format, class ExecSpace, class CView>
struct portable_multiply_kernel {
  using storage = typename Format::storage;
  using acc_t = typename Format::accumulate;
  using c_value = typename CView::non_const_value_type;
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using list_view = Kokkos::View<int*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const storage* a;
  const storage* b;
  const double* an;
  const double* bn;
  std::size_t kp;
  double tau;
  int tile, kt, mt, nt, m, n;
  int s, groups_m, groups_n, level;
  c_value alpha, beta;
  CView c;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    list_view list(team.team_scratch(level), kt + 1);
    const int bi = team.league_rank() / groups_n, bj = team.league_rank() % groups_n;
    for (int rep = 0; rep < s * s; ++rep) {
      const int ti = bi + (rep / s) * groups_m, tj = bj + (rep % s) * groups_n;
      if (ti >= mt || tj >= nt) continue;  // the same for the whole team
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        int count = 0;
        for (int k = 0; k < kt; ++k)
          if (an[std::size_t(ti) * kt + k] * bn[std::size_t(k) * nt + tj] >= tau) list(count++) = k;
        list(kt) = count;
      });
      team.team_barrier();
      const int count = list(kt);
      const int rows = (ti + 1) * tile <= m ? tile : m - ti * tile;
      const int cols = (tj + 1) * tile <= n ? tile : n - tj * tile;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * cols), [&](const int idx) {
        const int r = idx / cols, col = idx % cols;
        const storage* a_row = a + std::size_t(ti * tile + r) * kp;
        const storage* b_row = b + std::size_t(tj * tile + col) * kp;
        acc_t sum = 0;
        for (int q = 0; q < count; ++q) {
          const std::size_t k0 = std::size_t(list(q)) * tile;
          acc_t part = 0;
          for (int t = 0; t < tile; ++t)
            part += static_cast<acc_t>(Format::decode(a_row[k0 + t])) *
                    static_cast<acc_t>(Format::decode(b_row[k0 + t]));
          sum += part;
        }
        const int gr = ti * tile + r, gc = tj * tile + col;
        const c_value value = alpha * static_cast<c_value>(sum);
        c(gr, gc) = beta == c_value(0) ? value : value + beta * c(gr, gc);
      });
      team.team_barrier();
    }
  }
};

template <class Format, class ExecSpace, class CView>
void multiply_impl(const ExecSpace& exec, const multiply_problem& p,
                   typename CView::non_const_value_type alpha,
                   typename CView::non_const_value_type beta, const CView& c) {
  using kernel = portable_multiply_kernel<Format, ExecSpace, CView>;
  const geometry g = p.geo;
  if (g.mt == 0 || g.nt == 0) return;
  const int s = p.stride;
  const int groups_m = (g.mt + s - 1) / s, groups_n = (g.nt + s - 1) / s;
  const std::size_t bytes = kernel::list_view::shmem_size(g.kt + 1);
  // Very long k lists do not fit the fast scratch of a GPU team; level 1 always has room.
  const int level = bytes <= 32768 ? 0 : 1;
  Kokkos::TeamPolicy<ExecSpace> policy(exec, groups_m * groups_n, Kokkos::AUTO);
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("nearsparse::spamm::multiply", policy,
                       kernel{static_cast<const typename kernel::storage*>(p.a),
                              static_cast<const typename kernel::storage*>(p.b), p.a_norms,
                              p.b_norms, static_cast<std::size_t>(g.kp), p.tau, g.tile, g.kt, g.mt,
                              g.nt, g.m, g.n, s, groups_m, groups_n, level, alpha, beta, c});
}

template <class ExecSpace, class CView>
void multiply_portable(const ExecSpace& exec, const multiply_problem& p,
                       typename CView::non_const_value_type alpha,
                       typename CView::non_const_value_type beta, const CView& c) {
  with_format(p.precision,
              [&](auto fmt) { multiply_impl<decltype(fmt)>(exec, p, alpha, beta, c); });
}

/// The multiplication dispatch: C = alpha * A * B + beta * C over the kept tile products of
/// `p`, on the code opt.implementation asks for. This template runs the portable kernel (and
/// refuses implementation::specialized); a backend with kernels of its own overloads it on its
/// execution space. `function` is the public entry point named in errors.
template <class ExecSpace, class CView>
void multiply(const ExecSpace& exec, const char* function, const options& opt,
              const multiply_problem& p, typename CView::non_const_value_type alpha,
              typename CView::non_const_value_type beta, const CView& c) {
  nearsparse::detail::take_specialized_none<ExecSpace>(function, opt.implementation);
  multiply_portable(exec, p, alpha, beta, c);
}

#ifdef KOKKOS_ENABLE_CUDA
/// Whether the CUDA kernels run this product (src/spamm/cuda_multiply.cpp): false for
/// implementation::portable, true for automatic and specialized.
bool cuda_multiply_taken(const Kokkos::Cuda& exec, const char* function, const options& opt);

/// The CUDA kernels on raw pointers: C (m x n) at c with element (i, j) at c[i*s0 + j*s1]. On a
/// compute capability 9.0 GPU, wgmma for tf32, fp16 and bf16 with tiles of 64 and 128 when
/// opt.wgmma is set; otherwise tensor cores through mma.sync for fp64, tf32, fp16 and bf16, and
/// register-blocked FMA for fp32.
void cuda_multiply(const Kokkos::Cuda& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, float* c, std::size_t s0, std::size_t s1);
void cuda_multiply(const Kokkos::Cuda& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1);

/// On CUDA: the CUDA kernels, or the portable kernel for implementation::portable.
template <class CView>
void multiply(const Kokkos::Cuda& exec, const char* function, const options& opt,
              const multiply_problem& p, typename CView::non_const_value_type alpha,
              typename CView::non_const_value_type beta, const CView& c) {
  if (cuda_multiply_taken(exec, function, opt)) {
    cuda_multiply(exec, opt, p, static_cast<double>(alpha), static_cast<double>(beta), c.data(),
                  c.stride(0), c.stride(1));
  } else {
    multiply_portable(exec, p, alpha, beta, c);
  }
}
#endif

// The host path on raw pointers: C (m x n) at c with element (i, j) at c[i*s0 + j*s1]. Threads
// over blocks of C tiles (dynamic schedule), each running its work items as it finds them,
// grouped as opt.host_grouping says; an item multiplies its kept products with the host BLAS on
// the calling thread, one gemm per run of consecutive kept k, straight into C where C has the
// packed operands' type and a unit stride, else into a buffer.
#ifdef KOKKOS_ENABLE_OPENMP
void host_multiply(const Kokkos::OpenMP& exec, const options& opt, const multiply_problem& p,
                   float alpha, float beta, float* c, std::size_t s0, std::size_t s1);
void host_multiply(const Kokkos::OpenMP& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
void host_multiply(const Kokkos::Serial& exec, const options& opt, const multiply_problem& p,
                   float alpha, float beta, float* c, std::size_t s0, std::size_t s1);
void host_multiply(const Kokkos::Serial& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1);
#endif

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
/// On a host space: the host BLAS path, or the portable kernel where host_spamm_taken declines.
template <class HostExec, class CView>
void multiply_on_host(const HostExec& exec, const char* function, const options& opt,
                      const multiply_problem& p, typename CView::non_const_value_type alpha,
                      typename CView::non_const_value_type beta, const CView& c) {
  if (host_spamm_taken(exec, function, opt)) {
    host_multiply(exec, opt, p, alpha, beta, c.data(), c.stride(0), c.stride(1));
  } else {
    multiply_portable(exec, p, alpha, beta, c);
  }
}
#endif

#ifdef KOKKOS_ENABLE_OPENMP
/// On OpenMP: see multiply_on_host.
template <class CView>
void multiply(const Kokkos::OpenMP& exec, const char* function, const options& opt,
              const multiply_problem& p, typename CView::non_const_value_type alpha,
              typename CView::non_const_value_type beta, const CView& c) {
  multiply_on_host(exec, function, opt, p, alpha, beta, c);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
/// On Serial: see multiply_on_host.
template <class CView>
void multiply(const Kokkos::Serial& exec, const char* function, const options& opt,
              const multiply_problem& p, typename CView::non_const_value_type alpha,
              typename CView::non_const_value_type beta, const CView& c) {
  multiply_on_host(exec, function, opt, p, alpha, beta, c);
}
#endif

}  // namespace nearsparse::spamm::detail
