#pragma once
// One process's part of an exchange between pairs of processes (broadcast_channel.hpp,
// nccl_communicator.hpp).

#include <cstddef>

namespace nearsparse::detail {

/// `send_bytes` at `send` go to process `peer` of the communicator, and `recv_bytes` from it land
/// at `recv` (either size may be 0).
struct peer_transfer {
  int peer = 0;
  const void* send = nullptr;
  std::size_t send_bytes = 0;
  void* recv = nullptr;
  std::size_t recv_bytes = 0;
};

}  // namespace nearsparse::detail
