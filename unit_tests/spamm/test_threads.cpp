// Plans used from two threads at once: each thread builds its own plan, multiplies, searches
// a tau and refreshes its operands, and must get what the same calls give one after the other.
// Shared state of the library is exercised on the way: the allocation caches, the host BLAS and,
// on CUDA, the library handles and per-stream buffers (two threads, two streams).
//
// On the host, Kokkos 3.4 launches OpenMP work (and initializes host Views) only from the thread
// that initialized Kokkos, and its Serial backend keeps one team scratch for the whole process, so
// two plans cannot run on two host threads at once there: the host test checks the shared state
// the plans would use (the allocation cache) from two threads instead.

#include "spamm_inputs.hpp"
#include "support/host_reference.hpp"
#include "support/seeds.hpp"

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/spamm.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace spamm = nearsparse::spamm;
using nearsparse::test::spamm::decaying_random;

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>

namespace {

/// What one thread's plan computed.
struct plan_result {
  std::vector<double> c;
  long long kept = 0;
  double tau = 0;
  std::string error;  // an exception's message, reported by the main thread
};

/// A plan's life on `exec`: build (tau search), multiply, a new tau, new operands, multiply.
template <class Exec>
plan_result run_plan(const Exec& exec, std::uint64_t seed, std::size_t n) {
  plan_result r;
  try {
    const auto a = decaying_random(exec, n, n, seed);
    const auto b = decaying_random(exec, n, n, seed + 1);
    spamm::options opt;
    opt.precision = spamm::precision::fp64;
    opt.tile = 32;
    opt.target_valid_ratio = 0.4;
    spamm::plan<Exec> plan(exec, a, b, opt);
    nearsparse::test::spamm::matrix<Exec> c("C", n, n);
    for (int round = 0; round < 3; ++round) {
      plan.multiply(exec, 1.0, 0.0, c);
      plan.search_tau(exec, 0.2 + 0.1 * round);
      plan.update(exec, b, a);
      plan.multiply(exec, 1.0, 1.0, c);
    }
    exec.fence();
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    r.c.assign(h.data(), h.data() + h.size());
    r.kept = static_cast<long long>(plan.kept_count());
    r.tau = plan.tau();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

void require_same(const plan_result& threaded, const plan_result& alone) {
  INFO("threaded: " << threaded.error << "; alone: " << alone.error);
  REQUIRE(threaded.error.empty());
  REQUIRE(alone.error.empty());
  CHECK(threaded.kept == alone.kept);
  CHECK(threaded.tau == alone.tau);
  REQUIRE(threaded.c.size() == alone.c.size());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < alone.c.size(); ++i) {
    worst = std::max(worst, std::abs(threaded.c[i] - alone.c[i]));
    scale = std::max(scale, std::abs(alone.c[i]));
  }
  CHECK(worst <= 1e-12 * scale);
}

}  // namespace
#endif

TEST_CASE("the allocation cache hands a View to one host thread at a time", "[spamm][threads]") {
  // What plans on two host threads share in the library: the caches their storage comes from.
  // Each thread takes Views of the sizes a plan takes, fills them with its mark, and finds the
  // mark intact before it lets them go; sometimes everything kept is released meanwhile.
  using vector = Kokkos::View<double*, Kokkos::HostSpace>;
  const std::size_t sizes[] = {std::size_t(1) << 17, std::size_t(1) << 18, 1000};
  auto work = [&](double mark, int& broken) {
    for (int round = 0; round < 300; ++round) {
      std::vector<vector> held;
      for (const std::size_t n : sizes) {
        held.push_back(nearsparse::detail::cached_view<vector>("thread", n));
        for (std::size_t i = 0; i < n; ++i) held.back()(i) = mark;
      }
      std::this_thread::yield();
      for (const auto& v : held)
        for (std::size_t i = 0; i < v.extent(0); ++i) broken += v(i) != mark ? 1 : 0;
      if (round % 50 == 49) nearsparse::release_cached_device_memory();
    }
  };
  int broken_first = 0, broken_second = 0;
  std::thread other([&] { work(2.0, broken_second); });
  work(1.0, broken_first);
  other.join();
  CHECK(broken_first == 0);
  CHECK(broken_second == 0);
}

#ifdef KOKKOS_ENABLE_CUDA
TEST_CASE("two SpAMM plans on two threads and two CUDA streams at once equal them one by one",
          "[spamm][threads][Cuda]") {
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  // 300: ten tiles of 32 and a partial one, small enough for compute-sanitizer's racecheck.
  const std::size_t n = 300;
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (auto& s : streams) REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  {
    const Kokkos::Cuda first(streams[0]), second(streams[1]);
    const plan_result alone_first = run_plan(first, seed, n);
    const plan_result alone_second = run_plan(second, seed + 10, n);
    for (int repeat = 0; repeat < 3; ++repeat) {
      plan_result threaded_first, threaded_second;
      std::thread one([&] { threaded_first = run_plan(first, seed, n); });
      std::thread two([&] { threaded_second = run_plan(second, seed + 10, n); });
      one.join();
      two.join();
      require_same(threaded_first, alone_first);
      require_same(threaded_second, alone_second);
    }
  }
  for (auto& s : streams) cudaStreamDestroy(s);
}
#endif
