#pragma once
// GEMM-LLL (products into a TLR C): the dispatch between the portable kernels (gemm.hpp, run_lll)
// and the specialized paths, which sum each C tile's products into the dense tile and recompress
// it once with a randomized SVD (the portable kernels recompress after every product). The
// generic templates have no specialized path; the overloads on
//   Kokkos::Cuda (src/tlr/cuda_lll.cpp), where its memory space is CudaSpace: batches of C tiles,
//     the sums formed by cuBLAS batched GEMMs in a packed buffer and recompressed by the batched
//     randomized SVD of src/tlr/cuda_tile_compression.hpp;
//   Kokkos::OpenMP and Kokkos::Serial (src/tlr/host_lll.cpp), where this build has OpenBLAS: one
//     thread per C tile, OpenBLAS GEMMs and a LAPACK randomized SVD.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/tlr/detail/tile_access.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace nearsparse::tlr::detail {

/// The recompression of the specialized paths (host and CUDA), one definition so that both sample
/// alike: samples beyond C's max_rank, power iterations, and the seed of Omega (omega_stream).
inline constexpr int recompression_oversampling = 10;
inline constexpr int recompression_power_iterations = 1;
inline constexpr std::uint64_t recompression_seed = 0x6c6c6c;

/// A GEMM-LLL for the specialized paths: C tiles += alpha A B over `pairs`, recompressed to
/// `trunc`, what was dropped added to the per-tile totals dropped2 (squared) and at_cap.
template <class MemorySpace>
struct lll_job {
  tile_access a, b, c;
  product_pairs<MemorySpace> pairs;
  double alpha = 1, beta = 0;
  truncation trunc;
  std::size_t workspace_bytes = 0;
  double* dropped2 = nullptr;
  int* at_cap = nullptr;
};

/// Whether a product into a TLR C takes the specialized path; the generic template has none
/// (implementation::specialized throws nearsparse::unsupported).
template <class ExecSpace>
bool take_specialized_lll(const ExecSpace&, const char* function, const gemm_options& options) {
  return nearsparse::detail::take_specialized_none<ExecSpace>(
      function, options.implementation,
      "the recompression of a TLR C runs in the portable kernels on this execution space");
}

/// The specialized GEMM-LLL; only called where take_specialized_lll said yes, which the generic
/// template never does.
template <class ExecSpace>
void specialized_lll(const ExecSpace&, const lll_job<typename ExecSpace::memory_space>&) {
  throw nearsparse::runtime_error(
      "nearsparse::tlr::gemm: no specialized recompression on this execution space");
}

#ifdef KOKKOS_ENABLE_CUDA
/// Takes the cuBLAS path where Kokkos::Cuda's memory space is CudaSpace. specialized_lll throws
/// nearsparse::runtime_error (naming nearsparse::tlr::gemm) when CUDA or cuBLAS fails.
bool take_specialized_lll(const Kokkos::Cuda& exec, const char* function,
                          const gemm_options& options);
void specialized_lll(const Kokkos::Cuda& exec, const lll_job<Kokkos::CudaSpace>& job);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
bool take_specialized_lll(const Kokkos::OpenMP& exec, const char* function,
                          const gemm_options& options);
void specialized_lll(const Kokkos::OpenMP& exec, const lll_job<Kokkos::HostSpace>& job);
#endif
#ifdef KOKKOS_ENABLE_SERIAL
bool take_specialized_lll(const Kokkos::Serial& exec, const char* function,
                          const gemm_options& options);
void specialized_lll(const Kokkos::Serial& exec, const lll_job<Kokkos::HostSpace>& job);
#endif

}  // namespace nearsparse::tlr::detail
