// The cache of device allocations (core/detail/view_cache.hpp). Its policy is the same for every
// memory space, so it is tested here on host memory (view_cache directly, and cached_view, which
// keeps host allocations of at least 1 MiB); the diagonal-format tests run it on the GPU.

#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/core/errors.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

namespace nd = nearsparse::detail;

namespace {
/// Sets the cache bound for one test case and puts the old one back.
struct limit_for_test {
  std::size_t old = nearsparse::device_cache_limit();
  explicit limit_for_test(std::size_t bytes) {
    nearsparse::release_cached_device_memory();
    nearsparse::set_device_cache_limit(bytes);
  }
  ~limit_for_test() {
    nearsparse::release_cached_device_memory();
    nearsparse::set_device_cache_limit(old);
  }
};
constexpr std::size_t test_limit = std::size_t(64) << 20;

using vector = Kokkos::View<double*, Kokkos::HostSpace>;
using matrix = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>;
}  // namespace

TEST_CASE("the view cache hands out a View again only once nobody holds it", "[core]") {
  const limit_for_test bound(test_limit);
  auto& cache = nd::view_cache<vector>::instance();
  auto a = cache.get("a", 1000);
  auto b = cache.get("b", 1000);
  REQUIRE(a.extent(0) == 1000);
  REQUIRE(a.data() != b.data());  // a is still held
  const double* a_data = a.data();
  a = vector();
  auto c = cache.get("c", 1000);
  REQUIRE(c.data() == a_data);   // a's storage, now free
  auto d = cache.get("d", 999);  // other extents: not c's or b's
  REQUIRE(d.extent(0) == 999);
  REQUIRE(d.data() != c.data());
  REQUIRE(d.data() != b.data());
  REQUIRE(cache.kept_bytes() == (2 * 1000 + 999) * sizeof(double));

  // Releasing forgets the kept Views; those still held stay valid.
  c(0) = 3;
  c(999) = 4;
  cache.release();
  REQUIRE(cache.kept_bytes() == 0);
  REQUIRE(c(0) == 3);
  REQUIRE(c(999) == 4);
  auto e = cache.get("e", 1000);
  REQUIRE(e.data() != c.data());
  cache.release();
}

TEST_CASE("a View taken from the cache asks its caller to wait for the device", "[core]") {
  // take() leaves the wait to the caller, so that several Views share one fence: it asks for it
  // only when it hands out a kept View (a fresh allocation has no earlier user).
  const limit_for_test bound(test_limit);
  auto& cache = nd::view_cache<vector>::instance();
  bool wait = false;
  auto a = cache.take(wait, "a", 500);
  REQUIRE_FALSE(wait);
  const double* a_data = a.data();
  a = vector();
  auto b = cache.take(wait, "b", 500);
  REQUIRE(b.data() == a_data);
  REQUIRE(wait);
  cache.release();
}

TEST_CASE("the view cache matches every extent and stays under its bound", "[core]") {
  const limit_for_test bound(test_limit);
  auto& cache = nd::view_cache<matrix>::instance();
  auto a = cache.get("a", 3, 7);
  const float* a_data = a.data();
  a = matrix();
  auto b = cache.get("b", 7, 3);  // the same size, other extents
  REQUIRE(b.data() != a_data);
  REQUIRE(b.extent(0) == 7);
  REQUIRE(b.extent(1) == 3);
  auto c = cache.get("c", 3, 7);
  REQUIRE(c.data() == a_data);

  // Views over half the bound are never kept.
  const std::size_t big = test_limit / sizeof(float) / 2 + 1;
  const std::size_t before = cache.kept_bytes();
  auto huge = cache.get("huge", 1, big);
  REQUIRE(cache.kept_bytes() == before);
  huge = matrix();

  // Filling the cache with Views nobody holds evicts some of them to stay under the bound.
  const std::size_t fifth = test_limit / sizeof(float) / 5;
  for (int k = 0; k < 6; ++k) {
    auto m = cache.get("m", 1, fifth + std::size_t(k));  // all kept sizes differ
    REQUIRE(cache.kept_bytes() <= test_limit);
    REQUIRE(nd::view_cache_registry::instance().total() <= test_limit);
  }
  REQUIRE(cache.kept_bytes() >= 3 * fifth * sizeof(float));
  nearsparse::release_cached_device_memory();  // every cache
  REQUIRE(cache.kept_bytes() == 0);
  REQUIRE(nd::view_cache_registry::instance().total() == 0);
  REQUIRE(c.extent(0) == 3);
}

TEST_CASE("the view caches share one bound", "[core]") {
  const limit_for_test bound(test_limit);
  auto& vectors = nd::view_cache<vector>::instance();
  auto& matrices = nd::view_cache<matrix>::instance();
  // Two Views of 0.4 of the bound each, of different types, held: the third is not kept.
  const std::size_t part = test_limit / 5 * 2;
  auto a = vectors.get("a", part / sizeof(double));
  auto b = matrices.get("b", 1, part / sizeof(float));
  REQUIRE(vectors.kept_bytes() + matrices.kept_bytes() == 2 * part);
  auto c = vectors.get("c", part / sizeof(double) + 1);
  REQUIRE(vectors.kept_bytes() == part);  // a held, so nothing could be evicted
  // Once a is free, a new View evicts it to fit under the bound.
  a = vector();
  auto d = vectors.get("d", part / sizeof(double) + 2);
  REQUIRE(vectors.kept_bytes() == (part / sizeof(double) + 2) * sizeof(double));
  REQUIRE(nd::view_cache_registry::instance().total() <= test_limit);
  // A bound of 0 keeps nothing.
  nearsparse::set_device_cache_limit(0);
  auto e = vectors.get("e", 10);
  REQUIRE(vectors.kept_bytes() == (part / sizeof(double) + 2) * sizeof(double));
}

TEST_CASE("cached_view keeps host allocations of at least 1 MiB and no smaller ones",
          "[core][view_cache]") {
  limit_for_test guard(test_limit);
  const std::size_t big = (std::size_t(1) << 20) / sizeof(double);  // exactly 1 MiB
  const double* first = nullptr;
  {
    auto v = nd::cached_view<vector>("big", big);
    first = v.data();
    REQUIRE(v.extent(0) == big);
  }
  {
    auto again = nd::cached_view<vector>("big", big);
    CHECK(again.data() == first);  // the kept allocation, nobody else holds it
    auto second = nd::cached_view<vector>("big", big);
    CHECK(second.data() != again.data());  // taken while the first is referenced
  }
  const std::size_t kept = nd::view_cache<vector>::instance().kept_bytes();
  CHECK(kept == 2 * big * sizeof(double));
  {
    auto small = nd::cached_view<vector>("small", big - 1);
    CHECK(small.extent(0) == big - 1);
  }
  CHECK(nd::view_cache<vector>::instance().kept_bytes() == kept);  // not kept
  nearsparse::release_cached_device_memory();
  CHECK(nd::view_cache<vector>::instance().kept_bytes() == 0);
}

TEST_CASE("an allocation that does not fit throws a runtime_error naming it, and the next works",
          "[core][errors]") {
  using Catch::Matchers::Contains;
  const limit_for_test bound(test_limit);
  const std::size_t huge = std::size_t(1) << 57;  // 2^60 bytes of double
  // Through the cache (held and reusable Views are kept: the failure frees and retries first).
  auto kept = nd::cached_view<vector>("kept", std::size_t(1) << 18);
  kept = vector();
  REQUIRE(nd::view_cache<vector>::instance().kept_bytes() > 0);
  CHECK_THROWS_AS(nd::cached_view<vector>("nearsparse::test::huge", huge),
                  nearsparse::runtime_error);
  CHECK_THROWS_WITH(nd::cached_view<vector>("nearsparse::test::huge", huge),
                    Contains("'nearsparse::test::huge'") && Contains("1152921504606846976 bytes"));
  // And a direct allocation.
  CHECK_THROWS_WITH(nd::allocate_view<matrix>("nearsparse::test::huge_matrix", huge, 2),
                    Contains("'nearsparse::test::huge_matrix'") && Contains("bytes in"));
  // The process goes on: allocations of ordinary sizes work and hold their values.
  auto after = nd::cached_view<vector>("after", std::size_t(1) << 18);
  after(0) = 1;
  after(after.extent(0) - 1) = 2;
  CHECK(after(0) + after(after.extent(0) - 1) == 3);
  auto small = nd::allocate_view<matrix>("small", 3, 4);
  CHECK(small.extent(0) == 3);
}

TEST_CASE("an unreferenced View of one type makes room for a View of another",
          "[core][view_cache]") {
  // Alternating products of different types: what one type left must not keep the other's
  // Views out of the cache.
  const limit_for_test bound(test_limit);
  auto& vectors = nd::view_cache<vector>::instance();
  auto& matrices = nd::view_cache<matrix>::instance();
  const std::size_t part = test_limit / 5 * 2 / sizeof(double);  // 0.4 of the bound
  {
    auto a = vectors.get("a", part);
    auto b = vectors.get("b", part + 1);
  }
  REQUIRE(vectors.kept_bytes() == (2 * part + 1) * sizeof(double));
  const std::size_t cols = test_limit / 10 * 3 / sizeof(float) / 4;  // 0.3 of the bound
  const float* m_data = nullptr;
  {
    auto m = matrices.get("m", 4, cols);
    REQUIRE(m.use_count() == 2);  // the cache keeps it
    m_data = m.data();
  }
  REQUIRE(matrices.kept_bytes() == 4 * cols * sizeof(float));
  REQUIRE(nd::view_cache_registry::instance().total() <= test_limit);
  // a, the least recently used, made the room; b stays.
  REQUIRE(vectors.kept_bytes() == (part + 1) * sizeof(double));
  auto again = matrices.get("m", 4, cols);
  CHECK(again.data() == m_data);
}

TEST_CASE("eviction across types frees the least recently used Views and never a held one",
          "[core][view_cache]") {
  const limit_for_test bound(test_limit);
  auto& vectors = nd::view_cache<vector>::instance();
  auto& matrices = nd::view_cache<matrix>::instance();
  const std::size_t third = test_limit / 10 * 3 / sizeof(double);  // 0.3 of the bound
  const double *x_data = nullptr, *z_data = nullptr;
  {
    auto x = vectors.get("x", third);
    auto y = vectors.get("y", third + 1);
    auto z = vectors.get("z", third + 2);
    x_data = x.data();
    z_data = z.data();
  }
  { auto x = vectors.get("x", third); }                     // x used again: y is now the oldest
  const std::size_t cols = test_limit / 5 / sizeof(float);  // 0.2 of the bound
  {
    auto m = matrices.get("m", 1, cols);
    REQUIRE(m.use_count() == 2);
  }
  REQUIRE(vectors.kept_bytes() == (2 * third + 2) * sizeof(double));  // only y went
  {
    auto x = vectors.get("x", third);
    auto z = vectors.get("z", third + 2);
    CHECK(x.data() == x_data);
    CHECK(z.data() == z_data);
  }

  // A held View stays kept and is not handed out again, however old: with x held and z and w
  // free, a matrix that needs room takes z's, and a request for x's extents gets other storage.
  nearsparse::release_cached_device_memory();
  auto x = vectors.get("x", third);
  { auto z = vectors.get("z", third + 2); }
  { auto w = vectors.get("w", third + 3); }
  x(0) = 5;
  x(third - 1) = 6;
  {
    auto m = matrices.get("m", 2, cols / 2);
    REQUIRE(m.use_count() == 2);
  }
  REQUIRE(vectors.kept_bytes() == (2 * third + 3) * sizeof(double));  // x and w
  REQUIRE(x.use_count() == 2);
  CHECK(x(0) == 5);
  CHECK(x(third - 1) == 6);
  auto other = vectors.get("x", third);
  CHECK(other.data() != x.data());
  const double* held = x.data();
  x = vector();
  auto back = vectors.get("x", third);
  CHECK(back.data() == held);
}

TEST_CASE("caches of two types evicting each other on two threads hand each View to one thread",
          "[core][view_cache][threads]") {
  // A bound of four Views: each new View of one thread evicts the other thread's free ones.
  const std::size_t n = std::size_t(1) << 15;
  const limit_for_test bound(4 * n * sizeof(double) + 64);
  auto work = [&](auto view_type, double mark, int& broken) {
    using view = decltype(view_type);
    auto& cache = nd::view_cache<view>::instance();
    for (int round = 0; round < 100; ++round) {
      std::vector<view> held;
      for (std::size_t k = 0; k < 2; ++k) {
        held.push_back(cache.get("thread", n + std::size_t(round % 3) + k));
        for (std::size_t i = 0; i < held.back().extent(0); ++i) held.back()(i) = mark;
      }
      std::this_thread::yield();
      for (const auto& v : held)
        for (std::size_t i = 0; i < v.extent(0); ++i) broken += v(i) != mark ? 1 : 0;
      if (nd::view_cache_registry::instance().total() > 4 * n * sizeof(double) + 64) ++broken;
    }
  };
  using other_vector = Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  int broken_first = 0, broken_second = 0;
  std::thread other([&] { work(other_vector(), 2.0, broken_second); });
  work(vector(), 1.0, broken_first);
  other.join();
  CHECK(broken_first == 0);
  CHECK(broken_second == 0);
}

TEST_CASE("without a CUDA device the default bound is a sixteenth of physical memory",
          "[core][view_cache]") {
  const std::size_t floor = std::size_t(256) << 20;
  const std::size_t bound = nearsparse::default_device_cache_limit();
  CHECK(bound >= floor);
  if (!nearsparse::cuda_devices().empty()) return;
  std::size_t physical = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) physical = std::size_t(pages) * std::size_t(page);
#endif
  CHECK(bound == std::max(floor, physical / 16));
  // The C of the structured host product at n = 7000 (140 MB) is kept where memory allows.
  const std::size_t c_bytes = std::size_t(140) << 20;
  if (bound / 2 < c_bytes) return;
  const limit_for_test defaults(bound);
  const double* first = nullptr;
  {
    auto c = nd::cached_view<vector>("c", c_bytes / sizeof(double));
    first = c.data();
  }
  auto again = nd::cached_view<vector>("c", c_bytes / sizeof(double));
  CHECK(again.data() == first);
  CHECK(again.use_count() == 2);
}
