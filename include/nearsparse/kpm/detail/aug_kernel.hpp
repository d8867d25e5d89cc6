#pragma once
// The one sparse kernel of the KPM family, in the paper's three uses:
//   out(i, :) = alpha * (H in)(i, :) + beta * in(i, :) + gamma * out(i, :)      (gamma = 0: not
//   read)
// over rows [row_begin, row_end) of H and all R columns of a row-major block, and, when asked,
//   eta(2 s, r) += |in(i, r)|^2,   eta(2 s + 1, r) += Re conj(out(i, r)) in(i, r)
// summed over those rows: the two Chebyshev moments of step s computed while the rows are in
// registers (the augmented SpMMV of Figure 5). alpha = 1, beta = gamma = 0 without dots is a
// plain SpMMV; R = 1 is the augmented SpMV of Figure 4.
//
// GPU form: a team of TS threads x VL vector lanes; each thread takes one row at a time and its
// lanes the columns r (coalesced loads of in(col, r) when the block is row-major). Partial dot
// products stay in a per-thread slot of team scratch (no atomics across lanes or rows), are summed
// over the team once and added to eta with one atomic per team and column.
// Host form: one thread per team of consecutive rows, the r loop innermost over a scratch row
// of accumulators, so the compiler vectorizes across the block's columns.
//
// This header holds the portable kernel; detail/aug_spmmv.hpp holds the dispatch that picks it or
// a backend's specialized kernel.

#include <nearsparse/core/implementation.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/detail/matrix_rows.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace nearsparse::kpm::detail {

struct aug_coefficients {
  double alpha = 1, beta = 0, gamma = 0;
};

/// What the dispatch of one augmented SpMMV needs besides the data: the public entry point (for
/// errors), the implementation choice, the CUDA kernel's tuning, the matrix's stencil period
/// (row_period.hpp; 0: none), which aug_period() fills in where the chosen kernel uses it, and
/// whether the host kernel may run its copy for AVX2 and FMA where the processor has them
/// (host_aug_spmmv.hpp; false: the copy for the compiler's baseline instruction set).
struct aug_settings {
  const char* function = "nearsparse::kpm::aug_spmmv";
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  cuda_tuning tuning;
  int period = 0;
  bool host_wide_vectors = true;
};

template <class Exec, class Rows, class In, class Out, class Eta, bool Dots, bool OnHost>
struct aug_functor {
  using scalar = typename Rows::scalar_type;
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Rows rows;
  In in;
  Out out;
  Eta eta;
  int row_begin, row_end, rows_per_team, cols, team_size, step;
  aug_coefficients c;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int R = cols;
    const int first = row_begin + m.league_rank() * rows_per_team;
    const int last = first + rows_per_team < row_end ? first + rows_per_team : row_end;
    if constexpr (OnHost) {
      // One thread: y holds the R accumulators of the current row.
      scalar* y = static_cast<scalar*>(m.team_scratch(0).get_shmem(sizeof(scalar) * R));
      double* acc = static_cast<double*>(m.team_scratch(0).get_shmem(sizeof(double) * 2 * R));
      if (Dots)
        for (int r = 0; r < R; ++r) acc[r] = acc[R + r] = 0;
      for (int i = first; i < last; ++i) {
        for (int r = 0; r < R; ++r) y[r] = scalar(0);
        const row_span s = rows.span(i);
        for (int j = 0; j < s.count; ++j) {
          const std::int64_t e = s.begin + std::int64_t(j) * s.stride;
          const int col = rows.column(e);
          const scalar v = rows.value(e);
#if defined(KOKKOS_ENABLE_PRAGMA_IVDEP)
#pragma ivdep
#endif
          for (int r = 0; r < R; ++r) y[r] += v * in(col, r);
        }
        for (int r = 0; r < R; ++r) {
          const scalar vin = (Dots || c.beta != 0) ? in(i, r) : scalar(0);
          scalar o = c.alpha * y[r] + c.beta * vin;
          if (c.gamma != 0) o += c.gamma * out(i, r);
          out(i, r) = o;
          if (Dots) {
            acc[r] += norm2(vin);
            acc[R + r] += real_dot(o, vin);
          }
        }
      }
      if (Dots)
        for (int r = 0; r < R; ++r) {
          Kokkos::atomic_add(&eta(2 * step, r), acc[r]);
          Kokkos::atomic_add(&eta(2 * step + 1, r), acc[R + r]);
        }
    } else {
      const int t = m.team_rank(), TS = team_size;
      // acc[(q * TS + t) * R + r]: the partial sum q (0: |in|^2, 1: <out|in>) of thread t, column
      // r, touched only by the lane that owns column r of thread t.
      double* acc = nullptr;
      if (Dots) {
        acc = static_cast<double*>(m.team_scratch(0).get_shmem(sizeof(double) * 2 * TS * R));
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, R), [&](const int r) {
          acc[t * R + r] = 0;
          acc[(TS + t) * R + r] = 0;
        });
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, last - first), [&](const int k) {
        const int i = first + k;
        const row_span s = rows.span(i);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, R), [&](const int r) {
          scalar y(0);
          for (int j = 0; j < s.count; ++j) {
            const std::int64_t e = s.begin + std::int64_t(j) * s.stride;
            y += rows.value(e) * in(rows.column(e), r);
          }
          const scalar vin = (Dots || c.beta != 0) ? in(i, r) : scalar(0);
          scalar o = c.alpha * y + c.beta * vin;
          if (c.gamma != 0) o += c.gamma * out(i, r);
          out(i, r) = o;
          if (Dots) {
            acc[t * R + r] += norm2(vin);
            acc[(TS + t) * R + r] += real_dot(o, vin);
          }
        });
      });
      if (Dots) {
        m.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamVectorRange(m, 2 * R), [&](const int qr) {
          const int q = qr / R, r = qr - q * R;
          double sum = 0;
          for (int u = 0; u < TS; ++u) sum += acc[(q * TS + u) * R + r];
          Kokkos::atomic_add(&eta(2 * step + q, r), sum);
        });
      }
    }
  }
};

/// Launch parameters of the GPU form for a block of R columns.
struct aug_launch {
  int vector_length, team_size, rows_per_team;
};

inline aug_launch gpu_launch_shape(int R, int row_count) {
  int vl = 1;
  while (vl < R && vl < 32) vl *= 2;
  int ts = std::max(1, 256 / vl);
  // Keep the per-thread dot-product slots under 32 KiB of shared memory.
  while (ts > 1 && std::int64_t(ts) * 2 * R * 8 > 32 * 1024) ts /= 2;
  // Enough teams to fill the device several times over, few enough that the per-team
  // reduction and atomics stay a small fraction of the work.
  const int per_thread = R == 1 ? 2 : 8;
  int rows_per_team = ts * per_thread;
  if (row_count > 0 && row_count / rows_per_team < 2048)
    rows_per_team = std::max(ts, row_count / 2048);
  return {vl, ts, rows_per_team};
}

/// The portable form of the kernel (see the file comment) on any execution space. `in` and `out`
/// are rank-2 Views with H's columns' worth of rows (in) and at least row_end rows (out), R
/// columns each; eta is (2 * steps) x R, or empty when !dots.
template <class Exec, class Rows, class In, class Out, class Eta>
void portable_aug_spmmv(const Exec& exec, const char* label, const Rows& rows, int row_begin,
                        int row_end, const In& in, const Out& out, aug_coefficients c, bool dots,
                        const Eta& eta, int step) {
  const int R = int(in.extent(1));
  const int count = row_end - row_begin;
  if (count <= 0 || R == 0) return;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
  if constexpr (on_host) {
    const int rows_per_team = 64;
    const int league = (count + rows_per_team - 1) / rows_per_team;
    Kokkos::TeamPolicy<Exec> policy(exec, league, 1, 1);
    policy.set_scratch_size(
        0, Kokkos::PerTeam(int(sizeof(typename Rows::scalar_type) * R + sizeof(double) * 2 * R)));
    auto launch = [&](auto dots_tag) {
      constexpr bool D = decltype(dots_tag)::value;
      Kokkos::parallel_for(
          label, policy,
          aug_functor<Exec, Rows, In, Out, Eta, D, true>{rows, in, out, eta, row_begin, row_end,
                                                         rows_per_team, R, 1, step, c});
    };
    if (dots)
      launch(std::true_type{});
    else
      launch(std::false_type{});
  } else {
    const aug_launch shape = gpu_launch_shape(R, count);
    const int league = (count + shape.rows_per_team - 1) / shape.rows_per_team;
    Kokkos::TeamPolicy<Exec> policy(exec, league, shape.team_size, shape.vector_length);
    if (dots)
      policy.set_scratch_size(0, Kokkos::PerTeam(int(sizeof(double) * 2 * shape.team_size * R)));
    auto launch = [&](auto dots_tag) {
      constexpr bool D = decltype(dots_tag)::value;
      Kokkos::parallel_for(label, policy,
                           aug_functor<Exec, Rows, In, Out, Eta, D, false>{
                               rows, in, out, eta, row_begin, row_end, shape.rows_per_team, R,
                               shape.team_size, step, c});
    };
    if (dots)
      launch(std::true_type{});
    else
      launch(std::false_type{});
  }
}

}  // namespace nearsparse::kpm::detail
