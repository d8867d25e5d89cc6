// The SpAMM multiplication on CUDA: the wgmma kernel where it runs and options.wgmma allows it
// (tf32, fp16 and bf16 with tiles of 64 or 128 on compute capability 9.0), the mma.sync and FMA
// kernels everywhere else.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/spamm/detail/multiply.hpp>

#include "cuda_mma_sync.hpp"
#include "cuda_wgmma.hpp"

namespace nearsparse::spamm::detail {
namespace {

template <class CT>
void multiply_any(const Kokkos::Cuda& exec, const options& opt, const multiply_problem& pr,
                  double alpha, double beta, CT* c, std::size_t s0, std::size_t s1) {
  // Both kernels return at once on an empty product.
  if (opt.wgmma && wgmma_supports(exec.cuda_device(), pr.precision, pr.geo.tile)) {
    wgmma_multiply(exec.cuda_stream(), exec.cuda_device(), pr, alpha, beta, c, s0, s1);
  } else {
    mma_sync_multiply(exec.cuda_stream(), exec.cuda_device(), pr, alpha, beta, c, s0, s1);
  }
}

}  // namespace

bool cuda_multiply_taken(const Kokkos::Cuda& exec, const char* function, const options& opt) {
  // The mma.sync and FMA kernels serve every precision and tile.
  return nearsparse::detail::take_specialized(function, opt.implementation, true, exec.name());
}

void cuda_multiply(const Kokkos::Cuda& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, float* c, std::size_t s0, std::size_t s1) {
  multiply_any(exec, opt, p, alpha, beta, c, s0, s1);
}

void cuda_multiply(const Kokkos::Cuda& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1) {
  multiply_any(exec, opt, p, alpha, beta, c, s0, s1);
}

}  // namespace nearsparse::spamm::detail
