#pragma once
// Broadcasts of buffers in an execution space's memory among the processes of an MPI
// communicator, and exchanges between pairs of them (each process sends its own buffer to each
// peer), started and finished separately so that the caller computes while they travel. Used by
// the multi-process drivers (NEARSPARSE_ENABLE_MPI).
//
// - Host-accessible memory (Serial, OpenMP): MPI_Ibcast, MPI_Isend and MPI_Irecv on the buffers
//   themselves.
// - GPU memory, host staging: the senders copy their buffers to pinned host memory, MPI moves
//   them, the receivers copy them up, in order on the caller's execution space instance.
// - GPU memory through NCCL (built with NCCL, on Kokkos::Cuda): device to device on a stream of
//   the channel's own, ordered against the caller's stream by events.

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/detail/nccl_communicator.hpp>
#include <nearsparse/core/detail/peer_transfer.hpp>
#include <nearsparse/core/detail/staging_memory.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::detail {

template <class ExecSpace>
inline constexpr bool host_accessible_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

template <class ExecSpace>
inline constexpr bool nccl_capable_v =
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
    false;
#endif

/// How a channel on ExecSpace moves data when asked for `requested`; throws for NCCL where it
/// cannot be used.
template <class ExecSpace>
gpu_transport resolve_transport(gpu_transport requested, const char* driver) {
  require(requested != gpu_transport::nccl || nccl_capable_v<ExecSpace>, driver, "transport",
          concat("is nccl, but this build has no NCCL for ", ExecSpace::name(),
                 " (NCCL serves Kokkos::Cuda in builds with CUDA, MPI and NCCL)"));
  if (host_accessible_v<ExecSpace>) return gpu_transport::host_staging;  // nothing to stage
  if (requested == gpu_transport::automatic)
    return nccl_capable_v<ExecSpace> ? gpu_transport::nccl : gpu_transport::host_staging;
  return requested;
}

/// resolve_transport for a channel over `comm`: NCCL also needs a GPU of its own on every
/// process. Where two share one, automatic stages through the host and an explicit nccl is
/// refused, on every process alike. Collective over `comm`.
template <class ExecSpace>
gpu_transport resolve_transport(MPI_Comm comm, gpu_transport requested, const char* driver) {
  const gpu_transport kind = resolve_transport<ExecSpace>(requested, driver);
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
  if (kind == gpu_transport::nccl) {
    const std::string shared = nccl_shared_gpu(comm);
    if (!shared.empty()) {
      require(requested != gpu_transport::nccl, driver, "transport",
              concat("is nccl, but ", shared,
                     "; NCCL needs one GPU per process (run one process per GPU, or use "
                     "automatic or host_staging)"));
      return gpu_transport::host_staging;
    }
  }
#else
  (void)comm;
#endif
  return kind;
}

template <class ExecSpace>
class broadcast_channel {
 public:
  /// Collective over `comm` when the transport is NCCL.
  broadcast_channel(MPI_Comm comm, gpu_transport requested, const char* driver)
      : comm_(comm), driver_(driver), kind_(resolve_transport<ExecSpace>(comm, requested, driver)) {
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if (kind_ == gpu_transport::nccl) nccl_ = std::make_shared<nccl_communicator>(comm);
#endif
  }

  gpu_transport kind() const {
    return kind_;
  }

  /// Starts every transfer at once (buffers in ExecSpace's memory). Each pair of processes names
  /// each other with matching sizes, and every process starts its exchanges and broadcasts in the
  /// same order. Data sent may still be being written by work queued on `exec`.
  int start_exchange(const ExecSpace& exec, const std::vector<peer_transfer>& moves) {
    pending p;
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (nccl_capable_v<ExecSpace>) {
      if (kind_ == gpu_transport::nccl) {
        p.ticket = nccl_->exchange(moves, exec.cuda_stream());
        pending_.push_back(std::move(p));
        return static_cast<int>(pending_.size()) - 1;
      }
    }
#endif
    exec.fence();  // what is sent is complete; a receiver's buffer is no longer read
    for (const auto& m : moves) {
      if (m.send_bytes > 0) {
        const char* from = static_cast<const char*>(m.send);
        if constexpr (!host_accessible_v<ExecSpace>) {
          char* staged = staging(m.send_bytes);
          Kokkos::deep_copy(host_bytes(staged, m.send_bytes),
                            device_bytes(const_cast<void*>(m.send), m.send_bytes));
          from = staged;
        }
        for_pieces(m.send_bytes, [&](std::size_t at, int count) {
          MPI_Request r;
          mpi_check(MPI_Isend(from + at, count, MPI_BYTE, m.peer, 0, comm_, &r), driver_,
                    "MPI_Isend");
          p.requests.push_back(r);
        });
      }
      if (m.recv_bytes > 0) {
        char* into = static_cast<char*>(m.recv);
        if constexpr (!host_accessible_v<ExecSpace>) {
          into = staging(m.recv_bytes);
          p.arrivals.push_back({m.recv, into, m.recv_bytes});
        }
        for_pieces(m.recv_bytes, [&](std::size_t at, int count) {
          MPI_Request r;
          mpi_check(MPI_Irecv(into + at, count, MPI_BYTE, m.peer, 0, comm_, &r), driver_,
                    "MPI_Irecv");
          p.requests.push_back(r);
        });
      }
    }
    pending_.push_back(std::move(p));
    return static_cast<int>(pending_.size()) - 1;
  }

  /// Starts broadcasting `bytes` at `data` (ExecSpace's memory) from process `root` of the
  /// communicator. The root's data may still be being written by work queued on `exec`.
  int start(const ExecSpace& exec, void* data, std::size_t bytes, int root) {
    pending p;
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (nccl_capable_v<ExecSpace>) {
      if (kind_ == gpu_transport::nccl) {
        p.ticket = nccl_->broadcast(data, bytes, root, exec.cuda_stream());
        pending_.push_back(std::move(p));
        return static_cast<int>(pending_.size()) - 1;
      }
    }
#endif
    char* buffer = static_cast<char*>(data);
    if constexpr (!host_accessible_v<ExecSpace>) {
      buffer = staging(bytes);
      if (mpi_rank(comm_) == root) {
        if (bytes > 0) {
          exec.fence();  // the root's data is complete
          Kokkos::deep_copy(host_bytes(buffer, bytes), device_bytes(data, bytes));
        }
      } else {
        p.arrivals.push_back({data, buffer, bytes});
      }
    } else {
      exec.fence();  // the root's data is complete; a receiver's buffer is no longer read
    }
    for_pieces(bytes, [&](std::size_t at, int count) {
      MPI_Request r;
      mpi_check(MPI_Ibcast(buffer + at, count, MPI_BYTE, root, comm_, &r), driver_, "MPI_Ibcast");
      p.requests.push_back(r);
    });
    pending_.push_back(std::move(p));
    return static_cast<int>(pending_.size()) - 1;
  }

  /// Work queued on `exec` after this call sees the broadcast data.
  void finish(const ExecSpace& exec, int ticket) {
    pending& p = pending_.at(std::size_t(ticket));
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (nccl_capable_v<ExecSpace>) {
      if (kind_ == gpu_transport::nccl) {
        nccl_->wait(p.ticket, exec.cuda_stream());
        return;
      }
    }
#endif
    if (!p.requests.empty())
      mpi_check(MPI_Waitall(int(p.requests.size()), p.requests.data(), MPI_STATUSES_IGNORE),
                driver_, "MPI_Waitall");
    p.requests.clear();
    if constexpr (!host_accessible_v<ExecSpace>) {
      for (const auto& a : p.arrivals)
        if (a.bytes > 0)
          Kokkos::deep_copy(exec, device_bytes(a.data, a.bytes), host_bytes(a.staging, a.bytes));
    }
    p.arrivals.clear();
  }

  /// Broadcasts started from now on wait for the work queued so far on `exec` (which may still
  /// read a buffer they are about to overwrite).
  void release(const ExecSpace& exec) {
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if constexpr (nccl_capable_v<ExecSpace>) {
      if (kind_ == gpu_transport::nccl) {
        nccl_->wait_for(exec.cuda_stream());
        return;
      }
    }
#endif
    // Host staging copies up on `exec` itself, in order, and host backends compute in order.
    (void)exec;
  }

  /// Forgets finished broadcasts (their tickets become invalid). Call between products.
  void begin_round(const ExecSpace& exec) {
    exec.fence();  // staged copies read the host buffers until they are done
    pending_.clear();
    staged_ = 0;
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if (nccl_) nccl_->begin_round();
#endif
  }

 private:
  using host_view = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  using device_view =
      Kokkos::View<char*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  static host_view host_bytes(char* p, std::size_t n) {
    return host_view(p, n);
  }
  static device_view device_bytes(void* p, std::size_t n) {
    return device_view(static_cast<char*>(p), n);
  }

  /// Host staging: data that arrived in a staging buffer, copied up when finished.
  struct arrival {
    void* data = nullptr;
    char* staging = nullptr;
    std::size_t bytes = 0;
  };

  struct pending {
    int ticket = -1;  // NCCL
    std::vector<MPI_Request> requests;
    std::vector<arrival> arrivals;
  };

  /// A staging buffer of at least `bytes` for one message of this round. They are kept for the
  /// next rounds: pinned memory is slow to allocate, and copies through pageable memory run at
  /// a fraction of the link.
  char* staging(std::size_t bytes) {
    const std::size_t slot = staged_++;
    if (staging_.size() <= slot) staging_.resize(slot + 1);
    if (staging_[slot].extent(0) < bytes)
      staging_[slot] = staging_view(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(driver_) + "::staging"),
          bytes);
    return staging_[slot].data();
  }

  /// f(offset, count) for each piece of a message: MPI counts are ints, so large buffers go in
  /// pieces of 1 GiB.
  template <class F>
  static void for_pieces(std::size_t bytes, F&& f) {
    constexpr std::size_t piece = std::size_t(1) << 30;
    for (std::size_t at = 0; at < bytes; at += piece) f(at, int(std::min(piece, bytes - at)));
  }
  using staging_view = Kokkos::View<char*, staging_memory_t<ExecSpace>>;

  MPI_Comm comm_;
  const char* driver_;
  gpu_transport kind_;
  std::vector<pending> pending_;
  std::vector<staging_view> staging_;
  std::size_t staged_ = 0;  ///< staging buffers used this round
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
  std::shared_ptr<nccl_communicator> nccl_;
#endif
};

}  // namespace nearsparse::detail

#endif
