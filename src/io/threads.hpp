#pragma once
// The threads that parse and format Matrix Market text: plain std::threads, as many as the
// OpenMP runtime would use (OMP_NUM_THREADS) where the library is built with OpenMP, else the
// hardware's.

#include <exception>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nearsparse::io::detail {

inline int thread_count(int requested) {
  if (requested > 0) return requested;
#ifdef _OPENMP
  const int n = omp_get_max_threads();
#else
  const int n = int(std::thread::hardware_concurrency());
#endif
  return n > 0 ? n : 1;
}

/// Runs f(0) .. f(count - 1), each on its own thread (f(0) on the caller's), and rethrows the
/// first exception one of them threw.
template <class F>
void run_parallel(int count, F&& f) {
  if (count <= 1) {
    if (count == 1) f(0);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  threads.reserve(std::size_t(count - 1));
  for (int t = 1; t < count; ++t)
    threads.emplace_back([&, t] {
      try {
        f(t);
      } catch (...) {
        errors[std::size_t(t)] = std::current_exception();
      }
    });
  try {
    f(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& th : threads) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace nearsparse::io::detail
