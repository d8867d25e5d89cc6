#pragma once
// cp.async, the asynchronous copy from global to shared memory of compute capability 8.0 on, as
// the multi-stage pipelines use it: the SpAMM mma.sync kernel (src/spamm/cuda_mma_sync.cpp)
// copies 16-byte words, the diagonal band tiles (src/diagonal/cuda_hm_band_tiles.cpp) single
// values with zero fill. A thread commits its copies in groups and waits on the groups. CUDA only.

namespace nearsparse::detail {

/// 16 bytes, both addresses 16-byte aligned (compute capability 8.0 on only).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

/// One value into shared memory, or a zero where `src` is null, without passing through
/// registers: cp.async zero-fills when told to read 0 bytes (it then reads nothing; `valid` is
/// any address of the operand). Older GPUs copy in place.
template <class Scalar>
__device__ __forceinline__ void cp_async_or_zero(Scalar* dst, const Scalar* src,
                                                 const Scalar* valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int bytes = src != nullptr ? int(sizeof(Scalar)) : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to),
               "l"(src != nullptr ? src : valid), "n"(int(sizeof(Scalar))), "r"(bytes)
               : "memory");
#else
  *dst = src != nullptr ? __ldg(src) : Scalar(0);
#endif
}

/// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most `pending` of this thread's committed groups are outstanding.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

}  // namespace nearsparse::detail
