// The augmented SpMMV step by step on every kernel a space has (the host kernel on Kokkos::OpenMP
// and Kokkos::Serial, in both of its instruction-set copies; the CUDA kernel on Kokkos::Cuda) and
// the portable kernel, against a plain-loop reference in std::complex<double>: odd widths R, CRS
// and SELL-C-sigma (padding, sorted rows), complex and real values, every use of the coefficients
// and dot products, row ranges that start and end inside the matrix, and empty inputs.

#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/kpm.hpp>

#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace nk = nearsparse::kpm;
using Catch::Matchers::Contains;

namespace {

using cplx = std::complex<double>;

template <class Scalar>
cplx to_std(const Scalar& x) {
  if constexpr (std::is_same_v<Scalar, double>)
    return {x, 0};
  else
    return {x.real(), x.imag()};
}

template <class Scalar>
Scalar from_std(cplx x) {
  if constexpr (std::is_same_v<Scalar, double>)
    return x.real();
  else
    return Scalar(x.real(), x.imag());
}

/// A random n x n pattern: empty rows, short rows, a few long ones.
template <class Exec, class Scalar>
nk::crs_matrix<Scalar, Exec> random_matrix(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<int> row_map{0}, columns;
  std::vector<Scalar> values;
  for (int i = 0; i < n; ++i) {
    const int length = i % 7 == 3 ? 0 : i % 29 == 0 ? 40 : int(rng() % 14);
    for (int k = 0; k < length; ++k) {
      columns.push_back(int(rng() % std::uint64_t(n)));
      values.push_back(from_std<Scalar>({u(rng), u(rng)}));
    }
    row_map.push_back(int(columns.size()));
  }
  using crs = nk::crs_matrix<Scalar, Exec>;
  typename crs::row_map_type::non_const_type rm("rm", row_map.size());
  typename crs::index_type::non_const_type en("en", columns.size());
  typename crs::values_type::non_const_type va("va", values.size());
  Kokkos::deep_copy(rm,
                    Kokkos::View<const int*, Kokkos::HostSpace>(row_map.data(), row_map.size()));
  Kokkos::deep_copy(en,
                    Kokkos::View<const int*, Kokkos::HostSpace>(columns.data(), columns.size()));
  Kokkos::deep_copy(va,
                    Kokkos::View<const Scalar*, Kokkos::HostSpace>(values.data(), values.size()));
  return crs("random", n, n, int(columns.size()), va, rm, en);
}

/// Each row's (column, value) entries of a CRS or SELL matrix, in the matrix's own row order.
using entry_rows = std::vector<std::vector<std::pair<int, cplx>>>;

template <class Crs>
entry_rows entries_of_crs(const Crs& h) {
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.values);
  entry_rows rows(h.numRows());
  for (int i = 0; i < int(h.numRows()); ++i)
    for (auto e = rm(i); e < rm(i + 1); ++e) rows[std::size_t(i)].push_back({en(e), to_std(va(e))});
  return rows;
}

template <class Scalar, class Mem>
entry_rows entries_of_sell(const nk::sell_matrix<Scalar, Mem>& s) {
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.chunk_offsets());
  auto len = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.row_lengths());
  auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.columns());
  auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.values());
  const int C = s.chunk_height();
  entry_rows rows(std::size_t(s.rows()));
  for (int i = 0; i < s.rows(); ++i)
    for (int j = 0; j < len(i); ++j) {
      const auto e = off(i / C) + i % C + std::int64_t(j) * C;
      rows[std::size_t(i)].push_back({col(e), to_std(val(e))});
    }
  return rows;
}

/// One augmented SpMMV on exec with `settings`, from fixed in, out and eta; returns out and eta
/// on the host (row-major).
template <class Exec, class Rows, class Scalar>
std::pair<std::vector<cplx>, std::vector<double>> step(
    const Exec& exec, const Rows& rows, int n, int R, int row_begin, int row_end,
    const std::vector<cplx>& in0, const std::vector<cplx>& out0, const std::vector<double>& eta0,
    nk::detail::aug_coefficients c, bool dots, int s, const nk::detail::aug_settings& settings) {
  using mem = typename Exec::memory_space;
  const nk::detail::aligned_block<Scalar, mem> in("in", std::size_t(n), std::size_t(R)),
      out("out", std::size_t(n), std::size_t(R));
  Kokkos::View<double**, Kokkos::LayoutRight, mem> eta("eta", eta0.size() / std::size_t(R),
                                                       std::size_t(R));
  auto h_in = Kokkos::create_mirror_view(in.view);
  auto h_out = Kokkos::create_mirror_view(out.view);
  auto h_eta = Kokkos::create_mirror_view(eta);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < R; ++r) {
      h_in(i, r) = from_std<Scalar>(in0[std::size_t(i) * R + r]);
      h_out(i, r) = from_std<Scalar>(out0[std::size_t(i) * R + r]);
    }
  for (std::size_t k = 0; k < eta0.size(); ++k) h_eta.data()[k] = eta0[k];
  Kokkos::deep_copy(in.view, h_in);
  Kokkos::deep_copy(out.view, h_out);
  Kokkos::deep_copy(eta, h_eta);
  nk::detail::aug_spmmv(exec, "test", rows, row_begin, row_end, in.view, out.view, c, dots, eta, s,
                        settings);
  exec.fence();
  Kokkos::deep_copy(h_out, out.view);
  Kokkos::deep_copy(h_eta, eta);
  std::vector<cplx> o(out0.size());
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < R; ++r) o[std::size_t(i) * R + r] = to_std(h_out(i, r));
  return {o, std::vector<double>(h_eta.data(), h_eta.data() + eta0.size())};
}

/// The reference: the same step in plain loops.
std::pair<std::vector<cplx>, std::vector<double>> reference_step(
    const entry_rows& h, int R, int row_begin, int row_end, const std::vector<cplx>& in,
    const std::vector<cplx>& out0, const std::vector<double>& eta0, nk::detail::aug_coefficients c,
    bool dots, int s) {
  auto out = out0;
  auto eta = eta0;
  for (int i = row_begin; i < row_end; ++i)
    for (int r = 0; r < R; ++r) {
      cplx y = 0;
      for (const auto& [j, v] : h[std::size_t(i)]) y += v * in[std::size_t(j) * R + r];
      const cplx vin = in[std::size_t(i) * R + r];
      const cplx o = c.alpha * y + c.beta * vin + c.gamma * out0[std::size_t(i) * R + r];
      out[std::size_t(i) * R + r] = o;
      if (dots) {
        eta[std::size_t(2 * s) * R + r] += std::norm(vin);
        eta[std::size_t(2 * s + 1) * R + r] += (std::conj(o) * vin).real();
      }
    }
  return {out, eta};
}

template <class Scalar>
std::vector<cplx> random_block(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cplx> b(count);
  for (auto& x : b) x = std::is_same_v<Scalar, double> ? cplx(u(rng), 0) : cplx(u(rng), u(rng));
  return b;
}

void require_close(const std::vector<cplx>& got, const std::vector<cplx>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("entry " << k << ": " << got[k] << " against " << want[k]);
    REQUIRE(std::abs(got[k] - want[k]) <= tol * (1 + std::abs(want[k])));
  }
}

void require_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("eta entry " << k << ": " << got[k] << " against " << want[k]);
    REQUIRE(std::abs(got[k] - want[k]) <= tol * (1 + std::abs(want[k])));
  }
}

/// The spaces with the host kernel.
template <class Exec>
constexpr bool has_host_kernel = false;
#ifdef KOKKOS_ENABLE_OPENMP
template <>
constexpr bool has_host_kernel<Kokkos::OpenMP> = true;
#endif
#ifdef KOKKOS_ENABLE_SERIAL
template <>
constexpr bool has_host_kernel<Kokkos::Serial> = true;
#endif

/// Every kernel of exec and the portable one against the reference on `h` (CRS) and its SELL
/// forms.
template <class Exec, class Scalar>
void check_all(const Exec& exec, int n, std::mt19937_64& rng) {
  const auto h = random_matrix<Exec, Scalar>(n, rng);
  const auto crs_entries = entries_of_crs(h);
  const auto sell = nk::make_sell(exec, h, {8, 32});
  const auto sell_entries = entries_of_sell(sell);
  std::vector<nk::detail::aug_settings> kernels(3);
  kernels[1].implementation = nearsparse::implementation::portable;
  kernels[2].host_wide_vectors = false;
  const int steps = 3, s = 1;
  const nk::detail::aug_coefficients uses[] = {
      {0.7, -0.3, 0.0}, {1.4, -0.6, -1.0}, {1.0, 0.0, 0.0}, {1.0, 0.0, 0.5}};
  for (int R : {1, 2, 3, 5, 8, 9, 17, 33}) {
    const auto in = random_block<Scalar>(std::size_t(n) * R, rng);
    const auto out0 = random_block<Scalar>(std::size_t(n) * R, rng);
    std::vector<double> eta0(std::size_t(2 * steps) * R);
    for (auto& x : eta0) x = double(rng() % 5);
    for (const auto& c : uses)
      for (bool dots : {true, false})
        for (auto [b, e] : {std::pair{0, n}, {n / 3, n - 5}, {7, 7}}) {
          INFO("R = " << R << ", alpha " << c.alpha << ", beta " << c.beta << ", gamma " << c.gamma
                      << (dots ? ", dots" : "") << ", rows [" << b << ", " << e << ")");
          const auto want = reference_step(crs_entries, R, b, e, in, out0, eta0, c, dots, s);
          const auto want_sell = reference_step(sell_entries, R, b, e, in, out0, eta0, c, dots, s);
          for (std::size_t k = 0; k < kernels.size(); ++k) {
            INFO("kernel " << k);
            const auto got = step<Exec, decltype(nk::detail::rows_of(h)), Scalar>(
                exec, nk::detail::rows_of(h), n, R, b, e, in, out0, eta0, c, dots, s, kernels[k]);
            require_close(got.first, want.first, 1e-13);
            require_close(got.second, want.second, 1e-12);
            const auto got_sell = step<Exec, decltype(nk::detail::rows_of(sell)), Scalar>(
                exec, nk::detail::rows_of(sell), n, R, b, e, in, out0, eta0, c, dots, s,
                kernels[k]);
            require_close(got_sell.first, want_sell.first, 1e-13);
            require_close(got_sell.second, want_sell.second, 1e-12);
          }
        }
  }
}

}  // namespace

NEARSPARSE_SPACE_TEST_CASE("the augmented SpMMV of every kernel equals the plain-loop reference",
                           "[kpm]") {
  const TestType exec;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed << " on " << TestType::name());
  std::mt19937_64 rng(seed);
  check_all<TestType, nk::complex_double>(exec, 151, rng);  // not a multiple of C or of W
  check_all<TestType, double>(exec, 67, rng);
}

NEARSPARSE_SPACE_TEST_CASE("the host kernel takes empty inputs and refuses what it cannot serve",
                           "[kpm]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed << " on " << TestType::name());
  std::mt19937_64 rng(seed);
  // An empty matrix and empty blocks: nothing to do, on every implementation.
  for (auto choice :
       {nearsparse::implementation::automatic, nearsparse::implementation::portable}) {
    const auto h = random_matrix<TestType, nk::complex_double>(0, rng);
    Kokkos::View<nk::complex_double**, Kokkos::LayoutRight, mem> x("x", 0, 4), y("y", 0, 4);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> eta("eta", 2, 4);
    nk::detail::aug_settings settings;
    settings.implementation = choice;
    nk::detail::aug_spmmv(exec, "test", nk::detail::rows_of(h), 0, 0, x, y,
                          nk::detail::aug_coefficients{}, true, eta, 0, settings);
    auto h_eta = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), eta);
    for (int k = 0; k < 8; ++k) REQUIRE(h_eta.data()[k] == 0);
  }
  if constexpr (has_host_kernel<TestType>) {
    // A column-major block is not the host kernel's: specialized says so, automatic runs the
    // portable kernel.
    const int n = 40, R = 3;
    const auto h = random_matrix<TestType, nk::complex_double>(n, rng);
    Kokkos::View<nk::complex_double**, Kokkos::LayoutLeft, mem> x("x", n, R), y("y", n, R);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> eta("eta", 2, R);
    nk::detail::aug_settings settings;
    settings.function = "nearsparse::kpm::moments";
    settings.implementation = nearsparse::implementation::specialized;
    REQUIRE_THROWS_AS(nk::detail::aug_spmmv(exec, "test", nk::detail::rows_of(h), 0, n, x, y,
                                            nk::detail::aug_coefficients{}, true, eta, 0, settings),
                      nearsparse::unsupported);
    REQUIRE_THROWS_WITH(
        nk::detail::aug_spmmv(exec, "test", nk::detail::rows_of(h), 0, n, x, y,
                              nk::detail::aug_coefficients{}, true, eta, 0, settings),
        Contains("nearsparse::kpm::moments") && Contains("row-major") &&
            Contains(TestType::name()));
    settings.implementation = nearsparse::implementation::automatic;
    nk::detail::aug_spmmv(exec, "test", nk::detail::rows_of(h), 0, n, x, y,
                          nk::detail::aug_coefficients{}, true, eta, 0, settings);
    // Wider offsets than int: not the host kernel's either.
    using wide = KokkosSparse::CrsMatrix<nk::complex_double, int, TestType, void, std::size_t>;
    const auto small = random_matrix<TestType, nk::complex_double>(n, rng);
    typename wide::row_map_type::non_const_type rm("rm", std::size_t(n) + 1);
    auto h_rm = Kokkos::create_mirror_view(rm);
    auto s_rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), small.graph.row_map);
    for (int i = 0; i <= n; ++i) h_rm(i) = std::size_t(s_rm(i));
    Kokkos::deep_copy(rm, h_rm);
    const wide hw("wide", n, n, int(small.nnz()), small.values, rm, small.graph.entries);
    Kokkos::View<nk::complex_double**, Kokkos::LayoutRight, mem> a("a", n, R), b("b", n, R);
    settings.implementation = nearsparse::implementation::specialized;
    REQUIRE_THROWS_WITH(
        nk::detail::aug_spmmv(exec, "test", nk::detail::rows_of(hw), 0, n, a, b,
                              nk::detail::aug_coefficients{}, true, eta, 0, settings),
        Contains("int row offsets"));
  }
}
