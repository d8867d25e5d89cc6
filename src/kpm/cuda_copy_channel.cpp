// The CUDA copy channel of split KPM runs: a non-blocking copy stream and two events.
#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm/detail/copy_channel.hpp>

#include <cuda_runtime.h>

#include <string>

namespace nearsparse::kpm::detail {

namespace {
void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw nearsparse::runtime_error(std::string("nearsparse::kpm split run: ") + call + ": " +
                                    cudaGetErrorString(e));
}
cudaStream_t stream(void* s) {
  return static_cast<cudaStream_t>(s);
}
cudaEvent_t event(void* e) {
  return static_cast<cudaEvent_t>(e);
}
}  // namespace

cuda_copy_channel::cuda_copy_channel(const Kokkos::Cuda& main) : main_(main.cuda_stream()) {
  cudaStream_t c;
  check(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  copy_ = c;
  cudaEvent_t e1, e2;
  check(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming), "cudaEventCreate");
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
  check(cudaEventRecord(event(after_main_), stream(main_)), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream(copy_), event(after_main_), 0), "cudaStreamWaitEvent");
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(copy_)), "cudaMemcpyAsync");
}

void cuda_copy_channel::copy_now(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(copy_)), "cudaMemcpyAsync");
}

void cuda_copy_channel::finish() {
  check(cudaEventRecord(event(after_copy_), stream(copy_)), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream(main_), event(after_copy_), 0), "cudaStreamWaitEvent");
  check(cudaStreamSynchronize(stream(copy_)), "cudaStreamSynchronize");
}

}  // namespace nearsparse::kpm::detail
