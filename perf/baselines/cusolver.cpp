#include "baselines/cusolver.hpp"

#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"

#include <nearsparse/core/errors.hpp>

#include <string>

namespace nearsparse::perf::cusolver {
namespace {
constexpr const char* fn = "nearsparse::perf::cusolver::syevd";

cusolverDnHandle_t handle(const Kokkos::Cuda& exec) {
  return nearsparse::detail::cuda::cusolver_handle(exec, fn);
}

void check_info(const Kokkos::Cuda& exec, const Kokkos::View<int, Kokkos::CudaSpace>& info) {
  int host = 0;
  exec.fence();
  Kokkos::deep_copy(host, info);
  if (host != 0)
    throw nearsparse::runtime_error(std::string(fn) + ": syevd returned info " +
                                    std::to_string(host) +
                                    (host > 0 ? " (the algorithm did not converge)" : ""));
}
}  // namespace

void syevd(const Kokkos::Cuda& exec, int n, double* a, int lda, double* w) {
  if (n == 0) return;
  int lwork = 0;
  nearsparse::detail::cuda::check(
      cusolverDnDsyevd_bufferSize(handle(exec), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                  a, lda, w, &lwork),
      fn, "cusolverDnDsyevd_bufferSize");
  Kokkos::View<double*, Kokkos::CudaSpace> work(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("syevd_work")), lwork);
  Kokkos::View<int, Kokkos::CudaSpace> info(Kokkos::view_alloc(exec, std::string("syevd_info")));
  nearsparse::detail::cuda::check(
      cusolverDnDsyevd(handle(exec), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, a, lda, w,
                       work.data(), lwork, info.data()),
      fn, "cusolverDnDsyevd");
  check_info(exec, info);
}

void syevd(const Kokkos::Cuda& exec, int n, float* a, int lda, float* w) {
  if (n == 0) return;
  int lwork = 0;
  nearsparse::detail::cuda::check(
      cusolverDnSsyevd_bufferSize(handle(exec), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                  a, lda, w, &lwork),
      fn, "cusolverDnSsyevd_bufferSize");
  Kokkos::View<float*, Kokkos::CudaSpace> work(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("syevd_work")), lwork);
  Kokkos::View<int, Kokkos::CudaSpace> info(Kokkos::view_alloc(exec, std::string("syevd_info")));
  nearsparse::detail::cuda::check(
      cusolverDnSsyevd(handle(exec), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, a, lda, w,
                       work.data(), lwork, info.data()),
      fn, "cusolverDnSsyevd");
  check_info(exec, info);
}

}  // namespace nearsparse::perf::cusolver
