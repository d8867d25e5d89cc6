// Chebyshev moments: every algorithm and storage against the dense recurrence, the three
// algorithms against each other to rounding, the exact trace against eigenvalues, bounds that
// hold the spectrum, and bad inputs.

#include "kpm_reference.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <complex>
#include <map>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

namespace nk = nearsparse::kpm;
namespace ref = nearsparse::test::kpm;
using Catch::Matchers::Contains;

namespace {

void require_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t n = 0; n < got.size(); ++n) {
    INFO("moment " << n << ": " << got[n] << " against " << want[n]);
    REQUIRE(std::abs(got[n] - want[n]) <= tol);
  }
}

template <class Exec, class Matrix>
nk::chebyshev_moments run(const Exec& exec, const Matrix& h, nk::scaling s, int M, int R,
                          std::uint64_t seed, nk::algorithm a) {
  nk::moments_options o;
  o.num_moments = M;
  o.num_vectors = R;
  o.seed = seed;
  o.method = a;
  return nk::moments(exec, h, s, o);
}

/// The automatic kernel (CUDA's own on Kokkos::Cuda, the host kernel on OpenMP and Serial) on a CRS
/// matrix and on its SELL form, and
/// the portable kernel on the CRS matrix, with the same options.
struct kernel_runs {
  nk::chebyshev_moments crs, sell, portable;
};

template <class Exec, class Crs, class Sell>
kernel_runs run_kernels(const Exec& exec, const Crs& h, const Sell& sell, nk::scaling s, int M,
                        int R, std::uint64_t seed) {
  nk::moments_options o;
  o.num_moments = M;
  o.num_vectors = R;
  o.seed = seed;
  kernel_runs runs{nk::moments(exec, h, s, o), nk::moments(exec, sell, s, o), {}};
  o.implementation = nearsparse::implementation::portable;
  runs.portable = nk::moments(exec, h, s, o);
  return runs;
}

/// Options of a short run: M = 20 moments over R start vectors of `seed`, by `choice`.
nk::moments_options short_run(int R, std::uint64_t seed, nearsparse::implementation choice) {
  nk::moments_options o;
  o.num_moments = 20;
  o.num_vectors = R;
  o.seed = seed;
  o.implementation = choice;
  return o;
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("KPM moments equal the dense recurrence for every algorithm and format",
                           "[kpm]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto p = ref::insulator(3, 2, 3, seed);  // 72 rows: not a multiple of 32
  const auto h = nk::make_topological_insulator(exec, p);
  const auto d = ref::dense_of(h);
  // Hermitian by construction.
  for (int i = 0; i < d.n; ++i)
    for (int j = 0; j < d.n; ++j) REQUIRE(d(i, j) == std::conj(d(j, i)));
  const auto s = nk::scaling_for(nk::gershgorin_bounds(exec, h), 0.02);
  for (int R : {1, 5, 33}) {
    const int M = 41;  // odd: the last step's second moment is dropped
    const auto v0 = ref::start_block<nk::complex_double>(d.n, R, seed);
    const auto want = ref::reference_moments(d, v0, R, M, s.a, s.b);
    REQUIRE(want[0] == Approx(1.0));
    for (auto a : {nk::algorithm::naive, nk::algorithm::aug_spmv, nk::algorithm::aug_spmmv}) {
      INFO("R = " << R << ", " << nk::to_string(a));
      const auto m = run(exec, h, s, M, R, seed, a);
      REQUIRE(m.mu.size() == std::size_t(M));
      REQUIRE(m.steps == 21);
      require_close(m.mu, want, 1e-11);
      for (auto [C, sigma] : {std::pair{32, 1}, {4, 16}}) {
        INFO("SELL-" << C << "-" << sigma);
        const auto sell = nk::make_sell(exec, h, {C, sigma});
        require_close(run(exec, sell, s, M, R, seed, a).mu, want, 1e-11);
      }
    }
  }
}

NEARSPARSE_SPACE_TEST_CASE("the three algorithms give the same moments to rounding", "[kpm]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto p = ref::insulator(7, 5, 4, seed);
  const auto h = nk::make_topological_insulator(exec, p);  // 560 rows
  const auto s = nk::scaling_for(nk::lanczos_bounds(exec, h), 0.02);
  // Gershgorin from host row blocks combines to the device result.
  const auto g = nk::gershgorin_bounds(exec, h);
  const auto g1 = nk::gershgorin_bounds_of_rows(nk::assemble_rows(p, 0, 200), 0);
  const auto g2 = nk::gershgorin_bounds_of_rows(nk::assemble_rows(p, 200, p.rows()), 200);
  REQUIRE(std::min(g1.lower, g2.lower) == Approx(g.lower).epsilon(1e-14));
  REQUIRE(std::max(g1.upper, g2.upper) == Approx(g.upper).epsilon(1e-14));
  const auto naive = run(exec, h, s, 200, 6, seed, nk::algorithm::naive);
  const auto aug = run(exec, h, s, 200, 6, seed, nk::algorithm::aug_spmv);
  const auto blocked = run(exec, h, s, 200, 6, seed, nk::algorithm::aug_spmmv);
  require_close(aug.mu, naive.mu, 1e-12);
  require_close(blocked.mu, naive.mu, 1e-12);
  require_close(blocked.mu_per_vector, aug.mu_per_vector, 1e-12);
  // Real matrices take +-1 start vectors.
  auto c = ref::lattice(9, 4, 5);
  const auto hc = nk::make_cubic_lattice<double>(exec, c);
  const auto sc = nk::scaling_for({-6, 6}, 0.01);
  require_close(run(exec, hc, sc, 64, 3, seed, nk::algorithm::aug_spmmv).mu,
                run(exec, hc, sc, 64, 3, seed, nk::algorithm::naive).mu, 1e-12);
}

NEARSPARSE_SPACE_TEST_CASE("unit start vectors give the exact trace of the cubic lattice",
                           "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  auto c = ref::lattice(5, 3, 4, /*periodic_z=*/false);
  c.t = 0.7;
  const int n = int(c.rows());
  for (bool complex_scalar : {false, true}) {
    INFO((complex_scalar ? "complex" : "double"));
    const auto s = nk::scaling_for({-6 * c.t, 6 * c.t}, 0.05);
    const auto want = ref::exact_moments(nk::cubic_lattice_eigenvalues(c), 80, s.a, s.b);
    nk::moments_options o;
    o.num_moments = 80;
    auto check = [&](auto scalar_tag) {
      using scalar = decltype(scalar_tag);
      const auto h = nk::make_cubic_lattice<scalar>(exec, c);
      Kokkos::View<scalar**, Kokkos::LayoutRight, mem> eye("I", n, n);
      auto he = Kokkos::create_mirror_view(eye);
      for (int i = 0; i < n; ++i) he(i, i) = scalar(1);
      Kokkos::deep_copy(eye, he);
      require_close(nk::moments(exec, h, s, o, eye).mu, want, 1e-11);
    };
    if (complex_scalar)
      check(nk::complex_double{});
    else
      check(double{});
  }
}

#ifdef NEARSPARSE_TEST_HAVE_LAPACK
NEARSPARSE_SPACE_TEST_CASE("insulator moments and bounds agree with LAPACK eigenvalues", "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  const auto h = nk::make_topological_insulator(exec, ref::insulator(4, 3, 3, seed));  // 144 rows
  const auto d = ref::dense_of(h);
  const auto eig = ref::eigenvalues(d);
  REQUIRE(eig.size() == std::size_t(d.n));
  const auto g = nk::gershgorin_bounds(exec, h);
  REQUIRE(g.lower <= eig.front());
  REQUIRE(g.upper >= eig.back());
  const auto l = nk::lanczos_bounds(exec, h, {60});
  const double width = eig.back() - eig.front();
  REQUIRE(l.lower <= eig.front() + 1e-3 * width);
  REQUIRE(l.upper >= eig.back() - 1e-3 * width);
  REQUIRE(l.lower >= g.lower);
  REQUIRE(l.upper <= g.upper);
  // Exact trace through unit vectors, against the eigenvalues.
  const auto s = nk::scaling_for(g, 0.01);
  Kokkos::View<nk::complex_double**, Kokkos::LayoutRight, mem> eye("I", d.n, d.n);
  auto he = Kokkos::create_mirror_view(eye);
  for (int i = 0; i < d.n; ++i) he(i, i) = 1;
  Kokkos::deep_copy(eye, he);
  nk::moments_options o;
  o.num_moments = 120;
  const auto m = nk::moments(exec, h, s, o, eye);
  require_close(m.mu, ref::exact_moments(eig, 120, s.a, s.b), 1e-11);
  // The density of states counts the eigenvalues within the Jackson kernel's resolution: the
  // states below E lie between the eigenvalues below E -+ three kernel widths.
  nk::dos_options dos_opt;
  dos_opt.points = 2048;
  const auto dos = nk::density_of_states(m, dos_opt);
  REQUIRE(dos.integral() == Approx(double(d.n)).epsilon(1e-10));
  const double resolution = 3 * 3.14159265 / 120 / s.a;
  const auto count = [&](double x) {
    return double(std::lower_bound(eig.begin(), eig.end(), x) - eig.begin());
  };
  double below = 0;
  for (std::size_t k = 0; k < dos.energies.size(); ++k) {
    below += dos.weights[k] * dos.density[k];
    const double e = dos.energies[k];
    INFO("E = " << e << ": " << below << " states below, eigenvalues below " << count(e));
    REQUIRE(below >= count(e - resolution) - 0.5);
    REQUIRE(below <= count(e + resolution) + 0.5);
  }
}
#endif

NEARSPARSE_SPACE_TEST_CASE("empty and 1 x 1 matrices", "[kpm]") {
  const TestType exec;
  using crs = nk::crs_matrix<double, TestType>;
  nk::moments_options o;
  o.num_moments = 6;
  o.num_vectors = 2;
  for (auto a : {nk::algorithm::naive, nk::algorithm::aug_spmv, nk::algorithm::aug_spmmv}) {
    o.method = a;
    const auto m = nk::moments(exec, crs(), nk::scaling{1, 0}, o);
    REQUIRE(m.mu == std::vector<double>(6, 0.0));
    nk::cubic_lattice one;
    one.nx = one.ny = one.nz = 1;  // the 1 x 1 zero matrix: mu_n = T_n(0)
    const auto h1 = nk::make_cubic_lattice<double>(exec, one);
    const auto s1 = nk::scaling_for(nk::gershgorin_bounds(exec, h1));
    require_close(nk::moments(exec, h1, s1, o).mu, {1, 0, -1, 0, 1, 0}, 1e-15);
  }
}

NEARSPARSE_SPACE_TEST_CASE("bad KPM inputs get clear errors", "[kpm]") {
  const TestType exec;
  auto c = ref::lattice(6, 5, 3);
  const auto h = nk::make_cubic_lattice<double>(exec, c);
  nk::moments_options o;
  o.num_moments = 200;
  o.num_vectors = 0;
  const auto good = nk::scaling_for(nk::gershgorin_bounds(exec, h));
  REQUIRE_THROWS_WITH(nk::moments(exec, h, good, o),
                      Contains("num_vectors") && Contains("90 x 90"));
  o.num_vectors = 2;
  o.num_moments = 1;
  REQUIRE_THROWS_WITH(nk::moments(exec, h, good, o), Contains("num_moments"));
  o.num_moments = 200;
  REQUIRE_THROWS_WITH(nk::moments(exec, h, nk::scaling{-1, 0}, o), Contains("'scaling'"));
  // Unscaled: the spectrum [-6, 6] left as it is.
  for (auto a : {nk::algorithm::naive, nk::algorithm::aug_spmmv}) {
    o.method = a;
    REQUIRE_THROWS_WITH(nk::moments(exec, h, nk::scaling{1, 0}, o),
                        Contains("does not map the spectrum"));
    // A scaling 1 % too tight is caught as well.
    const auto tight = nk::scaling_for({-6 * 0.99, 6 * 0.99}, 0);
    REQUIRE_THROWS_WITH(nk::moments(exec, h, tight, o), Contains("does not map the spectrum"));
  }
  REQUIRE_THROWS_WITH(nk::scaling_for({1, -1}), Contains("bounds"));
  REQUIRE_THROWS_WITH(nk::lanczos_bounds(exec, h, {0}), Contains("steps"));
  nk::topological_insulator bad;
  bad.nz = 0;
  REQUIRE_THROWS_WITH(nk::make_topological_insulator(exec, bad), Contains("nz"));
  REQUIRE_THROWS_WITH(nk::parse_algorithm("fast"), Contains("fast"));
}

NEARSPARSE_SPACE_TEST_CASE("the CUDA and portable kernels give the same moments", "[kpm]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed << " on " << TestType::name());
  const auto h = nk::make_topological_insulator(exec, ref::insulator(4, 3, 5, seed));  // 240 rows
  const auto sell = nk::make_sell(exec, h, {32, 64});
  const auto s = nk::scaling_for(nk::gershgorin_bounds(exec, h), 0.01);
  // Every lane-group width and column-per-lane count of the CUDA kernel, widths that fill every
  // lane (compiled for that R) and widths that do not, and R past the kernel's limit.
  for (int R : {1, 2, 3, 4, 8, 16, 17, 32, 40, 64, 100, 128, 129}) {
    INFO("R = " << R);
    const auto [fast, fast_sell, portable] = run_kernels(exec, h, sell, s, 30, R, seed);
    require_close(fast.mu, portable.mu, 1e-12);
    require_close(fast.mu_per_vector, portable.mu_per_vector, 1e-12);
    require_close(fast_sell.mu, portable.mu, 1e-12);
    nk::moments_options o;
    o.num_moments = 30;
    o.num_vectors = R;
    o.seed = seed;
    o.method = nk::algorithm::aug_spmv;
    if (R <= 8) require_close(nk::moments(exec, sell, s, o).mu, portable.mu, 1e-12);
  }
  // Rows walked in chunks that divide the stencil period (4 nz = 80 rows: 5 windows of 16 rows
  // at R = 32, 10 of 8 at R = 64), with more chunks than the grid has blocks, so that blocks go on
  // to later chunks. Such chunks are handed out through counters that each launch resets; 150
  // moments are 75 launches, more than there are counter slots, so slots are used again. Only the
  // CUDA kernel takes chunks; elsewhere both runs are portable.
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<TestType, Kokkos::Cuda>) {
    const auto big = nk::make_topological_insulator(exec, ref::insulator(37, 31, 20, seed));
    REQUIRE(nk::detail::stencil_period_of(nk::detail::rows_of(big)) == 80);
    const auto sb = nk::scaling_for(nk::gershgorin_bounds(exec, big), 0.01);
    const std::pair<int, int> runs[] = {{1, 8}, {17, 8}, {32, 8}, {64, 8}, {32, 150}};
    for (const auto& [R, M] : runs) {
      INFO("chunked, R = " << R << ", M = " << M);
      nk::moments_options o;
      o.num_moments = M;
      o.num_vectors = R;
      o.seed = seed;
      const auto fast = nk::moments(exec, big, sb, o);
      o.implementation = nearsparse::implementation::portable;
      require_close(fast.mu_per_vector, nk::moments(exec, big, sb, o).mu_per_vector, 1e-12);
    }
  }
#endif
  // A real matrix through both.
  auto c = ref::lattice(7, 6, 5);
  const auto hc = nk::make_cubic_lattice<double>(exec, c);
  const auto sc = nk::scaling_for({-6, 6}, 0.01);
  for (int R : {9, 16}) {
    INFO("real, R = " << R);
    nk::moments_options o;
    o.num_moments = 40;
    o.num_vectors = R;
    const auto fast = nk::moments(exec, hc, sc, o);
    o.implementation = nearsparse::implementation::portable;
    require_close(fast.mu, nk::moments(exec, hc, sc, o).mu, 1e-12);
  }
  {
    // implementation::specialized takes the CUDA kernel or the host kernel (Kokkos::OpenMP,
    // Kokkos::Serial), or says why it cannot.
    auto o = short_run(8, seed, nearsparse::implementation::portable);
    const auto portable = nk::moments(exec, h, s, o);
    bool cuda = false, host_kernel = false;
#ifdef KOKKOS_ENABLE_CUDA
    cuda = std::is_same_v<TestType, Kokkos::Cuda>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    host_kernel = host_kernel || std::is_same_v<TestType, Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_SERIAL
    host_kernel = host_kernel || std::is_same_v<TestType, Kokkos::Serial>;
#endif
    o.implementation = nearsparse::implementation::specialized;
    for (auto a : {nk::algorithm::naive, nk::algorithm::aug_spmv, nk::algorithm::aug_spmmv}) {
      INFO(nk::to_string(a));
      o.method = a;
      if (cuda || host_kernel) {
        require_close(nk::moments(exec, h, s, o).mu_per_vector, portable.mu_per_vector, 1e-12);
        require_close(nk::moments(exec, sell, s, o).mu, portable.mu, 1e-12);
      } else {
        REQUIRE_THROWS_AS(nk::moments(exec, h, s, o), nearsparse::unsupported);
        REQUIRE_THROWS_WITH(nk::moments(exec, sell, s, o), Contains("nearsparse::kpm::moments") &&
                                                               Contains("specialized") &&
                                                               Contains(TestType::name()));
      }
    }
    // Past the CUDA kernel's 128 vectors there is no specialized path on Kokkos::Cuda; the host
    // kernel takes any R.
    o.method = nk::algorithm::aug_spmmv;
    o.num_vectors = 129;
    if (host_kernel) {
      auto p129 = o;
      p129.implementation = nearsparse::implementation::portable;
      require_close(nk::moments(exec, h, s, o).mu_per_vector,
                    nk::moments(exec, h, s, p129).mu_per_vector, 1e-12);
    } else {
      REQUIRE_THROWS_AS(nk::moments(exec, h, s, o), nearsparse::unsupported);
    }
    // The automatic choice gives the portable kernel's moments (the specialized kernel's where
    // the space has one).
    o.num_vectors = 8;
    o.implementation = nearsparse::implementation::automatic;
    require_close(nk::moments(exec, h, s, o).mu_per_vector, portable.mu_per_vector, 1e-12);
  }
  {
    // The CUDA kernel's tuning is checked, and every setting it takes keeps the moments.
    const auto portable =
        nk::moments(exec, h, s, short_run(32, seed, nearsparse::implementation::portable));
    const auto o = short_run(32, seed, nearsparse::implementation::automatic);
    auto tuned = [&](auto change) {
      nk::moments_options t = o;
      change(t.tuning);
      return t;
    };
    // Shapes the kernel cannot take are refused on every space, naming the field.
    REQUIRE_THROWS_WITH(nk::moments(exec, h, s, tuned([](auto& t) { t.chunk_rows = -1; })),
                        Contains("nearsparse::kpm::moments") && Contains("tuning.chunk_rows"));
    REQUIRE_THROWS_WITH(nk::moments(exec, h, s, tuned([](auto& t) {
                                      t.lanes_per_row = 3;
                                      t.columns_per_lane = 2;
                                    })),
                        Contains("lanes_per_row") && Contains("3"));
    REQUIRE_THROWS_WITH(nk::moments(exec, h, s, tuned([](auto& t) { t.columns_per_lane = 4; })),
                        Contains("lanes_per_row"));
    REQUIRE_THROWS_WITH(nk::moments(exec, h, s, tuned([](auto& t) {
                                      t.lanes_per_row = 8;
                                      t.columns_per_lane = 3;
                                    })),
                        Contains("columns_per_lane"));
    REQUIRE_THROWS_WITH(nk::moments(exec, h, s, tuned([](auto& t) {
                                      t.lanes_per_row = 4;
                                      t.columns_per_lane = 4;
                                    })),
                        Contains("R = 32"));
    // Every shape, chunk length and switch the kernel takes gives the same moments.
    const nk::moments_options runs[] = {tuned([](auto& t) { t.chunk_rows = 64; }),
                                        tuned([](auto& t) {
                                          t.lanes_per_row = 32;
                                          t.columns_per_lane = 1;
                                        }),
                                        tuned([](auto& t) {
                                          t.lanes_per_row = 8;
                                          t.columns_per_lane = 4;
                                        }),
                                        tuned([](auto& t) { t.compiled_width = false; }),
                                        tuned([](auto& t) { t.pair_periods = false; })};
    for (const auto& t : runs)
      require_close(nk::moments(exec, h, s, t).mu_per_vector, portable.mu_per_vector, 1e-12);
  }
}

NEARSPARSE_SPACE_TEST_CASE("rows of every length give the same moments on every kernel", "[kpm]") {
  // A random Hermitian pattern of 333 rows: empty rows, rows shorter and longer than a lane group
  // (the CUDA kernel loads a group's worth of entries at once and broadcasts them) and a few rows
  // past 32 entries, so that the rows sharing a warp have different lengths.
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed << " on " << TestType::name());
  const int n = 333;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::map<int, std::complex<double>>> rows(n);
  for (int i = 0; i < n; ++i) {
    if (i % 11 == 5) continue;  // isolated: an empty row and column
    const int extra = i % 37 == 0 ? 60 : int(rng() % 9);
    rows[std::size_t(i)][i] += u(rng);
    for (int k = 0; k < extra; ++k) {
      const int j = int(rng() % n);
      if (j % 11 == 5 || j == i) continue;
      const std::complex<double> v(u(rng), u(rng));
      rows[std::size_t(i)][j] += v;
      rows[std::size_t(j)][i] += std::conj(v);
    }
  }
  std::vector<int> row_map{0}, columns;
  std::vector<nk::complex_double> values;
  for (const auto& row : rows) {
    for (const auto& [j, v] : row) {
      columns.push_back(j);
      values.emplace_back(v.real(), v.imag());
    }
    row_map.push_back(int(columns.size()));
  }
  using crs = nk::crs_matrix<nk::complex_double, TestType>;
  typename crs::row_map_type::non_const_type rm("rm", row_map.size());
  typename crs::index_type::non_const_type en("en", columns.size());
  typename crs::values_type::non_const_type va("va", values.size());
  Kokkos::deep_copy(rm,
                    Kokkos::View<const int*, Kokkos::HostSpace>(row_map.data(), row_map.size()));
  Kokkos::deep_copy(en,
                    Kokkos::View<const int*, Kokkos::HostSpace>(columns.data(), columns.size()));
  Kokkos::deep_copy(
      va, Kokkos::View<const nk::complex_double*, Kokkos::HostSpace>(values.data(), values.size()));
  const crs h("irregular", n, n, int(columns.size()), va, rm, en);
  const auto sell = nk::make_sell(exec, h, {32, 1});
  const auto s = nk::scaling_for(nk::gershgorin_bounds(exec, h), 0.01);
  for (int R : {1, 4, 8, 13, 16, 32, 64}) {
    INFO("R = " << R);
    const auto [fast, fast_sell, portable] = run_kernels(exec, h, sell, s, 24, R, seed);
    require_close(fast.mu_per_vector, portable.mu_per_vector, 1e-12);
    require_close(fast_sell.mu_per_vector, portable.mu_per_vector, 1e-12);
  }
}

TEST_CASE("the stencil period is the nearest far distance most rows couple to", "[kpm]") {
  const Kokkos::DefaultHostExecutionSpace host;
  // Insulator: z lines of nz sites x 4 orbitals (sites z fastest).
  for (int nz : {4, 10, 40}) {
    INFO("nz = " << nz);
    const auto h = nk::make_topological_insulator(host, ref::insulator(5, 4, nz, 3));
    REQUIRE(nk::detail::stencil_period_of(nk::detail::rows_of(h)) == 4 * nz);
  }
  // Cubic lattice, x fastest: the y neighbour at nx rows (nx >= 16), else the z neighbour.
  const auto c = nk::make_cubic_lattice<double>(host, ref::lattice(20, 7, 5));
  REQUIRE(nk::detail::stencil_period_of(nk::detail::rows_of(c)) == 20);
  const auto narrow = nk::make_cubic_lattice<double>(host, ref::lattice(3, 7, 5));
  REQUIRE(nk::detail::stencil_period_of(nk::detail::rows_of(narrow)) == 21);
  // No distance that half the rows share, and the empty matrix.
  REQUIRE(nk::detail::stencil_period({0, 1, 2, 3, 4}, {20, 57, 3, 90}) == 0);
  REQUIRE(nk::detail::stencil_period({0, 1, 2, 3, 4}, {20, 21, 3, 90}) == 20);
  REQUIRE(nk::detail::stencil_period({0}, {}) == 0);
}
