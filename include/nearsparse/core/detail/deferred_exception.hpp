#pragma once
// An exception thrown inside a host parallel region, kept and thrown again once the region has
// ended: an exception that leaves an OpenMP region terminates the program. Work items that start
// after the first failure are skipped.
//
//   nearsparse::detail::deferred_exception failure;
//   auto* f = &failure;
//   Kokkos::parallel_for(policy, [=](int i) { f->run([&] { work(i); }); });
//   exec.fence();
//   failure.rethrow();

#include <atomic>
#include <exception>
#include <mutex>

namespace nearsparse::detail {

class deferred_exception {
 public:
  /// Runs f() unless an earlier call failed; keeps the first exception any call throws.
  template <class F>
  void run(F&& f) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  bool failed() const { return failed_.load(std::memory_order_relaxed); }

  /// After the region has ended (fenced): throws the kept exception, if any.
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace nearsparse::detail
