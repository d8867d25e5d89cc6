#pragma once
// An NCCL communicator over the processes of an MPI communicator, for the multi-process drivers
// on CUDA (built when the library finds NCCL: NEARSPARSE_HAVE_NCCL). GPU buffers then move
// device to device, over NVLink where the GPUs have it, instead of through host memory.
//
// Broadcasts run on a stream of the communicator's own, so they overlap the computation on the
// caller's stream; events order the two (see broadcast and wait).

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI && NEARSPARSE_HAVE_NCCL

#include <nearsparse/core/detail/peer_transfer.hpp>

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace nearsparse::detail {

class nccl_communicator {
 public:
  /// Collective over `comm`: every process of it creates its communicator together.
  explicit nccl_communicator(MPI_Comm comm);
  ~nccl_communicator();
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  /// Broadcasts `bytes` at device address `data` from process `root` of the communicator. It
  /// starts once the work queued so far on `after_stream` (a cudaStream_t) is done, so the root
  /// may still be packing the data there; returns a ticket for wait().
  int broadcast(void* data, std::size_t bytes, int root, void* after_stream);

  /// Starts handing out tickets from 0 again, reusing their events: call it once the waits on
  /// the previous round's tickets have all been queued.
  void begin_round();

  /// One process's part of a neighbour exchange (device addresses).
  using peer_transfer = nearsparse::detail::peer_transfer;

  /// Every transfer at once (one NCCL group), once the work queued so far on `after_stream` is
  /// done; returns a ticket for wait(). Collective over the peers named.
  int exchange(const std::vector<peer_transfer>& transfers, void* after_stream);

  /// Makes the work queued next on `stream` wait for the broadcast or exchange `ticket`.
  void wait(int ticket, void* stream);

  /// Makes the broadcasts started next wait for the work queued so far on `stream` (a buffer
  /// about to be overwritten is still being read there).
  void wait_for(void* stream);

 private:
  int record_done();  // an event after the work queued on the stream so far; its ticket
  struct state;
  std::unique_ptr<state> state_;
};

/// Empty when every process of `comm` drives a GPU of its own; else which two processes share
/// one (NCCL refuses a communicator where they do). Collective over `comm`.
std::string nccl_shared_gpu(MPI_Comm comm);

}  // namespace nearsparse::detail

#endif
