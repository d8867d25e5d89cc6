// The cache of device allocations (core/detail/view_cache.hpp). Its policy is the same for every
// memory space, so it is tested here on host memory, where cached_view itself never caches; the
// diagonal-format tests run it on the GPU.

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/device_memory.hpp>

#include <catch2/catch.hpp>

#include <cstddef>

namespace nd = nearsparse::detail;

namespace {
using vector = Kokkos::View<double*, Kokkos::HostSpace>;
using matrix = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>;
}  // namespace

TEST_CASE("the view cache hands out a View again only once nobody holds it", "[core]") {
  auto& cache = nd::view_cache<vector>::instance();
  cache.release();
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

TEST_CASE("the view cache matches every extent and stays under its bound", "[core]") {
  auto& cache = nd::view_cache<matrix>::instance();
  cache.release();
  auto a = cache.get("a", 3, 7);
  const float* a_data = a.data();
  a = matrix();
  auto b = cache.get("b", 7, 3);  // the same size, other extents
  REQUIRE(b.data() != a_data);
  REQUIRE(b.extent(0) == 7);
  REQUIRE(b.extent(1) == 3);
  auto c = cache.get("c", 3, 7);
  REQUIRE(c.data() == a_data);

  // Views over a quarter of the bound are never kept.
  const std::size_t big = nd::view_cache_bytes / sizeof(float) / 4 + 1;
  const std::size_t before = cache.kept_bytes();
  auto huge = cache.get("huge", 1, big);
  REQUIRE(cache.kept_bytes() == before);
  huge = matrix();

  // Filling the cache with Views nobody holds evicts some of them to stay under the bound.
  const std::size_t fifth = nd::view_cache_bytes / sizeof(float) / 5;
  for (int k = 0; k < 6; ++k) {
    auto m = cache.get("m", 1, fifth + std::size_t(k));  // all kept sizes differ
    REQUIRE(cache.kept_bytes() <= nd::view_cache_bytes);
  }
  REQUIRE(cache.kept_bytes() >= 3 * fifth * sizeof(float));
  nearsparse::release_cached_device_memory();  // every cache
  REQUIRE(cache.kept_bytes() == 0);
  REQUIRE(c.extent(0) == 3);
}
