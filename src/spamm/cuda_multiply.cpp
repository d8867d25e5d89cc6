// The SpAMM multiplication on CUDA: the wgmma kernel where it runs (tf32, fp16 and bf16 with
// tiles of 64 or 128 on compute capability 9.0), the mma.sync and FMA kernels everywhere else.
#include <nearsparse/spamm/detail/multiply.hpp>

#include "cuda_mma_sync.hpp"
#include "cuda_wgmma.hpp"

namespace nearsparse::detail::spamm {
namespace {

template <class CT>
void multiply_any(const Kokkos::Cuda& exec, const multiply_problem& pr, double alpha, double beta,
                  CT* c, std::size_t s0, std::size_t s1, bool hopper) {
  // Both kernels return at once on an empty product.
  if (hopper && wgmma_supports(exec.cuda_device(), pr.precision, pr.geo.tile)) {
    wgmma_multiply(exec.cuda_stream(), exec.cuda_device(), pr, alpha, beta, c, s0, s1);
  } else {
    mma_sync_multiply(exec.cuda_stream(), exec.cuda_device(), pr, alpha, beta, c, s0, s1);
  }
}

}  // namespace

void cuda_multiply(const Kokkos::Cuda& exec, const multiply_problem& p, double alpha, double beta,
                   float* c, std::size_t s0, std::size_t s1, bool hopper) {
  multiply_any(exec, p, alpha, beta, c, s0, s1, hopper);
}

void cuda_multiply(const Kokkos::Cuda& exec, const multiply_problem& p, double alpha, double beta,
                   double* c, std::size_t s0, std::size_t s1, bool hopper) {
  multiply_any(exec, p, alpha, beta, c, s0, s1, hopper);
}

}  // namespace nearsparse::detail::spamm
