// NCCL communicators for the multi-process drivers (see nccl_communicator.hpp).
#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/detail/nccl_communicator.hpp>
#include <nearsparse/core/errors.hpp>

#include "cuda/check.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <string>
#include <vector>

namespace nearsparse::detail {

namespace {

constexpr const char* driver = "nearsparse::detail::nccl_communicator";

void nccl_check(ncclResult_t code, const char* call) {
  if (code != ncclSuccess)
    throw nearsparse::runtime_error(std::string(driver) + ": " + call + " failed (" +
                                    ncclGetErrorString(code) + ")");
}

void cuda_check(cudaError_t code, const char* call) {
  nearsparse::detail::cuda::check(code, driver, call);
}

}  // namespace

std::string nccl_shared_gpu(MPI_Comm comm) {
  // The GPU as the PCI bus id of the current device and the host's name: equal on two processes
  // exactly when they drive the same device.
  constexpr int id_width = 64;
  constexpr int width = id_width + MPI_MAX_PROCESSOR_NAME;
  std::vector<char> mine(std::size_t(width), '\0');
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetPCIBusId(mine.data(), id_width - 1, device), "cudaDeviceGetPCIBusId");
  int length = 0;
  mpi_check(MPI_Get_processor_name(mine.data() + id_width, &length), driver,
            "MPI_Get_processor_name");
  const int size = mpi_size(comm);
  std::vector<char> all(std::size_t(width) * std::size_t(size));
  mpi_check(MPI_Allgather(mine.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm), driver,
            "MPI_Allgather");
  const auto at = [&](int p) { return all.data() + std::size_t(p) * std::size_t(width); };
  for (int p = 0; p < size; ++p)
    for (int q = p + 1; q < size; ++q)
      if (std::equal(at(p), at(p) + width, at(q)))
        return concat("processes ", p, " and ", q, " of the communicator share the GPU at PCI ",
                      at(p), " on ", at(p) + id_width);
  return {};
}

struct nccl_communicator::state {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr;    // reused: the caller's stream reached the broadcast
  std::vector<cudaEvent_t> done;  // one per ticket of the current round, reused
  std::size_t next = 0;           // tickets handed out this round
};

nccl_communicator::nccl_communicator(MPI_Comm comm) : state_(std::make_unique<state>()) {
  ncclUniqueId id;
  if (mpi_rank(comm) == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), driver, "MPI_Bcast");
  nccl_check(ncclCommInitRank(&state_->comm, mpi_size(comm), id, mpi_rank(comm)),
             "ncclCommInitRank");
  // The highest priority: transfers start on multiprocessors that a long product kernel on the
  // caller's stream frees, instead of waiting for the whole kernel to end.
  int least = 0, greatest = 0;
  cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest),
             "cudaDeviceGetStreamPriorityRange");
  cuda_check(cudaStreamCreateWithPriority(&state_->stream, cudaStreamNonBlocking, greatest),
             "cudaStreamCreateWithPriority");
  cuda_check(cudaEventCreateWithFlags(&state_->ready, cudaEventDisableTiming), "cudaEventCreate");
}

nccl_communicator::~nccl_communicator() {
  if (!state_) return;
  cudaStreamSynchronize(state_->stream);
  for (auto e : state_->done) cudaEventDestroy(e);
  cudaEventDestroy(state_->ready);
  cudaStreamDestroy(state_->stream);
  ncclCommDestroy(state_->comm);
}

int nccl_communicator::broadcast(void* data, std::size_t bytes, int root, void* after_stream) {
  auto& s = *state_;
  wait_for(after_stream);
  nccl_check(ncclBroadcast(data, data, bytes, ncclChar, root, s.comm, s.stream), "ncclBroadcast");
  return record_done();
}

int nccl_communicator::exchange(const std::vector<peer_transfer>& transfers, void* after_stream) {
  auto& s = *state_;
  wait_for(after_stream);
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (const auto& t : transfers) {
    if (t.send_bytes > 0)
      nccl_check(ncclSend(t.send, t.send_bytes, ncclChar, t.peer, s.comm, s.stream), "ncclSend");
    if (t.recv_bytes > 0)
      nccl_check(ncclRecv(t.recv, t.recv_bytes, ncclChar, t.peer, s.comm, s.stream), "ncclRecv");
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  return record_done();
}

int nccl_communicator::record_done() {
  auto& s = *state_;
  if (s.next == s.done.size()) {
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    s.done.push_back(event);
  }
  cuda_check(cudaEventRecord(s.done[s.next], s.stream), "cudaEventRecord");
  return static_cast<int>(s.next++);
}

void nccl_communicator::begin_round() {
  state_->next = 0;
}

void nccl_communicator::wait(int ticket, void* stream) {
  cuda_check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                 state_->done.at(std::size_t(ticket)), 0),
             "cudaStreamWaitEvent");
}

void nccl_communicator::wait_for(void* stream) {
  auto& s = *state_;
  cuda_check(cudaEventRecord(s.ready, static_cast<cudaStream_t>(stream)), "cudaEventRecord");
  cuda_check(cudaStreamWaitEvent(s.stream, s.ready, 0), "cudaStreamWaitEvent");
}

}  // namespace nearsparse::detail
