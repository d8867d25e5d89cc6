// The CUDA copy channel of split KPM runs: a non-blocking copy stream and two events.
#include "../core/cuda/check.hpp"

#include <nearsparse/kpm/detail/copy_channel.hpp>

#include <cuda_runtime.h>

namespace nearsparse::kpm::detail {

namespace {
constexpr const char* fn = "nearsparse::kpm::split_moments";
using nearsparse::detail::cuda::check;
cudaStream_t stream(void* s) {
  return static_cast<cudaStream_t>(s);
}
cudaEvent_t event(void* e) {
  return static_cast<cudaEvent_t>(e);
}
}  // namespace

cuda_copy_channel::cuda_copy_channel(const Kokkos::Cuda& main) : main_(main.cuda_stream()) {
  cudaStream_t c;
  check(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking), fn, "cudaStreamCreateWithFlags");
  copy_ = c;
  cudaEvent_t e1, e2;
  check(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming), fn, "cudaEventCreate");
  check(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming), fn, "cudaEventCreate");
  after_main_ = e1;
  after_copy_ = e2;
}

cuda_copy_channel::~cuda_copy_channel() {
  cudaStreamSynchronize(stream(copy_));
  cudaEventDestroy(event(after_main_));
  cudaEventDestroy(event(after_copy_));
  cudaStreamDestroy(stream(copy_));
}

void cuda_copy_channel::copy_after_main(void* dst, const void* src, std::size_t bytes) {
  check(cudaEventRecord(event(after_main_), stream(main_)), fn, "cudaEventRecord");
  check(cudaStreamWaitEvent(stream(copy_), event(after_main_), 0), fn, "cudaStreamWaitEvent");
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(copy_)), fn, "cudaMemcpyAsync");
}

void cuda_copy_channel::copy_now(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(copy_)), fn, "cudaMemcpyAsync");
}

void cuda_copy_channel::finish() {
  check(cudaEventRecord(event(after_copy_), stream(copy_)), fn, "cudaEventRecord");
  check(cudaStreamWaitEvent(stream(main_), event(after_copy_), 0), fn, "cudaStreamWaitEvent");
  check(cudaStreamSynchronize(stream(copy_)), fn, "cudaStreamSynchronize");
}

}  // namespace nearsparse::kpm::detail
