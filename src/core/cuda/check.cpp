#include "check.hpp"

#include <nearsparse/core/errors.hpp>

namespace nearsparse::detail::cuda {
namespace {

[[noreturn]] void fail(const char* function, const char* call, const char* name, const char* text) {
  throw nearsparse::runtime_error(concat(function, ": ", call, " failed: ", name, " (", text, ")"));
}

}  // namespace

void check(cudaError_t status, const char* function, const char* call) {
  if (status == cudaSuccess) return;
  fail(function, call, cudaGetErrorName(status), cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* function, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail(function, call, cublasGetStatusName(status), cublasGetStatusString(status));
}

void check(cusolverStatus_t status, const char* function, const char* call) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  // cuSOLVER has no status-name function.
  const std::string code = concat("cusolverStatus_t ", static_cast<int>(status));
  fail(function, call, code.c_str(), "see cusolverStatus_t in the cuSOLVER documentation");
}

void check(cusparseStatus_t status, const char* function, const char* call) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  fail(function, call, cusparseGetErrorName(status), cusparseGetErrorString(status));
}

void check_allocation(cudaError_t status, const char* function, const char* what,
                      std::size_t bytes) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // an allocation failure is not sticky; leave no error behind
  const std::string call = concat("allocating ", what, " (", bytes, " bytes)");
  fail(function, call.c_str(), cudaGetErrorName(status), cudaGetErrorString(status));
}

void check_launch(const char* function, const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) return;
  const std::string call = concat("the launch of ", kernel);
  fail(function, call.c_str(), cudaGetErrorName(status), cudaGetErrorString(status));
}

}  // namespace nearsparse::detail::cuda
