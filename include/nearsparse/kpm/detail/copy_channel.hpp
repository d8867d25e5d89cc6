#pragma once
// Moving halo rows between the two parts of a split run. Generic form: fence, then copy (what
// two host spaces need, and what keeps every combination correct). CUDA form (for a split whose
// first part runs on Kokkos::Cuda): copies on a stream of their own, ordered after the kernels
// that produced the data by events, so the transfers overlap the kernels that follow (the
// interior rows) instead of waiting behind them. Implemented in src/kpm/cuda_copy_channel.cpp.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstring>

namespace nearsparse::kpm::detail {

#ifdef KOKKOS_ENABLE_CUDA
class cuda_copy_channel {
 public:
  explicit cuda_copy_channel(const Kokkos::Cuda& main);
  ~cuda_copy_channel();
  cuda_copy_channel(const cuda_copy_channel&) = delete;
  cuda_copy_channel& operator=(const cuda_copy_channel&) = delete;
  /// dst <- src once the work queued so far on the main stream is done.
  void copy_after_main(void* dst, const void* src, std::size_t bytes);
  /// dst <- src now (the source is ready: host data written by a finished host kernel).
  void copy_now(void* dst, const void* src, std::size_t bytes);
  /// The main stream's later work waits for the copies; the host waits for them too.
  void finish();

 private:
  void* main_;  // cudaStream_t, kept opaque so this header needs no CUDA headers
  void* copy_;
  void* after_main_;
  void* after_copy_;
};
#endif

/// The channel for a split over (ExecA, ExecB): CUDA's when ExecA is Kokkos::Cuda.
template <class ExecA, class ExecB>
class copy_channel {
 public:
  copy_channel(const ExecA& a, const ExecB& b) : a_(a), b_(b) {}
  void a_to_b(void* dst, const void* src, std::size_t bytes) {
    a_.fence();
    copy(dst, src, bytes);
  }
  void b_to_a(void* dst, const void* src, std::size_t bytes) {
    b_.fence();
    copy(dst, src, bytes);
  }
  void finish() {
    a_.fence();
    b_.fence();
  }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) {
    static_assert(Kokkos::SpaceAccessibility<ExecA, Kokkos::HostSpace>::accessible &&
                      Kokkos::SpaceAccessibility<ExecB, Kokkos::HostSpace>::accessible,
                  "nearsparse::kpm::split_moments: a split pairs a CUDA first part "
                  "with a host part, or two host parts");
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  ExecA a_;
  ExecB b_;
};

#ifdef KOKKOS_ENABLE_CUDA
template <class ExecB>
class copy_channel<Kokkos::Cuda, ExecB> {
 public:
  copy_channel(const Kokkos::Cuda& a, const ExecB& b) : b_(b), cuda_(a) {}
  void a_to_b(void* dst, const void* src, std::size_t bytes) {
    if (bytes > 0) cuda_.copy_after_main(dst, src, bytes);
  }
  void b_to_a(void* dst, const void* src, std::size_t bytes) {
    b_.fence();
    if (bytes > 0) cuda_.copy_now(dst, src, bytes);
  }
  void finish() {
    b_.fence();
    cuda_.finish();
  }

 private:
  ExecB b_;
  cuda_copy_channel cuda_;
};
#endif

}  // namespace nearsparse::kpm::detail
