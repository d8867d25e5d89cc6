// Malformed Matrix Market files: every one gets nearsparse::invalid_argument naming the file, the
// line and the problem, never a crash or a silently wrong matrix.

#include "io/io_support.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/io.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace nio = nearsparse::io;
using Catch::Matchers::Contains;
using nearsparse::test::io::temp_dir;
using nearsparse::test::io::write_text;

namespace {

struct bad_case {
  const char* name;
  const char* text;
  int line;
  const char* message;
};

const bad_case bad_cases[] = {
    {"empty file", "", 1, "the file is empty"},
    {"blank file", "\n\n", 1, "bad banner"},
    {"bad banner", "%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "bad banner"},
    {"short banner", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "bad banner"},
    {"long banner", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 1,
     "unexpected 'extra'"},
    {"vector object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
     "unsupported object 'vector'"},
    {"unsupported format", "%%MatrixMarket matrix sparse real general\n1 1 0\n", 1,
     "unsupported format 'sparse'"},
    {"unsupported field", "%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1,
     "unsupported field 'double'"},
    {"unsupported symmetry", "%%MatrixMarket matrix coordinate real lower\n1 1 0\n", 1,
     "unsupported symmetry 'lower'"},
    {"real hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
     "hermitian symmetry needs the complex field"},
    {"pattern array", "%%MatrixMarket matrix array pattern general\n1 1\n", 1,
     "pattern field needs the coordinate format"},
    {"skew pattern", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 0\n", 1,
     "skew-symmetric symmetry cannot go with the pattern field"},
    {"no size line", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", 2,
     "ends before the size line"},
    {"size line short", "%%MatrixMarket matrix coordinate real general\n3 3\n", 2,
     "must hold 3 integers"},
    {"size line negative", "%%MatrixMarket matrix coordinate real general\n-3 3 0\n", 2,
     "non-negative integers"},
    {"size line word", "%%MatrixMarket matrix array real general\n3 x\n", 2, "'x' is not one"},
    {"size too large", "%%MatrixMarket matrix coordinate real general\n3000000000 3 0\n", 2,
     "below 2^31"},
    {"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 2,
     "must be square"},
    {"fewer entries", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", 4,
     "ends after 2 of the 3 entries"},
    {"no entries", "%%MatrixMarket matrix coordinate real general\n3 3 1\n", 2,
     "ends after 0 of the 1 entries"},
    {"more entries", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 2\n3 3 3\n",
     5, "more entries than the 2"},
    {"row zero", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", 3,
     "row index 0 is outside 1..3"},
    {"row too large", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", 3,
     "row index 4 is outside 1..3"},
    {"column too large", "%%MatrixMarket matrix coordinate real general\n3 2 1\n\n1 9 1\n", 4,
     "column index 9 is outside 1..2"},
    {"index not integer", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1.5 1 1\n", 3,
     "row index '1.5' is not an integer"},
    {"non-numeric value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", 3,
     "'abc' is not a number"},
    {"nan", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", 3, "not finite"},
    {"inf", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 -Inf\n", 3, "not finite"},
    {"overflow", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999\n", 3,
     "out of the range of double"},
    {"integer field", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3,
     "'1.5' is not an integer"},
    {"missing value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", 3,
     "the entry ends after the indices"},
    {"truncated entry", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2", 4,
     "ends after the row index"},
    {"extra value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 2\n", 3,
     "unexpected '2' after the entry"},
    {"pattern with value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3,
     "unexpected '1'"},
    {"missing imaginary", "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1\n", 3,
     "ends after the real part"},
    {"above diagonal", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 2 5\n", 4,
     "entry (1, 2) is above the diagonal"},
    {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 3,
     "a skew-symmetric matrix has a zero diagonal"},
    {"hermitian diagonal", "%%MatrixMarket matrix coordinate complex hermitian\n3 3 1\n2 2 1 1\n",
     3, "a Hermitian matrix has a real diagonal"},
    {"hermitian array diagonal",
     "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 1\n3 1\n", 5,
     "a Hermitian matrix has a real diagonal"},
    {"array too few", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5,
     "ends after 3 of the 4 entries"},
    {"array too many", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6,
     "more entries than the 3"},
    {"array two values", "%%MatrixMarket matrix array real general\n1 2\n1 2\n", 3,
     "unexpected '2'"},
    {"control byte", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\x01\n", 3,
     "'1\\x01' is not a number"},
};

}  // namespace

TEST_CASE("malformed files are refused with the file, the line and the problem", "[io]") {
  temp_dir dir;
  for (const auto& c : bad_cases) {
    const std::string path =
        dir.file(std::string("bad_") + std::to_string(&c - bad_cases) + ".mtx");
    write_text(path, c.text);
    INFO(c.name << ":\n" << c.text);
    const std::string where = "'" + path + "' line " + std::to_string(c.line) + ":";
    for (int threads : {1, 3}) {
      nio::read_options o;
      o.threads = threads;
      o.block_bytes = threads == 1 ? (std::size_t(1) << 20) : 64;
      REQUIRE_THROWS_AS(nio::read_host_crs<Kokkos::complex<double>>(path, o),
                        nearsparse::invalid_argument);
      REQUIRE_THROWS_WITH(nio::read_host_crs<Kokkos::complex<double>>(path, o),
                          Contains(where) && Contains(c.message));
    }
    // The dense reader reports the same (an error in the header or the entries).
    REQUIRE_THROWS_AS((nio::read_dense<Kokkos::View<Kokkos::complex<double>**, Kokkos::HostSpace>>(
                          Kokkos::DefaultHostExecutionSpace(), path)),
                      nearsparse::invalid_argument);
  }
}

TEST_CASE("missing files, directories and refused destinations", "[io]") {
  temp_dir dir;
  const std::string missing = dir.path() + "/does_not_exist.mtx";
  REQUIRE_THROWS_AS(nio::read_host_crs<double>(missing), nearsparse::invalid_argument);
  REQUIRE_THROWS_WITH(nio::read_host_crs<double>(missing),
                      Contains("does_not_exist.mtx") && Contains("No such file"));
  REQUIRE_THROWS_WITH(nio::read_header(dir.path()), Contains("is a directory"));

  const std::string complex_file = dir.file("complex.mtx");
  write_text(complex_file, "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 2\n");
  REQUIRE_THROWS_WITH(nio::read_host_crs<double>(complex_file),
                      Contains("line 1") && Contains("complex values") &&
                          Contains("read it into a Kokkos::complex one"));
  REQUIRE_THROWS_AS((nio::read_dense<Kokkos::View<float**, Kokkos::HostSpace>>(
                        Kokkos::DefaultHostExecutionSpace(), complex_file)),
                    nearsparse::invalid_argument);
  // Pattern and real files go into complex destinations with a zero imaginary part.
  const std::string pattern_file = dir.file("pattern.mtx");
  write_text(pattern_file, "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
  const auto p = nio::read_host_crs<Kokkos::complex<double>>(pattern_file);
  REQUIRE(p.values.size() == 2);
  CHECK(p.values[0] == Kokkos::complex<double>(1, 0));
  CHECK(p.columns[0] == 2);
  // A value float cannot hold.
  const std::string big = dir.file("big.mtx");
  write_text(big, "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n");
  REQUIRE_THROWS_WITH(nio::read_host_crs<float>(big),
                      Contains("line 3") && Contains("out of the range of float"));
  CHECK(nio::read_host_crs<double>(big).values[0] == 1e300);
  // An array file too short for its extents is refused before the dense matrix is allocated.
  const std::string huge = dir.file("huge.mtx");
  write_text(huge, "%%MatrixMarket matrix array real general\n200000 200000\n1\n");
  REQUIRE_THROWS_WITH((nio::read_dense<Kokkos::View<double**, Kokkos::HostSpace>>(
                          Kokkos::DefaultHostExecutionSpace(), huge)),
                      Contains("line 2") && Contains("only"));
  // A size line that declares far more entries than the file holds reserves nothing for them.
  const std::string lying = dir.file("lying.mtx");
  write_text(lying, "%%MatrixMarket matrix coordinate real general\n5 5 4000000000000\n1 1 1\n");
  REQUIRE_THROWS_WITH(nio::read_host_crs<double>(lying),
                      Contains("line 3") && Contains("ends after 1 of the 4000000000000"));
  // A corrupt gzip file.
  if (nio::gzip_supported()) {
    const std::string gz = dir.file("corrupt.mtx.gz");
    write_text(gz, std::string("\x1f\x8b\x08\x00garbage garbage garbage", 27));
    REQUIRE_THROWS_AS(nio::read_host_crs<double>(gz), nearsparse::invalid_argument);
  }
}

TEST_CASE("writers check their arguments", "[io]") {
  temp_dir dir;
  const auto host = Kokkos::DefaultHostExecutionSpace();
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", 3, 3);
  a(0, 1) = 2;
  a(1, 0) = 3;
  nio::write_options o;
  o.symmetry = nio::symmetry::symmetric;
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.file("n.mtx"), a, o),
                      Contains("nearsparse::io::write_dense") && Contains("is not symmetric"));
  o = {};
  o.field = nio::field::integer;
  a(1, 0) = 2.5;
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.file("n.mtx"), a, o),
                      Contains("integer field cannot hold"));
  o = {};
  o.field = nio::field::pattern;
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.file("n.mtx"), a, o), Contains("array format"));
  o = {};
  a(2, 2) = std::nan("");
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.file("n.mtx"), a, o), Contains("non-finite"));
  a(2, 2) = 0;
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.path() + "/no/such/dir/c.mtx", a),
                      Contains("cannot create"));
  o.symmetry = nio::symmetry::hermitian;
  REQUIRE_THROWS_WITH(nio::write_dense(host, dir.file("n.mtx"), a, o),
                      Contains("needs the complex field"));
  if (!nio::gzip_supported())
    REQUIRE_THROWS_AS(nio::write_dense(host, dir.file("c.mtx.gz"), a), nearsparse::unsupported);
}
