// Matrix Market round trips: every format, field and symmetry through the host CRS, dense Views
// (both layouts, every execution space), the CRS type, HM and TLR matrices and .gz files; odd
// and empty sizes; duplicates summed; the threaded parse equal to the one-thread parse.

#include "io/io_support.hpp"
#include "support/seeds.hpp"
#include "support/space_test_case.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/diagonal.hpp>
#include <nearsparse/io.hpp>
#include <nearsparse/tlr.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace nio = nearsparse::io;
using Catch::Matchers::Contains;
using nearsparse::test::io::reference_parse;
using nearsparse::test::io::temp_dir;
using nearsparse::test::io::write_text;
using cplx = Kokkos::complex<double>;

namespace {

/// A dense column-major host matrix with the given field and symmetry, about `fill` nonzero.
std::vector<cplx> random_matrix(std::mt19937_64& rng, int rows, int cols, nio::field f,
                                nio::symmetry s, double fill) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> small(-9, 9);
  std::vector<cplx> a(std::size_t(rows) * std::size_t(cols), cplx(0, 0));
  auto at = [&](int i, int j) -> cplx& { return a[std::size_t(i) + std::size_t(j) * rows]; };
  auto value = [&] {
    switch (f) {
      case nio::field::pattern:
        return cplx(1, 0);
      case nio::field::integer:
        return cplx(small(rng), 0);
      case nio::field::complex:
        return cplx(u(rng), u(rng));
      default:
        return cplx(u(rng) * std::pow(10.0, small(rng)), 0);
    }
  };
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      if (s != nio::symmetry::general && j > i) continue;
      if (u(rng) > 2 * fill - 1) continue;
      cplx v = value();
      if (i == j && s == nio::symmetry::skew_symmetric) v = cplx(0, 0);
      if (i == j && s == nio::symmetry::hermitian) v = cplx(v.real(), 0);
      at(i, j) = v;
      if (i != j && s == nio::symmetry::symmetric) at(j, i) = v;
      if (i != j && s == nio::symmetry::skew_symmetric) at(j, i) = -v;
      if (i != j && s == nio::symmetry::hermitian) at(j, i) = Kokkos::conj(v);
    }
  return a;
}

nio::host_crs<cplx> crs_of(const std::vector<cplx>& a, int rows, int cols) {
  nio::host_crs<cplx> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(std::size_t(rows) + 1, 0);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const cplx v = a[std::size_t(i) + std::size_t(j) * rows];
      if (v == cplx(0, 0)) continue;
      m.columns.push_back(j);
      m.values.push_back(v);
    }
    m.row_offsets[std::size_t(i) + 1] = std::int64_t(m.values.size());
  }
  return m;
}

template <class Scalar>
cplx as_complex(const Scalar& v) {
  if constexpr (std::is_same_v<Scalar, double> || std::is_same_v<Scalar, float>)
    return cplx(double(v), 0);
  else
    return cplx(double(v.real()), double(v.imag()));
}

/// Compares a host CRS with a dense column-major matrix: every stored entry, and nothing else
/// nonzero (explicit zeros allowed).
template <class Scalar>
void check_crs(const nio::host_crs<Scalar>& m, const std::vector<cplx>& a, int rows, int cols) {
  REQUIRE(m.rows == rows);
  REQUIRE(m.cols == cols);
  REQUIRE(m.row_offsets.size() == std::size_t(rows) + 1);
  std::vector<cplx> seen(a.size(), cplx(0, 0));
  std::size_t wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (auto k = m.row_offsets[std::size_t(i)]; k < m.row_offsets[std::size_t(i) + 1]; ++k) {
      if (k > m.row_offsets[std::size_t(i)])
        wrong += m.columns[std::size_t(k - 1)] >= m.columns[std::size_t(k)];
      seen[std::size_t(i) + std::size_t(m.columns[std::size_t(k)]) * rows] =
          as_complex(m.values[std::size_t(k)]);
    }
  for (std::size_t k = 0; k < a.size(); ++k) wrong += !(seen[k] == a[k]);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("every format, field and symmetry round-trips exactly", "[io]") {
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const auto host = Kokkos::DefaultHostExecutionSpace();
  const nio::field fields[] = {nio::field::real, nio::field::integer, nio::field::complex,
                               nio::field::pattern};
  const nio::symmetry symmetries[] = {nio::symmetry::general, nio::symmetry::symmetric,
                                      nio::symmetry::skew_symmetric, nio::symmetry::hermitian};
  const std::pair<int, int> shapes[] = {{0, 0}, {3, 0}, {0, 4}, {1, 1}, {7, 7}, {13, 5}, {4, 5}};
  int files = 0;
  for (auto f : fields)
    for (auto s : symmetries)
      for (auto fm : {nio::format::coordinate, nio::format::array})
        for (auto [rows, cols] : shapes)
          for (double fill : {0.0, 0.4, 1.0}) {
            if (s == nio::symmetry::hermitian && f != nio::field::complex) continue;
            if (s == nio::symmetry::skew_symmetric && f == nio::field::pattern) continue;
            if (fm == nio::format::array && f == nio::field::pattern) continue;
            if (s != nio::symmetry::general && rows != cols) continue;
            INFO(nio::to_string(fm) << " " << nio::to_string(f) << " " << nio::to_string(s) << " "
                                    << rows << " x " << cols << " fill " << fill);
            const auto a = random_matrix(rng, rows, cols, f, s, fill);
            const std::string path = dir.file("rt" + std::to_string(files++) + ".mtx");
            nio::write_options o;
            o.field = f;
            o.symmetry = s;
            o.format = fm;
            o.comment = "round trip\nsecond comment line";
            if (fm == nio::format::array) {
              Kokkos::View<cplx**, Kokkos::LayoutLeft, Kokkos::HostSpace> v("a", rows, cols);
              for (int j = 0; j < cols; ++j)
                for (int i = 0; i < rows; ++i) v(i, j) = a[std::size_t(i) + std::size_t(j) * rows];
              nio::write_dense(host, path, v, o);
            } else {
              nio::write_host_crs(path, crs_of(a, rows, cols), o);
            }
            const auto h = nio::read_header(path);
            CHECK(h.format == fm);
            CHECK(h.field == f);
            CHECK(h.symmetry == s);
            CHECK(h.rows == rows);
            CHECK(h.cols == cols);
            // Through the library, on 1 and 3 threads and tiny blocks, and through the reference.
            for (int threads : {1, 3}) {
              nio::read_options ro;
              ro.threads = threads;
              ro.block_bytes = threads == 1 ? 1 << 20 : 64;
              check_crs(nio::read_host_crs<cplx>(path, ro), a, rows, cols);
            }
            const auto ref = reference_parse(nearsparse::test::io::read_text(path));
            REQUIRE(ref);
            if (f != nio::field::complex)
              check_crs(nio::read_host_crs<double>(path), a, rows, cols);
            if (f == nio::field::integer || f == nio::field::pattern)
              check_crs(nio::read_host_crs<float>(path), a, rows, cols);
            auto d = nio::read_dense<Kokkos::View<cplx**, Kokkos::LayoutRight, Kokkos::HostSpace>>(
                host, path);
            std::size_t wrong = 0;
            for (int j = 0; j < cols; ++j)
              for (int i = 0; i < rows; ++i)
                wrong += !(d(i, j) == a[std::size_t(i) + std::size_t(j) * rows]);
            CHECK(wrong == 0);
          }
}

NEARSPARSE_SPACE_TEST_CASE("dense Views and the CRS type on every execution space", "[io]") {
  const TestType exec;
  using mem = typename TestType::memory_space;
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const int rows = 37, cols = 23;
  std::uniform_real_distribution<double> u(-1, 1);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> a("a", rows, cols);
  auto ha = Kokkos::create_mirror_view(a);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) ha(i, j) = u(rng) > 0.3 ? u(rng) : 0.0;
  Kokkos::deep_copy(a, ha);
  const std::string array_file = dir.file("a_array.mtx"), coo_file = dir.file("a_coo.mtx.gz");
  nio::write_dense(exec, array_file, a);
  nio::write_options o;
  o.format = nio::format::coordinate;
  const bool gz = nio::gzip_supported();
  const std::string coo = gz ? coo_file : dir.file("a_coo.mtx");
  nio::write_dense(exec, coo, a, o);
  for (const auto& path : {array_file, coo}) {
    INFO(path);
    auto left = nio::read_dense<Kokkos::View<double**, Kokkos::LayoutLeft, mem>>(exec, path);
    auto right = nio::read_dense<Kokkos::View<double**, Kokkos::LayoutRight, mem>>(exec, path);
    auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), left);
    auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), right);
    std::size_t wrong = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) wrong += hl(i, j) != ha(i, j) || hr(i, j) != ha(i, j);
    CHECK(wrong == 0);
    const auto crs = nio::read_crs<double>(exec, path);
    REQUIRE(crs.numRows() == rows);
    REQUIRE(crs.numCols() == cols);
    auto map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.graph.row_map);
    auto ent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.graph.entries);
    auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), crs.values);
    Kokkos::View<double**, Kokkos::HostSpace> back("back", rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int k = map(i); k < map(i + 1); ++k) back(i, ent(k)) = val(k);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) wrong += back(i, j) != ha(i, j);
    CHECK(wrong == 0);
    // The CRS type written and read again.
    const std::string again = dir.file("again.mtx");
    nio::write_crs(exec, again, crs);
    const auto crs2 = nio::read_host_crs<double>(again);
    CHECK(crs2.values.size() == val.extent(0));
  }
  // Float and complex Views.
  auto f = nio::read_dense<Kokkos::View<float**, mem>>(exec, array_file);
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  CHECK(hf(3, 4) == float(ha(3, 4)));
  auto c = nio::read_dense<Kokkos::View<Kokkos::complex<float>**, mem>>(exec, array_file);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  CHECK(hc(5, 6).real() == float(ha(5, 6)));
  CHECK(hc(5, 6).imag() == 0.0f);
}

NEARSPARSE_SPACE_TEST_CASE("HM and TLR matrices from and to files", "[io]") {
  const TestType exec;
  namespace nd = nearsparse::diagonal;
  namespace nt = nearsparse::tlr;
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  // HM: a random structured matrix written, read back, and compared densely.
  const int rows = 41, cols = 29;
  const auto offsets = nd::random_offsets(rows, cols, 7, seed, false);
  const auto m = nd::random_hm<double>(exec, rows, cols, offsets, seed + 1);
  const std::string path = dir.file("hm.mtx");
  nio::write_hm(exec, path, m);
  const auto back = nio::read_hm<double>(exec, path);
  CHECK(back.host_offsets() == m.host_offsets());
  auto d1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nd::to_dense(exec, m));
  auto d2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nd::to_dense(exec, back));
  std::size_t wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) wrong += d1(i, j) != d2(i, j);
  CHECK(wrong == 0);
  // A symmetric file becomes an HM matrix with both triangles.
  const std::string sym = dir.file("sym.mtx");
  write_text(sym,
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n1 1 2\n3 1 -1\n4 2 5\n"
             "3 1 0.5\n");
  const auto s = nio::read_hm<double>(exec, sym);
  CHECK(s.host_offsets() == std::vector<int>{-2, 0, 2});
  auto ds = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nd::to_dense(exec, s));
  CHECK(ds(2, 0) == -0.5);
  CHECK(ds(0, 2) == -0.5);
  CHECK(ds(1, 3) == 5);

  // TLR: a Hilbert matrix through a file, compressed, and written back densely.
  const std::size_t n = 90;
  const auto h = nt::hilbert(exec, n, n);
  const std::string hfile = dir.file("hilbert.mtx");
  nio::write_dense(exec, hfile, h);
  nt::compression_options co;
  co.max_rank = 12;
  co.trunc.accuracy = 1e-10;
  nt::compression_report report;
  const auto t = nio::read_tlr(exec, hfile, 32, co, report);
  CHECK(report.relative_error <= 1e-9);
  const std::string tfile = dir.file("tlr.mtx");
  nio::write_tlr(exec, tfile, t);
  auto dt = nio::read_dense<Kokkos::View<double**, Kokkos::HostSpace>>(
      Kokkos::DefaultHostExecutionSpace(), tfile);
  auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      err += (dt(i, j) - hh(i, j)) * (dt(i, j) - hh(i, j));
      norm += hh(i, j) * hh(i, j);
    }
  CHECK(std::sqrt(err / norm) <= 1e-9);
}

TEST_CASE("duplicates are summed, comments and odd spacing accepted, progress reported", "[io]") {
  temp_dir dir;
  const std::string path = dir.file("dup.mtx");
  write_text(path,
             "%%matrixmarket MATRIX Coordinate REAL General\r\n% a comment\r\n\r\n  3 3 5\r\n"
             "1 1 1.5\r\n\t2 3 +2\r\n% a comment among the entries\n1 1 2.5\n3 1 -1e-3\n"
             "2 3 .5");
  int calls = 0;
  nio::read_options o;
  o.progress = [&](const nio::progress& p) {
    ++calls;
    CHECK(p.entries_total == 5);
    CHECK(p.bytes_total > 0);
  };
  const auto m = nio::read_host_crs<double>(path, o);
  CHECK(calls >= 1);
  REQUIRE(m.values.size() == 3);
  CHECK(m.values[0] == 4.0);    // (0, 0): 1.5 + 2.5
  CHECK(m.values[1] == 2.5);    // (1, 2): 2 + 0.5
  CHECK(m.values[2] == -1e-3);  // (2, 0)
  CHECK(m.columns == std::vector<std::int32_t>{0, 2, 0});
  // Hermitian check of a matrix.
  const std::string h = dir.file("h.mtx");
  write_text(h, "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1 0\n2 1 1 2\n");
  CHECK(!nio::hermitian_mismatch(nio::read_host_crs<cplx>(h)));
  write_text(h, "%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 1 1 0\n2 1 1 2\n");
  CHECK(nio::hermitian_mismatch(nio::read_host_crs<cplx>(h)));
}

TEST_CASE("the threaded parse of a large file equals the one-thread parse", "[io]") {
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> idx(0, 4999);
  std::uniform_real_distribution<double> u(-1, 1);
  nio::host_crs<double> m;
  m.rows = m.cols = 5000;
  m.row_offsets.assign(5001, 0);
  for (int i = 0; i < 5000; ++i) {
    std::vector<int> cols;
    for (int k = 0; k < 40; ++k) cols.push_back(idx(rng));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int c : cols) {
      m.columns.push_back(c);
      m.values.push_back(u(rng));
    }
    m.row_offsets[std::size_t(i) + 1] = std::int64_t(m.values.size());
  }
  const std::string path = dir.file("large.mtx");
  nio::write_options wo;
  wo.threads = 3;
  nio::write_host_crs(path, m, wo);
  for (int threads : {1, 2, 4}) {
    nio::read_options ro;
    ro.threads = threads;
    ro.block_bytes = std::size_t(1) << 20;
    const auto r = nio::read_host_crs<double>(path, ro);
    CHECK(r.row_offsets == m.row_offsets);
    CHECK(r.columns == m.columns);
    CHECK(r.values == m.values);
  }
  if (nio::gzip_supported()) {
    const std::string gz = dir.file("large.mtx.gz");
    wo.gzip_level = 1;
    nio::write_host_crs(gz, m, wo);
    const auto r = nio::read_host_crs<double>(gz);
    CHECK(r.values == m.values);
  }
}

TEST_CASE("reads and writes are bit for bit the same on any thread count", "[io]") {
  // Entries in random order with many duplicates (their sums depend on the order they are
  // added in) and a symmetric file whose mirrored entries land in other threads' rows: enough
  // entries that the assembly of the rows is split over several threads.
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const int n = 3000;
  std::uniform_int_distribution<int> idx(1, n);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const char* kind : {"general", "symmetric", "skew-symmetric"}) {
    INFO(kind);
    const bool general = std::string(kind) == "general";
    const bool skew = std::string(kind) == "skew-symmetric";
    const int entries = 300000;
    std::string text = std::string("%%MatrixMarket matrix coordinate real ") + kind + "\n" +
                       std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(entries) +
                       "\n";
    char line[96];
    for (int k = 0; k < entries; ++k) {
      int i = idx(rng), j = idx(rng);
      if (skew && i == j) i = i % n + 1;
      if (!general && j > i) std::swap(i, j);
      std::snprintf(line, sizeof line, "%d %d %.17g\n", i, j, u(rng) * std::pow(10.0, k % 7));
      text += line;
    }
    const std::string path = dir.file("order.mtx");
    write_text(path, text);
    nio::read_options ro;
    ro.threads = 1;
    const auto one = nio::read_host_crs<double>(path, ro);
    nio::write_options wo;
    wo.threads = 1;
    const std::string written_one = dir.file("one.mtx");
    nio::write_host_crs(written_one, one, wo);
    for (int threads : {2, 3, 4}) {
      INFO("threads " << threads);
      ro.threads = threads;
      ro.block_bytes = threads == 3 ? std::size_t(1) << 16 : std::size_t(32) << 20;
      const auto r = nio::read_host_crs<double>(path, ro);
      CHECK(r.row_offsets == one.row_offsets);
      CHECK(r.columns == one.columns);
      REQUIRE(r.values.size() == one.values.size());
      CHECK(std::memcmp(r.values.data(), one.values.data(), r.values.size() * sizeof(double)) == 0);
      wo.threads = threads;
      const std::string written = dir.file("many.mtx");
      nio::write_host_crs(written, r, wo);
      CHECK(nearsparse::test::io::read_text(written) ==
            nearsparse::test::io::read_text(written_one));
    }
    if (nio::gzip_supported()) {
      // A compressed file read in small blocks (each inflated while the previous one parses).
      const std::string gz = dir.file("order.mtx.gz");
      wo.gzip_level = 1;
      nio::write_host_crs(gz, one, wo);
      ro.threads = 2;
      ro.block_bytes = std::size_t(1) << 14;
      const auto r = nio::read_host_crs<double>(gz, ro);
      CHECK(r.row_offsets == one.row_offsets);
      CHECK(r.columns == one.columns);
      CHECK(r.values == one.values);
    }
  }
}
