#pragma once
// Broadcasts of buffers in an execution space's memory among the processes of an MPI
// communicator, started and finished separately so that the caller computes while they travel.
// Used by the multi-process drivers (NEARSPARSE_ENABLE_MPI).
//
// - Host-accessible memory (Serial, OpenMP): MPI_Ibcast on the buffer itself.
// - GPU memory, host staging: the root copies the buffer to pinned host memory, MPI_Ibcast moves
//   it, the others copy it up, in order on the caller's execution space instance.
// - GPU memory through NCCL (built with NCCL, on Kokkos::Cuda): device to device on a stream of
//   the channel's own, ordered against the caller's stream by events.

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/detail/nccl_communicator.hpp>
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

  /// Starts broadcasting `bytes` at `data` (ExecSpace's memory) from process `root` of the
  /// communicator. The root's data may still be being written by work queued on `exec`.
  int start(const ExecSpace& exec, void* data, std::size_t bytes, int root) {
    pending p;
    p.data = data;
    p.bytes = bytes;
    p.root = root;
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
      // One staging buffer per broadcast of a round, kept for the next rounds: pinned memory
      // is slow to allocate, and copies through pageable memory run at a fraction of the link.
      const std::size_t slot = pending_.size();
      if (staging_.size() <= slot) staging_.resize(slot + 1);
      if (staging_[slot].extent(0) < bytes)
        staging_[slot] = staging_view(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(driver_) + "::staging"),
            bytes);
      p.staging = staging_[slot].data();
      buffer = p.staging;
      if (mpi_rank(comm_) == root && bytes > 0) {
        exec.fence();  // the root's data is complete
        Kokkos::deep_copy(host_bytes(buffer, bytes), device_bytes(data, bytes));
      }
    } else {
      exec.fence();  // the root's data is complete; a receiver's buffer is no longer read
    }
    // MPI counts are ints: large buffers go in pieces of 1 GiB.
    constexpr std::size_t piece = std::size_t(1) << 30;
    for (std::size_t at = 0; at < bytes; at += piece) {
      MPI_Request r;
      mpi_check(
          MPI_Ibcast(buffer + at, int(std::min(piece, bytes - at)), MPI_BYTE, root, comm_, &r),
          driver_, "MPI_Ibcast");
      p.requests.push_back(r);
    }
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
      if (mpi_rank(comm_) != p.root && p.bytes > 0)
        Kokkos::deep_copy(exec, device_bytes(p.data, p.bytes), host_bytes(p.staging, p.bytes));
    }
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

  struct pending {
    void* data = nullptr;
    std::size_t bytes = 0;
    int root = 0;
    int ticket = -1;  // NCCL
    std::vector<MPI_Request> requests;
    char* staging = nullptr;  // host staging: this broadcast's buffer in staging_
  };
  using staging_view = Kokkos::View<char*, staging_memory_t<ExecSpace>>;

  MPI_Comm comm_;
  const char* driver_;
  gpu_transport kind_;
  std::vector<pending> pending_;
  std::vector<staging_view> staging_;
#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
  std::shared_ptr<nccl_communicator> nccl_;
#endif
};

}  // namespace nearsparse::detail

#endif
