#pragma once
// KPM over MPI processes (builds with NEARSPARSE_ENABLE_MPI): each process owns a contiguous
// block of rows, holds only those rows of H (global column numbers), and runs the augmented
// SpMMV on them. Every step it computes first the rows other processes need, copies them to the
// host and sends them (MPI_Isend), computes its remaining rows while the messages travel, and
// copies what it received into its halo. The dot products stay on each device for the whole
// recurrence and are summed over the processes by one MPI_Allreduce at the end. On a GPU the
// boundary rows go device to device through NCCL where the build has it (they travel on a
// stream of their own while the remaining rows are computed), through the host otherwise.
//
//   auto [b, e] = kpm::distributed_rows(MPI_COMM_WORLD, H_rows_total);     // equal shares
//   auto rows = kpm::assemble_rows(insulator, b, e);                       // this rank's rows
//   kpm::distributed_report r = kpm::distributed_moments(MPI_COMM_WORLD, exec, rows, b, s, o);
//
// The moments equal a single-process run's to rounding (same start vectors).

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/broadcast_channel.hpp>
#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/device_exchange.hpp>
#include <nearsparse/kpm/detail/device_part.hpp>
#include <nearsparse/kpm/detail/eta.hpp>
#include <nearsparse/kpm/detail/host_staging.hpp>
#include <nearsparse/kpm/detail/partition.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>
#include <nearsparse/kpm/moments.hpp>
#include <nearsparse/kpm/spectral_bounds.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::kpm {

/// How the rows of a distributed run are shared out (distributed_rows).
struct distributed_rows_options {
  double weight = 1.0;       ///< this process's share, relative (its measured rate, say); >= 0
  std::int64_t granule = 1;  ///< row blocks in multiples of this (4 orbitals of a site, say)
};

struct distributed_options {
  /// How boundary rows travel between processes whose rows live on a GPU: device to device
  /// through NCCL (the automatic choice where the build has it) or through the host.
  gpu_transport transport = gpu_transport::automatic;
};

/// What a distributed run did, and its moments.
struct distributed_report {
  chebyshev_moments moments;         ///< the same on every process
  std::vector<std::int64_t> bounds;  ///< process p owns rows [bounds[p], bounds[p+1])
  int halo = 0;                      ///< rows this process receives per step
  int neighbours = 0;                ///< processes it exchanges rows with
  /// Wall time of this process's set-up before the recurrence: the local matrix and vector
  /// blocks, the NCCL communicator, and one exchange of the boundary rows that opens the
  /// connections (NCCL sets up its peer-to-peer channels on their first use, which takes a
  /// few hundred milliseconds). moments.seconds covers the recurrence only.
  double setup_seconds = 0;
};

namespace detail {
template <class Scalar>
MPI_Datatype mpi_scalar() {
  return std::is_same_v<Scalar, double> ? MPI_DOUBLE : MPI_C_DOUBLE_COMPLEX;
}
}  // namespace detail

/// This process's rows [begin, end) of `rows` rows split in proportion to each process's
/// options.weight (equal shares by default), in multiples of options.granule rows where the
/// sizes allow. Collective.
inline std::pair<std::int64_t, std::int64_t> distributed_rows(
    MPI_Comm comm, std::int64_t rows, const distributed_rows_options& options = {}) {
  constexpr const char* fn = "nearsparse::kpm::distributed_rows";
  require(options.granule >= 1, fn, "options.granule",
          nearsparse::detail::concat("must be at least 1, got ", options.granule));
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<double> w(static_cast<std::size_t>(size));
  nearsparse::detail::mpi_check(
      MPI_Allgather(&options.weight, 1, MPI_DOUBLE, w.data(), 1, MPI_DOUBLE, comm), fn,
      "MPI_Allgather");
  const auto b = detail::split_rows(rows, w, options.granule, fn, "options.weight");
  return {b[std::size_t(rank)], b[std::size_t(rank) + 1]};
}

/// Gershgorin interval of the whole matrix from each process's rows. Collective.
template <class Scalar>
spectral_interval distributed_gershgorin_bounds(MPI_Comm comm, const host_crs<Scalar>& rows,
                                                std::int64_t row_begin) {
  constexpr const char* fn = "nearsparse::kpm::distributed_gershgorin_bounds";
  auto b = gershgorin_bounds_of_rows(rows, row_begin);
  nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &b.lower, 1, MPI_DOUBLE, MPI_MIN, comm),
                                fn, "MPI_Allreduce");
  nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &b.upper, 1, MPI_DOUBLE, MPI_MAX, comm),
                                fn, "MPI_Allreduce");
  if (b.lower > b.upper) b = {0, 0};  // an empty matrix
  return b;
}

/// Moments of H~ = s.a (H - s.b) with this process holding the rows [row_begin, row_begin +
/// rows.rows) of H (global columns; rows.cols = N). Collective over `comm`; the row blocks of the
/// processes must tile [0, N) in rank order. Only the aug_spmmv algorithm runs distributed.
template <class ExecSpace, class Scalar>
distributed_report distributed_moments(MPI_Comm comm, const ExecSpace& exec,
                                       const host_crs<Scalar>& rows, std::int64_t row_begin,
                                       const scaling& s, const moments_options& o,
                                       const distributed_options& options = {}) {
  constexpr const char* fn = "nearsparse::kpm::distributed_moments";
  using nearsparse::detail::concat;
  static_assert(is_kpm_scalar_v<Scalar>,
                "nearsparse::kpm::distributed_moments: the scalar must be double or "
                "Kokkos::complex<double>");
  auto mpi_check = [](int code, const char* call) {
    nearsparse::detail::mpi_check(code, fn, call);
  };
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  require_valid(s, fn);
  require(o.num_moments >= 2, fn, "options.num_moments",
          concat("must be at least 2, got ", o.num_moments));
  require(o.num_vectors >= 1, fn, "options.num_vectors",
          concat("must be at least 1, got ", o.num_vectors));
  require(o.method == algorithm::aug_spmmv, fn, "options.method",
          concat("must be aug_spmmv for a distributed run, got ", to_string(o.method)));
  nearsparse::detail::require_valid(fn, "options.implementation", o.implementation);
  detail::check_tuning(o.tuning, o.num_vectors, fn);
  const int R = o.num_vectors, steps = (o.num_moments + 1) / 2;
  const auto setup_start = std::chrono::steady_clock::now();

  // Row blocks of all processes; they must tile [0, N) in rank order.
  distributed_report result;
  const std::int64_t mine[2] = {row_begin, rows.rows};
  std::vector<std::int64_t> all(2 * std::size_t(size));
  mpi_check(MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm), "MPI_Allgather");
  result.bounds.assign(1, 0);
  for (int p = 0; p < size; ++p) {
    require(all[2 * std::size_t(p)] == result.bounds.back(), fn, "row_begin",
            concat("of process ", p, " is ", all[2 * std::size_t(p)],
                   ", but the rows before it end at ", result.bounds.back(),
                   ": the row blocks must tile [0, N) in rank order"));
    result.bounds.push_back(result.bounds.back() + all[2 * std::size_t(p) + 1]);
  }
  require(result.bounds.back() == rows.cols, fn, "rows",
          concat("the processes hold ", result.bounds.back(), " rows of a matrix with ", rows.cols,
                 " columns; H must be square"));

  // Halo requests: the global rows each process needs from each other one.
  auto part = detail::localize(rows, result.bounds, rank, fn);
  std::vector<int> send_counts(static_cast<std::size_t>(size)),
      recv_counts(static_cast<std::size_t>(size));
  std::vector<int> send_displs(static_cast<std::size_t>(size)),
      recv_displs(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) {
    send_counts[std::size_t(q)] =
        part.recv_offsets[std::size_t(q) + 1] - part.recv_offsets[std::size_t(q)];
    send_displs[std::size_t(q)] = part.recv_offsets[std::size_t(q)];
  }
  mpi_check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm),
            "MPI_Alltoall");
  int total = 0;
  for (int q = 0; q < size; ++q) {
    recv_displs[std::size_t(q)] = total;
    total += recv_counts[std::size_t(q)];
  }
  std::vector<std::int64_t> wanted(static_cast<std::size_t>(total));
  mpi_check(
      MPI_Alltoallv(part.halo_global.data(), send_counts.data(), send_displs.data(), MPI_INT64_T,
                    wanted.data(), recv_counts.data(), recv_displs.data(), MPI_INT64_T, comm),
      "MPI_Alltoallv");
  std::vector<std::vector<std::int64_t>> requests(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q)
    requests[std::size_t(q)].assign(
        wanted.begin() + recv_displs[std::size_t(q)],
        wanted.begin() + recv_displs[std::size_t(q)] + recv_counts[std::size_t(q)]);
  detail::finalize(part, requests);
  result.halo = part.n_halo;

  detail::aug_settings settings;
  settings.function = fn;
  settings.implementation = o.implementation;
  settings.tuning = o.tuning;
  detail::device_part<ExecSpace, Scalar> d(exec, part, R, steps, o.seed, settings);
  using staging = Kokkos::View<Scalar**, Kokkos::LayoutRight, detail::staging_memory_t<ExecSpace>>;
  staging send_host, recv_host;
  std::vector<int> peers;
  for (int q = 0; q < size; ++q)
    if (q != rank && (d.send_bytes(q) > 0 ||
                      part.recv_offsets[std::size_t(q) + 1] > part.recv_offsets[std::size_t(q)]))
      peers.push_back(q);
  result.neighbours = int(peers.size());
  const MPI_Datatype type = detail::mpi_scalar<Scalar>();

  const gpu_transport kind =
      nearsparse::detail::resolve_transport<ExecSpace>(comm, options.transport, fn);
  detail::device_exchange<ExecSpace, Scalar> device_rows;
  const bool through_nccl = device_rows.open(comm, kind, d, part, peers);
  if (!through_nccl) {
    send_host = staging(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           std::string("nearsparse::kpm::send_staging")),
                        d.send_buffer.extent(0), std::size_t(R));
    recv_host = staging(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           std::string("nearsparse::kpm::recv_staging")),
                        std::size_t(part.n_halo), std::size_t(R));
  }
  // Through the host: the gathered rows to the host, MPI_Isend/Irecv, and (finish) the received
  // rows into the halo of `out` once the remaining rows have been queued.
  std::vector<MPI_Request> pending;
  auto start_host = [&](int tag) {
    Kokkos::deep_copy(exec, send_host, d.send_buffer);
    exec.fence();
    pending.clear();
    for (int q : peers) {
      const int count = part.recv_offsets[std::size_t(q) + 1] - part.recv_offsets[std::size_t(q)];
      if (count > 0) {
        pending.emplace_back();
        mpi_check(MPI_Irecv(recv_host.data() + std::size_t(part.recv_offsets[std::size_t(q)]) * R,
                            count * R, type, q, tag, comm, &pending.back()),
                  "MPI_Irecv");
      }
      const int out = d.send_offsets[std::size_t(q) + 1] - d.send_offsets[std::size_t(q)];
      if (out > 0) {
        pending.emplace_back();
        mpi_check(MPI_Isend(send_host.data() + std::size_t(d.send_offsets[std::size_t(q)]) * R,
                            out * R, type, q, tag, comm, &pending.back()),
                  "MPI_Isend");
      }
    }
  };
  auto finish_host = [&]() {
    mpi_check(MPI_Waitall(int(pending.size()), pending.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (part.n_halo > 0)
      Kokkos::deep_copy(
          exec,
          Kokkos::subview(d.out, std::make_pair(d.n_local, d.n_local + part.n_halo), Kokkos::ALL),
          recv_host);
  };

  // One exchange before the clock starts opens the connections (NCCL's peer-to-peer channels,
  // MPI's shared-memory or network paths). It moves the zero send buffer into the halo of `out`,
  // which step 0 overwrites.
  if (through_nccl) {
    device_rows.finish(d, device_rows.start(d));
  } else {
    start_host(steps);
    finish_host();
  }
  exec.fence();
  result.setup_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();

  MPI_Barrier(comm);
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    d.compute(0, d.n_send_rows, step, s);
    d.gather();
    if (through_nccl) {
      const int ticket = device_rows.start(d);
      d.compute(d.n_send_rows, d.n_local, step, s);
      device_rows.finish(d, ticket);
    } else {
      start_host(step);
      d.compute(d.n_send_rows, d.n_local, step, s);
      finish_host();
    }
    std::swap(d.in, d.out);
    if (o.progress && rank == 0) o.progress(step + 1, steps);
  }
  exec.fence();
  auto eta_local = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.eta);
  std::vector<double> eta(std::size_t(2 * steps) * R);
  mpi_check(MPI_Allreduce(eta_local.data(), eta.data(), int(eta.size()), MPI_DOUBLE, MPI_SUM, comm),
            "MPI_Allreduce");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::int64_t nnz = std::int64_t(rows.columns.size()), nnz_all = 0;
  mpi_check(MPI_Allreduce(&nnz, &nnz_all, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  result.moments = detail::finish_moments(
      eta, {o.num_moments, R, steps, rows.cols, nnz_all, s, algorithm::aug_spmmv, seconds}, fn);
  return result;
}

}  // namespace nearsparse::kpm

#endif  // NEARSPARSE_ENABLE_MPI
