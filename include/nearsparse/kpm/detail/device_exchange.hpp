#pragma once
// Boundary rows of a distributed KPM run that travel device to device between processes, on the
// device's stream, while the remaining rows are computed. The generic form has no such path
// (open() declines) and the rows travel through the host (distributed.hpp); Kokkos::Cuda in
// builds with NCCL moves them through NCCL (below).

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/nccl_communicator.hpp>
#include <nearsparse/core/gpu_transport.hpp>
#include <nearsparse/kpm/detail/device_part.hpp>
#include <nearsparse/kpm/detail/partition.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace nearsparse::kpm::detail {

template <class ExecSpace, class Scalar>
class device_exchange {
 public:
  /// Sets up the exchange with `peers` when `kind` is gpu_transport::nccl (collective over
  /// `comm`); returns whether the rows travel this way.
  bool open(MPI_Comm, gpu_transport, const device_part<ExecSpace, Scalar>&,
            const local_part<Scalar>&, const std::vector<int>&) {
    return false;
  }
  /// Starts the exchange of the gathered boundary rows into the halo of d.out (rows n_local on);
  /// returns the ticket to finish.
  int start(const device_part<ExecSpace, Scalar>&) { return -1; }
  /// The device's later work waits for the exchange `ticket`.
  void finish(const device_part<ExecSpace, Scalar>&, int) {}
};

#if NEARSPARSE_HAVE_NCCL && defined(KOKKOS_ENABLE_CUDA)
template <class Scalar>
class device_exchange<Kokkos::Cuda, Scalar> {
 public:
  using part = device_part<Kokkos::Cuda, Scalar>;

  bool open(MPI_Comm comm, gpu_transport kind, const part& d, const local_part<Scalar>& p,
            const std::vector<int>& peers) {
    if (kind != gpu_transport::nccl) return false;
    nccl_ = std::make_unique<nearsparse::detail::nccl_communicator>(comm);
    const std::size_t R = std::size_t(d.R);
    for (int q : peers) {
      const auto at = std::size_t(p.recv_offsets[std::size_t(q)]);
      const auto count = std::size_t(p.recv_offsets[std::size_t(q) + 1]) - at;
      const auto out =
          std::size_t(d.send_offsets[std::size_t(q) + 1] - d.send_offsets[std::size_t(q)]);
      transfers_.push_back({q,
                            d.send_buffer.data() + std::size_t(d.send_offsets[std::size_t(q)]) * R,
                            out * R * sizeof(Scalar), nullptr, count * R * sizeof(Scalar)});
      halo_offsets_.push_back(at);
    }
    return true;
  }

  // The exchange writes the halo of `out` while the remaining rows are computed, which read `in`
  // and write only rows below n_local.
  int start(const part& d) {
    for (std::size_t t = 0; t < transfers_.size(); ++t)
      transfers_[t].recv =
          d.out.data() + (std::size_t(d.n_local) + halo_offsets_[t]) * std::size_t(d.R);
    return nccl_->exchange(transfers_, d.exec.cuda_stream());
  }

  void finish(const part& d, int ticket) {
    nccl_->wait(ticket, d.exec.cuda_stream());
    nccl_->begin_round();
  }

 private:
  std::unique_ptr<nearsparse::detail::nccl_communicator> nccl_;
  std::vector<nearsparse::detail::nccl_communicator::peer_transfer> transfers_;
  std::vector<std::size_t> halo_offsets_;  ///< first halo row from each peer
};
#endif

}  // namespace nearsparse::kpm::detail

#endif  // NEARSPARSE_ENABLE_MPI
