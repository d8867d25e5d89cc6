#pragma once
// One KPM run over two execution spaces at once (the paper's heterogeneous node: a CUDA GPU and
// the OpenMP CPU): the rows are split by a weight, each part runs the augmented SpMMV on its rows,
// and after every step the rows at the cut travel to the other part. Each part computes first the
// rows the other needs, hands them to the copy channel, and computes its remaining rows while the
// copies run (on CUDA a stream of their own). The weight comes from the measured rates of both
// parts on a slice of the matrix unless given.
//
//   kpm::split_options so;                              // so.weight = 0.93 to fix it
//   kpm::split_report r = kpm::split_moments(Kokkos::Cuda(), Kokkos::OpenMP(), H, s, o, so);
//
// The moments equal those of one device to rounding (same start vectors).

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/copy_channel.hpp>
#include <nearsparse/kpm/detail/device_part.hpp>
#include <nearsparse/kpm/detail/eta.hpp>
#include <nearsparse/kpm/detail/host_staging.hpp>
#include <nearsparse/kpm/detail/partition.hpp>
#include <nearsparse/kpm/detail/start_vectors.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>
#include <nearsparse/kpm/moments.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace nearsparse::kpm {

struct split_options {
  /// Fraction of the rows for the first space, in [0, 1]; negative: from measured rates.
  double weight = -1;
  /// Steps each space runs alone on a slice of the matrix to measure its rate.
  int calibration_steps = 3;
  /// Rows move between the parts in multiples of this (4 orbitals of an insulator site).
  int granule = 4;
  /// With a measured weight: give the second space rows only if that is predicted to save at
  /// least this fraction of the first space's time per step.
  double min_gain = 0.05;
};

/// What a split run did, and its moments.
struct split_report {
  chebyshev_moments moments;
  double weight = 0;  ///< fraction of rows on the first space
  std::int64_t rows_first = 0, rows_second = 0;
  int halo_first = 0, halo_second = 0;     ///< rows each part receives per step
  double rate_first = 0, rate_second = 0;  ///< calibration: row-vectors per second (0: not run)
  double copy_seconds = 0;  ///< calibration: the copy of the second part's rows to the first
};

namespace detail {

/// Seconds one copy of `bytes` from ExecA's staging memory (host_staging.hpp) to ExecA's memory
/// takes (median of 5).
template <class ExecA, class Scalar>
double time_copy_to(const ExecA& exec, std::size_t bytes) {
  if (bytes == 0) return 0;
  Kokkos::View<char*, staging_memory_t<ExecA>> src(std::string("nearsparse::kpm::copy_probe.host"),
                                                   bytes);
  Kokkos::View<char*, typename ExecA::memory_space> dst(
      std::string("nearsparse::kpm::copy_probe.device"), bytes);
  std::vector<double> t;
  for (int k = 0; k < 6; ++k) {
    exec.fence();
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::deep_copy(exec, dst, src);
    exec.fence();
    if (k > 0)
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Row-vectors per second of `steps` fused steps over the rows [0, n) of the first part of a
/// split with bounds {0, n, N}.
template <class Exec, class Scalar>
double calibrate(const Exec& exec, const host_crs<Scalar>& all, std::int64_t n, int R, int steps,
                 const scaling& s, const aug_settings& settings) {
  const std::vector<std::int64_t> bounds{0, n, all.rows};
  auto p = localize(row_range(all, 0, n), bounds, 0, "nearsparse::kpm::split_moments");
  finalize(p, {{}, {}});
  device_part<Exec, Scalar> d(exec, p, R, steps + 1, 1, settings);
  d.compute(0, d.n_local, 0, s);  // warm-up
  exec.fence();
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 1; k <= steps; ++k) d.compute(0, d.n_local, k, s);
  exec.fence();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return double(n) * R * steps / t;
}

}  // namespace detail

/// Moments of H~ = s.a (H - s.b) with the rows split between `first` and `second` (see the file
/// comment). H is a CRS matrix in any memory space; each part gets its rows in its own space
/// (with CUDA present, the second part's vector blocks are in pinned host memory, so copies
/// between the parts run at full speed). Only the aug_spmmv algorithm runs split.
/// o.implementation applies to both parts: implementation::specialized throws
/// nearsparse::unsupported where either space has no specialized kernel.
template <class ExecA, class ExecB, class Crs>
split_report split_moments(const ExecA& first, const ExecB& second, const Crs& h, const scaling& s,
                           const moments_options& o, const split_options& so = {}) {
  using scalar = typename Crs::non_const_value_type;
  constexpr const char* fn = "nearsparse::kpm::split_moments";
  using nearsparse::detail::concat;
  const int R = o.num_vectors;
  const int steps = detail::check_moment_inputs(typename Crs::execution_space(), h, s, o, R, fn);
  require(o.method == algorithm::aug_spmmv, fn, "options.method",
          concat("must be aug_spmmv for a split run, got ", to_string(o.method)));
  require(so.weight <= 1 && std::isfinite(so.weight), fn, "split.weight",
          concat("must be a fraction in [0, 1] (negative: measure), got ", so.weight));
  require(std::isfinite(so.min_gain) && so.min_gain >= 0 && so.min_gain < 1, fn, "split.min_gain",
          concat("must be in [0, 1), got ", so.min_gain));
  require(so.calibration_steps >= 1 && so.granule >= 1, fn, "split.calibration_steps, granule",
          concat("must be at least 1, got ", so.calibration_steps, " and ", so.granule));
  split_report result;
  detail::aug_settings settings;
  settings.function = fn;
  settings.implementation = o.implementation;
  settings.tuning = o.tuning;
  const auto all = detail::host_rows(h);
  const std::int64_t N = all.rows;
  double w = so.weight;
  auto partition = [&](double weight) {
    const auto bounds = detail::split_rows(N, {weight, 1 - weight}, so.granule, fn, "split.weight");
    auto pa = detail::localize(detail::row_range(all, bounds[0], bounds[1]), bounds, 0, fn);
    auto pb = detail::localize(detail::row_range(all, bounds[1], bounds[2]), bounds, 1, fn);
    const auto a_needs_from_b = pa.requests_to(1), b_needs_from_a = pb.requests_to(0);
    detail::finalize(pa, {{}, b_needs_from_a});
    detail::finalize(pb, {a_needs_from_b, {}});
    return std::make_pair(std::move(pa), std::move(pb));
  };
  double transfer_seconds = 0;
  if (w < 0) {
    const std::int64_t slice = std::min<std::int64_t>(N, std::max<std::int64_t>(4096, N / 8));
    result.rate_first = detail::calibrate(first, all, slice, R, so.calibration_steps, s, settings);
    result.rate_second =
        detail::calibrate(second, all, slice, R, so.calibration_steps, s, settings);
    w = result.rate_first / (result.rate_first + result.rate_second);
    // The second part's rows reach the first part only after it has computed them, so their copy
    // lies on the critical path of a step: balance  w N / r_1 = (1 - w) N / r_2 + t_copy, with
    // t_copy measured for the halo of the split the rates alone give.
    if (!Kokkos::SpaceAccessibility<ExecA, Kokkos::HostSpace>::accessible && w < 1) {
      const auto trial = partition(w);
      const std::size_t bytes = trial.second.n_send_rows * std::size_t(R) * sizeof(scalar);
      transfer_seconds = detail::time_copy_to<ExecA, scalar>(first, bytes);
      const double t1 = double(N) / result.rate_first, t2 = double(N) / result.rate_second;
      w = std::min(1.0, (t2 + transfer_seconds) / (t1 + t2));
    }
    // A predicted saving below min_gain of the first space's step is within the error of the
    // rates: the second space then gets no rows (a split has overheads the rates do not see).
    if (1 - w < so.min_gain) w = 1;
  }
  result.weight = w;
  result.copy_seconds = transfer_seconds;
  auto [pa, pb] = partition(w);
  result.rows_first = pa.n_local;
  result.rows_second = pb.n_local;
  result.halo_first = pa.n_halo;
  result.halo_second = pb.n_halo;
  // All rows on the first space: its single-space run, without the split's per-step exchanges.
  if constexpr (Kokkos::SpaceAccessibility<ExecA, typename Crs::memory_space>::accessible) {
    if (pb.n_local == 0) {
      result.moments = moments(first, h, s, o);
      return result;
    }
  }

  using second_mem = detail::second_part_memory_t<ExecA, ExecB>;
  detail::device_part<ExecA, scalar> a(first, pa, R, steps, o.seed, settings);
  detail::device_part<ExecB, scalar, second_mem> b(second, pb, R, steps, o.seed, settings);
  detail::copy_channel<ExecA, ExecB> channel(first, second);

  first.fence();
  second.fence();
  const auto t0 = std::chrono::steady_clock::now();
  // The first part's rows that read no halo (its interior) do not wait for the second part: the
  // interior of step m + 1 is queued right after step m's boundary rows, so a GPU has work queued
  // while the host computes the CPU's rows (symmetric patterns; otherwise step by step).
  const bool ahead = !a.interior_needs_halo;
  if (ahead && steps > 0) a.compute(a.n_send_rows, a.n_local, 0, s);
  for (int step = 0; step < steps; ++step) {
    // First part: the rows the second needs, their copy, then the rest (all queued, async on a
    // GPU).
    a.compute(0, a.n_send_rows, step, s);
    a.gather();
    channel.a_to_b(b.halo_destination(0), a.send_source(1), a.send_bytes(1));
    if (!ahead)
      a.compute(a.n_send_rows, a.n_local, step, s);
    else if (step + 1 < steps)
      a.compute_next(a.n_send_rows, a.n_local, step + 1, s);
    // Second part, meanwhile, the same.
    b.compute(0, b.n_send_rows, step, s);
    b.gather();
    channel.b_to_a(a.halo_destination(1), b.send_source(0), b.send_bytes(0));
    b.compute(b.n_send_rows, b.n_local, step, s);
    channel.finish();
    std::swap(a.in, a.out);
    std::swap(b.in, b.out);
    if (o.progress) o.progress(step + 1, steps);
  }
  first.fence();
  second.fence();
  auto ea = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.eta);
  auto eb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.eta);
  std::vector<double> eta(std::size_t(2 * steps) * R);
  for (std::size_t k = 0; k < eta.size(); ++k) eta[k] = ea.data()[k] + eb.data()[k];
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.moments =
      detail::finish_moments(eta,
                             {o.num_moments, R, steps, N, std::int64_t(all.columns.size()), s,
                              algorithm::aug_spmmv, seconds},
                             fn);
  return result;
}

}  // namespace nearsparse::kpm
